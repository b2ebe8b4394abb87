// Queue attributes: which exist, which may be set, their ranges, their defaults, and how the ones
// the engine enforces become queue options (VisibilityTimeout → leaseTime, DelaySeconds →
// delayedProcessing, MessageRetentionPeriod → retentionSeconds).
import type { OptionBag } from '../queue-options.js'
import { invalidAttributeName, invalidAttributeValue } from './errors.js'

/** The width attribute: a standard queue's partitions, set at CreateQueue only. */
export const WIDTH_ATTRIBUTE = 'queen.partitions'
export const MAX_WIDTH = 100_000

const RANGES: Record<string, [number, number]> = {
  DelaySeconds: [0, 900],
  MaximumMessageSize: [1024, 1_048_576],
  MessageRetentionPeriod: [60, 1_209_600],
  ReceiveMessageWaitTimeSeconds: [0, 20],
  VisibilityTimeout: [0, 43_200],
  KmsDataKeyReusePeriodSeconds: [60, 86_400],
}
const BOOLEANS = ['FifoQueue', 'ContentBasedDeduplication', 'SqsManagedSseEnabled']
const FREE_TEXT = ['Policy', 'RedrivePolicy', 'RedriveAllowPolicy', 'KmsMasterKeyId']
const FIFO_ONLY = ['FifoQueue', 'ContentBasedDeduplication', 'DeduplicationScope', 'FifoThroughputLimit']
/** Fixed at creation: AWS answers InvalidAttributeName when one is set later. */
export const CREATE_ONLY = ['FifoQueue', WIDTH_ATTRIBUTE]

/** Computed on read, never stored. */
export const COMPUTED = [
  'ApproximateNumberOfMessages',
  'ApproximateNumberOfMessagesNotVisible',
  'ApproximateNumberOfMessagesDelayed',
  'CreatedTimestamp',
  'LastModifiedTimestamp',
  'QueueArn',
]

export function defaults(fifo: boolean): Record<string, string> {
  const base: Record<string, string> = {
    DelaySeconds: '0',
    MaximumMessageSize: '262144',
    MessageRetentionPeriod: '345600',
    ReceiveMessageWaitTimeSeconds: '0',
    VisibilityTimeout: '30',
    SqsManagedSseEnabled: 'false',
  }
  if (fifo) Object.assign(base, { FifoQueue: 'true', ContentBasedDeduplication: 'false', DeduplicationScope: 'queue', FifoThroughputLimit: 'perQueue' })
  return base
}

/** Checks each attribute a client sets; `fifo` says which queue kind they are for. */
export function checkAttributes(attributes: Record<string, string>, fifo: boolean, creating: boolean): void {
  for (const [name, value] of Object.entries(attributes)) {
    if (!creating && CREATE_ONLY.includes(name)) throw invalidAttributeName(name)
    if (name === WIDTH_ATTRIBUTE) {
      if (fifo) throw invalidAttributeName(`${name} (a FIFO queue's partitions are its message groups)`)
      if (!/^\d+$/.test(value) || Number(value) < 1 || Number(value) > MAX_WIDTH) throw invalidAttributeValue(`${name} must be an integer from 1 to ${MAX_WIDTH}.`)
      continue
    }
    if (FIFO_ONLY.includes(name) && !fifo) {
      if (name === 'FifoQueue' && value === 'false') continue
      throw invalidAttributeName(name)
    }
    const range = RANGES[name]
    if (range) {
      if (!/^\d+$/.test(value) || Number(value) < range[0] || Number(value) > range[1]) {
        throw invalidAttributeValue(`Invalid value for the parameter ${name}: must be an integer from ${range[0]} to ${range[1]}.`)
      }
    } else if (BOOLEANS.includes(name)) {
      if (value !== 'true' && value !== 'false') throw invalidAttributeValue(`Invalid value for the parameter ${name}: must be true or false.`)
    } else if (name === 'DeduplicationScope') {
      if (value !== 'queue' && value !== 'messageGroup') throw invalidAttributeValue('DeduplicationScope must be queue or messageGroup.')
    } else if (name === 'FifoThroughputLimit') {
      if (value !== 'perQueue' && value !== 'perMessageGroupId') throw invalidAttributeValue('FifoThroughputLimit must be perQueue or perMessageGroupId.')
    } else if (!FREE_TEXT.includes(name)) {
      throw invalidAttributeName(name)
    }
  }
}

export interface RedrivePolicy {
  deadLetterTargetArn: string
  maxReceiveCount: number
}

/** The parsed RedrivePolicy, or null when none is set (an empty string removes it). */
export function redrivePolicy(attributes: Record<string, string>): RedrivePolicy | null {
  const raw = attributes.RedrivePolicy
  if (raw === undefined || raw === '') return null
  let parsed: unknown
  try {
    parsed = JSON.parse(raw)
  } catch {
    throw invalidAttributeValue('Value for parameter RedrivePolicy is invalid. Reason: it is not JSON.')
  }
  const p = parsed as Record<string, unknown>
  const count = typeof p.maxReceiveCount === 'string' ? Number(p.maxReceiveCount) : p.maxReceiveCount
  if (typeof p.deadLetterTargetArn !== 'string' || typeof count !== 'number' || !Number.isInteger(count) || count < 1 || count > 1000) {
    throw invalidAttributeValue('Value for parameter RedrivePolicy is invalid. Reason: it needs deadLetterTargetArn and a maxReceiveCount from 1 to 1000.')
  }
  return { deadLetterTargetArn: p.deadLetterTargetArn, maxReceiveCount: count }
}

// A message is never dropped by the engine: SQS keeps retrying until retention or a redrive, and
// the redrive is the facade's own move, so the engine's retry limit is set out of reach.
const NEVER_EXHAUSTED = 1_000_000_000
// The FIFO deduplication interval of SQS.
const FIFO_DEDUP_SECONDS = 300

/** The engine options the attributes decide. */
export function queueOptions(attributes: Record<string, string>, fifo: boolean): OptionBag {
  return {
    leaseTime: Math.max(1, Number(attributes.VisibilityTimeout ?? 30)),
    delayedProcessing: Number(attributes.DelaySeconds ?? 0),
    retentionEnabled: true,
    retentionSeconds: Number(attributes.MessageRetentionPeriod ?? 345_600),
    retryLimit: NEVER_EXHAUSTED,
    deadLetterQueue: false,
    dlqAfterMaxRetries: false,
    ...(fifo ? { dedupWindowSeconds: FIFO_DEDUP_SECONDS } : {}),
  }
}
