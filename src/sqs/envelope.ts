// What an SQS message is stored as: the broker's messages are JSON, and SQS's have a body, message
// attributes and system attributes besides, so the facade stores one object under the key `sqs`.
// A message pushed natively (no envelope) reads back with its JSON text as the body.
import type { MessageAttributeValue } from './md5.js'

export interface Envelope {
  /** The body, exactly as sent. */
  b: string
  /** Message attributes. */
  a?: Record<string, MessageAttributeValue>
  /** System attributes (AWSTraceHeader). */
  s?: Record<string, MessageAttributeValue>
  /** Sent at, epoch milliseconds. */
  t: number
  /** The sender: the access key id. */
  k: string
  /** FIFO: the message group and deduplication ids. */
  g?: string
  d?: string
  /** The MessageId when the facade minted it before the message existed (a delayed send). */
  i?: string
  /** A dead-lettered copy: its source queue, original MessageId, and the receives it carried. */
  src?: string
  oid?: string
  rc?: number
}

export function wrap(envelope: Envelope): { sqs: Envelope } {
  return { sqs: envelope }
}

/** The envelope a stored payload carries, or one made up for a natively pushed message. */
export function unwrap(data: unknown, createdAt: string): Envelope {
  if (typeof data === 'object' && data !== null && 'sqs' in data) {
    const e = (data as { sqs: unknown }).sqs
    if (typeof e === 'object' && e !== null && typeof (e as Envelope).b === 'string') return e as Envelope
  }
  return { b: typeof data === 'string' ? data : JSON.stringify(data), t: Date.parse(createdAt) || 0, k: 'queen' }
}
