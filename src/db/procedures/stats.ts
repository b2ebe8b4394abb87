// Backlog arithmetic, the queue listings and the stats lane (sql/procedures/011_log_stats.sql).
// The resource routes send these answers as they are, hence `verbatim`.
import { z } from 'zod'
import { brokerWide, defineFamily, tenantScoped } from '../procedure.js'
import { count, instant, messageStats, messageTotals, queueOptions, statsAge, stepResult, verbatim } from './shared.js'

const depthCounts = { pending: count, processing: count, ready: count }

const queueDepth = z.object({
  queue: z.string(),
  /** The group asked for; null: the worst cursor among the queue's registered groups. */
  group: z.string().nullable(),
  ...depthCounts,
  partitionsPending: count,
  partitionsReady: count,
  conflation: z.boolean(),
  effectivePending: count,
  effectiveReady: count,
  partitions: z.array(z.object({ partition: z.string(), ...depthCounts })),
})

const segmentCounts = z.object({ segments: count, messages: count })

const queueDetail = z.object({
  id: z.string(),
  name: z.string(),
  namespace: z.string(),
  task: z.string(),
  createdAt: instant,
  options: queueOptions,
  partitions: z.array(
    z.object({
      id: z.string(),
      name: z.string(),
      createdAt: instant,
      stats: messageStats,
      oldestMessage: instant.nullable(),
      newestMessage: instant.nullable(),
    }),
  ),
  totals: messageStats,
  retainedBytes: count,
  segments: segmentCounts,
})

/** One queue of GET /api/v1/resources/queues (the pre-rendered listing has the same keys). */
const listedQueue = z.object({
  id: z.string(),
  name: z.string(),
  namespace: z.string(),
  task: z.string(),
  createdAt: instant,
  partitions: count,
  retainedBytes: count,
  segments: segmentCounts,
  messages: messageTotals,
})

export const statsFamily = defineFamily({
  /** Live backlog of a queue by watermark arithmetic, for one group or the worst; QM404 for an unknown queue. */
  log_queue_depth_v1: tenantScoped<{ tenant: string; queue: string; group?: string; now?: Date }>({
    tenant: 'text',
    queue: 'text',
    group: 'text',
    now: 'timestamptz',
  }).returns(verbatim(queueDepth)),
  /** One queue in detail: its 21 options, per-partition stats, totals; QM404 for an unknown queue. */
  log_queue_detail_v1: tenantScoped<{ tenant: string; queue: string; now?: Date }>({ tenant: 'text', queue: 'text', now: 'timestamptz' }).returns(
    verbatim(queueDetail),
  ),
  /** The tenant's queues: live watermarks plus the lanes' cached numbers, or cached only. */
  log_queue_stats_all_v1: tenantScoped<{ tenant: string; cached: boolean; now?: Date }>({ tenant: 'text', cached: 'boolean', now: 'timestamptz' }).returns(
    verbatim(z.object({ queues: z.array(listedQueue), statsAge })),
  ),
  /** The tenant's pre-rendered `?stats=cached` listing: "<version>\t<statsAge>\t<queues JSON, or '' when `known` is current>". */
  log_queue_stats_cached_v1: tenantScoped<{ tenant: string; known?: string; now?: Date }>({ tenant: 'text', known: 'uuid', now: 'timestamptz' }).returns(
    z.string(),
  ),
  /** The stats lane's last stage: one tenant's listing rendered again, in tenant order after `after`. */
  stats_listing_render_step_v1: brokerWide<{ after?: string }>({ after: 'text' }).returns(stepResult),
  /** One step of the stats lane over every tenant's queues, or (tenant given, tests) all of one tenant's at once. */
  log_stats_refresh_step_v1: brokerWide<{ after?: string; limit?: number; tenant?: string; now?: Date; maxMs?: number }>({
    after: 'uuid',
    limit: 'int',
    tenant: 'text',
    now: 'timestamptz',
    maxMs: 'int',
  }).returns(stepResult),
  /** Every queue of the caller's tenant at once: the refresh route's run of the lane's step. */
  log_stats_refresh_v1: tenantScoped<{ tenant: string; now?: Date }>({ tenant: 'text', now: 'timestamptz' }).returns(stepResult),
})
