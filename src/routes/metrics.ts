// GET /metrics and GET /metrics/prometheus (docs/status.md). Both are tenant-free and public
// under the default JWT_SKIP_PATHS. /metrics is this process's counters and names no queue.
// Prometheus adds the cluster series from one procedure call, cached CLUSTER_TTL_MS per process;
// with the database down it still answers 200 with the process series and queen_database_up 0.
// With several databases (QUEEN_DATABASES) each one's series carry a `database` label.
// With tenancy on (design decision 41), the per-queue series (which name every tenant's queues) are
// served only to an admin without a tenant binding; an unauthenticated caller on a skipped path is
// not one.
import type { Context } from 'hono'
import type { PoolStats } from '../db/database.js'
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

/** One database's cluster answer; `database` is set when several are configured (docs/placement.md). */
interface ClusterSource {
  database: string | null
  cluster: MetricsCluster
}

/** A label set: the database's label (when there is one) before the series' own labels. */
function labels(database: string | null, own = ''): string {
  const all = [database === null ? '' : `database="${label(database)}"`, own].filter(Boolean).join(',')
  return all ? `{${all}}` : ''
}

// Family by family, every database's samples under one HELP/TYPE header, as the exposition format
// requires.
function clusterLines(sources: ClusterSource[]): string[] {
  const out: string[] = []
  const family = (name: string, type: string, help: string) => out.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`)
  if (sources.length > 0) {
    family('queen_maintenance_mode', 'gauge', 'Broker-wide maintenance flags (1 = on).')
    for (const { database: d, cluster } of sources) {
      out.push(`queen_maintenance_mode${labels(d, 'mode="push"')} ${cluster.maintenance.maintenanceMode ? 1 : 0}`)
      out.push(`queen_maintenance_mode${labels(d, 'mode="pop"')} ${cluster.maintenance.popMaintenanceMode ? 1 : 0}`)
    }
    family('queen_stats_age_seconds', 'gauge', 'Seconds since the oldest stats row was computed; -1 before the first stats pass.')
    for (const { database: d, cluster } of sources) out.push(`queen_stats_age_seconds${labels(d)} ${cluster.statsAge}`)
  }

  const perQueue: [string, string, string, keyof MetricsCluster['queues'][number]][] = [
    ['queen_queue_pending', 'gauge', 'Pending messages by the worst cursor, as of the last stats pass.', 'pending'],
    ['queen_queue_processing', 'gauge', 'Messages under a live lease, as of the last stats pass.', 'processing'],
    ['queen_queue_partitions', 'gauge', 'Partitions of the queue.', 'partitions'],
    ['queen_queue_appended_total', 'counter', 'Messages ever appended (sum of high watermarks); resets when the queue is deleted.', 'appended'],
    ['queen_queue_retained_bytes', 'gauge', 'Stored bytes of retained segments, as of the last retained-bytes pass.', 'retainedBytes'],
    ['queen_dlq_depth', 'gauge', 'Dead-letter rows of the queue.', 'dlqDepth'],
  ]
  if (sources.some((s) => s.cluster.queues.length > 0)) {
    for (const [name, type, help, key] of perQueue) {
      family(name, type, help)
      for (const { database: d, cluster } of sources) {
        for (const q of cluster.queues) out.push(`${name}${labels(d, `tenant="${label(q.tenant)}",queue="${label(q.queue)}"`)} ${q[key]}`)
      }
    }
  }
  if (sources.some((s) => s.cluster.groups.length > 0)) {
    family('queen_consumer_group_lag', 'gauge', 'Offset lag of a consumer group on a queue.')
    for (const { database: d, cluster } of sources) {
      for (const g of cluster.groups) {
        out.push(`queen_consumer_group_lag${labels(d, `tenant="${label(g.tenant)}",queue="${label(g.queue)}",group="${label(g.group)}"`)} ${g.lag}`)
      }
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
    const perQueue = mayName(c)
    const names = c.get('placement').databases
    // One database keeps its series unlabelled, as a single-database broker always served them;
    // several label every database series with its name (docs/placement.md), and each database's
    // cluster read is cached on its own.
    const several = names.length > 1
    const lines = metrics.prometheusLines(several ? null : c.get('db').poolStats())
    const sources: ClusterSource[] = []
    const up: [string | null, number][] = []
    const pools: [string, PoolStats][] = []
    await Promise.all(
      names.map(async (name) => {
        const db = several ? c.get('placement').database(name) : c.get('db').brokerWide
        const database = several ? name : null
        const pool = db.poolStats()
        if (several && pool) pools.push([name, pool])
        try {
          sources.push({ database, cluster: await metrics.cluster(`${name}\u0000${perQueue}`, () => db.call('metrics_cluster_v1', { perQueue })) })
          up.push([database, 1])
        } catch (error) {
          up.push([database, 0])
          c.get('log').warn('metrics cluster read failed', { requestId: c.get('requestId'), database: name, sqlstate: (error as { sqlstate?: string }).sqlstate })
        }
      }),
    )
    const order = (d: string | null) => (d === null ? 0 : names.indexOf(d))
    sources.sort((a, b) => order(a.database) - order(b.database))
    up.sort((a, b) => order(a[0]) - order(b[0]))
    pools.sort((a, b) => order(a[0]) - order(b[0]))
    if (pools.length > 0) {
      lines.push('# HELP queen_db_pool_connections Connections of this process pool by database and state.', '# TYPE queen_db_pool_connections gauge')
      for (const [name, pool] of pools) {
        for (const state of ['total', 'idle', 'waiting'] as const) lines.push(`queen_db_pool_connections${labels(name, `state="${state}"`)} ${pool[state]}`)
      }
    }
    lines.push(...clusterLines(sources))
    lines.push('# HELP queen_database_up Whether the cluster read reached PostgreSQL (1) or not (0).', '# TYPE queen_database_up gauge')
    for (const [database, value] of up) lines.push(`queen_database_up${labels(database)} ${value}`)
    c.header('Cache-Control', 'no-store')
    return c.body(`${lines.join('\n')}\n`, 200, { 'Content-Type': EXPOSITION })
  }),
]
