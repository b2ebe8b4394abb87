// Publish and PublishBatch. A publish reads the topic's subscriptions, evaluates each filter policy
// against the message, and stores one SQS message per matching subscription, every one of them in
// ONE engine transaction (log_transaction_v1): the fan-out commits whole or not at all, and a
// PublishBatch commits all of its accepted entries together. Nothing is delivered later: when the
// call answers, every subscribed queue already holds its copy.
import { AwsError } from '../aws/errors.js'
import { optionalString, structList, type Input } from '../aws/input.js'
import { uuidv7 } from '../ids.js'
import { filterPolicyMatches, type MessageAttribute, type MessageAttributes } from './filter-match.js'
import { snsInvalidParameter, snsInvalidParameterValue } from './errors.js'
import type { QueueCopy, SnsHost, SqsDelivery } from './host.js'
import { checkMessageAttributes, InvalidMessageAttribute, messageAttributesSize } from './message-attributes.js'
import { InvalidMessageStructure, queueDelivery, resolveMessageStructure, type PublishedMessage } from './notification.js'
import { topicSubscriptions, type SubscriptionRecord, type TopicRecord } from './registry.js'
import { compiledFilter, redriveTarget } from './subscription-attributes.js'
import { topicByArn } from './topic-actions.js'

/** AWS's ceiling for one message, attributes included, and for a whole PublishBatch. */
const MAX_MESSAGE_BYTES = 262_144
const MAX_BATCH_ENTRIES = 10
/** Printable ASCII, not starting with a space, at most 100 characters. */
const SUBJECT = /^[!-~][ -~]{0,99}$/
const BATCH_ID = /^[A-Za-z0-9_-]{1,80}$/

/** One entry, checked and ready to fan out. */
interface Prepared {
  message: PublishedMessage
  groupId?: string
  deduplicationId?: string
}

function readAttributes(input: Input): MessageAttributes {
  const raw = input.MessageAttributes
  if (raw === undefined || raw === null) return {}
  if (typeof raw !== 'object' || Array.isArray(raw)) throw snsInvalidParameterValue('MessageAttributes must be a map')
  const out: MessageAttributes = {}
  for (const [name, value] of Object.entries(raw as Record<string, unknown>)) {
    const v = (typeof value === 'object' && value !== null ? value : {}) as Record<string, unknown>
    const attribute: MessageAttribute = { DataType: typeof v.DataType === 'string' ? v.DataType : '' }
    if (typeof v.StringValue === 'string') attribute.StringValue = v.StringValue
    // The JSON protocol carries blobs as base64 strings, as the Query one does.
    if (typeof v.BinaryValue === 'string') attribute.BinaryValue = v.BinaryValue
    out[name] = attribute
  }
  try {
    checkMessageAttributes(out)
  } catch (e) {
    if (e instanceof InvalidMessageAttribute) throw snsInvalidParameterValue(e.message)
    throw e
  }
  return out
}

async function sha256Hex(text: string): Promise<string> {
  const bytes = new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(text)))
  return Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('')
}

/** Checks one Publish (or batch entry) the way AWS does; throws InvalidParameter / ParameterValueInvalid. */
async function prepare(input: Input, topic: TopicRecord): Promise<Prepared> {
  const text = optionalString(input, 'Message')
  if (text === undefined || text === '') throw snsInvalidParameter('Invalid parameter: Empty message')
  const subject = optionalString(input, 'Subject')
  if (subject !== undefined && !SUBJECT.test(subject)) throw snsInvalidParameter('Invalid parameter: Subject')
  const attributes = readAttributes(input)
  if (new TextEncoder().encode(text).length + messageAttributesSize(attributes) > MAX_MESSAGE_BYTES) {
    throw snsInvalidParameter('Invalid parameter: Message too long')
  }
  let message: string
  try {
    message = resolveMessageStructure(text, optionalString(input, 'MessageStructure'))
  } catch (e) {
    if (e instanceof InvalidMessageStructure) throw snsInvalidParameter(e.message)
    throw e
  }
  let groupId = optionalString(input, 'MessageGroupId')
  let deduplicationId = optionalString(input, 'MessageDeduplicationId')
  if (topic.fifo) {
    if (groupId === undefined || groupId === '') throw snsInvalidParameter('Invalid parameter: The MessageGroupId parameter is required for FIFO topics')
    if (deduplicationId === undefined) {
      if (topic.attributes.ContentBasedDeduplication !== 'true') {
        throw snsInvalidParameter('Invalid parameter: The topic should either have ContentBasedDeduplication enabled or MessageDeduplicationId provided explicitly')
      }
      deduplicationId = await sha256Hex(message)
    }
  } else {
    if (deduplicationId !== undefined) {
      throw snsInvalidParameter('Invalid parameter: MessageDeduplicationId Reason: The request includes MessageDeduplicationId parameter that is not valid for this topic type')
    }
    groupId = undefined
  }
  const published: PublishedMessage = { messageId: uuidv7(), topicArn: topic.arn, message, attributes, timestamp: new Date() }
  if (subject !== undefined) published.subject = subject
  return { message: published, ...(groupId !== undefined ? { groupId } : {}), ...(deduplicationId !== undefined ? { deduplicationId } : {}) }
}

