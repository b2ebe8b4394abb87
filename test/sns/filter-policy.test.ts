import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { filterPolicyMatches, type MessageAttributes } from '../../src/sns/filter-match.js'
import {
  InvalidFilterPolicy,
  InvalidFilterPolicyScope,
  parseFilterPolicy,
  parseFilterPolicyScope,
} from '../../src/sns/filter-policy.js'

const str = (v: string) => ({ DataType: 'String', StringValue: v })
const num = (v: number | string) => ({ DataType: 'Number', StringValue: String(v) })

/** Attribute-scope verdict for a policy object and a set of attributes. */
function attrs(policy: object, attributes: MessageAttributes): boolean {
  return filterPolicyMatches(parseFilterPolicy(JSON.stringify(policy)), { body: 'ignored', attributes })
}

/** Body-scope verdict for a policy object and a body value. */
function body(policy: object, message: unknown): boolean {
  const text = typeof message === 'string' ? message : JSON.stringify(message)
  return filterPolicyMatches(parseFilterPolicy(JSON.stringify(policy), 'MessageBody'), { body: text, attributes: {} })
}

function refused(policy: unknown, scope: 'MessageAttributes' | 'MessageBody' = 'MessageAttributes'): string {
  const text = typeof policy === 'string' ? policy : JSON.stringify(policy)
  try {
    parseFilterPolicy(text, scope)
  } catch (e) {
    expect(e).toBeInstanceOf(InvalidFilterPolicy)
    expect((e as Error).message).toMatch(/^Invalid parameter: FilterPolicy: /)
    return (e as Error).message
  }
  throw new Error(`policy was accepted: ${text}`)
}

