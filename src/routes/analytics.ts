// The analytics routes queenctl `analytics` and Queen's dashboard read (docs/status.md). queue-ops,
// queue-lag, retention, workload, dlq-signatures and partition-liveness are tenant-scoped reads
// (R RW A), one procedure call each (retention two with groupBy). The process and database
// views are broker-wide, so admin only (design decision 39): system-metrics, worker-metrics and
// queue-parked-replicas describe the answering process alone (replicas share nothing but
// PostgreSQL, design decision 25), and postgres-stats is one procedure call.
import { z } from 'zod'
import { HttpError } from '../errors.js'
import { qInt, qOneOf, qString } from '../http/query-schema.js'
import { ROLE_SETS, route } from '../http/route.js'
import { timeRange, timeRangeShape } from '../http/time-range.js'

const read = { roles: ROLE_SETS.R_RW_A, tenant: 'required', body: 'none' } as const
// Operator-only: a tenant-bound admin token must not see other tenants' load (docs/security.md).
const admin = { roles: ROLE_SETS.A, tenant: 'required', body: 'none', brokerWide: true } as const
const opsQuery = z.object({ ...timeRangeShape, queue: qString() })
// Current values: from/to are accepted (queenctl sends them) and do not apply to a present-tense lag.
const queueQuery = z.object({ queue: qString() })
const GROUP_BY = ['namespace', 'task', 'queue'] as const
// groupBy is checked here: an unknown value never falls back to a grouping the caller did not ask for.
// from/to (Queen's clients send them): this broker keeps no history of deletions, only what is
// retained now, so there is no window to apply (docs/compatibility.md).
const retentionQuery = z.object({ queue: qString(), groupBy: qOneOf(GROUP_BY).optional() })
const workloadQuery = z.object({ ...timeRangeShape, groupBy: qOneOf(GROUP_BY).default('namespace'), namespace: qString(), task: qString(), queue: qString() })
const signaturesQuery = z.object({ queue: qString(), limit: qInt(200, 1, 1000) })
const livenessQuery = z.object({ queue: qString(), namespace: qString(), task: qString(), limit: qInt(20, 1, 200) })

export const analyticsRoutes = [
  route({ method: 'GET', path: '/api/v1/analytics/queue-ops', summary: 'Push, pop and ack counts per queue over a time range', ...read, request: { query: opsQuery } }, async (c, { query }) =>
    c.json(await c.get('db').call('analytics_queue_ops_v1', { filter: { ...timeRange(query), queue: query.queue } })),
  ),
  route({ method: 'GET', path: '/api/v1/analytics/queue-lag', summary: 'Current lag per queue and consumer group', ...read, request: { query: queueQuery } }, async (c, { query }) =>
    c.json(await c.get('db').call('analytics_queue_lag_v1', { queue: query.queue })),
  ),
  // Without groupBy the answer is exactly what it always was; with it, `rows` is added beside `items`.
  route({ method: 'GET', path: '/api/v1/analytics/retention', summary: 'Retained messages and bytes per queue, optionally grouped', ...read, request: { query: retentionQuery } }, async (c, { query }) => {
    const base = await c.get('db').call('analytics_retention_v1', { queue: query.queue })
    if (query.groupBy === undefined) return c.json(base)
    return c.json({ ...base, rows: await c.get('db').call('analytics_retention_groups_v1', { groupBy: query.groupBy, queue: query.queue }) })
  }),
  route({ method: 'GET', path: '/api/v1/analytics/workload', summary: 'Workload per namespace, task or queue: window totals, a series and current gauges', ...read, request: { query: workloadQuery } }, async (c, { query }) =>
    c.json(await c.get('db').call('analytics_workload_v1', { filter: { ...timeRange(query), groupBy: query.groupBy, namespace: query.namespace, task: query.task, queue: query.queue } })),
  ),
  // The queue is required: without it the sample would be the whole tenant's DLQ.
  route({ method: 'GET', path: '/api/v1/analytics/dlq-signatures', summary: "A queue's newest dead-letter errors folded into shapes", ...read, request: { query: signaturesQuery } }, async (c, { query }) => {
    if (query.queue === undefined) throw new HttpError(400, 'invalid_request', 'queue is required')
    return c.json(await c.get('db').call('analytics_dlq_signatures_v1', { queue: query.queue, limit: query.limit }))
  }),
  route({ method: 'GET', path: '/api/v1/analytics/partition-liveness', summary: 'Partitions per queue against those written to recently', ...read, request: { query: livenessQuery } }, async (c, { query }) =>
    c.json(await c.get('db').call('analytics_partition_liveness_v1', { filter: query })),
  ),
  // The three process views take no query: Queen's from/to/hostname/workerId/queue select rows of a
  // stored per-replica series, and these answer for the answering process now (docs/status.md).
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
