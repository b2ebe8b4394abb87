// Every route of the broker, in registration order. Literal segments are registered before
// parameters, which would otherwise match them, so each family's file lists its literal paths first.
import type { RouteDef } from '../http/route.js'
import { ackRoutes } from './ack.js'
import { analyticsRoutes } from './analytics.js'
import { configureRoutes } from './configure.js'
import { consumerGroupRoutes } from './consumer-groups.js'
import { dlqRoutes } from './dlq.js'
import { ephemeralRoutes } from './ephemeral.js'
import { fetchRoutes } from './fetch.js'
import { healthRoutes } from './health.js'
import { kvStoreRoutes } from './kv-store.js'
import { leaseRoutes } from './lease.js'
import { messageAdminRoutes } from './message-admin.js'
import { messageRoutes } from './messages.js'
import { metricsRoutes } from './metrics.js'
import { partitionsRoutes } from './partitions.js'
import { placementRoutes } from './placements.js'
import { popRoutes } from './pop.js'
import { pushRoutes } from './push.js'
import { queueClearRoutes } from './queue-clear.js'
import { resourceRoutes } from './resources.js'
import { sinkRoutes } from './sinks.js'
import { statsRoutes } from './stats.js'
import { statusRoutes } from './status.js'
import { streamsRoutes } from './streams.js'
import { systemRoutes } from './system.js'
import { timerRoutes } from './timers.js'
import { traceRoutes } from './traces.js'
import { transactionRoutes } from './transaction.js'

export function allRoutes(version: string): RouteDef[] {
  return [
    ...healthRoutes(version),
    ...metricsRoutes,
    ...configureRoutes,
    ...pushRoutes,
    ...popRoutes,
    ...ackRoutes,
    ...transactionRoutes,
    ...leaseRoutes,
    ...partitionsRoutes,
    ...fetchRoutes,
    ...messageRoutes,
    ...messageAdminRoutes,
    ...dlqRoutes,
    ...resourceRoutes,
    ...queueClearRoutes,
    ...statsRoutes,
    ...statusRoutes,
    ...analyticsRoutes,
    ...systemRoutes,
    ...placementRoutes,
    ...traceRoutes,
    ...kvStoreRoutes,
    ...timerRoutes,
    ...sinkRoutes,
    ...consumerGroupRoutes,
    ...streamsRoutes,
    ...ephemeralRoutes,
  ]
}
