// The registry of stored procedures the broker calls. A new query is a new procedure in sql/ plus
// one entry in the family file of the same name under procedures/ (procedures/sink.ts holds the
// functions of sql/procedures/027_sink.sql); nothing else in the code base holds SQL that routes or
// lanes run. test/procedure-registry.test.ts checks that the registry and sql/ name the same
// functions.
import type { Procedure } from './procedure.js'
import { ackFamily } from './procedures/ack.js'
import { adminMessagesFamily } from './procedures/admin-messages.js'
import { dlqFamily } from './procedures/dlq.js'
import { adminQueuesFamily } from './procedures/admin-queues.js'
import { analyticsFamily } from './procedures/analytics.js'
import { analyticsDashboardFamily } from './procedures/analytics-dashboard.js'
import { configureFamily } from './procedures/configure.js'
import { consumerGroupsFamily } from './procedures/consumer-groups.js'
import { dedupPurgeFamily } from './procedures/dedup-purge.js'
import { ephemeralFamily } from './procedures/ephemeral.js'
import { evictionFamily } from './procedures/eviction.js'
import { fetchFamily } from './procedures/fetch.js'
import { kvStoreFamily } from './procedures/kv-store.js'
import { lanesFamily } from './procedures/lanes.js'
import { messagesFamily } from './procedures/messages.js'
import { partitionsChangedFamily } from './procedures/partitions-changed.js'
import { placementsFamily } from './procedures/placements.js'
import { popFamily } from './procedures/pop.js'
import { pushFamily } from './procedures/push.js'
import { renewFamily } from './procedures/renew.js'
import { retainedBytesFamily } from './procedures/retained-bytes.js'
import { retentionFamily } from './procedures/retention.js'
import { sinkFamily } from './procedures/sink.js'
import { statsFamily } from './procedures/stats.js'
import { statusFamily } from './procedures/status.js'
import { streamsFamily } from './procedures/streams.js'
import { systemFamily } from './procedures/system.js'
import { timersFamily } from './procedures/timers.js'
import { tracesFamily } from './procedures/traces.js'
import { transactionFamily } from './procedures/transaction.js'

export type { AckItemArg, AckItemResult } from './procedures/ack.js'
export type { StatusFilter } from './procedures/status.js'
export type { MetricsCluster } from './procedures/system.js'
export type { Placement } from './procedures/placements.js'
export type { PoppedFrame } from './procedures/pop-claims.js'
export type { PopRequestArg, PopResult } from './procedures/pop.js'
export type { PushItemArg } from './procedures/push.js'
export type { StreamCycleArg, StreamCycleResult } from './procedures/streams.js'
export type { TraceCreateArg } from './procedures/traces.js'
export type { TransactionOpArg } from './procedures/transaction.js'
export type { KvLimits } from './procedures/kv-store.js'
export type { TimerOpArg } from './procedures/timers.js'
export { sinkStatusRow } from './procedures/sink.js'

/** Every family, by the name of its file (and of its sql/procedures file, less the number). */
export const families = {
  lanes: lanesFamily,
  push: pushFamily,
  pop: popFamily,
  ack: ackFamily,
  transaction: transactionFamily,
  'dedup-purge': dedupPurgeFamily,
  renew: renewFamily,
  'partitions-changed': partitionsChangedFamily,
  fetch: fetchFamily,
  stats: statsFamily,
  configure: configureFamily,
  analytics: analyticsFamily,
  'analytics-dashboard': analyticsDashboardFamily,
  messages: messagesFamily,
  traces: tracesFamily,
  retention: retentionFamily,
  eviction: evictionFamily,
  'retained-bytes': retainedBytesFamily,
  'kv-store': kvStoreFamily,
  timers: timersFamily,
  'consumer-groups': consumerGroupsFamily,
  status: statusFamily,
  system: systemFamily,
  'admin-messages': adminMessagesFamily,
  dlq: dlqFamily,
  'admin-queues': adminQueuesFamily,
  streams: streamsFamily,
  sink: sinkFamily,
  placements: placementsFamily,
  ephemeral: ephemeralFamily,
} as const

export const procedures = {
  ...lanesFamily,
  ...pushFamily,
  ...popFamily,
  ...ackFamily,
  ...transactionFamily,
  ...dedupPurgeFamily,
  ...renewFamily,
  ...partitionsChangedFamily,
  ...fetchFamily,
  ...statsFamily,
  ...configureFamily,
  ...analyticsFamily,
  ...analyticsDashboardFamily,
  ...messagesFamily,
  ...tracesFamily,
  ...retentionFamily,
  ...evictionFamily,
  ...retainedBytesFamily,
  ...kvStoreFamily,
  ...timersFamily,
  ...consumerGroupsFamily,
  ...statusFamily,
  ...systemFamily,
  ...adminMessagesFamily,
  ...dlqFamily,
  ...adminQueuesFamily,
  ...streamsFamily,
  ...sinkFamily,
  ...placementsFamily,
  ...ephemeralFamily,
} as const

export type Procedures = typeof procedures
export type ProcedureName = keyof Procedures
export type ArgsOf<N extends ProcedureName> = Procedures[N] extends Procedure<infer A, any> ? A : never
export type ResultOf<N extends ProcedureName> = Procedures[N] extends Procedure<any, infer R> ? R : never

/** The procedures about the caller's tenant, which a request's handle calls with its own tenant. */
export type TenantProcedureName = { [N in ProcedureName]: Procedures[N]['scope'] extends 'tenant' ? N : never }[ProcedureName]
/** The broker-wide procedures (lanes, maintenance steps, placement, system flags, metrics). */
export type BrokerProcedureName = Exclude<ProcedureName, TenantProcedureName>
