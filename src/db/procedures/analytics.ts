// The aggregate listings and the analytics reads (sql/procedures/013_analytics.sql). Every answer
// is sent as it is, hence `verbatim`.
import { z } from 'zod'
import { defineFamily, tenantScoped } from '../procedure.js'
import { count, instant, messageStats, messageTotals, statsAge, verbatim } from './shared.js'
import { timeRange, type StatusFilter } from './status.js'

const overview = z.object({
  queues: count,
  partitions: count,
  namespaces: count,
  tasks: count,
  consumerGroups: count,
  messages: messageStats,
  streams: z.object({ queries: count, stateRows: count, stateBytes: count }),
  statsAge,
})

const group = z.object({ queues: count, partitions: count, messages: messageTotals })
const grouped = z.union([
  z.object({ namespaces: z.array(group.extend({ namespace: z.string() })), statsAge }),
  z.object({ tasks: z.array(group.extend({ task: z.string() })), statsAge }),
])

const queueOps = z.object({
  timeRange,
  bucketMinutes: z.number().int(),
  series: z.array(z.object({ timestamp: instant, queue: z.string(), ingested: count, processed: count, deadLettered: count })),
})

const queueLag = z.object({
  items: z.array(z.object({ queue: z.string(), consumerGroup: z.string(), partitions: count, offsetLag: count, timeLagSeconds: z.number() })),
})

const retention = z.object({
  items: z.array(
    z.object({
      queue: z.string(),
      retentionEnabled: z.boolean(),
      retentionSeconds: z.number().int(),
      completedRetentionSeconds: z.number().int(),
      maxWaitTimeSeconds: z.number().int(),
      retainedBytes: count,
      segments: count,
      oldestRetainedAt: instant.nullable(),
    }),
  ),
})

export const analyticsFamily = defineFamily({
  /** Totals over every queue of the tenant, from the lanes' cached numbers (statsAge says how old). */
  log_resources_overview_v1: tenantScoped<{ tenant: string; now?: Date }>({ tenant: 'text', now: 'timestamptz' }).returns(verbatim(overview)),
  /** The tenant's queues grouped by namespace or by task (queues without one left out). */
  log_resources_grouped_v1: tenantScoped<{ tenant: string; by: 'namespace' | 'task'; now?: Date }>({ tenant: 'text', by: 'text', now: 'timestamptz' }).returns(
    verbatim(grouped),
  ),
  /** Per-queue buckets of the per-minute counters over a time range. */
  analytics_queue_ops_v1: tenantScoped<{ tenant: string; filter: StatusFilter }>({ tenant: 'text', filter: 'jsonb' }).returns(verbatim(queueOps)),
  /** Current lag per (queue, group), live. */
  analytics_queue_lag_v1: tenantScoped<{ tenant: string; queue?: string; now?: Date }>({ tenant: 'text', queue: 'text', now: 'timestamptz' }).returns(
    verbatim(queueLag),
  ),
  /** Retention options and retained storage per queue. */
  analytics_retention_v1: tenantScoped<{ tenant: string; queue?: string }>({ tenant: 'text', queue: 'text' }).returns(verbatim(retention)),
})
