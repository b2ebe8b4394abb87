// The registry of stored procedures the broker calls. A new query is a new procedure in sql/ plus
// one entry here; nothing else in the code base holds SQL that routes or lanes run.
import { z } from 'zod'
import type { OptionBag } from '../queue-options.js'
import { procedure, type Procedure } from './procedure.js'

const laneProgress = z.record(z.string(), z.unknown())

const placement = z.object({
  tenant: z.string(),
  database: z.string(),
  state: z.enum(['placed', 'moving']),
  movingTo: z.string().nullable(),
  version: z.number().int(),
  updatedAt: z.string(),
})
export type Placement = z.output<typeof placement>
const placementDirectory = z.object({ version: z.number().int(), placements: z.array(placement).nullable() })

/** A JSON object the route passes through verbatim (the resource routes' contract). */
const jsonObject = z.record(z.string(), z.unknown())

// int8 offsets arrive inside jsonb as JSON numbers; they stay below 2^53 for any realistic log.
const offset = z.number().int()
const encFlags = z.array(z.object({ name: z.string(), encryptionEnabled: z.boolean() }))

const pushItemResult = z.object({
  index: z.number().int(),
  status: z.enum(['queued', 'duplicate']),
  queue: z.string(),
  partitionId: z.string(),
  offset,
  messageId: z.string(),
  transactionId: z.string(),
  traceId: z.string().nullable(),
})
type PushItemResult = z.infer<typeof pushItemResult>

// Push answers one array per item field (003_log_push.sql), expanded here into the items: building
// an eight-key object per item in SQL was ~16 % of a 100-frame push. `status` absent: all queued;
// `transactionId` absent: each item's is its messageId; `queue` absent: partitionQueue names each
// partition's queue once.
const pushColumns = z.object({
  index: z.array(z.number().int()),
  status: z.array(pushItemResult.shape.status).optional(),
  queue: z.array(z.string()).optional(),
  partitionId: z.array(z.string()),
  offset: z.array(offset),
  messageId: z.array(z.string()),
  transactionId: z.array(z.string()).optional(),
  traceId: z.array(z.string().nullable()),
})
const pushResult = z
  .object({ columns: pushColumns.nullable(), partitionQueue: z.record(z.string(), z.string()).optional(), queues: encFlags.nullable() })
  .transform(({ columns: c, partitionQueue, queues }) => ({
    queues,
    items: (c?.index ?? []).map((index, i): PushItemResult => {
      const partitionId = c!.partitionId[i]!
      const messageId = c!.messageId[i]!
      return {
        index,
        status: c!.status?.[i] ?? 'queued',
        queue: c!.queue?.[i] ?? partitionQueue![partitionId]!,
        partitionId,
        offset: c!.offset[i]!,
        messageId,
        transactionId: c!.transactionId?.[i] ?? messageId,
        traceId: c!.traceId[i] ?? null,
      }
    }),
  }))

/** A delivered message (ENGINE 5.7), as the pop route receives it. */
export interface PoppedFrame {
  queue: string
  partition: string
  partitionId: string
  offset: number
  id: string
  transactionId: string
  traceId: string | null
  producerSub: string | null
  createdAt: string
  enc: boolean
  data: unknown
  leaseId: string
  consumerGroup: string
  retryCount: number
}

// A frame as stored in a segment (ENGINE 3.1).
const storedFrame = z.object({
  id: z.string(),
  txn: z.string(),
  trace: z.string().nullable().optional(),
  sub: z.string().nullable().optional(),
  enc: z.boolean().optional(),
  data: z.unknown(),
})

// One claimed partition in pop's compact answer (004_log_pop.sql): the stored frames with their
// offsets and each segment's createdAt once, expanded into messages below, because building one
// object per message in SQL was a third of a pop's CPU.
const popClaim = z.object({
  queue: z.string(),
  partition: z.string(),
  partitionId: z.string(),
  retryOffset: offset.nullable(),
  retryCount: z.number().int(),
  // Per-frame delivery attempts from attemptFrom on (issue #20), null until a round expired or failed.
  attemptFrom: offset.nullish(),
  attempts: z.array(z.number().int()).nullish(),
  offsets: z.array(offset),
  frames: z.array(storedFrame),
  segments: z.array(z.tuple([offset, z.string()])),
})

/** A message's own attempt count: its frame's delivery attempts, or the governing retry count. */
function attemptsOf(claim: z.infer<typeof popClaim>, offset: number): number {
  const counted = claim.attempts && claim.attemptFrom != null ? (claim.attempts[offset - claim.attemptFrom] ?? 0) : 0
  return Math.max(counted, offset === claim.retryOffset ? claim.retryCount : 0)
}

function claimMessages(claim: z.infer<typeof popClaim>, leaseId: string, consumerGroup: string): PoppedFrame[] {
  let segment = 0
  return claim.frames.map((f, i) => {
    const offset = claim.offsets[i]!
    // Offsets ascend, and so do the segments' base offsets: a frame's segment is the last one at or below it.
    while (segment + 1 < claim.segments.length && claim.segments[segment + 1]![0] <= offset) segment++
    return {
      queue: claim.queue,
      partition: claim.partition,
      partitionId: claim.partitionId,
      offset,
      id: f.id,
      transactionId: f.txn,
      traceId: f.trace ?? null,
      producerSub: f.sub ?? null,
      createdAt: claim.segments[segment]![1],
      enc: f.enc ?? false,
      data: f.data ?? null,
      leaseId,
      consumerGroup,
      retryCount: attemptsOf(claim, offset),
    }
  })
}

