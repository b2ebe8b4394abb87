// SendMessage and SendMessageBatch. A standard queue's message goes to a random one of its
// partitions; a FIFO message to the partition named by its MessageGroupId, with its deduplication
// id (or the body's SHA-256 under ContentBasedDeduplication) as the transaction id, so the engine's
// deduplication window drops a repeat and answers the original. A batch is one push.
import type { AwsAction } from '../../aws/endpoint.js'
import type { AwsContext } from '../../aws/mount.js'
import { optionalInt, optionalString, requiredString, structList, type Input } from '../../aws/input.js'
import { sha256Hex } from '../../aws/sigv4.js'
import { AwsError } from '../../aws/errors.js'
import { ROLE_SETS } from '../../http/route.js'
import { withEncryption } from '../../messages/encode.js'
import { wakePops } from '../../messages/wake-pops.js'
import { resolveQueue, type SqsCall } from '../context.js'
import type { Envelope } from '../envelope.js'
import { wrap } from '../envelope.js'
import { batchTooLong, emptyBatch, idsNotDistinct, invalidBatchEntryId, invalidMessageContents, invalidParameter, missing, tooManyEntries } from '../errors.js'
import { isBinary, md5Hex, md5OfAttributes, type MessageAttributeValue } from '../md5.js'
import type { QueueRecord } from '../registry.js'
import { scheduleDelayed, type DelayedSend } from './delay.js'

type Action = AwsAction<AwsContext>

// XML 1.0's characters, SQS's rule for a body and a string attribute.
const ALLOWED = /^[\u0009\u000A\u000D\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]*$/u
const MAX_BATCH_BYTES = 1_048_576
export const BATCH_ID = /^[A-Za-z0-9_-]{1,80}$/

interface Prepared {
  body: string
  attributes?: Record<string, MessageAttributeValue>
  system?: Record<string, MessageAttributeValue>
  groupId?: string
  dedupId?: string
  delaySeconds: number
  bytes: number
}

function messageAttributes(input: Input, name: string): Record<string, MessageAttributeValue> | undefined {
  const raw = input[name]
  if (raw === undefined || raw === null) return undefined
  if (typeof raw !== 'object' || Array.isArray(raw)) throw invalidParameter(`${name} must be a map`)
  const out: Record<string, MessageAttributeValue> = {}
  for (const [key, value] of Object.entries(raw as Record<string, unknown>)) {
    const v = value as Record<string, unknown>
    if (typeof v !== 'object' || v === null || typeof v.DataType !== 'string' || v.DataType === '') throw invalidParameter(`The message attribute '${key}' must contain a non-empty message attribute type.`)
    if (!/^(String|Number|Binary)(\..+)?$/.test(v.DataType)) throw invalidParameter(`The type of message attribute '${key}' is invalid.`)
    if (!/^[A-Za-z0-9_.-]{1,256}$/.test(key) || key.startsWith('.') || key.endsWith('.') || key.includes('..') || /^(aws|amazon)\./i.test(key)) throw invalidParameter(`Message attribute name '${key}' is invalid.`)
    if (isBinary(v.DataType)) {
      if (typeof v.BinaryValue !== 'string' || v.BinaryValue === '') throw invalidParameter(`The message attribute '${key}' with type 'Binary' must use field 'Binary'.`)
      out[key] = { DataType: v.DataType, BinaryValue: v.BinaryValue }
    } else {
      if (typeof v.StringValue !== 'string' || v.StringValue === '') throw invalidParameter(`The message attribute '${key}' must contain a non-empty message attribute value for message attribute type '${v.DataType}'.`)
      if (!ALLOWED.test(v.StringValue)) throw invalidMessageContents(`Invalid characters found in the message attribute '${key}'.`)
      out[key] = { DataType: v.DataType, StringValue: v.StringValue }
    }
  }
  if (Object.keys(out).length > 10) throw invalidParameter('Number of message attributes cannot exceed 10.')
  return Object.keys(out).length > 0 ? out : undefined
}

function attributeBytes(attributes: Record<string, MessageAttributeValue> | undefined): number {
  let n = 0
  for (const [k, v] of Object.entries(attributes ?? {})) n += k.length + v.DataType.length + (v.StringValue?.length ?? Math.ceil(((v.BinaryValue?.length ?? 0) * 3) / 4))
  return n
}