describe('SNS filter policies: attribute scope', () => {
  it('matches exact strings case-sensitively and OR-s the values of one key', () => {
    const p = { sport: ['rugby', 'football'] }
    expect(attrs(p, { sport: str('rugby') })).toBe(true)
    expect(attrs(p, { sport: str('football') })).toBe(true)
    expect(attrs(p, { sport: str('Rugby') })).toBe(false)
    expect(attrs(p, { other: str('rugby') })).toBe(false)
  })

  it('AND-s separate keys', () => {
    const p = { sport: ['rugby'], price: [{ numeric: ['>', 100] }] }
    expect(attrs(p, { sport: str('rugby'), price: num(101) })).toBe(true)
    expect(attrs(p, { sport: str('rugby'), price: num(100) })).toBe(false)
    expect(attrs(p, { sport: str('rugby') })).toBe(false)
  })

  it('compares numbers numerically to five decimals and only against Number attributes', () => {
    expect(attrs({ n: [100] }, { n: num('1e2') })).toBe(true)
    expect(attrs({ n: [0.3] }, { n: num(0.1 + 0.2) })).toBe(true)
    expect(attrs({ n: [1.000001] }, { n: num(1) })).toBe(true)
    expect(attrs({ n: [100] }, { n: str('100') })).toBe(false)
    expect(attrs({ n: ['100'] }, { n: num(100) })).toBe(false)
  })

  it('numeric ranges honour inclusive and exclusive bounds', () => {
    const p = { n: [{ numeric: ['>=', 0, '<', 10] }] }
    expect(attrs(p, { n: num(0) })).toBe(true)
    expect(attrs(p, { n: num(9.99999) })).toBe(true)
    expect(attrs(p, { n: num(10) })).toBe(false)
    expect(attrs(p, { n: num(-0.00001) })).toBe(false)
    expect(attrs({ n: [{ numeric: ['=', 5] }] }, { n: num(5) })).toBe(true)
    expect(attrs({ n: [{ numeric: ['<=', 5] }] }, { n: num(5.00001) })).toBe(false)
    expect(attrs({ n: [{ numeric: ['>', 5] }] }, { n: str('6') })).toBe(false)
  })

  it('prefix, suffix and equals-ignore-case', () => {
    expect(attrs({ k: [{ prefix: 'ord' }] }, { k: str('order') })).toBe(true)
    expect(attrs({ k: [{ prefix: 'ord' }] }, { k: str('xorder') })).toBe(false)
    expect(attrs({ k: [{ suffix: '.png' }] }, { k: str('a.png') })).toBe(true)
    expect(attrs({ k: [{ suffix: '.png' }] }, { k: str('a.jpg') })).toBe(false)
    expect(attrs({ k: [{ 'equals-ignore-case': 'RuGbY' }] }, { k: str('rugby') })).toBe(true)
    expect(attrs({ k: [{ 'equals-ignore-case': 'rugby' }] }, { k: str('rugbyx') })).toBe(false)
  })

  it('anything-but needs the key, and takes a value, a list, a prefix or a suffix', () => {
    expect(attrs({ k: [{ 'anything-but': 'a' }] }, { k: str('b') })).toBe(true)
    expect(attrs({ k: [{ 'anything-but': 'a' }] }, { k: str('a') })).toBe(false)
    expect(attrs({ k: [{ 'anything-but': 'a' }] }, {})).toBe(false)
    expect(attrs({ k: [{ 'anything-but': ['a', 'b'] }] }, { k: str('b') })).toBe(false)
    expect(attrs({ k: [{ 'anything-but': ['a', 'b'] }] }, { k: str('c') })).toBe(true)
    expect(attrs({ k: [{ 'anything-but': [100, 200] }] }, { k: num(150) })).toBe(true)
    expect(attrs({ k: [{ 'anything-but': [100, 200] }] }, { k: num(200) })).toBe(false)
    expect(attrs({ k: [{ 'anything-but': { prefix: 'x-' } }] }, { k: str('x-1') })).toBe(false)
    expect(attrs({ k: [{ 'anything-but': { prefix: 'x-' } }] }, { k: str('y-1') })).toBe(true)
    expect(attrs({ k: [{ 'anything-but': { suffix: '.tmp' } }] }, { k: str('a.tmp') })).toBe(false)
    expect(attrs({ k: [{ 'anything-but': { 'equals-ignore-case': ['A'] } }] }, { k: str('a') })).toBe(false)
  })

  it('exists true and false, alone and beside values', () => {
    expect(attrs({ k: [{ exists: true }] }, { k: str('') })).toBe(true)
    expect(attrs({ k: [{ exists: true }] }, {})).toBe(false)
    expect(attrs({ k: [{ exists: false }] }, {})).toBe(true)
    expect(attrs({ k: [{ exists: false }] }, { k: str('x') })).toBe(false)
    expect(attrs({ k: ['x', { exists: false }] }, { k: str('x') })).toBe(true)
    expect(attrs({ k: ['x', { exists: false }] }, { k: str('y') })).toBe(false)
  })

  it('ignores Binary attributes and matches any element of a String.Array', () => {
    const bin = { k: { DataType: 'Binary', BinaryValue: 'AAE=' } }
    expect(attrs({ k: [{ exists: true }] }, bin)).toBe(false)
    expect(attrs({ k: [{ exists: false }] }, bin)).toBe(true)
    const arr = { k: { DataType: 'String.Array', StringValue: '["a", 7, true]' } }
    expect(attrs({ k: ['a'] }, arr)).toBe(true)
    expect(attrs({ k: [7] }, arr)).toBe(true)
    expect(attrs({ k: [true] }, arr)).toBe(true)
    expect(attrs({ k: ['z'] }, arr)).toBe(false)
    expect(attrs({ k: ['String.code'] }, { k: { DataType: 'String.code', StringValue: 'String.code' } })).toBe(true)
  })

  it('$or with two or more policies is a disjunction across keys', () => {
    const p = { source: ['aws.cloudwatch'], $or: [{ metric: ['CPU'] }, { namespace: ['AWS/EC2'] }] }
    expect(attrs(p, { source: str('aws.cloudwatch'), metric: str('CPU') })).toBe(true)
    expect(attrs(p, { source: str('aws.cloudwatch'), namespace: str('AWS/EC2') })).toBe(true)
    expect(attrs(p, { source: str('aws.cloudwatch') })).toBe(false)
    expect(attrs(p, { metric: str('CPU') })).toBe(false)
  })

  it('$or that is not a list of two objects is an ordinary key', () => {
    expect(attrs({ $or: ['x'] }, { $or: str('x') })).toBe(true)
  })

  it('an empty policy lets everything through', () => {
    expect(filterPolicyMatches(parseFilterPolicy(''), { body: '', attributes: {} })).toBe(true)
    expect(filterPolicyMatches(parseFilterPolicy('{}'), { body: '', attributes: {} })).toBe(true)
  })
})

describe('SNS filter policies: body scope', () => {
  it('follows nested keys and arrays of objects to their leaves', () => {
    const p = { order: { status: ['paid'], total: [{ numeric: ['>', 10] }] } }
    expect(body(p, { order: { status: 'paid', total: 11 } })).toBe(true)
    expect(body(p, { order: { status: 'paid', total: 9 } })).toBe(false)
    expect(body(p, { order: { status: 'paid', total: '11' } })).toBe(false)
    expect(body({ items: { sku: ['b'] } }, { items: [{ sku: 'a' }, { sku: 'b' }] })).toBe(true)
    expect(body({ tags: ['x'] }, { tags: ['w', 'x'] })).toBe(true)
  })

  it('matches true, false and null literally, and treats an object as no leaf', () => {
    expect(body({ ok: [true] }, { ok: true })).toBe(true)
    expect(body({ ok: [true] }, { ok: 'true' })).toBe(false)
    expect(body({ v: [null] }, { v: null })).toBe(true)
    expect(body({ v: [{ exists: true }] }, { v: { deeper: 1 } })).toBe(false)
    expect(body({ v: [{ exists: false }] }, { w: 1 })).toBe(true)
  })

  it('a body that is not a JSON object matches nothing', () => {
    expect(body({ v: [{ exists: false }] }, 'plain text')).toBe(false)
    expect(body({ v: [{ exists: false }] }, [1, 2])).toBe(false)
  })

  it('$or nests inside a body key', () => {
    const p = { order: { $or: [{ status: ['paid'] }, { refund: [{ exists: true }] }] } }
    expect(body(p, { order: { status: 'paid' } })).toBe(true)
    expect(body(p, { order: { refund: 3 } })).toBe(true)
    expect(body(p, { order: { status: 'open' } })).toBe(false)
  })
})

