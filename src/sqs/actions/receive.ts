// ReceiveMessage: up to MaxNumberOfMessages pops of ONE message each, so each message has its own
// lease and every later verb (delete, visibility) acts on exactly that message. WaitTimeSeconds is
// a long poll: parked on the app's wake-ups where there are some (Node), re-checked with backoff
// otherwise (Workers). A message received more often than its queue's RedrivePolicy allows is moved
// to the dead-letter queue (push there and ack here, one transaction) instead of being handed out.
import type { AwsAction } from '../../aws/endpoint.js'
import type { AwsContext } from '../../aws/mount.js'
import { optionalInt, stringList } from '../../aws/input.js'
import type { PoppedFrame } from '../../db/procedures.js'
import { ROLE_SETS } from '../../http/route.js'
import { wakePops } from '../../messages/wake-pops.js'
import { QUEUE_MODE } from '../../names.js'
import { sleepOnly, wakeKey, type WakeOutcome } from '../../pop-waker.js'
import { reveal } from '../../reveal.js'
import { redrivePolicy, type RedrivePolicy } from '../attributes.js'
import { accountOf, receiptKeyOf, resolveQueue, type SqsCall } from '../context.js'
import { unwrap, wrap, type Envelope } from '../envelope.js'
import { md5Hex, md5OfAttributes, type MessageAttributeValue } from '../md5.js'
import { nameFromArn, queueArn } from '../queue-url.js'
import { signReceipt } from '../receipt.js'
import { getQueue, type QueueRecord } from '../registry.js'
import { nextLane } from './send.js'

type Action = AwsAction<AwsContext>

const FIRST_BACKOFF_MS = 100
const MAX_BACKOFF_MS = 1000

/** One pop of one message under its own lease, or null when nothing is ready. */
export async function popOne(call: SqsCall, record: QueueRecord, visibility: number): Promise<PoppedFrame | null> {
  const c = call.context
  const config = c.get('config')
  if (config.TIMERS_FIRE_ON_POP) await c.get('db').call('timers_fire_queue_v1', { queue: record.name, limit: 10 })
  const result = await c.get('db').call('log_pop_v1', {
    request: {
      queue: record.name,
      group: QUEUE_MODE,
      batch: 1,
      partitions: 1,
      autoAck: false,
      subscriptionMode: 'all',
      maxBytes: config.POP_MAX_BYTES,
      // The engine's lease is at least a second; a zero visibility is a release right after (below).
      leaseSeconds: Math.max(1, visibility),
    },
  })
  const frame = result.messages[0]
  if (frame === undefined) return null
  if (!frame.enc) return frame
  const [revealed] = await reveal(config, [frame], (m) => ({ tenant: c.get('db').tenant, queue: m.queue, partition: m.partition }))
  return { ...frame, ...revealed, enc: false } as PoppedFrame
}

/** The DLQ move: the copy carries its source, its original id and the receives it had, in one transaction with the ack. */
async function deadLetter(call: SqsCall, record: QueueRecord, policy: RedrivePolicy, frame: PoppedFrame, envelope: Envelope, receives: number): Promise<boolean> {
  const c = call.context
  const target = nameFromArn(policy.deadLetterTargetArn, accountOf(call))
  const dlq = target === null ? null : await getQueue(c, target)
  if (dlq === null) return false
  const copy: Envelope = { ...envelope, src: record.name, oid: envelope.i ?? frame.id, rc: receives }
  delete copy.i
  const partition = dlq.record.fifo ? (envelope.g ?? 'Default') : nextLane(dlq.record.width)
  const result = await c.get('db').call('log_transaction_v1', {
    ops: [
      { type: 'push', items: [{ index: 0, queue: dlq.record.name, partition, data: wrap(copy), ...(envelope.d ? { transactionId: `${envelope.d}` } : {}) }] },
      { type: 'ack', partitionId: frame.partitionId, transactionId: frame.transactionId, offset: frame.offset, consumerGroup: QUEUE_MODE, leaseId: frame.leaseId, status: 'completed', error: null },
    ],
    requiredLeases: [frame.leaseId],
  })
  if (result.success) wakePops(c, [dlq.record.name])
  return result.success
}

function wanted(names: readonly string[], name: string): boolean {
  return names.some((n) => n === 'All' || n === '.*' || n === name || (n.endsWith('.*') && name.startsWith(n.slice(0, -1))))
}

