// Evaluates a checked filter policy (src/sns/filter-policy.ts) against one published message, at
// publish time, once per subscription that has a policy. Pure and synchronous: a publish reads the
// subscriptions, evaluates here, and pushes only to the queues whose policy matched.
import { type Condition, type FilterPolicy, type KeyTest, type Scalar, toFixed5 } from './filter-policy.js'

/** A message attribute as a publisher sends it (Binary values are base64). */
export interface MessageAttribute {
  DataType: string
  StringValue?: string
  BinaryValue?: string
}

export type MessageAttributes = Record<string, MessageAttribute>

/** What a key resolves to: absent, or present with the values a condition may match. */
type Found = { present: false } | { present: true; values: Scalar[] }

const ABSENT: Found = { present: false }

/**
 * Attribute scope. AWS compares String, Number and String.Array attributes and ignores Binary ones
 * (a Binary attribute is as good as absent). A custom label after the type (`String.code`) keeps
 * the base type; `String.Array` is its own type, a JSON array whose elements are each a candidate.
 */
function attributeValues(attribute: MessageAttribute | undefined): Found {
  if (attribute === undefined || attribute.StringValue === undefined) return ABSENT
  const type = attribute.DataType
  if (type === 'String.Array') {
    try {
      const parsed: unknown = JSON.parse(attribute.StringValue)
      if (!Array.isArray(parsed)) return ABSENT
      return { present: true, values: parsed.filter(isScalar) }
    } catch {
      return ABSENT
    }
  }
  const base = type.split('.')[0]
  if (base === 'String') return { present: true, values: [attribute.StringValue] }
  if (base === 'Number') {
    const n = Number(attribute.StringValue)
    return { present: true, values: Number.isFinite(n) ? [n] : [] }
  }
  return ABSENT
}

function isScalar(v: unknown): v is Scalar {
  return v === null || typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean'
}

/**
 * Body scope: follows the path through nested objects, and through arrays element by element (an
 * array of objects matches when any element does). Only leaves count: a key whose value is an
 * object is absent for `exists`, as AWS documents.
 */
function bodyValues(root: unknown, path: string[]): Found {
  let frontier: unknown[] = [root]
  for (const segment of path) {
    const next: unknown[] = []
    for (const node of frontier) {
      for (const item of Array.isArray(node) ? node : [node]) {
        if (typeof item === 'object' && item !== null && !Array.isArray(item) && Object.hasOwn(item, segment)) {
          next.push((item as Record<string, unknown>)[segment])
        }
      }
    }
    frontier = next
  }
  const values: Scalar[] = []
  let present = false
  for (const leaf of frontier) {
    for (const v of Array.isArray(leaf) ? leaf : [leaf]) {
      if (isScalar(v)) {
        values.push(v)
        present = true
      }
    }
  }
  return present ? { present: true, values } : ABSENT
}

function sameValue(candidate: Scalar, wanted: Scalar): boolean {
  if (typeof wanted === 'number') return typeof candidate === 'number' && toFixed5(candidate) === wanted
  return candidate === wanted
}

function valueMatches(c: Exclude<Condition, { kind: 'exists' }>, v: Scalar): boolean {
  switch (c.kind) {
    case 'exact':
      return sameValue(v, c.value)
    case 'prefix':
      return typeof v === 'string' && v.startsWith(c.value)
    case 'suffix':
      return typeof v === 'string' && v.endsWith(c.value)
    case 'equalsIgnoreCase':
      return typeof v === 'string' && v.toLowerCase() === c.value.toLowerCase()
    case 'numeric': {
      if (typeof v !== 'number') return false
      const n = toFixed5(v)
      if (c.lower && (c.lower.inclusive ? n < c.lower.value : n <= c.lower.value)) return false
      if (c.upper && (c.upper.inclusive ? n > c.upper.value : n >= c.upper.value)) return false
      return true
    }
    case 'anythingBut':
      return !c.values.some((w) => sameValue(v, w))
    case 'anythingButPrefix':
      return typeof v === 'string' && !v.startsWith(c.value)
    case 'anythingButSuffix':
      return typeof v === 'string' && !v.endsWith(c.value)
    case 'anythingButIgnoreCase':
      return typeof v === 'string' && !c.values.some((w) => w.toLowerCase() === v.toLowerCase())
  }
}

/** A key's conditions are OR-ed; every condition but `exists` needs the key and one matching value. */
function keyMatches(test: KeyTest, found: Found): boolean {
  return test.conditions.some((c) => {
    if (c.kind === 'exists') return c.value === found.present
    return found.present && found.values.some((v) => valueMatches(c, v))
  })
}

/**
 * True when the message passes the policy. Under body scope a body that is not a JSON object
 * matches nothing, as at AWS: the subscriber asked to filter on fields the message does not have.
 */
export function filterPolicyMatches(policy: FilterPolicy, message: { body: string; attributes: MessageAttributes }): boolean {
  if (policy.branches.length === 0) return true
  let resolve: (test: KeyTest) => Found
  if (policy.scope === 'MessageBody') {
    let root: unknown
    try {
      root = JSON.parse(message.body)
    } catch {
      return false
    }
    if (typeof root !== 'object' || root === null || Array.isArray(root)) return false
    resolve = (test) => bodyValues(root, test.path)
  } else {
    resolve = (test) => attributeValues(Object.hasOwn(message.attributes, test.path[0]!) ? message.attributes[test.path[0]!] : undefined)
  }
  return policy.branches.some((branch) => branch.every((test) => keyMatches(test, resolve(test))))
}