async function prepare(input: Input, record: QueueRecord): Promise<Prepared> {
  const body = requiredString(input, 'MessageBody')
  if (body === '') throw missing('MessageBody')
  if (!ALLOWED.test(body)) throw invalidMessageContents('Invalid characters found. Valid unicode characters are #x9 | #xA | #xD | #x20 to #xD7FF | #xE000 to #xFFFD | #x10000 to #x10FFFF')
  const attributes = messageAttributes(input, 'MessageAttributes')
  const system = messageAttributes(input, 'MessageSystemAttributes')
  const bytes = new TextEncoder().encode(body).length + attributeBytes(attributes)
  const max = Number(record.attributes.MaximumMessageSize ?? 262_144)
  if (bytes > max) throw invalidParameter(`One or more parameters are invalid. Reason: Message must be shorter than ${max} bytes.`)
  const delay = optionalInt(input, 'DelaySeconds', 0, 900)
  let groupId = optionalString(input, 'MessageGroupId')
  let dedupId = optionalString(input, 'MessageDeduplicationId')
  if (record.fifo) {
    if (groupId === undefined) throw missing('MessageGroupId')
    if (delay !== undefined && delay > 0) throw invalidParameter('Value for parameter DelaySeconds is invalid. Reason: The request include parameter that is not valid for this queue type.')
    if (dedupId === undefined) {
      if (record.attributes.ContentBasedDeduplication !== 'true') throw invalidParameter('The queue should either have ContentBasedDeduplication enabled or MessageDeduplicationId provided explicitly')
      dedupId = await sha256Hex(new TextEncoder().encode(body))
    }
    if (!/^[\x21-\x7e]{1,128}$/.test(groupId) || !/^[\x21-\x7e]{1,128}$/.test(dedupId)) throw invalidParameter('MessageGroupId and MessageDeduplicationId are 1 to 128 printable ASCII characters.')
  } else {
    if (dedupId !== undefined) throw invalidParameter('The request includes a parameter that is not valid for this queue type: MessageDeduplicationId.')
    // A standard queue keeps a group id for the consumers that read it, but it orders nothing.
    if (groupId !== undefined && !/^[\x21-\x7e]{1,128}$/.test(groupId)) throw invalidParameter('MessageGroupId is 1 to 128 printable ASCII characters.')
    if (groupId === undefined) groupId = undefined
  }
  return { body, attributes, system, groupId, dedupId, delaySeconds: delay ?? 0, bytes }
}

// Standard queues: each process deals its sends round the lanes from a random start, so the sends of
// one producer never share a lane before every lane has one (a shared lane blocks in-flight messages).
let dealt = Math.floor(Math.random() * 1_000_000)
export function nextLane(width: number): string {
  dealt = (dealt + 1) % 1_000_000_000
  return String(dealt % width)
}

interface Sent {
  MessageId: string
  MD5OfMessageBody: string
  MD5OfMessageAttributes?: string
  MD5OfMessageSystemAttributes?: string
  SequenceNumber?: string
}