describe('SNS filter policies: what AWS refuses', () => {
  it('refuses malformed JSON, non-objects and bad values', () => {
    refused('{not json')
    refused('[]')
    refused('"x"')
    refused({ k: 'x' })
    refused({ k: [] })
    refused({ k: [['x']] })
  })

  it('refuses unknown operators and malformed ones', () => {
    expect(refused({ k: [{ wildcard: 'a*' }] })).toMatch(/Unrecognized match type wildcard/)
    refused({ k: [{ prefix: 1 }] })
    refused({ k: [{ prefix: '' }] })
    refused({ k: [{ prefix: 'a', suffix: 'b' }] })
    refused({ k: [{ exists: 'yes' }] })
    refused({ k: [{ numeric: ['>'] }] })
    refused({ k: [{ numeric: ['!=', 1] }] })
    refused({ k: [{ numeric: ['<', 10, '>', 0] }] })
    expect(refused({ k: [{ numeric: ['>', 10, '<', 5] }] })).toMatch(/Bottom must be less than top/)
    refused({ k: [{ numeric: ['>', 1e9 + 1] }] })
    refused({ k: [1e10] })
    refused({ k: [{ 'anything-but': [] }] })
    refused({ k: [{ 'anything-but': [true] }] })
    refused({ k: [{ 'anything-but': { wildcard: 'x' } }] })
  })

  it('refuses nesting under attribute scope and accepts it under body scope', () => {
    expect(refused({ a: { b: ['x'] } })).toMatch(/does not support nested filter policy/)
    expect(() => parseFilterPolicy(JSON.stringify({ a: { b: ['x'] } }), 'MessageBody')).not.toThrow()
  })

  it('refuses more than five keys and more than 150 combinations', () => {
    const five = { a: ['1'], b: ['1'], c: ['1'], d: ['1'], e: ['1'] }
    expect(() => parseFilterPolicy(JSON.stringify(five))).not.toThrow()
    expect(refused({ ...five, f: ['1'] })).toMatch(/more than 5 keys/)
    const values = (n: number) => Array.from({ length: n }, (_, i) => `v${i}`)
    expect(() => parseFilterPolicy(JSON.stringify({ a: values(10), b: values(15) }))).not.toThrow()
    expect(refused({ a: values(10), b: values(16) })).toMatch(/too complex/)
    // Under $or the branches' products add up.
    const or = { $or: [{ a: values(75) }, { b: values(75) }] }
    expect(() => parseFilterPolicy(JSON.stringify(or))).not.toThrow()
    refused({ $or: [{ a: values(75) }, { b: values(76) }] })
  })

  it('refuses a policy over 256 KB', () => {
    expect(refused(JSON.stringify({ k: ['x'.repeat(256 * 1024)] }))).toMatch(/too large/)
  })

  it('FilterPolicyScope takes only AWS values', () => {
    expect(parseFilterPolicyScope('MessageBody')).toBe('MessageBody')
    expect(parseFilterPolicyScope('MessageAttributes')).toBe('MessageAttributes')
    expect(() => parseFilterPolicyScope('Body')).toThrow(InvalidFilterPolicyScope)
  })
})

describe('SNS filter policies: properties', () => {
  const word = fc.string({ minLength: 1, maxLength: 8 })

  it('an exact-string policy matches exactly the messages whose attribute is one of its values', () => {
    fc.assert(
      fc.property(fc.uniqueArray(word, { minLength: 1, maxLength: 5 }), word, (values, actual) => {
        const verdict = attrs({ k: values }, { k: str(actual) })
        expect(verdict).toBe(values.includes(actual))
      }),
    )
  })

  it('anything-but is the complement of the exact list whenever the key is present', () => {
    fc.assert(
      fc.property(fc.uniqueArray(word, { minLength: 1, maxLength: 5 }), word, (values, actual) => {
        const a = attrs({ k: values }, { k: str(actual) })
        const b = attrs({ k: [{ 'anything-but': values }] }, { k: str(actual) })
        expect(a).toBe(!b)
      }),
    )
  })

  it('a numeric range agrees with plain comparison at five decimals', () => {
    const n = fc.integer({ min: -1_000_000, max: 1_000_000 }).map((i) => i / 100)
    fc.assert(
      fc.property(n, n, n, (lo, hi, v) => {
        fc.pre(lo < hi)
        const verdict = attrs({ k: [{ numeric: ['>', lo, '<=', hi] }] }, { k: num(v) })
        expect(verdict).toBe(v > lo && v <= hi)
      }),
    )
  })

  it('the same policy gives the same verdict whether the value sits in an attribute or the body', () => {
    fc.assert(
      fc.property(word, word, (prefix, actual) => {
        const p = { k: [{ prefix }] }
        expect(attrs(p, { k: str(actual) })).toBe(body(p, { k: actual }))
      }),
    )
  })
})
