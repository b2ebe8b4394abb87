// What a subscribed SQS queue receives for one publish. By default AWS wraps the message in a JSON
// notification document; with `RawMessageDelivery=true` the queue gets the message as published and
// the SNS attributes become SQS message attributes. The document here leaves out Signature,
// SigningCertURL and UnsubscribeURL (docs/sns.md says why: a signature nothing can verify and URLs
// that point nowhere are worse present than absent); SignatureVersion stays because clients compare it.
import type { MessageAttributes } from './filter-match.js'

/** One publish as the subscribers see it, before it is shaped per subscription. */
export interface PublishedMessage {
  messageId: string
  topicArn: string
  subject?: string
  /** The text for SQS subscribers: `MessageStructure=json` is already resolved (resolveMessageStructure). */
  message: string
  attributes: MessageAttributes
  timestamp: Date
}

/** An SQS message to push: its body and its SQS message attributes. */
export interface QueueDelivery {
  body: string
  attributes: MessageAttributes
}

/** The notification document's attribute shape: `{Type, Value}`, Binary values as base64. */
function notificationAttributes(attributes: MessageAttributes): Record<string, { Type: string; Value: string }> {
  const out: Record<string, { Type: string; Value: string }> = {}
  for (const [name, a] of Object.entries(attributes)) {
    out[name] = { Type: a.DataType, Value: a.BinaryValue ?? a.StringValue ?? '' }
  }
  return out
}

/** The JSON document AWS delivers to a queue that did not ask for raw delivery. */
export function notificationDocument(m: PublishedMessage): string {
  const doc: Record<string, unknown> = {
    Type: 'Notification',
    MessageId: m.messageId,
    TopicArn: m.topicArn,
  }
  if (m.subject !== undefined) doc.Subject = m.subject
  doc.Message = m.message
  doc.Timestamp = m.timestamp.toISOString()
  doc.SignatureVersion = '1'
  if (Object.keys(m.attributes).length > 0) doc.MessageAttributes = notificationAttributes(m.attributes)
  return JSON.stringify(doc)
}

/** The SQS message one subscription receives: the document, or the message itself when raw. */
export function queueDelivery(m: PublishedMessage, rawMessageDelivery: boolean): QueueDelivery {
  if (rawMessageDelivery) return { body: m.message, attributes: m.attributes }
  return { body: notificationDocument(m), attributes: {} }
}

/** A `MessageStructure=json` publish that AWS refuses; the text becomes InvalidParameter's message. */
export class InvalidMessageStructure extends Error {
  constructor(reason: string) {
    super(`Invalid parameter: Message Structure - ${reason}`)
    this.name = 'InvalidMessageStructure'
  }
}

/**
 * The text an SQS subscriber gets. With `MessageStructure=json` the message is a JSON object of
 * per-protocol texts that must name a `default`; a queue takes its `sqs` entry, else the default.
 */
export function resolveMessageStructure(message: string, structure: string | undefined): string {
  if (structure === undefined || structure === '') return message
  if (structure !== 'json') throw new InvalidMessageStructure(`Invalid value [${structure}]: the only accepted value is json`)
  let parsed: unknown
  try {
    parsed = JSON.parse(message)
  } catch {
    throw new InvalidMessageStructure('JSON message body failed to parse')
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new InvalidMessageStructure('JSON message body failed to parse')
  }
  const entries = parsed as Record<string, unknown>
  if (typeof entries.default !== 'string') throw new InvalidMessageStructure('No default entry in JSON message body')
  return typeof entries.sqs === 'string' ? entries.sqs : entries.default
}