/** Sends prepared messages in one push (and one timer batch for the delayed ones); results in input order. */
async function sendAll(call: SqsCall, record: QueueRecord, prepared: readonly Prepared[]): Promise<(Sent | AwsError)[]> {
  const c = call.context
  const now = Date.now()
  const partitionOf = (p: Prepared) => (record.fifo ? (p.groupId as string) : nextLane(record.width))
  const envelopeOf = (p: Prepared): Envelope => ({
    b: p.body,
    ...(p.attributes ? { a: p.attributes } : {}),
    ...(p.system ? { s: p.system } : {}),
    t: now,
    k: call.key.accessKeyId,
    ...(p.groupId !== undefined ? { g: p.groupId } : {}),
    ...(p.dedupId !== undefined ? { d: p.dedupId } : {}),
  })
  const immediate = prepared.map((p, i) => [p, i] as const).filter(([p]) => p.delaySeconds === 0)
  const delayed = prepared.map((p, i) => [p, i] as const).filter(([p]) => p.delaySeconds > 0)
  const out: (Sent | AwsError)[] = new Array(prepared.length)
  const digest = (p: Prepared, messageId: string, sequence?: number): Sent => ({
    MessageId: messageId,
    MD5OfMessageBody: md5Hex(p.body),
    ...(p.attributes ? { MD5OfMessageAttributes: md5OfAttributes(p.attributes) } : {}),
    ...(p.system ? { MD5OfMessageSystemAttributes: md5OfAttributes(p.system) } : {}),
    ...(record.fifo && sequence !== undefined ? { SequenceNumber: String(sequence) } : {}),
  })
  if (immediate.length > 0) {
    const items = immediate.map(([p]) => ({ queue: record.name, partition: partitionOf(p), transactionId: p.dedupId ?? null, traceId: null, data: wrap(envelopeOf(p)) }))
    const result = await withEncryption(c, items, (i) => `Entries[${i}]`, (encoded) => c.get('db').call('log_push_v1', { items: encoded }), (r) => r.queues)
    wakePops(c, items.map((i) => i.queue))
    c.get('metrics').pushed(result.items.map((r) => r.status))
    for (const r of result.items) {
      const [p, index] = immediate[r.index] as readonly [Prepared, number]
      out[index] = digest(p, r.messageId, r.offset)
    }
  }
  if (delayed.length > 0) {
    const sends: DelayedSend[] = delayed.map(([p]) => ({ queue: record.name, partition: partitionOf(p), delaySeconds: p.delaySeconds, envelope: { ...envelopeOf(p), i: crypto.randomUUID() } }))
    const verdicts = await scheduleDelayed(c, sends)
    verdicts.forEach((v, k) => {
      const [p, index] = delayed[k] as readonly [Prepared, number]
      out[index] = v.ok ? digest(p, (sends[k] as DelayedSend).envelope.i) : new AwsError('AWS.SimpleQueueService.UnsupportedOperation', `The delayed send was refused: ${v.status}.`, 400, 'UnsupportedOperation')
    })
  }
  return out
}

const sendMessage: Action = {
  roles: ROLE_SETS.W_RW_A,
  async run(input, call) {
    const { record } = await resolveQueue(call, input)
    const [sent] = await sendAll(call, record, [await prepare(input, record)])
    if (sent instanceof AwsError) throw sent
    return { ...sent }
  },
}

/** Checks a batch's entries as SQS does: 1-10, distinct well-formed ids. */
export function checkBatch(entries: Input[]): string[] {
  if (entries.length === 0) throw emptyBatch()
  if (entries.length > 10) throw tooManyEntries(entries.length)
  const ids = entries.map((e) => requiredString(e, 'Id'))
  const seen = new Set<string>()
  for (const id of ids) {
    if (!BATCH_ID.test(id)) throw invalidBatchEntryId(id)
    if (seen.has(id)) throw idsNotDistinct(id)
    seen.add(id)
  }
  return ids
}

export const failedEntry = (id: string, error: AwsError) => ({ Id: id, SenderFault: error.status < 500, Code: error.jsonType ?? error.code, Message: error.message })

const sendMessageBatch: Action = {
  roles: ROLE_SETS.W_RW_A,
  responseShapes: {
    Successful: { kind: 'list', query: 'SendMessageBatchResultEntry', flat: true },
    Failed: { kind: 'list', query: 'BatchResultErrorEntry', flat: true },
  },
  async run(input, call) {
    const { record } = await resolveQueue(call, input)
    const entries = structList(input, 'Entries')
    const ids = checkBatch(entries)
    const failed: ReturnType<typeof failedEntry>[] = []
    const ready: { id: string; prepared: Prepared }[] = []
    for (const [i, entry] of entries.entries()) {
      try {
        ready.push({ id: ids[i] as string, prepared: await prepare(entry, record) })
      } catch (error) {
        if (!(error instanceof AwsError)) throw error
        failed.push(failedEntry(ids[i] as string, error))
      }
    }
    const total = ready.reduce((n, r) => n + r.prepared.bytes, 0)
    if (total > MAX_BATCH_BYTES) throw batchTooLong(total)
    const sent = ready.length > 0 ? await sendAll(call, record, ready.map((r) => r.prepared)) : []
    const successful: (Sent & { Id: string })[] = []
    sent.forEach((s, k) => {
      const id = (ready[k] as { id: string }).id
      if (s instanceof AwsError) failed.push(failedEntry(id, s))
      else successful.push({ Id: id, ...s })
    })
    return { Successful: successful, Failed: failed }
  },
}

export const sendActions = { SendMessage: sendMessage, SendMessageBatch: sendMessageBatch }
