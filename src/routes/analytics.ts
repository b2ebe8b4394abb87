// The analytics routes queenctl `analytics` reads (API 5.14). queue-ops, queue-lag and retention
// are tenant-scoped reads (R RW A), one procedure call each. The process and database views are
// broker-wide, so admin only (API 7 #37): system-metrics, worker-metrics and queue-parked-replicas
// describe the answering process alone (replicas share nothing but PostgreSQL, API 7 #38), and
// postgres-stats is one procedure call.
import { Query } from '../http/query.js'
import { ROLE_SETS, route } from '../http/route.js'
import { timeRange } from './status.js'

const read = { roles: ROLE_SETS.R_RW_A, tenant: 'required', body: 'none' } as const
const admin = { roles: ROLE_SETS.A, tenant: 'required', body: 'none' } as const

export const analyticsRoutes = [
  route({ method: 'GET', path: '/api/v1/analytics/queue-ops', ...read }, async (c) => {
    const q = new Query(c.req.url)
    return c.json(await c.var.db.call('analytics_queue_ops_v1', { tenant: c.var.tenant, filter: { ...timeRange(q), queue: q.string('queue') } }))
  }),
  // Current values: from/to are accepted (queenctl sends them) and do not apply to a present-tense lag.
  route({ method: 'GET', path: '/api/v1/analytics/queue-lag', ...read }, async (c) =>
    c.json(await c.var.db.call('analytics_queue_lag_v1', { tenant: c.var.tenant, queue: new Query(c.req.url).string('queue') })),
  ),
  route({ method: 'GET', path: '/api/v1/analytics/retention', ...read }, async (c) =>
    c.json(await c.var.db.call('analytics_retention_v1', { tenant: c.var.tenant, queue: new Query(c.req.url).string('queue') })),
  ),
  route({ method: 'GET', path: '/api/v1/analytics/system-metrics', ...admin }, (c) =>
    c.json({ instances: [c.var.metrics.json(c.var.db.poolStats())] }),
  ),
  route({ method: 'GET', path: '/api/v1/analytics/worker-metrics', ...admin }, (c) =>
    c.json({ instances: [c.var.metrics.json(c.var.db.poolStats())] }),
  ),
  route({ method: 'GET', path: '/api/v1/analytics/queue-parked-replicas', ...admin }, (c) =>
    c.json({ replicas: [{ instance: c.var.metrics.instance, parkedLongPolls: c.var.metrics.longPollsWaiting }] }),
  ),
  route({ method: 'GET', path: '/api/v1/analytics/postgres-stats', ...admin }, async (c) =>
    c.json(await c.var.db.call('system_postgres_stats_v1', {})),
  ),
]
