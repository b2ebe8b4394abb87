// The checks SNS applies to a publish's message attributes before anything is delivered. They are
// AWS's own rules, so a publish refused here is refused there too and a subscriber never receives an
// attribute its SDK would fail to read back.
import type { MessageAttribute, MessageAttributes } from './filter-match.js'

/** A message attribute AWS would refuse; the text becomes `InvalidParameterValue`'s message. */
export class InvalidMessageAttribute extends Error {
  constructor(reason: string) {
    super(reason)
    this.name = 'InvalidMessageAttribute'
  }
}

const NAME = /^[A-Za-z0-9_.-]{1,256}$/
const BASE_TYPES = ['String', 'Number', 'Binary'] as const

/** AWS's naming rule: letters, digits, `_ - .`, no leading/trailing/double period, no AWS prefix. */
function checkName(name: string): void {
  const bad =
    !NAME.test(name) ||
    name.startsWith('.') ||
    name.endsWith('.') ||
    name.includes('..') ||
    /^(aws\.|amazon\.)/i.test(name)
  if (bad) throw new InvalidMessageAttribute(`Message attribute name '${name}' is invalid.`)
}

/** `String.Array` is its own type; otherwise a base type optionally followed by `.label`. */
function baseType(dataType: string): 'String' | 'Number' | 'Binary' | 'String.Array' | null {
  if (dataType === 'String.Array') return 'String.Array'
  const [base, ...label] = dataType.split('.')
  if (label.length > 0 && label.join('.') === '') return null
  return (BASE_TYPES as readonly string[]).includes(base ?? '') ? (base as 'String' | 'Number' | 'Binary') : null
}

function checkOne(name: string, a: MessageAttribute): void {
  checkName(name)
  const type = typeof a?.DataType === 'string' ? baseType(a.DataType) : null
  if (type === null) {
    throw new InvalidMessageAttribute(
      `The message attribute '${name}' has an invalid message attribute type, the set of supported type prefixes is Binary, Number, and String.`,
    )
  }
  if (type === 'Binary') {
    if (typeof a.BinaryValue !== 'string' || a.BinaryValue === '') {
      throw new InvalidMessageAttribute(`The message attribute '${name}' with type 'Binary' must use field 'Binary'.`)
    }
    return
  }
  if (typeof a.StringValue !== 'string') {
    throw new InvalidMessageAttribute(`The message attribute '${name}' must contain non-empty message attribute value for message attribute type '${type}'.`)
  }
  if (type === 'Number') {
    const n = Number(a.StringValue)
    if (a.StringValue.trim() === '' || !Number.isFinite(n)) {
      throw new InvalidMessageAttribute(`Could not cast message attribute '${name}' value to number.`)
    }
  }
  if (type === 'String.Array') {
    let parsed: unknown
    try {
      parsed = JSON.parse(a.StringValue)
    } catch {
      parsed = undefined
    }
    const ok = Array.isArray(parsed) && parsed.every((v) => v === null || ['string', 'number', 'boolean'].includes(typeof v))
    if (!ok) {
      throw new InvalidMessageAttribute(
        `The message attribute '${name}' with type 'String.Array' has an invalid value: it must be a JSON array of strings, numbers, true, false or null.`,
      )
    }
  }
}

/** Checks every attribute; throws InvalidMessageAttribute for the first AWS would refuse. */
export function checkMessageAttributes(attributes: MessageAttributes): void {
  for (const [name, a] of Object.entries(attributes)) checkOne(name, a)
}

/** Bytes the attributes add to the 256 KB message ceiling: names, types and values, as AWS counts. */
export function messageAttributesSize(attributes: MessageAttributes): number {
  const enc = new TextEncoder()
  let size = 0
  for (const [name, a] of Object.entries(attributes)) {
    size += enc.encode(name).length + enc.encode(a.DataType).length
    size += a.BinaryValue !== undefined ? Math.floor((a.BinaryValue.length * 3) / 4) : enc.encode(a.StringValue ?? '').length
  }
  return size
}
