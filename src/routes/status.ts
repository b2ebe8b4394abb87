// Status reads (API 5.14), Queen's dashboard and queenctl views: one procedure call each. Counts use
// the resource routes' sources and staleness (statsAge); series come from the per-minute counters
// the stats lane keeps (ENGINE 8.1). Unknown queue → 404 only on the two per-queue reads (D18).
// /status/buffers is process-local: this broker has no push buffer, so its zeros are true.
import type { Context } from 'hono'
import type { StatusFilter } from '../db/procedures.js'
import { HttpError, badRequest } from '../errors.js'
import type { AppEnv } from '../http/env.js'
import { Query, parseInstant } from '../http/query.js'
import { ROLE_SETS, route } from '../http/route.js'

const HOUR_MS = 3_600_000
const PING_TIMEOUT_MS = 2000
const INTERVALS = ['minute', 'hour', 'day'] as const

const queueNotFound = () => new HttpError(404, 'queue_not_found', 'Queue not found')
const read = { roles: ROLE_SETS.R_RW_A, tenant: 'required', body: 'none' } as const

/** from/to as ISO instants, defaulting to the last hour (API 5.14); from after to is a 400. */
export function timeRange(q: Query): { from: string; to: string } {
  const now = Date.now()
  const to = q.string('to') !== undefined ? parseInstant(q.string('to')!, 'to') : new Date(now).toISOString()
  const from = q.string('from') !== undefined ? parseInstant(q.string('from')!, 'from') : new Date(Date.parse(to) - HOUR_MS).toISOString()
  if (Date.parse(from) > Date.parse(to)) throw badRequest('from must not be after to')
  return { from, to }
}

/** The time range plus the queue, namespace and task filters the status reads share. */
export function statusFilter(c: Context<AppEnv>): StatusFilter {
  const q = new Query(c.req.url)
  return { ...timeRange(q), queue: q.string('queue'), namespace: q.string('namespace'), task: q.string('task') }
}

export const statusRoutes = [
  route({ method: 'GET', path: '/api/v1/status', ...read }, async (c) =>
    c.json(await c.var.db.call('status_overview_v1', { tenant: c.var.tenant, filter: statusFilter(c) })),
  ),
  route({ method: 'GET', path: '/api/v1/status/queues', ...read }, async (c) => {
    const q = new Query(c.req.url)
    const filter = {
      namespace: q.string('namespace'),
      task: q.string('task'),
      limit: q.int('limit', 100, 1, 1000),
      offset: q.int('offset', 0, 0, Number.MAX_SAFE_INTEGER),
    }
    return c.json(await c.var.db.call('status_queues_v1', { tenant: c.var.tenant, filter }))
  }),
  route({ method: 'GET', path: '/api/v1/status/analytics', ...read }, async (c) => {
    const interval = new Query(c.req.url).oneOf('interval', INTERVALS, 'hour')
    return c.json(await c.var.db.call('status_analytics_v1', { tenant: c.var.tenant, filter: { ...statusFilter(c), interval } }))
  }),
  route({ method: 'GET', path: '/api/v1/status/buffers', ...read }, async (c) => {
    let dbHealthy = true
    try {
      await c.var.db.ping(PING_TIMEOUT_MS)
    } catch {
      dbHealthy = false
    }
    return c.json({ pending: 0, failed: 0, dbHealthy, worker: c.var.metrics.instance, note: 'no local push buffer' })
  }),
  route({ method: 'GET', path: '/api/v1/status/queues/:queue', ...read }, async (c) => {
    // includePartitions (queenctl `partition list`) is accepted and ignored: partitions are always included.
    const detail = await c.var.db.call('status_queue_detail_v1', { tenant: c.var.tenant, queue: c.req.param('queue')! })
    if (!detail) throw queueNotFound()
    return c.json(detail)
  }),
  route({ method: 'GET', path: '/api/v1/status/queues/:queue/messages', ...read }, async (c) => {
    const q = new Query(c.req.url)
    const limit = q.int('limit', 50, 1, 1000)
    const offset = q.int('offset', 0, 0, Number.MAX_SAFE_INTEGER)
    const messages = await c.var.db.call('status_queue_messages_v1', { tenant: c.var.tenant, queue: c.req.param('queue')!, limit, offset })
    if (!messages) throw queueNotFound()
    return c.json(messages)
  }),
]
