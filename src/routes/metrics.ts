// GET /metrics (API 5.2) and GET /metrics/prometheus (API 5.3). Both are tenant-free and public
// under the default JWT_SKIP_PATHS. /metrics is this process's counters and names no queue.
// Prometheus adds the cluster series from one procedure call, cached CLUSTER_TTL_MS per process;
// with the database down it still answers 200 with the process series and queen_database_up 0.
// D23: with tenancy on, the per-queue series (which name every tenant's queues) are served only to
// an admin without a tenant binding; an unauthenticated caller on a skipped path is not one.
import type { Context } from 'hono'
import type { MetricsCluster } from '../db/procedures.js'
import { ANONYMOUS } from '../http/auth.js'
import type { AppEnv } from '../http/env.js'
import { ROLE_SETS, route } from '../http/route.js'
import { label } from '../metrics.js'

const spec = { roles: ROLE_SETS.A, tenant: 'none', body: 'none' } as const
const EXPOSITION = 'text/plain; version=0.0.4; charset=utf-8'

function mayName(c: Context<AppEnv>): boolean {
  if (c.get('config').QUEEN_TENANCY_HEADER === undefined) return true
  const principal = c.get('principal')
  // With auth on, ANONYMOUS means the path was skipped: nobody was authenticated.
  if (c.get('config').JWT_ENABLED && principal === ANONYMOUS) return false
  return principal.roles.has('admin') && principal.tenant === null
}

function clusterLines(cluster: MetricsCluster): string[] {
  const out: string[] = []
  const family = (name: string, type: string, help: string) => out.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`)
  family('queen_maintenance_mode', 'gauge', 'Broker-wide maintenance flags (1 = on).')
  out.push(`queen_maintenance_mode{mode="push"} ${cluster.maintenance.maintenanceMode ? 1 : 0}`)
  out.push(`queen_maintenance_mode{mode="pop"} ${cluster.maintenance.popMaintenanceMode ? 1 : 0}`)
  family('queen_stats_age_seconds', 'gauge', 'Seconds since the oldest stats row was computed; -1 before the first stats pass.')
  out.push(`queen_stats_age_seconds ${cluster.statsAge}`)

  const perQueue: [string, string, string, keyof MetricsCluster['queues'][number]][] = [
    ['queen_queue_pending', 'gauge', 'Pending messages by the worst cursor, as of the last stats pass.', 'pending'],
    ['queen_queue_processing', 'gauge', 'Messages under a live lease, as of the last stats pass.', 'processing'],
    ['queen_queue_partitions', 'gauge', 'Partitions of the queue.', 'partitions'],
    ['queen_queue_appended_total', 'counter', 'Messages ever appended (sum of high watermarks); resets when the queue is deleted.', 'appended'],
    ['queen_queue_retained_bytes', 'gauge', 'Stored bytes of retained segments, as of the last retained-bytes pass.', 'retainedBytes'],
    ['queen_dlq_depth', 'gauge', 'Dead-letter rows of the queue.', 'dlqDepth'],
  ]
  if (cluster.queues.length > 0) {
    for (const [name, type, help, key] of perQueue) {
      family(name, type, help)
      for (const q of cluster.queues) out.push(`${name}{tenant="${label(q.tenant)}",queue="${label(q.queue)}"} ${q[key]}`)
    }
  }
  if (cluster.groups.length > 0) {
    family('queen_consumer_group_lag', 'gauge', 'Offset lag of a consumer group on a queue.')
    for (const g of cluster.groups) {
      out.push(`queen_consumer_group_lag{tenant="${label(g.tenant)}",queue="${label(g.queue)}",group="${label(g.group)}"} ${g.lag}`)
    }
  }
  return out
}

export const metricsRoutes = [
  route({ method: 'GET', path: '/metrics', summary: "This process's counters as JSON", ...spec }, (c) => {
    c.header('Cache-Control', 'no-store')
    return c.json(c.get('metrics').json(c.get('db').poolStats()))
  }),
  route({ method: 'GET', path: '/metrics/prometheus', summary: 'Process and cluster series in the Prometheus exposition format', ...spec }, async (c) => {
    const metrics = c.get('metrics')
    const db = c.get('db')
    const lines = metrics.prometheusLines(db.poolStats())
    const perQueue = mayName(c)
    let up = 1
    try {
      lines.push(...clusterLines(await metrics.cluster(perQueue, () => db.call('metrics_cluster_v1', { perQueue }))))
    } catch (error) {
      up = 0
      c.get('log').warn('metrics cluster read failed', { requestId: c.get('requestId'), sqlstate: (error as { sqlstate?: string }).sqlstate })
    }
    lines.push('# HELP queen_database_up Whether the cluster read reached PostgreSQL (1) or not (0).', '# TYPE queen_database_up gauge', `queen_database_up ${up}`)
    c.header('Cache-Control', 'no-store')
    return c.body(`${lines.join('\n')}\n`, 200, { 'Content-Type': EXPOSITION })
  }),
]
