// The status reads of the dashboard and queenctl (sql/procedures/022_status.sql). Every answer is
// sent as it is, hence `verbatim`.
import { z } from 'zod'
import { defineFamily, tenantScoped } from '../procedure.js'
import { count, instant, messageStats, messageStatus, messageTotals, offset, queueOptions, statsAge, verbatim } from './shared.js'

/** The filters of the status and analytics reads; from/to are ISO instants the route defaulted. */
export interface StatusFilter {
  from?: string
  to?: string
  queue?: string
  namespace?: string
  task?: string
}

/** The time range a series covers, as the route asked for it. */
export const timeRange = z.object({ from: instant, to: instant })

const overview = z.object({
  timeRange,
  bucketMinutes: z.number().int(),
  pointCount: count,
  throughput: z.array(
    z.object({ timestamp: instant, ingested: count, processed: count, ingestedPerSecond: z.number(), processedPerSecond: z.number() }),
  ),
  queues: z.object({ total: count, withBacklog: count }),
  messages: messageStats,
  leases: z.object({ active: count, partitionsLeased: count }),
  deadLetterQueue: z.object({ total: count, inRange: count }),
  statsAge,
})

const queueFields = { id: z.string(), name: z.string(), namespace: z.string(), task: z.string() }

const queuesPage = z.object({
  queues: z.array(z.object({ ...queueFields, createdAt: instant, partitions: count, messages: messageTotals })),
  pagination: z.object({ limit: z.number().int(), offset: z.number().int(), total: count }),
})

const queueDetail = z.object({
  queue: z.object({
    ...queueFields,
    priority: z.number().int(),
    createdAt: instant,
    // maxSize is called maxQueueSize here.
    config: queueOptions
      .pick({ leaseTime: true, retryLimit: true, retryDelay: true, ttl: true, deadLetterQueue: true })
      .extend({ maxQueueSize: z.number().int() }),
  }),
  totals: messageStats,
  /** Left out when the caller asked for totals only. */
  partitions: z
    .array(
      z.object({
        id: z.string(),
        name: z.string(),
        createdAt: instant,
        messages: messageTotals,
        stats: messageStats,
        /** Queue mode's cursor on the partition (0 and null where queue mode never read it). */
        cursor: z.object({ totalConsumed: count, batchesConsumed: count, committedOffset: offset.nullable() }),
        lastActivity: instant.nullable(),
        oldestMessage: instant.nullable(),
        newestMessage: instant.nullable(),
      }),
    )
    .optional(),
})

const queueMessage = z.object({
  id: z.string(),
  transactionId: z.string(),
  partitionId: z.string(),
  queuePath: z.string(),
  queue: z.string(),
  partition: z.string(),
  status: messageStatus,
  createdAt: instant,
  offset,
})

const analytics = z.object({
  interval: z.enum(['minute', 'hour', 'day']),
  timeRange,
  series: z.array(
    z.object({
      timestamp: instant,
      ingested: count,
      processed: count,
      deadLettered: count,
      /** The queues' last recorded pending in the bucket; null where the stats lane recorded no minute. */
      pending: count.nullable(),
    }),
  ),
  totals: z.object({ ingested: count, processed: count, deadLettered: count }),
})

export const statusFamily = defineFamily({
  /** Throughput series, counts, leases and DLQ of the tenant's queues in scope. */
  status_overview_v1: tenantScoped<{ tenant: string; filter: StatusFilter; now?: Date }>({ tenant: 'text', filter: 'jsonb', now: 'timestamptz' }).returns(
    verbatim(overview),
  ),
  /** One page of queues with live totals and the stats lane's backlog. */
  status_queues_v1: tenantScoped<{ tenant: string; filter: StatusFilter & { limit: number; offset: number } }>({ tenant: 'text', filter: 'jsonb' }).returns(
    verbatim(queuesPage),
  ),
  /** One queue with its partitions (QM404 for an unknown queue); includePartitions false leaves partitions out. */
  status_queue_detail_v1: tenantScoped<{ tenant: string; queue: string; includePartitions?: boolean; now?: Date }>({
    tenant: 'text',
    queue: 'text',
    includePartitions: 'boolean',
    now: 'timestamptz',
  }).returns(verbatim(queueDetail)),
  /** One page of a queue's messages, newest first; QM404 for an unknown queue. */
  status_queue_messages_v1: tenantScoped<{ tenant: string; queue: string; limit: number; offset: number; now?: Date }>({
    tenant: 'text',
    queue: 'text',
    limit: 'int',
    offset: 'bigint',
    now: 'timestamptz',
  }).returns(verbatim(z.array(queueMessage))),
  /** Zero-filled minute, hour or day buckets of the per-minute counters. */
  status_analytics_v1: tenantScoped<{ tenant: string; filter: StatusFilter & { interval: string } }>({ tenant: 'text', filter: 'jsonb' }).returns(
    verbatim(analytics),
  ),
})
