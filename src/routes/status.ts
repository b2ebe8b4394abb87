// Status reads (docs/status.md), Queen's dashboard and queenctl views: one procedure call each.
// Counts use the resource routes' sources and staleness (statsAge); series come from the per-minute
// counters the stats lane keeps (docs/status.md). Unknown queue → 404 only on the two per-queue
// reads (design decision 30).
// /status/buffers is process-local: this broker has no push buffer, so its zeros are true.
import { z } from 'zod'
import type { StatusFilter } from '../db/procedures.js'
import { qBool, qInt, qOneOf, qString } from '../http/query-schema.js'
import { ROLE_SETS, route } from '../http/route.js'
import { timeRange, timeRangeShape } from '../http/time-range.js'

const PING_TIMEOUT_MS = 2000
const INTERVALS = ['minute', 'hour', 'day'] as const

const read = { roles: ROLE_SETS.R_RW_A, tenant: 'required', body: 'none' } as const

/** The time range plus the queue, namespace and task filters the status reads share. */
export const statusFilterShape = { ...timeRangeShape, queue: qString(), namespace: qString(), task: qString() }
const statusQuery = z.object(statusFilterShape)

export function statusFilter(q: z.output<typeof statusQuery>): StatusFilter {
  return { ...timeRange(q), queue: q.queue, namespace: q.namespace, task: q.task }
}

// `queue` narrows the listing to one queue, as Queen 1.6 does. Queen's clients also forward from/to
// here, which Queen reads nowhere on this listing (its counts are current), so they stay unread.
const queuesQuery = z.object({ queue: qString(), namespace: qString(), task: qString(), limit: qInt(100, 1, 1000), offset: qInt(0, 0, Number.MAX_SAFE_INTEGER) })
const analyticsQuery = z.object({ interval: qOneOf(INTERVALS).default('hour'), ...statusFilterShape })
const pageQuery = z.object({ limit: qInt(50, 1, 1000), offset: qInt(0, 0, Number.MAX_SAFE_INTEGER) })
// includePartitions=false (the clients' totals-only read) leaves the partitions key out.
const detailQuery = z.object({ includePartitions: qBool(true) })

export const statusRoutes = [
  route({ method: 'GET', path: '/api/v1/status', summary: 'Dashboard overview: counts, throughput and lag', ...read, request: { query: statusQuery } }, async (c, { query }) =>
    c.json(await c.get('db').call('status_overview_v1', { filter: statusFilter(query) })),
  ),
  route({ method: 'GET', path: '/api/v1/status/queues', summary: 'Queues with their counts, paged', ...read, request: { query: queuesQuery } }, async (c, { query }) =>
    c.json(await c.get('db').call('status_queues_v1', { filter: query })),
  ),
  route({ method: 'GET', path: '/api/v1/status/analytics', summary: 'Throughput and latency series per minute, hour or day', ...read, request: { query: analyticsQuery } }, async (c, { query }) =>
    c.json(await c.get('db').call('status_analytics_v1', { filter: { ...statusFilter(query), interval: query.interval } })),
  ),
  route({ method: 'GET', path: '/api/v1/status/buffers', summary: "This process's push buffer (always empty) and database health", ...read }, async (c) => {
    let dbHealthy = true
    try {
      await c.get('db').ping(PING_TIMEOUT_MS)
    } catch {
      dbHealthy = false
    }
    return c.json({ pending: 0, failed: 0, dbHealthy, worker: c.get('metrics').instance, note: 'no local push buffer' })
  }),
  route({ method: 'GET', path: '/api/v1/status/queues/:queue', summary: 'One queue with its partitions and consumer groups', ...read, request: { query: detailQuery } }, async (c, { params, query }) =>
    c.json(await c.get('db').call('status_queue_detail_v1', { queue: params.queue!, includePartitions: query.includePartitions })),
  ),
  route({ method: 'GET', path: '/api/v1/status/queues/:queue/messages', summary: "A queue's recent messages, paged", ...read, request: { query: pageQuery } }, async (c, { params, query }) =>
    c.json(await c.get('db').call('status_queue_messages_v1', { queue: params.queue!, ...query })),
  ),
]
