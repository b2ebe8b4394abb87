// The analytics routes queenctl `analytics` reads (docs/status.md). queue-ops, queue-lag and
// retention are tenant-scoped reads (R RW A), one procedure call each. The process and database
// views are broker-wide, so admin only (design decision 39): system-metrics, worker-metrics and
// queue-parked-replicas describe the answering process alone (replicas share nothing but
// PostgreSQL, design decision 25), and postgres-stats is one procedure call.
import { z } from 'zod'
import { qString } from '../http/query-schema.js'
import { ROLE_SETS, route } from '../http/route.js'
import { timeRange, timeRangeShape } from '../http/time-range.js'

const read = { roles: ROLE_SETS.R_RW_A, tenant: 'required', body: 'none' } as const
// Operator-only: a tenant-bound admin token must not see other tenants' load (docs/security.md).
const admin = { roles: ROLE_SETS.A, tenant: 'required', body: 'none', brokerWide: true } as const
const opsQuery = z.object({ ...timeRangeShape, queue: qString() })
// Current values: from/to are accepted (queenctl sends them) and do not apply to a present-tense lag.
const queueQuery = z.object({ queue: qString() })

export const analyticsRoutes = [
  route({ method: 'GET', path: '/api/v1/analytics/queue-ops', summary: 'Push, pop and ack counts per queue over a time range', ...read, request: { query: opsQuery } }, async (c, { query }) =>
    c.json(await c.get('db').call('analytics_queue_ops_v1', { filter: { ...timeRange(query), queue: query.queue } })),
  ),
  route({ method: 'GET', path: '/api/v1/analytics/queue-lag', summary: 'Current lag per queue and consumer group', ...read, request: { query: queueQuery } }, async (c, { query }) =>
    c.json(await c.get('db').call('analytics_queue_lag_v1', { queue: query.queue })),
  ),
  route({ method: 'GET', path: '/api/v1/analytics/retention', summary: 'Retained messages and bytes per queue', ...read, request: { query: queueQuery } }, async (c, { query }) =>
    c.json(await c.get('db').call('analytics_retention_v1', { queue: query.queue })),
  ),
  route({ method: 'GET', path: '/api/v1/analytics/system-metrics', summary: "The answering process's metrics", ...admin }, (c) =>
    c.json({ instances: [c.get('metrics').json(c.get('db').poolStats())] }),
  ),
  route({ method: 'GET', path: '/api/v1/analytics/worker-metrics', summary: "The answering process's metrics (Queen's worker view)", ...admin }, (c) =>
    c.json({ instances: [c.get('metrics').json(c.get('db').poolStats())] }),
  ),
  route({ method: 'GET', path: '/api/v1/analytics/queue-parked-replicas', summary: 'Long-polls parked on the answering process', ...admin }, (c) =>
    c.json({ replicas: [{ instance: c.get('metrics').instance, parkedLongPolls: c.get('metrics').longPollsWaiting }] }),
  ),
  route({ method: 'GET', path: '/api/v1/analytics/postgres-stats', summary: 'PostgreSQL server statistics', ...admin }, async (c) =>
    c.json(await c.get('db').brokerWide.call('system_postgres_stats_v1', {})),
  ),
]