async function toMessage(call: SqsCall, record: QueueRecord, frame: PoppedFrame, envelope: Envelope, receives: number, systemNames: string[], attributeNames: string[]) {
  const messageId = envelope.i ?? frame.id
  const handle = await signReceipt(await receiptKeyOf(call), {
    queue: record.name,
    partitionId: frame.partitionId,
    transactionId: frame.transactionId,
    offset: frame.offset,
    leaseId: frame.leaseId,
    messageId,
  })
  const system: Record<string, string> = {}
  const all = systemNames.includes('All')
  const add = (name: string, value: string | undefined) => {
    if (value !== undefined && (all || systemNames.includes(name))) system[name] = value
  }
  add('SenderId', envelope.k)
  add('SentTimestamp', String(envelope.t))
  add('ApproximateReceiveCount', String(receives))
  add('ApproximateFirstReceiveTimestamp', String(Date.now()))
  add('MessageGroupId', envelope.g)
  add('MessageDeduplicationId', envelope.d)
  if (record.fifo) add('SequenceNumber', String(frame.offset))
  add('AWSTraceHeader', envelope.s?.AWSTraceHeader?.StringValue)
  if (envelope.src !== undefined) add('DeadLetterQueueSourceArn', queueArn(call.region, accountOf(call), envelope.src))
  const attributes: Record<string, MessageAttributeValue> = {}
  for (const [name, value] of Object.entries(envelope.a ?? {})) if (wanted(attributeNames, name)) attributes[name] = value
  const hasAttributes = Object.keys(attributes).length > 0
  return {
    MessageId: messageId,
    ReceiptHandle: handle,
    MD5OfBody: md5Hex(envelope.b),
    Body: envelope.b,
    ...(Object.keys(system).length > 0 ? { Attributes: system } : {}),
    ...(hasAttributes ? { MD5OfMessageAttributes: md5OfAttributes(attributes), MessageAttributes: attributes } : {}),
  }
}

const receiveMessage: Action = {
  roles: ROLE_SETS.RW_A,
  responseShapes: {
    Messages: {
      kind: 'list',
      query: 'Message',
      flat: true,
      items: {
        Attributes: { kind: 'map', query: 'Attribute', flat: true, key: 'Name', value: 'Value' },
        MessageAttributes: { kind: 'map', query: 'MessageAttribute', flat: true, key: 'Name', value: 'Value' },
      },
    },
  },
  async run(input, call) {
    const { record } = await resolveQueue(call, input)
    const max = optionalInt(input, 'MaxNumberOfMessages', 1, 10) ?? 1
    const visibility = optionalInt(input, 'VisibilityTimeout', 0, 43_200) ?? Number(record.attributes.VisibilityTimeout ?? 30)
    const waitSeconds = optionalInt(input, 'WaitTimeSeconds', 0, 20) ?? Number(record.attributes.ReceiveMessageWaitTimeSeconds ?? 0)
    const systemNames = [...stringList(input, 'MessageSystemAttributeNames'), ...stringList(input, 'AttributeNames')]
    const attributeNames = stringList(input, 'MessageAttributeNames')
    const policy = redrivePolicy(record.attributes)
    const c = call.context
    const deadline = Date.now() + Math.min(waitSeconds * 1000, c.get('config').MAX_POP_WAIT_MS)
    const messages: Awaited<ReturnType<typeof toMessage>>[] = []
    let interval = FIRST_BACKOFF_MS
    // A waiting receive counts against the parking caps as a native long poll does (429 past them).
    let leave: (() => void) | undefined
    try {
      for (;;) {
        while (messages.length < max) {
          const frame = await popOne(call, record, visibility)
          if (frame === null) break
          const envelope = unwrap(frame.data, frame.createdAt)
          const receives = frame.retryCount + 1 + (envelope.rc ?? 0)
          if (policy !== null && receives > policy.maxReceiveCount && (await deadLetter(call, record, policy, frame, envelope, receives - 1))) continue
          messages.push(await toMessage(call, record, frame, envelope, receives, systemNames, attributeNames))
          if (visibility === 0) await releaseNow(call, frame)
        }
        const left = deadline - Date.now()
        if (messages.length > 0 || left <= 0) break
        leave ??= c.get('parkedPolls').enter(c.get('tenant'))
        const outcome = await park(c, record.name, Math.min(interval, left))
        if (outcome === 'aborted') break
        interval = outcome === 'woken' ? FIRST_BACKOFF_MS : Math.min(interval * 2, MAX_BACKOFF_MS)
      }
    } finally {
      leave?.()
    }
    c.get('metrics').popped(messages.length)
    return messages.length > 0 ? { Messages: messages } : {}
  },
}

/** VisibilityTimeout 0: the message is visible again at once, as at AWS, and this delivery counts (`failed`, not `retry`). */
async function releaseNow(call: SqsCall, frame: PoppedFrame): Promise<void> {
  await call.context.get('db').call('log_ack_v1', {
    acks: [{ index: 0, partitionId: frame.partitionId, transactionId: frame.transactionId, offset: frame.offset, consumerGroup: QUEUE_MODE, leaseId: frame.leaseId, status: 'failed', error: null }],
  })
}

function park(c: AwsContext, queue: string, ms: number): Promise<WakeOutcome> {
  const waker = c.get('popWaker')
  const signal = c.req.raw.signal
  return waker ? waker.wait([wakeKey(c.get('tenant'), queue)], ms, signal, QUEUE_MODE) : sleepOnly(ms, signal)
}

export const receiveActions = { ReceiveMessage: receiveMessage }