const popResult = z
  .object({
    claims: z.array(popClaim),
    leaseId: z.string().nullable(),
    consumerGroup: z.string(),
    partitionsClaimed: z.number().int(),
    minPopWaitMs: z.number().int(),
    queue: z.string().nullable().optional(),
    partition: z.string().nullable().optional(),
    partitionId: z.string().nullable().optional(),
    windowBufferActive: z.boolean(),
    paused: z.boolean(),
  })
  .transform(({ claims, ...rest }) => ({
    ...rest,
    messages: claims.flatMap((claim) => claimMessages(claim, rest.leaseId ?? '', rest.consumerGroup)),
  }))

const ackItemResult = z.object({
  index: z.number().int(),
  transactionId: z.string().nullable(),
  offset: offset.nullable(),
  success: z.boolean(),
  error: z.string().nullable(),
  code: z.string().nullable(),
  queueName: z.string().nullable(),
  partitionName: z.string().nullable(),
  leaseReleased: z.boolean(),
  dlq: z.boolean(),
  dropped: z.boolean(),
  evicted: z.boolean(),
  /** Present (true) when the item's verdict already stood: a retried ack, answered success, changing nothing. */
  alreadyAcked: z.literal(true).optional(),
})
export type AckItemResult = z.infer<typeof ackItemResult>

// The common ack's compact answer (005_log_ack.sql, _log_ack_plain): every item succeeded, so only
// index, transaction id and offset vary. Expanded here, because building one object per item in SQL
// cost as much as the ack itself.
const plainAck = z.object({
  queueName: z.string(),
  partitionName: z.string(),
  releasedIndex: z.number().int().nullable(),
  index: z.array(z.number().int()),
  transactionId: z.array(z.string()),
  offset: z.array(offset),
  alreadyAcked: z.array(z.number().int()).nullable(),
})

const expandPlain = (p: z.infer<typeof plainAck>): AckItemResult[] =>
  p.index.map((index, i) => ({
    index,
    transactionId: p.transactionId[i]!,
    offset: p.offset[i]!,
    success: true,
    error: null,
    code: null,
    queueName: p.queueName,
    partitionName: p.partitionName,
    leaseReleased: index === p.releasedIndex,
    dlq: false,
    dropped: false,
    evicted: false,
    ...(p.alreadyAcked?.includes(index) ? { alreadyAcked: true as const } : {}),
  }))

const plainAckResult = z.object({ plain: plainAck }).transform(({ plain }) => expandPlain(plain))

// An ack of several rows (_log_ack_leases, what a fused call usually is): the rows settled on the
// common path, each compact, and the general path's items for the rest; one array in index order.
const leasesAckResult = z
  .object({ leases: z.array(plainAck), rest: z.array(ackItemResult) })
  .transform(({ leases, rest }) => [...leases.flatMap(expandPlain), ...rest].sort((a, b) => a.index - b.index))

const txnEntry = z.union([
  pushItemResult.extend({ operation: z.number().int(), type: z.literal('push') }),
  ackItemResult.extend({ operation: z.number().int(), type: z.literal('ack') }),
])

const renewItemResult = z.object({
  index: z.number().int(),
  leaseId: z.string().nullable(),
  success: z.boolean(),
  error: z.string().nullable(),
  code: z.string().nullable(),
  expiresAt: z.string().nullable(),
  partitionsExtended: z.number().int(),
})

/**
 * One push item as the push procedure takes it (the route has validated and encoded it). The
 * optional keys read as null (enc as false) when absent; the route leaves them out, since every key
 * is parsed by the procedure once per item.
 */
export interface PushItemArg {
  index: number
  queue: string
  partition: string
  transactionId?: string | null
  traceId?: string | null
  producerSub?: string | null
  enc?: boolean
  data: unknown
}

/** One ack item as the ack procedure takes it. */
export interface AckItemArg {
  index: number
  partitionId: string
  transactionId: string
  offset: number | null
  consumerGroup: string | null
  leaseId: string | null
  status: string
  error: string | null
}

export interface PopRequestArg {
  queue?: string
  partition?: string
  namespace?: string
  task?: string
  group: string
  batch: number
  partitions: number
  autoAck: boolean
  subscriptionMode: 'all' | 'new' | 'timestamp'
  subscriptionFrom?: string
  /** A named group's delivery policy at first contact (ENGINE 6.3); absent means 'all'. */
  delivery?: 'all' | 'conflate'
  maxBytes: number
}

export type TransactionOpArg = { type: 'push'; items: PushItemArg[] } | ({ type: 'ack' } & Omit<AckItemArg, 'index'>)
const entryError = z.object({ queue: z.string(), partition: z.string().optional(), error: z.string(), message: z.string() })

const partitionsChanged = z.object({
  safeTime: z.string(),
  safeTimeDegraded: z.boolean(),
  entries: z.array(
    z.union([
      z.object({
        queue: z.string(),
        partitions: z.array(z.object({ name: z.string(), lastOffset: z.number(), logStart: z.number(), lastWriteAt: z.string().nullable() })),
        next: z.string().nullable(),
      }),
      entryError,
    ]),
  ),
})
type PartitionsChanged = z.output<typeof partitionsChanged>

const fetched = z.object({
  entries: z.array(
    z.union([
      z.object({
        queue: z.string(),
        partition: z.string(),
        logStart: z.number(),
        lastOffset: z.number(),
        fromOffset: z.number(),
        nextOffset: z.number(),
        frames: z.array(
          z.object({
            offset: z.number(),
            id: z.string(),
            transactionId: z.string(),
            traceId: z.string().nullable(),
            producerSub: z.string().nullable(),
            createdAt: z.string(),
            enc: z.boolean(),
            data: z.unknown(),
          }),
        ),
      }),
      entryError,
    ]),
  ),
})
type Fetched = z.output<typeof fetched>

const messageDetail = z.looseObject({ isEncrypted: z.boolean(), payload: z.unknown() })
type MessageDetail = z.output<typeof messageDetail>

