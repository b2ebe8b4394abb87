// The dashboard's workload, dead-letter-signature, partition-liveness and grouped-retention reads
// (sql/procedures/031_analytics_dashboard.sql). Sent as the procedures build them, hence `verbatim`.
import { z } from 'zod'
import { defineFamily, tenantScoped } from '../procedure.js'
import { count, instant, verbatim } from './shared.js'

const nullableCount = count.nullable()
const series = z.array(z.number().nullable())

const workloadBlock = z.looseObject({
  queues: count,
  window: z.looseObject({ pushMessages: count, settledMessages: count, deadLettered: count, maxLagMs: nullableCount }),
  series: z.looseObject({ push: series, settled: series, deadLettered: series, maxLagMs: series }),
  now: z.looseObject({ pending: count, processing: count, deadLetter: count, retainedBytes: count, partitions: count, groups: count }),
})

const workload = z.object({
  timeRange: z.object({ from: instant, to: instant }),
  bucketMinutes: z.number().int(),
  groupBy: z.enum(['namespace', 'task', 'queue']),
  buckets: z.array(instant),
  rows: z.array(workloadBlock.extend({ key: z.string() })),
  tenant: workloadBlock,
})

const dlqSignatures = z.object({
  queue: z.string(),
  rowsNow: count,
  sample: count,
  retryCounts: z.array(count),
  groups: z.array(z.string()),
  oldest: instant.nullable(),
  newest: instant.nullable(),
  avgBytes: count,
  signatures: z.array(z.object({ text: z.string(), n: count, share: z.number() })),
  byDay: z.array(z.object({ day: z.string(), n: count })),
})

const liveness = z.object({
  capturedAt: instant,
  rows: z.array(
    z.object({
      queue: z.string(),
      namespace: z.string(),
      task: z.string(),
      partitions: count,
      live1h: count,
      live24h: count,
      live7d: count,
      created24h: count,
      oldestWriteAt: instant.nullable(),
      newestWriteAt: instant.nullable(),
      pending: count,
    }),
  ),
})

const retentionGroups = z.array(
  z.object({ key: z.string(), queues: z.array(z.string()), retainedBytes: count, segments: count, oldestRetainedAt: instant.nullable() }),
)

export const analyticsDashboardFamily = defineFamily({
  /** Workload per namespace, task or queue: window totals, a bucketed series, current gauges. */
  analytics_workload_v1: tenantScoped<{ tenant: string; filter: Record<string, unknown>; now?: Date }>({ tenant: 'text', filter: 'jsonb', now: 'timestamptz' }).returns(
    verbatim(workload),
  ),
  /** One queue's newest dead-letter errors folded into shapes. */
  analytics_dlq_signatures_v1: tenantScoped<{ tenant: string; queue: string; limit: number }>({ tenant: 'text', queue: 'text', limit: 'int' }).returns(
    verbatim(dlqSignatures),
  ),
  /** Partitions per queue against those written to in the last hour, day and week. */
  analytics_partition_liveness_v1: tenantScoped<{ tenant: string; filter: Record<string, unknown>; now?: Date }>({
    tenant: 'text',
    filter: 'jsonb',
    now: 'timestamptz',
  }).returns(verbatim(liveness)),
  /** The retention read's figures summed per namespace, task or queue. */
  analytics_retention_groups_v1: tenantScoped<{ tenant: string; groupBy: string; queue?: string }>({ tenant: 'text', groupBy: 'text', queue: 'text' }).returns(
    verbatim(retentionGroups),
  ),
})