/** Where a subscription's copy goes: its queue, else its redrive target, else nowhere (AWS drops it). */
async function resolveTargets(host: SnsHost, subscriptions: SubscriptionRecord[]): Promise<Map<string, string | null>> {
  const exists = new Map<string, boolean>()
  const has = async (arn: string) => {
    if (!exists.has(arn)) exists.set(arn, (await host.queues.find(arn)) !== null)
    return exists.get(arn) as boolean
  }
  const targets = new Map<string, string | null>()
  for (const s of subscriptions) {
    let target: string | null = null
    if (await has(s.endpoint)) target = s.endpoint
    else if (s.attributes.RedrivePolicy !== undefined) {
      const dlq = redriveTarget(s.attributes.RedrivePolicy)
      if (await has(dlq)) target = dlq
    }
    targets.set(s.id, target)
  }
  return targets
}

/** Builds every copy of every entry and hands them to the queues to store in one transaction. */
async function fanOut(host: SnsHost, topic: TopicRecord, entries: Prepared[]): Promise<void> {
  const subscriptions = await topicSubscriptions(host.db, topic.name)
  if (subscriptions.length === 0 || entries.length === 0) return
  const filters = new Map(subscriptions.map((s) => [s.id, compiledFilter(s.attributes)]))
  const targets = await resolveTargets(host, subscriptions)
  const copies: QueueCopy[] = []
  for (const entry of entries) {
    for (const s of subscriptions) {
      const target = targets.get(s.id)
      if (!target) continue
      const filter = filters.get(s.id)
      if (filter && !filterPolicyMatches(filter, { body: entry.message.message, attributes: entry.message.attributes })) continue
      const shaped = queueDelivery(entry.message, s.attributes.RawMessageDelivery === 'true')
      const delivery: SqsDelivery = { ...shaped, ...(entry.groupId !== undefined ? { groupId: entry.groupId } : {}), ...(entry.deduplicationId !== undefined ? { deduplicationId: entry.deduplicationId } : {}) }
      copies.push({ queueArn: target, delivery })
    }
  }
  if (copies.length > 0) await host.queues.deliver(copies)
}

function topicArnOf(input: Input): string {
  const topicArn = optionalString(input, 'TopicArn') ?? optionalString(input, 'TargetArn')
  if (optionalString(input, 'PhoneNumber') !== undefined) throw snsInvalidParameter('Invalid parameter: PhoneNumber Reason: SMS is not supported here')
  if (topicArn === undefined) throw snsInvalidParameter('Invalid parameter: TopicArn or TargetArn Reason: no value for required parameter')
  return topicArn
}

export async function publishAction(input: Input, host: SnsHost) {
  const topic = (await topicByArn(host, topicArnOf(input))).record
  const entry = await prepare(input, topic)
  await fanOut(host, topic, [entry])
  // A FIFO publish answers no SequenceNumber: a transaction's pushes carry no offset (docs/sns.md).
  return { MessageId: entry.message.messageId }
}

export async function publishBatchAction(input: Input, host: SnsHost) {
  const topic = (await topicByArn(host, optionalString(input, 'TopicArn') ?? topicArnOf(input))).record
  const entries = structList(input, 'PublishBatchRequestEntries')
  if (entries.length === 0) throw new AwsError('EmptyBatchRequest', 'The batch request does not contain any entries.', 400)
  if (entries.length > MAX_BATCH_ENTRIES) throw new AwsError('TooManyEntriesInBatchRequest', `The batch request contains more entries than permissible (${MAX_BATCH_ENTRIES}).`, 400)
  const ids = entries.map((e) => e.Id)
  for (const id of ids) {
    if (typeof id !== 'string' || !BATCH_ID.test(id)) throw new AwsError('InvalidBatchEntryId', 'The Id of a batch entry in a batch request does not abide by the specification.', 400)
  }
  if (new Set(ids).size !== ids.length) throw new AwsError('BatchEntryIdsNotDistinct', 'Two or more batch entries in the request have the same Id.', 400)
  const total = entries.reduce((n, e) => n + new TextEncoder().encode(typeof e.Message === 'string' ? e.Message : '').length, 0)
  if (total > MAX_MESSAGE_BYTES) throw new AwsError('BatchRequestTooLong', 'The length of all the messages put together is more than the limit.', 400)

  const accepted: { id: string; entry: Prepared }[] = []
  const failed: { Id: string; Code: string; Message: string; SenderFault: boolean }[] = []
  for (const e of entries) {
    try {
      accepted.push({ id: e.Id as string, entry: await prepare(e, topic) })
    } catch (error) {
      if (!(error instanceof AwsError)) throw error
      failed.push({ Id: e.Id as string, Code: error.code, Message: error.message, SenderFault: true })
    }
  }
  // Every accepted entry in one transaction: all of them are stored, or the call fails whole.
  await fanOut(host, topic, accepted.map((a) => a.entry))
  return {
    Successful: accepted.map((a) => ({ Id: a.id, MessageId: a.entry.message.messageId })),
    Failed: failed,
  }
}
