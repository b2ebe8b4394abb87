// Broker-wide maintenance flags, the database figures of the admin analytics, and the cluster
// series of /metrics/prometheus (sql/procedures/023_system.sql).
import { z } from 'zod'
import { brokerWide, defineFamily } from '../procedure.js'
import { count, statsAge, verbatim } from './shared.js'

const maintenanceFlags = z.object({ maintenanceMode: z.boolean(), popMaintenanceMode: z.boolean() })

const postgresStats = z.object({
  databaseSizeBytes: count,
  /** This database's client backends. */
  connections: z.object({ total: count, active: count, idle: count, idleInTransaction: count }),
  /** Null before any block was read. */
  cacheHitRatio: z.number().nullable(),
  deadlocks: count,
  serverVersion: z.string(),
})

const metricsCluster = z.object({
  maintenance: maintenanceFlags,
  statsAge,
  queues: z.array(
    z.object({
      tenant: z.string(),
      queue: z.string(),
      pending: z.number(),
      processing: z.number(),
      partitions: z.number(),
      appended: z.number(),
      retainedBytes: z.number(),
      dlqDepth: z.number(),
    }),
  ),
  groups: z.array(z.object({ tenant: z.string(), queue: z.string(), group: z.string(), lag: z.number() })),
})
export type MetricsCluster = z.infer<typeof metricsCluster>

export const systemFamily = defineFamily({
  /** Both broker-wide maintenance flags. */
  system_maintenance_v1: brokerWide<Record<string, never>>({}).returns(maintenanceFlags),
  /** Turns push ('push') or pop ('pop') maintenance on or off; both flags afterwards. */
  system_maintenance_set_v1: brokerWide<{ mode: 'push' | 'pop'; enabled: boolean }>({ mode: 'text', enabled: 'boolean' }).returns(maintenanceFlags),
  /** The database figures of GET /api/v1/analytics/postgres-stats, sent as they are. */
  system_postgres_stats_v1: brokerWide<Record<string, never>>({}).returns(verbatim(postgresStats)),
  /** The cluster series of /metrics/prometheus across tenants; per-queue rows only when asked. */
  metrics_cluster_v1: brokerWide<{ perQueue: boolean; now?: Date }>({ perQueue: 'boolean', now: 'timestamptz' }).returns(metricsCluster),
})
