// The MD5 digests SQS answers beside a message, computed exactly as AWS does: SDKs recompute them
// and throw when they differ. node:crypto (nodejs_compat on Workers) has the MD5 Web Crypto lacks.
import { createHash } from 'node:crypto'

export interface MessageAttributeValue {
  DataType: string
  StringValue?: string
  BinaryValue?: string
}

export function md5Hex(data: string | Uint8Array): string {
  return createHash('md5').update(data).digest('hex')
}

/**
 * AWS's digest of message attributes: the names in byte order, each as length-prefixed name,
 * length-prefixed data type, a transport byte (1 string, 2 binary) and the length-prefixed value,
 * lengths as 4-byte big-endian integers. Binary values are the decoded bytes.
 */
export function md5OfAttributes(attributes: Record<string, MessageAttributeValue>): string {
  const chunks: Uint8Array[] = []
  const utf8 = new TextEncoder()
  const lengthPrefixed = (bytes: Uint8Array) => {
    const length = new Uint8Array(4)
    new DataView(length.buffer).setUint32(0, bytes.length)
    chunks.push(length, bytes)
  }
  const names = Object.keys(attributes).sort(byteOrder)
  for (const name of names) {
    const value = attributes[name] as MessageAttributeValue
    lengthPrefixed(utf8.encode(name))
    lengthPrefixed(utf8.encode(value.DataType))
    if (value.BinaryValue !== undefined && isBinary(value.DataType)) {
      chunks.push(Uint8Array.of(2))
      lengthPrefixed(Uint8Array.from(atob(value.BinaryValue), (ch) => ch.charCodeAt(0)))
    } else {
      chunks.push(Uint8Array.of(1))
      lengthPrefixed(utf8.encode(value.StringValue ?? ''))
    }
  }
  const hash = createHash('md5')
  for (const chunk of chunks) hash.update(chunk)
  return hash.digest('hex')
}

export const isBinary = (dataType: string) => dataType.split('.')[0] === 'Binary'

/** Compares two strings by their UTF-8 bytes, the order AWS sorts attribute names in. */
function byteOrder(a: string, b: string): number {
  const x = new TextEncoder().encode(a)
  const y = new TextEncoder().encode(b)
  for (let i = 0; i < Math.min(x.length, y.length); i++) if (x[i] !== y[i]) return (x[i] as number) - (y[i] as number)
  return x.length - y.length
}