const dlqRow = z.looseObject({ enc: z.boolean(), data: z.unknown() })
type DlqRow = z.output<typeof dlqRow>
// Trace entries are snake_case on the wire (API 5.11, Queen's format); the procedures build them so.
const traceEntry = z.object({
  id: z.string(),
  event_type: z.string(),
  data: z.unknown(),
  consumer_group: z.string().nullable(),
  worker_id: z.string().nullable(),
  created_at: z.string(),
  trace_names: z.array(z.string()),
})
const namedTrace = traceEntry.extend({
  transaction_id: z.string(),
  partition_id: z.string(),
  queue_name: z.string(),
  partition_name: z.string(),
  message_payload: z.unknown(),
  enc: z.boolean(),
})
const tracesByName = z.object({ traces: z.array(namedTrace), total: z.number().int() })
const traceNames = z.object({
  trace_names: z.array(z.object({ trace_name: z.string(), trace_count: z.number().int(), message_count: z.number().int(), last_seen: z.string() })),
  total: z.number().int(),
})

/** One trace as the create procedure takes it (the route has validated and defaulted every field). */
export interface TraceCreateArg {
  tenant: string
  partitionId: string
  transactionId: string
  data: unknown
  consumerGroup: string
  eventType: string
  traceNames: string[]
  now?: Date
}

const stepResult = z.object({ processed: z.number().int(), next: z.string().nullable() })
type StepResult = z.output<typeof stepResult>

const kvEntry = z.object({ key: z.string(), value: z.unknown(), updatedAt: z.string() })
type KvEntry = z.output<typeof kvEntry>
// Streams (026_streams.sql). Answers keep the original's snake_case keys: the SDKs read them.
const streamRegistered = z.object({
  success: z.boolean(),
  query_id: z.string(),
  name: z.string(),
  config_hash: z.string().optional(),
  fresh: z.boolean().optional(),
  reset: z.boolean().optional(),
  error: z.string().optional(),
})
const streamStateRow = z.object({ key: z.string(), value: z.unknown(), updated_at: z.string() })
const streamPushResult = z.object({
  index: z.number().int(),
  status: z.enum(['queued', 'duplicate']),
  queue: z.string(),
  partitionId: z.string(),
  offset,
  messageId: z.string(),
  transactionId: z.string(),
  traceId: z.string().nullable(),
})
const streamCycle = z.object({
  success: z.boolean(),
  query_id: z.string(),
  partition_id: z.string(),
  queueName: z.string().nullable(),
  state_ops_applied: z.number().int(),
  push_results: z.array(streamPushResult),
  ack_result: z.object({ success: z.boolean(), count: z.number().int(), lease_released: z.boolean(), dlq: z.boolean() }).nullable(),
  queues: encFlags.nullable(),
  error: z.string().nullable().optional(),
  replayed: z.boolean().optional(),
  deferred: z.boolean().optional(),
})
export type StreamCycleResult = z.output<typeof streamCycle>
const streamQuery = z.object({
  query_id: z.string(),
  name: z.string(),
  source_queue: z.string(),
  sink_queue: z.string().nullable(),
  config_hash: z.string(),
  created_at: z.string(),
  updated_at: z.string(),
  state_rows: z.number().int(),
  state_bytes: z.number().int(),
  partitions: z.number().int(),
  source_group: z.string(),
  lag: z.number().int(),
})

/** A cycle's body as streams_cycle_v1 takes it: validated, push items encoded as _log_push takes them. */
export interface StreamCycleArg {
  query_id: string
  partition_id: string
  consumer_group?: string
  release_lease: boolean
  state_ops: ({ type: 'upsert'; key: string; value?: unknown } | { type: 'delete'; key: string })[]
  push_items: PushItemArg[]
  ack: { transactionId: string; leaseId?: string; status: string; count?: number; error?: string } | null
}


const sinkCommit = z.object({ committed: z.boolean(), reason: z.enum(['lease_lost', 'behind']).nullable(), windowEnd: z.string().nullable() })
type SinkCommit = z.output<typeof sinkCommit>

export const sinkStatusRow = z.object({
  sink: z.string(),
  queue: z.string(),
  windowEnd: z.string().nullable(),
  lagFrames: z.number().int(),
  lagSeconds: z.number(),
  lastObject: z.string().nullable().optional(),
  committedAt: z.string().nullable().optional(),
  framesArchived: z.number().int(),
  running: z.boolean(),
  ran: z.boolean(),
  holdNamesSink: z.boolean(),
  holdingRetention: z.boolean(),
})
const sinkStatus = z.object({ sinks: z.array(sinkStatusRow) })
type SinkStatus = z.output<typeof sinkStatus>
const maintenanceFlags = z.object({ maintenanceMode: z.boolean(), popMaintenanceMode: z.boolean() })

/** The filters of the status and analytics reads; from/to are ISO instants the route defaulted. */
export interface StatusFilter {
  from?: string
  to?: string
  queue?: string
  namespace?: string
  task?: string
}

const metricsCluster = z.object({
  maintenance: maintenanceFlags,
  statsAge: z.number(),
  queues: z.array(
    z.object({
      tenant: z.string(),
      queue: z.string(),
      pending: z.number(),
      processing: z.number(),
      partitions: z.number(),
      appended: z.number(),
      retainedBytes: z.number(),
      dlqDepth: z.number(),
    }),
  ),
  groups: z.array(z.object({ tenant: z.string(), queue: z.string(), group: z.string(), lag: z.number() })),
})
export type MetricsCluster = z.infer<typeof metricsCluster>

export const procedures = {
  /** Claims a maintenance lane when it is free (or its holder died) and due; null when not claimed. */
  lane_claim_v1: procedure<
    { lane: string; token: string; interval: string; ttl: string; force?: boolean; now?: Date },
    Record<string, unknown> | null
  >(
    'lane_claim_v1',
    { lane: 'text', token: 'uuid', interval: 'interval', ttl: 'interval', force: 'boolean', now: 'timestamptz' },
    laneProgress.nullable(),
  ),
  /** Extends the holder's lease and saves its resume point; false when the lease was lost. */
  lane_renew_v1: procedure<{ lane: string; token: string; ttl: string; progress: unknown; now?: Date }, boolean>(
    'lane_renew_v1',
    { lane: 'text', token: 'uuid', ttl: 'interval', progress: 'jsonb', now: 'timestamptz' },
    z.boolean(),
  ),
  /** Releases the lease (only the holder's) and records the run. */
  lane_release_v1: procedure<{ lane: string; token: string; progress: unknown; result: unknown; now?: Date }, boolean>(
    'lane_release_v1',
    { lane: 'text', token: 'uuid', progress: 'jsonb', result: 'jsonb', now: 'timestamptz' },
    z.boolean(),
  ),
  /** One bounded step of the dedup-hash purge: deletes expired log_txns rows. */
  log_dedup_purge_step_v1: procedure<{ limit: number; now?: Date }, { processed: number; next: string | null }>(
    'log_dedup_purge_step_v1',
    { limit: 'int', now: 'timestamptz' },
    z.object({ processed: z.number().int(), next: z.string().nullable() }),
  ),
  /** One bounded step of the retention lane: delete-and-advance with the sink hold, then housekeeping (ENGINE 7.1-7.3, 7.5). */
  log_retention_step_v1: procedure<
    { next: string | null; limit: number; traceDays: number; metricsDays: number; dlqDays: number; now?: Date },
    StepResult
  >(
    'log_retention_step_v1',
    { next: 'text', limit: 'int', traceDays: 'int', metricsDays: 'int', dlqDays: 'int', now: 'timestamptz' },
    stepResult,
  ),
  /** One bounded step of the maxWaitTimeSeconds eviction lane (ENGINE 7.4): no hold, no groups. */
  log_evict_max_wait_step_v1: procedure<{ next: string | null; limit: number; now?: Date }, StepResult>(
    'log_evict_max_wait_step_v1',
    { next: 'text', limit: 'int', now: 'timestamptz' },
    stepResult,
  ),
  /** One bounded step of the retained_bytes lane: segment_count, retained_bytes, dlq_total per queue. */
  log_retained_bytes_step_v1: procedure<{ next: string | null; limit: number; now?: Date }, StepResult>(
    'log_retained_bytes_step_v1',
    { next: 'text', limit: 'int', now: 'timestamptz' },
    stepResult,
  ),
  /** Writes one tenant-scoped key/value pointer (API 8). */
  kv_put_v1: procedure<{ tenant: string; key: string; value: unknown; now?: Date }, KvEntry>(
    'kv_put_v1',
    { tenant: 'text', key: 'text', value: 'jsonb', now: 'timestamptz' },
    kvEntry,
  ),
  /** Reads one key/value pointer of the tenant; null when absent. */
  kv_get_v1: procedure<{ tenant: string; key: string }, KvEntry | null>('kv_get_v1', { tenant: 'text', key: 'text' }, kvEntry.nullable()),
  /** Deletes one key/value pointer of the tenant. */
  kv_delete_v1: procedure<{ tenant: string; key: string }, { deleted: boolean }>(
    'kv_delete_v1',
    { tenant: 'text', key: 'text' },
    z.object({ deleted: z.boolean() }),
  ),
  /** Takes or keeps an archive sink's lease (one maintenance_leases row per tenant, sink and queue). */
  sink_lease_claim_v1: procedure<{ tenant: string; sink: string; queue: string; token: string; ttl: string; now?: Date }, boolean>(
    'sink_lease_claim_v1',
    { tenant: 'text', sink: 'text', queue: 'text', token: 'uuid', ttl: 'interval', now: 'timestamptz' },
    z.boolean(),
  ),
  /** Moves the sink's committed pointer forward, only while the caller holds the lease (D2). */
  sink_commit_v1: procedure<
    { tenant: string; sink: string; queue: string; token: string; ttl: string; windowEnd: string; summary: Record<string, unknown>; now?: Date },
    SinkCommit
  >(
    'sink_commit_v1',
    { tenant: 'text', sink: 'text', queue: 'text', token: 'uuid', ttl: 'interval', windowEnd: 'text', summary: 'jsonb', now: 'timestamptz' },
    sinkCommit,
  ),
  /** Every sink of the tenant with its pointer, lag and hold state (the console's sinks page). */
  sink_status_v1: procedure<{ tenant: string; now?: Date }, SinkStatus>('sink_status_v1', { tenant: 'text', now: 'timestamptz' }, sinkStatus),
  /** Creates or edits a queue's configuration under the four merge rules; the route's body verbatim. */
  configure_queue_v1: procedure<
    { tenant: string; queue: string; options: OptionBag; replace: boolean; now?: Date },
    { response: Record<string, unknown>; encryptionEnabled: boolean; encryptionTurnedOff: boolean }
  >(
    'configure_queue_v1',
    { tenant: 'text', queue: 'text', options: 'jsonb', replace: 'boolean', now: 'timestamptz' },
    z.object({ response: z.record(z.string(), z.unknown()), encryptionEnabled: z.boolean(), encryptionTurnedOff: z.boolean() }),
  ),
  /** Push (ENGINE 3.2): every item queued or duplicate, or a raise and nothing stored. */
  log_push_v1: procedure<{ tenant: string; items: PushItemArg[]; now?: Date }, z.output<typeof pushResult>>(
    'log_push_v1',
    { tenant: 'text', items: 'jsonb', now: 'timestamptz' },
    pushResult,
  ),
  /** Pop (ENGINE 5): leases an offset range of up to `partitions` partitions under one lease id. */
  log_pop_v1: procedure<{ tenant: string; request: PopRequestArg; now?: Date }, z.output<typeof popResult>>(
    'log_pop_v1',
    { tenant: 'text', request: 'jsonb', now: 'timestamptz' },
    popResult,
  ),
  /** Ack (ENGINE 6.1-6.2): per-item results in index order. */
  log_ack_v1: procedure<{ tenant: string; acks: AckItemArg[]; now?: Date }, AckItemResult[]>(
    'log_ack_v1',
    { tenant: 'text', acks: 'jsonb', now: 'timestamptz' },
    z.union([plainAckResult, leasesAckResult, z.array(ackItemResult)]),
  ),
  /** Transaction (ENGINE 6.4): pushes and acks all or nothing; business failures are results. */
  log_transaction_v1: procedure<
    { tenant: string; ops: TransactionOpArg[]; requiredLeases: string[]; now?: Date },
    { success: boolean; error?: string | null; code?: string | null; results: z.infer<typeof txnEntry>[] }
  >(
    'log_transaction_v1',
    { tenant: 'text', ops: 'jsonb', requiredLeases: 'jsonb', now: 'timestamptz' },
    z.object({ success: z.boolean(), error: z.string().nullable().optional(), code: z.string().nullable().optional(), results: z.array(txnEntry) }),
  ),
  /** Lease renewal (ENGINE 6.5): never shortens; one result per item. */
  log_renew_v1: procedure<{ tenant: string; items: { index: number; leaseId: string; seconds: number }[]; now?: Date }, z.infer<typeof renewItemResult>[]>(
    'log_renew_v1',
    { tenant: 'text', items: 'jsonb', now: 'timestamptz' },
    z.array(renewItemResult),
  ),
  /** Partition names and bounds by name or changed-since, with the safeTime watermark (ENGINE 9.1). */
  log_partitions_changed_v1: procedure<{ tenant: string; entries: unknown[] }, PartitionsChanged>(
    'log_partitions_changed_v1',
    { tenant: 'text', entries: 'jsonb' },
    partitionsChanged,
  ),
  /** Frames of partition logs by offset, for mirrors (ENGINE 9.3). */
  log_fetch_v1: procedure<{ tenant: string; entries: unknown[] }, Fetched>('log_fetch_v1', { tenant: 'text', entries: 'jsonb' }, fetched),
  /** The message listing: frames in a time range with their state for every group (API 5.9). */
  log_messages_v1: procedure<{ tenant: string; filter: Record<string, unknown>; now?: Date }, { messages: Record<string, unknown>[]; mode: Record<string, unknown> }>(
    'log_messages_v1',
    { tenant: 'text', filter: 'jsonb', now: 'timestamptz' },
    z.object({ messages: z.array(z.record(z.string(), z.unknown())), mode: z.record(z.string(), z.unknown()) }),
  ),
  /** One message by key, newest retained frame; null when there is none. */
  log_message_v1: procedure<{ tenant: string; partitionId: string; transactionId: string; now?: Date }, MessageDetail | null>(
    'log_message_v1',
    { tenant: 'text', partitionId: 'uuid', transactionId: 'text', now: 'timestamptz' },
    messageDetail.nullable(),
  ),
  /** Admin delete by tombstone (D20). */
  log_message_delete_v1: procedure<{ tenant: string; partitionId: string; transactionId: string }, Record<string, unknown>>(
    'log_message_delete_v1',
    { tenant: 'text', partitionId: 'uuid', transactionId: 'text' },
    z.record(z.string(), z.unknown()),
  ),
  /** The DLQ listing with its total (API 5.10). */
  log_dlq_v1: procedure<{ tenant: string; filter: Record<string, unknown> }, { messages: DlqRow[]; total: number }>(
    'log_dlq_v1',
    { tenant: 'text', filter: 'jsonb' },
    z.object({ messages: z.array(dlqRow), total: z.number().int() }),
  ),
  /** Live backlog of a queue by watermark arithmetic (ENGINE 4); null for an unknown queue. */
  log_queue_depth_v1: procedure<{ tenant: string; queue: string; group?: string; now?: Date }, Record<string, unknown> | null>(
    'log_queue_depth_v1',
    { tenant: 'text', queue: 'text', group: 'text', now: 'timestamptz' },
    jsonObject.nullable(),
  ),
  /** One queue in detail: 21 options, per-partition stats, totals; null for an unknown queue. */
  log_queue_detail_v1: procedure<{ tenant: string; queue: string; now?: Date }, Record<string, unknown> | null>(
    'log_queue_detail_v1',
    { tenant: 'text', queue: 'text', now: 'timestamptz' },
    jsonObject.nullable(),
  ),
  /** The tenant's queues: live watermarks plus the lanes' cached numbers, or cached only. */
  log_queue_stats_all_v1: procedure<{ tenant: string; cached: boolean; now?: Date }, Record<string, unknown>>(
    'log_queue_stats_all_v1',
    { tenant: 'text', cached: 'boolean', now: 'timestamptz' },
    jsonObject,
  ),
  /** The tenant's pre-rendered `?stats=cached` listing: "<version>\t<statsAge>\t<queues JSON, or '' when `known` is current>". */
  log_queue_stats_cached_v1: procedure<{ tenant: string; known?: string; now?: Date }, string>(
    'log_queue_stats_cached_v1',
    { tenant: 'text', known: 'uuid', now: 'timestamptz' },
    z.string(),
  ),
  /** The stats lane's last stage: one tenant's listing rendered again, in tenant order after `after`. */
  stats_listing_render_step_v1: procedure<{ after?: string }, { processed: number; next: string | null }>(
    'stats_listing_render_step_v1',
    { after: 'text' },
    z.object({ processed: z.number().int(), next: z.string().nullable() }),
  ),
  /** One step of the stats lane, or a whole tenant's refresh when tenant is given (D23). */
  log_stats_refresh_step_v1: procedure<{ after?: string; limit?: number; tenant?: string; now?: Date }, { processed: number; next: string | null }>(
    'log_stats_refresh_step_v1',
    { after: 'uuid', limit: 'int', tenant: 'text', now: 'timestamptz' },
    z.object({ processed: z.number().int(), next: z.string().nullable() }),
  ),
  /** Queue delete in one transaction; both outcomes are bodies, never errors. */
  delete_queue_v1: procedure<{ tenant: string; queue: string }, Record<string, unknown>>('delete_queue_v1', { tenant: 'text', queue: 'text' }, jsonObject),
  /** GET /api/v1/resources/overview. */
  log_resources_overview_v1: procedure<{ tenant: string; now?: Date }, Record<string, unknown>>(
    'log_resources_overview_v1',
    { tenant: 'text', now: 'timestamptz' },
    jsonObject,
  ),
  /** GET /api/v1/resources/namespaces and /tasks. */
  log_resources_grouped_v1: procedure<{ tenant: string; by: 'namespace' | 'task'; now?: Date }, Record<string, unknown>>(
    'log_resources_grouped_v1',
    { tenant: 'text', by: 'text', now: 'timestamptz' },
    jsonObject,
  ),
  /** Records a trace against the newest retained frame of a key; null when the tenant has no such frame. */
  trace_create_v1: procedure<TraceCreateArg, { traceId: string } | null>(
    'trace_create_v1',
    {
      tenant: 'text',
      partitionId: 'uuid',
      transactionId: 'text',
      data: 'jsonb',
      consumerGroup: 'text',
      eventType: 'text',
      traceNames: 'text[]',
      now: 'timestamptz',
    },
    z.object({ traceId: z.string() }).nullable(),
  ),
  /** The traces of one message key, oldest first; [] for an unknown key. */
  trace_list_v1: procedure<{ tenant: string; partitionId: string; transactionId: string }, { traces: z.infer<typeof traceEntry>[] }>(
    'trace_list_v1',
    { tenant: 'text', partitionId: 'uuid', transactionId: 'text' },
    z.object({ traces: z.array(traceEntry) }),
  ),
  /** One page of the traces carrying a name, newest first, with the message payload while retained. */
  trace_by_name_v1: procedure<{ tenant: string; name: string; limit: number; offset: number }, z.infer<typeof tracesByName>>(
    'trace_by_name_v1',
    { tenant: 'text', name: 'text', limit: 'int', offset: 'bigint' },
    tracesByName,
  ),
  /** One page of the tenant's trace names, most recently seen first, with counts. */
  trace_names_v1: procedure<{ tenant: string; limit: number; offset: number }, z.infer<typeof traceNames>>(
    'trace_names_v1',
    { tenant: 'text', limit: 'int', offset: 'bigint' },
    traceNames,
  ),
  /** Consumer groups (API 5.12): one entry per (group, queue) the tenant's groups are on. */
  consumer_group_list_v1: procedure<{ tenant: string; now?: Date }, Record<string, unknown>[]>(
    'consumer_group_list_v1',
    { tenant: 'text', now: 'timestamptz' },
    z.array(jsonObject),
  ),
  /** (group, partition) pairs lagging by at least minLagSeconds, worst first. */
  consumer_group_lagging_v1: procedure<{ tenant: string; minLagSeconds: number; now?: Date }, Record<string, unknown>[]>(
    'consumer_group_lagging_v1',
    { tenant: 'text', minLagSeconds: 'bigint', now: 'timestamptz' },
    z.array(jsonObject),
  ),
  /** One group's cursors by queue; {} for an unknown group (D18). */
  consumer_group_detail_v1: procedure<{ tenant: string; group: string; now?: Date }, Record<string, unknown>>(
    'consumer_group_detail_v1',
    { tenant: 'text', group: 'text', now: 'timestamptz' },
    jsonObject,
  ),
  /** Deletes a group's cursors (and its subscription records) in every queue or one. */
  consumer_group_delete_v1: procedure<{ tenant: string; group: string; queue?: string; deleteMetadata: boolean }, Record<string, unknown>>(
    'consumer_group_delete_v1',
    { tenant: 'text', group: 'text', queue: 'text', deleteMetadata: 'boolean' },
    jsonObject,
  ),
  /** Rewrites the subscription instant of the group's records in every queue. */
  consumer_group_subscription_v1: procedure<{ tenant: string; group: string; timestamp: string }, Record<string, unknown>>(
    'consumer_group_subscription_v1',
    { tenant: 'text', group: 'text', timestamp: 'timestamptz' },
    jsonObject,
  ),
  /** Seeks every partition of a queue by timestamp or to its end; {notFound} for an unknown queue. */
  consumer_group_seek_v1: procedure<{ tenant: string; group: string; queue: string; timestamp?: string; toEnd: boolean }, Record<string, unknown>>(
    'consumer_group_seek_v1',
    { tenant: 'text', group: 'text', queue: 'text', timestamp: 'timestamptz', toEnd: 'boolean' },
    jsonObject,
  ),
  /** Seeks one partition to its end; {notFound} for an unknown queue or partition. */
  consumer_group_partition_seek_v1: procedure<{ tenant: string; group: string; queue: string; partition: string }, Record<string, unknown>>(
    'consumer_group_partition_seek_v1',
    { tenant: 'text', group: 'text', queue: 'text', partition: 'text' },
    jsonObject,
  ),
  /** Sets a named group's delivery policy on a queue (API 8, D15). */
  consumer_group_delivery_v1: procedure<{ tenant: string; group: string; queue: string; conflation: boolean }, Record<string, unknown>>(
    'consumer_group_delivery_v1',
    { tenant: 'text', group: 'text', queue: 'text', conflation: 'boolean' },
    jsonObject,
  ),
  /** Both broker-wide maintenance flags (API 5.15). */
  system_maintenance_v1: procedure<Record<string, never>, z.infer<typeof maintenanceFlags>>('system_maintenance_v1', {}, maintenanceFlags),
  /** Turns push ('push') or pop ('pop') maintenance on or off; both flags afterwards. */
  system_maintenance_set_v1: procedure<{ mode: 'push' | 'pop'; enabled: boolean }, z.infer<typeof maintenanceFlags>>(
    'system_maintenance_set_v1',
    { mode: 'text', enabled: 'boolean' },
    maintenanceFlags,
  ),
  /** The database figures of GET /api/v1/analytics/postgres-stats (broker-wide). */
  system_postgres_stats_v1: procedure<Record<string, never>, Record<string, unknown>>('system_postgres_stats_v1', {}, jsonObject),
  /** The cluster series of /metrics/prometheus across tenants; per-queue rows only when asked (D23). */
  metrics_cluster_v1: procedure<{ perQueue: boolean; now?: Date }, MetricsCluster>('metrics_cluster_v1', { perQueue: 'boolean', now: 'timestamptz' }, metricsCluster),
  /** GET /api/v1/status: throughput series, counts, leases and DLQ of the tenant's queues in scope. */
  status_overview_v1: procedure<{ tenant: string; filter: StatusFilter; now?: Date }, Record<string, unknown>>(
    'status_overview_v1',
    { tenant: 'text', filter: 'jsonb', now: 'timestamptz' },
    jsonObject,
  ),
  /** GET /api/v1/status/queues: one page of queues with live totals and the stats lane's backlog. */
  status_queues_v1: procedure<{ tenant: string; filter: StatusFilter & { limit: number; offset: number } }, Record<string, unknown>>(
    'status_queues_v1',
    { tenant: 'text', filter: 'jsonb' },
    jsonObject,
  ),
  /** GET /api/v1/status/queues/:queue; null for an unknown queue; includePartitions false leaves partitions out. */
  status_queue_detail_v1: procedure<{ tenant: string; queue: string; includePartitions?: boolean; now?: Date }, Record<string, unknown> | null>(
    'status_queue_detail_v1',
    { tenant: 'text', queue: 'text', includePartitions: 'boolean', now: 'timestamptz' },
    jsonObject.nullable(),
  ),
  /** GET /api/v1/status/queues/:queue/messages: one page newest first; null for an unknown queue. */
  status_queue_messages_v1: procedure<{ tenant: string; queue: string; limit: number; offset: number; now?: Date }, Record<string, unknown>[] | null>(
    'status_queue_messages_v1',
    { tenant: 'text', queue: 'text', limit: 'int', offset: 'bigint', now: 'timestamptz' },
    z.array(jsonObject).nullable(),
  ),
  /** GET /api/v1/status/analytics: zero-filled minute/hour/day buckets of the per-minute counters. */
  status_analytics_v1: procedure<{ tenant: string; filter: StatusFilter & { interval: string } }, Record<string, unknown>>(
    'status_analytics_v1',
    { tenant: 'text', filter: 'jsonb' },
    jsonObject,
  ),
  /** GET /api/v1/analytics/queue-ops: per-queue buckets of the per-minute counters. */
  analytics_queue_ops_v1: procedure<{ tenant: string; filter: StatusFilter }, Record<string, unknown>>(
    'analytics_queue_ops_v1',
    { tenant: 'text', filter: 'jsonb' },
    jsonObject,
  ),
  /** GET /api/v1/analytics/queue-lag: current lag per (queue, group), live. */
  analytics_queue_lag_v1: procedure<{ tenant: string; queue?: string; now?: Date }, Record<string, unknown>>(
    'analytics_queue_lag_v1',
    { tenant: 'text', queue: 'text', now: 'timestamptz' },
    jsonObject,
  ),
  /** GET /api/v1/analytics/retention: retention options and retained storage per queue. */
  analytics_retention_v1: procedure<{ tenant: string; queue?: string }, Record<string, unknown>>(
    'analytics_retention_v1',
    { tenant: 'text', queue: 'text' },
    jsonObject,
  ),
  /** DELETE /api/v1/queues/:queue/clear: advances the log start of every partition in scope (A1). */
  queue_clear_v1: procedure<{ tenant: string; queue: string; partition?: string }, Record<string, unknown>>(
    'queue_clear_v1',
    { tenant: 'text', queue: 'text', partition: 'text' },
    jsonObject,
  ),
  /** GET /api/v1/resources/partitions: one page of partitions with depth (A2). */
  partition_list_v1: procedure<{ tenant: string; filter: { queue?: string; minDepth: number; limit: number; offset: number }; now?: Date }, Record<string, unknown>>(
    'partition_list_v1',
    { tenant: 'text', filter: 'jsonb', now: 'timestamptz' },
    jsonObject,
  ),
  /** Re-delivers a dead-lettered message to its group (A3); refusals are {refused: code}. */
  message_retry_v1: procedure<{ tenant: string; partitionId: string | null; transactionId: string; group?: string; now?: Date }, Record<string, unknown>>(
    'message_retry_v1',
    { tenant: 'text', partitionId: 'uuid', transactionId: 'text', group: 'text', now: 'timestamptz' },
    jsonObject,
  ),
  /** Dead-letters a message for one group and settles it for that group (A3); refusals are {refused: code}. */
  message_dlq_v1: procedure<{ tenant: string; partitionId: string | null; transactionId: string; group?: string; error?: string; now?: Date }, Record<string, unknown>>(
    'message_dlq_v1',
    { tenant: 'text', partitionId: 'uuid', transactionId: 'text', group: 'text', error: 'text', now: 'timestamptz' },
    jsonObject,
  ),
  /** POST /streams/v1/queries: creates, finds, or (reset) wipes a stream query; success:false on a hash mismatch. */
  streams_register_query_v1: procedure<
    { tenant: string; name: string; sourceQueue: string; sinkQueue: string | null; configHash: string; reset: boolean; now?: Date },
    z.output<typeof streamRegistered>
  >(
    'streams_register_query_v1',
    { tenant: 'text', name: 'text', sourceQueue: 'text', sinkQueue: 'text', configHash: 'text', reset: 'boolean', now: 'timestamptz' },
    streamRegistered,
  ),
  /** POST /streams/v1/state/get: one shard's state rows, filtered by keys, literal prefix and ripeness. */
  streams_state_get_v1: procedure<
    { tenant: string; queryId: string; partitionId: string; keys: string[]; keyPrefix: string | null; ripeAtOrBefore: number | null },
    { rows: z.output<typeof streamStateRow>[] }
  >(
    'streams_state_get_v1',
    { tenant: 'text', queryId: 'uuid', partitionId: 'uuid', keys: 'jsonb', keyPrefix: 'text', ripeAtOrBefore: 'bigint' },
    z.object({ rows: z.array(streamStateRow) }),
  ),
  /** POST /streams/v1/cycle: state ops, sink pushes and the source ack in one transaction. */
  streams_cycle_v1: procedure<{ tenant: string; body: StreamCycleArg; cycleHash: string; now?: Date }, StreamCycleResult>(
    'streams_cycle_v1',
    { tenant: 'text', body: 'jsonb', cycleHash: 'text', now: 'timestamptz' },
    streamCycle,
  ),
  /** GET /streams/v1/queries: the tenant's queries with state size and source-group lag. */
  streams_queries_v1: procedure<{ tenant: string }, z.output<typeof streamQuery>[]>('streams_queries_v1', { tenant: 'text' }, z.array(streamQuery)),
  /** DELETE /streams/v1/queries/:name: the query and its state. */
  streams_query_delete_v1: procedure<{ tenant: string; name: string }, { deleted: boolean; state_rows: number }>(
    'streams_query_delete_v1',
    { tenant: 'text', name: 'text' },
    z.object({ deleted: z.boolean(), state_rows: z.number().int() }),
  ),
  /** The placement directory (default database only): every row unless the caller holds its version. */
  placements_directory_v1: procedure<{ known?: number }, z.output<typeof placementDirectory>>(
    'placements_directory_v1',
    { known: 'bigint' },
    placementDirectory,
  ),
  /** PUT /api/v1/system/placements/:tenant: places a tenant on a database by name. */
  placement_set_v1: procedure<{ tenant: string; database: string; force?: boolean; now?: Date }, Placement>(
    'placement_set_v1',
    { tenant: 'text', database: 'text', force: 'boolean', now: 'timestamptz' },
    placement,
  ),
  /** A move's fence: the tenant is refused everywhere until placement_move_end_v1. */
  placement_move_begin_v1: procedure<{ tenant: string; from: string; to: string; now?: Date }, Placement>(
    'placement_move_begin_v1',
    { tenant: 'text', from: 'text', to: 'text', now: 'timestamptz' },
    placement,
  ),
  /** Lifts a move's fence, leaving the tenant on `database` (the flip, or the abort). */
  placement_move_end_v1: procedure<{ tenant: string; database: string; now?: Date }, Placement>(
    'placement_move_end_v1',
    { tenant: 'text', database: 'text', now: 'timestamptz' },
    placement,
  ),
  /** One page of a tenant's rows of one table, for a move's copy. */
  placement_export_v1: procedure<{ tenant: string; table: string; after: unknown; limit: number }, { rows: unknown[]; next: unknown }>(
    'placement_export_v1',
    { tenant: 'text', table: 'text', after: 'jsonb', limit: 'int' },
    z.object({ rows: z.array(z.unknown()), next: z.unknown() }),
  ),
  /** Inserts exported rows of one table on the destination. */
  placement_import_v1: procedure<{ table: string; rows: unknown[] }, { imported: number }>(
    'placement_import_v1',
    { table: 'text', rows: 'jsonb' },
    z.object({ imported: z.number().int() }),
  ),
  /** Per tenant-scoped table: row count and content digest, compared across a move. */
  placement_census_v1: procedure<{ tenant: string }, Record<string, { rows: number; digest: string | null }>>(
    'placement_census_v1',
    { tenant: 'text' },
    z.record(z.string(), z.object({ rows: z.number().int(), digest: z.string().nullable() })),
  ),
  /** Open transactions of this database that started before `before` (a move's drain). */
  placement_drain_v1: procedure<{ before: Date }, { open: number }>('placement_drain_v1', { before: 'timestamptz' }, z.object({ open: z.number().int() })),
  /** Deletes every row of a tenant from one database. */
  placement_purge_v1: procedure<{ tenant: string }, { deleted: number }>('placement_purge_v1', { tenant: 'text' }, z.object({ deleted: z.number().int() })),
} as const

export type Procedures = typeof procedures
export type ProcedureName = keyof Procedures
export type ArgsOf<N extends ProcedureName> = Procedures[N] extends Procedure<infer A, any> ? A : never
export type ResultOf<N extends ProcedureName> = Procedures[N] extends Procedure<any, infer R> ? R : never
