// Drizzle table definitions of schema `queen`, for typed reads in tests and admin code. sql/ is
// the source of truth: these are never used to generate migrations, and test/schema-drift.test.ts
// compares them with information_schema so the two cannot drift apart.
import { bigint, boolean, doublePrecision, integer, jsonb, pgSchema, text, timestamp, uuid } from 'drizzle-orm/pg-core'

const queen = pgSchema('queen')
const tstz = (name: string) => timestamp(name, { withTimezone: true })
const int8 = (name: string) => bigint(name, { mode: 'number' })

export const queues = queen.table('queues', {
  id: uuid('id').primaryKey().defaultRandom(),
  tenantId: text('tenant_id').notNull().default(''),
  name: text('name').notNull(),
  namespace: text('namespace').notNull().default(''),
  task: text('task').notNull().default(''),
  priority: integer('priority').notNull().default(0),
  leaseTime: integer('lease_time').notNull().default(300),
  retryLimit: integer('retry_limit').notNull().default(3),
  retryDelay: integer('retry_delay').notNull().default(1000),
  maxSize: integer('max_size').notNull().default(0),
  ttl: integer('ttl').notNull().default(3600),
  deadLetterQueue: boolean('dead_letter_queue').notNull().default(true),
  dlqAfterMaxRetries: boolean('dlq_after_max_retries').notNull().default(true),
  delayedProcessing: integer('delayed_processing').notNull().default(0),
  windowBuffer: integer('window_buffer').notNull().default(0),
  retentionSeconds: integer('retention_seconds').notNull().default(0),
  completedRetentionSeconds: integer('completed_retention_seconds').notNull().default(0),
  retentionEnabled: boolean('retention_enabled').notNull().default(false),
  encryptionEnabled: boolean('encryption_enabled').notNull().default(false),
  maxWaitTimeSeconds: integer('max_wait_time_seconds').notNull().default(0),
  minPopWaitTime: integer('min_pop_wait_time').notNull().default(0),
  dedupWindowSeconds: integer('dedup_window_seconds').notNull().default(3600),
  retentionSinkHold: text('retention_sink_hold').notNull().default(''),
  retentionSinkHoldMaxSeconds: integer('retention_sink_hold_max_seconds').notNull().default(604800),
  createdAt: tstz('created_at').notNull().defaultNow(),
  updatedAt: tstz('updated_at').notNull().defaultNow(),
})

export const logPartitions = queen.table('log_partitions', {
  id: uuid('id').primaryKey().defaultRandom(),
  queueId: uuid('queue_id').notNull().references(() => queues.id, { onDelete: 'cascade' }),
  name: text('name').notNull(),
  createdAt: tstz('created_at').notNull().defaultNow(),
  lastOffset: int8('last_offset').notNull().default(-1),
  logStart: int8('log_start').notNull().default(0),
  headAt: tstz('head_at'),
  lastWriteAt: tstz('last_write_at'),
})

export const logSegments = queen.table('log_segments', {
  partitionId: uuid('partition_id').notNull().references(() => logPartitions.id, { onDelete: 'cascade' }),
  baseOffset: int8('base_offset').notNull(),
  lastOffset: int8('last_offset').notNull(),
  frameCount: integer('frame_count').notNull(),
  createdAt: tstz('created_at').notNull(),
  byteSize: int8('byte_size').notNull(),
  frames: jsonb('frames').array().notNull(),
})

export const logConsumers = queen.table('log_consumers', {
  partitionId: uuid('partition_id').notNull().references(() => logPartitions.id, { onDelete: 'cascade' }),
  consumerGroup: text('consumer_group').notNull(),
  committedOffset: int8('committed_offset').notNull(),
  ackedSet: int8('acked_set').array().notNull().default([]),
  leaseId: uuid('lease_id'),
  leaseExpiresAt: tstz('lease_expires_at'),
  leaseFrom: int8('lease_from'),
  leaseTo: int8('lease_to'),
  retryOffset: int8('retry_offset'),
  retryCount: integer('retry_count').notNull().default(0),
  totalConsumed: int8('total_consumed').notNull().default(0),
  batchesConsumed: int8('batches_consumed').notNull().default(0),
  lastConsumedAt: tstz('last_consumed_at'),
  createdAt: tstz('created_at').notNull().defaultNow(),
  releasedLeaseId: uuid('released_lease_id'),
  attemptFrom: int8('attempt_from'),
  attempts: integer('attempts').array(),
  claimedAt: tstz('claimed_at'),
})

export const consumerGroups = queen.table('consumer_groups', {
  queueId: uuid('queue_id').notNull().references(() => queues.id, { onDelete: 'cascade' }),
  consumerGroup: text('consumer_group').notNull(),
  subscriptionMode: text('subscription_mode'),
  subscriptionAt: tstz('subscription_at'),
  delivery: text('delivery').notNull().default('all'),
  caughtUpAt: tstz('caught_up_at'),
  caughtUpCheckedAt: tstz('caught_up_checked_at'),
  createdAt: tstz('created_at').notNull().defaultNow(),
})

export const logTxns = queen.table('log_txns', {
  partitionId: uuid('partition_id').notNull(),
  txnHash: uuid('txn_hash').notNull(),
  frameOffset: int8('frame_offset').notNull(),
  messageId: uuid('message_id').notNull(),
  expiresAt: tstz('expires_at').notNull(),
})

export const logDlq = queen.table('log_dlq', {
  id: uuid('id').primaryKey().defaultRandom(),
  tenantId: text('tenant_id').notNull().default(''),
  queueId: uuid('queue_id').notNull(),
  partitionId: uuid('partition_id').notNull(),
  partitionName: text('partition_name').notNull(),
  consumerGroup: text('consumer_group').notNull(),
  frameOffset: int8('frame_offset').notNull(),
  messageId: uuid('message_id').notNull(),
  transactionId: text('transaction_id').notNull(),
  frame: jsonb('frame').notNull(),
  error: text('error'),
  retryCount: integer('retry_count').notNull().default(0),
  originalCreatedAt: tstz('original_created_at').notNull(),
  failedAt: tstz('failed_at').notNull().defaultNow(),
})

export const logTombstones = queen.table('log_tombstones', {
  partitionId: uuid('partition_id').notNull().references(() => logPartitions.id, { onDelete: 'cascade' }),
  frameOffset: int8('frame_offset').notNull(),
  createdAt: tstz('created_at').notNull().defaultNow(),
})

export const messageTraces = queen.table('message_traces', {
  id: uuid('id').primaryKey().defaultRandom(),
  tenantId: text('tenant_id').notNull().default(''),
  queueName: text('queue_name').notNull(),
  partitionId: uuid('partition_id').notNull(),
  partitionName: text('partition_name').notNull(),
  transactionId: text('transaction_id').notNull(),
  frameOffset: int8('frame_offset'),
  consumerGroup: text('consumer_group'),
  eventType: text('event_type').notNull().default('info'),
  data: jsonb('data'),
  traceNames: text('trace_names').array().notNull().default([]),
  workerId: text('worker_id'),
  createdAt: tstz('created_at').notNull().defaultNow(),
})

export const stats = queen.table('stats', {
  queueId: uuid('queue_id').primaryKey().references(() => queues.id, { onDelete: 'cascade' }),
  tenantId: text('tenant_id').notNull().default(''),
  partitionCount: integer('partition_count').notNull().default(0),
  total: int8('total').notNull().default(0),
  pending: int8('pending').notNull().default(0),
  processing: int8('processing').notNull().default(0),
  hwTotal: int8('hw_total').notNull().default(0),
  committedTotal: int8('committed_total').notNull().default(0),
  computedAt: tstz('computed_at'),
  segmentCount: int8('segment_count').notNull().default(0),
  retainedBytes: int8('retained_bytes').notNull().default(0),
  dlqTotal: int8('dlq_total').notNull().default(0),
  bytesComputedAt: tstz('bytes_computed_at'),
})

/** Each tenant's pre-rendered `?stats=cached` queue listing (0008_stats_listings.sql). */
export const statsListings = queen.table('stats_listings', {
  tenantId: text('tenant_id').primaryKey(),
  queues: text('queues').notNull(),
  computedAt: tstz('computed_at'),
  renderedAt: tstz('rendered_at').notNull(),
  snapshot: text('snapshot').notNull(),
  version: uuid('version').notNull(),
})

/** Transactions that changed a tenant's set of queues, for the listing's staleness check. */
export const statsListingChanges = queen.table('stats_listing_changes', {
  tenantId: text('tenant_id').notNull(),
  xid: int8('xid').notNull(),
  createdAt: tstz('created_at').notNull().defaultNow(),
})

/** The queues each of those transactions touched, so a stale listing patches in only them (0022). */
export const statsListingChangedQueues = queen.table('stats_listing_changed_queues', {
  tenantId: text('tenant_id').notNull(),
  xid: int8('xid').notNull(),
  queueId: uuid('queue_id').notNull(),
  createdAt: tstz('created_at').notNull().defaultNow(),
})

export const queueMetrics = queen.table('queue_metrics', {
  queueId: uuid('queue_id').notNull().references(() => queues.id, { onDelete: 'cascade' }),
  bucket: tstz('bucket').notNull(),
  pushed: int8('pushed').notNull().default(0),
  consumed: int8('consumed').notNull().default(0),
  deadLettered: int8('dead_lettered').notNull().default(0),
  pending: int8('pending').notNull().default(0),
  processing: int8('processing').notNull().default(0),
  maxLagSeconds: doublePrecision('max_lag_seconds').notNull().default(0),
})

export const maintenanceLeases = queen.table('maintenance_leases', {
  name: text('name').primaryKey(),
  holder: uuid('holder'),
  acquiredAt: tstz('acquired_at'),
  expiresAt: tstz('expires_at'),
  lastStartedAt: tstz('last_started_at'),
  lastFinishedAt: tstz('last_finished_at'),
  progress: jsonb('progress'),
  lastResult: jsonb('last_result'),
  runs: int8('runs').notNull().default(0),
})

// Queen 1.6's namespaced key/value store and timers (sql/migrations/0013_kv_timers.sql).
export const kvEntries = queen.table('kv_entries', {
  tenantId: text('tenant_id').notNull().default(''),
  ns: text('ns').notNull(),
  key: text('key').notNull(),
  value: jsonb('value').notNull(),
  version: int8('version').notNull(),
  expiresAt: tstz('expires_at'),
  updatedAt: tstz('updated_at').notNull(),
})

export const timers = queen.table('timers', {
  tenantId: text('tenant_id').notNull().default(''),
  queue: text('queue').notNull(),
  timerKey: text('timer_key').notNull(),
  partition: text('partition').notNull().default('Default'),
  deliverAt: tstz('deliver_at').notNull(),
  txn: text('txn').notNull(),
  data: jsonb('data').notNull(),
  payload: text('payload').notNull(),
  enc: boolean('enc').notNull().default(false),
  producerSub: text('producer_sub'),
  attempts: integer('attempts').notNull().default(0),
  lastError: text('last_error'),
  createdAt: tstz('created_at').notNull(),
  updatedAt: tstz('updated_at').notNull(),
  messageId: uuid('message_id').notNull(),
})

export const systemState = queen.table('system_state', {
  key: text('key').primaryKey(),
  value: jsonb('value').notNull(),
  updatedAt: tstz('updated_at').notNull().defaultNow(),
})

export const streamQueries = queen.table('stream_queries', {
  id: uuid('id').primaryKey().defaultRandom(),
  tenantId: text('tenant_id').notNull().default(''),
  name: text('name').notNull(),
  sourceQueue: text('source_queue').notNull(),
  sinkQueue: text('sink_queue'),
  configHash: text('config_hash').notNull(),
  createdAt: tstz('created_at').notNull().defaultNow(),
  updatedAt: tstz('updated_at').notNull().defaultNow(),
})

export const streamState = queen.table('stream_state', {
  queryId: uuid('query_id').notNull().references(() => streamQueries.id, { onDelete: 'cascade' }),
  partitionId: uuid('partition_id').notNull(),
  key: text('key').notNull(),
  value: jsonb('value').notNull(),
  updatedAt: tstz('updated_at').notNull().defaultNow(),
  size: integer('size').notNull().default(0),
})

export const streamShards = queen.table('stream_shards', {
  queryId: uuid('query_id').notNull().references(() => streamQueries.id, { onDelete: 'cascade' }),
  partitionId: uuid('partition_id').notNull(),
  epoch: uuid('epoch').notNull().defaultRandom(),
  version: int8('version').notNull().default(0),
  recent: text('recent').array().notNull().default([]),
  lastAnswer: jsonb('last_answer'),
  updatedAt: tstz('updated_at').notNull().defaultNow(),
  stateRows: int8('state_rows').notNull().default(0),
  stateBytes: int8('state_bytes').notNull().default(0),
  sourceGroup: text('source_group'),
  leaseSeen: uuid('lease_seen'),
  readVersion: int8('read_version'),
  flushed: text('flushed').array().notNull().default([]),
})

/** The placement directory (docs/placement.md); only the default database's rows are read. */
export const placements = queen.table('placements', {
  tenantId: text('tenant_id').primaryKey(),
  database: text('database').notNull(),
  state: text('state').notNull().default('placed'),
  movingTo: text('moving_to'),
  version: int8('version').notNull(),
  updatedAt: tstz('updated_at').notNull().defaultNow(),
})

export const placementDirectory = queen.table('placement_directory', {
  id: boolean('id').primaryKey().default(true),
  version: int8('version').notNull().default(0),
})

/** Every table, keyed by its SQL name. */
// Ephemeral queues (sql/migrations/0014_ephemeral.sql): the declarations are ordinary rows, the
// rest is UNLOGGED (docs/ephemeral.md).
export const ephemeralDeclarations = queen.table('ephemeral_declarations', {
  tenantId: text('tenant_id').notNull().default(''),
  queue: text('queue').notNull(),
  options: jsonb('options').notNull(),
  updatedAt: tstz('updated_at').notNull().defaultNow(),
})

export const ephemeralIncarnation = queen.table('ephemeral_incarnation', {
  id: integer('id').primaryKey(),
  epoch: text('epoch').notNull(),
  startedAt: tstz('started_at').notNull().defaultNow(),
})

export const ephemeralRings = queen.table('ephemeral_rings', {
  tenantId: text('tenant_id').notNull().default(''),
  queue: text('queue').notNull(),
  depth: int8('depth').notNull().default(0),
  bytes: int8('bytes').notNull().default(0),
  dropsBounds: int8('drops_bounds').notNull().default(0),
  dropsTtl: int8('drops_ttl').notNull().default(0),
  createdAt: tstz('created_at').notNull().defaultNow(),
  touchedAt: tstz('touched_at').notNull().defaultNow(),
})

export const ephemeralMessages = queen.table('ephemeral_messages', {
  tenantId: text('tenant_id').notNull().default(''),
  queue: text('queue').notNull(),
  partition: text('partition').notNull(),
  seq: int8('seq').notNull(),
  payload: jsonb('payload').notNull(),
  bytes: integer('bytes').notNull(),
  createdAt: tstz('created_at').notNull().defaultNow(),
})

// The row a push to one partition locks while it numbers and writes (0028); last_seq is the highest number written there.
export const ephemeralPartitions = queen.table('ephemeral_partitions', {
  tenantId: text('tenant_id').notNull().default(''),
  queue: text('queue').notNull(),
  partition: text('partition').notNull(),
  lastSeq: int8('last_seq').notNull().default(0),
})

export const ephemeralGroups = queen.table('ephemeral_groups', {
  tenantId: text('tenant_id').notNull().default(''),
  queue: text('queue').notNull(),
  grp: text('grp').notNull(),
  dropsRetry: int8('drops_retry').notNull().default(0),
  // For a queue-wide pop: each partition's next message at the earliest, as the group's last one found it (0028).
  headsParts: text('heads_parts').array(),
  heads: int8('heads').array(),
  createdAt: tstz('created_at').notNull().defaultNow(),
})

export const ephemeralCursors = queen.table('ephemeral_cursors', {
  tenantId: text('tenant_id').notNull().default(''),
  queue: text('queue').notNull(),
  grp: text('grp').notNull(),
  partition: text('partition').notNull(),
  lastSeq: int8('last_seq').notNull(),
})

// One row per pop: the numbers it delivered (ascending) with each one's partition and attempt count.
export const ephemeralLeases = queen.table('ephemeral_leases', {
  tenantId: text('tenant_id').notNull().default(''),
  queue: text('queue').notNull(),
  grp: text('grp').notNull(),
  lo: int8('lo').notNull(),
  hi: int8('hi').notNull(),
  seqs: int8('seqs').array().notNull(),
  partitions: text('partitions').array().notNull(),
  attempts: integer('attempts').array().notNull(),
  leaseUntil: tstz('lease_until').notNull(),
})

export const tables = {
  queues,
  log_partitions: logPartitions,
  log_segments: logSegments,
  log_consumers: logConsumers,
  consumer_groups: consumerGroups,
  log_txns: logTxns,
  log_dlq: logDlq,
  log_tombstones: logTombstones,
  message_traces: messageTraces,
  stats,
  stats_listings: statsListings,
  stats_listing_changes: statsListingChanges,
  stats_listing_changed_queues: statsListingChangedQueues,
  queue_metrics: queueMetrics,
  maintenance_leases: maintenanceLeases,
  kv_entries: kvEntries,
  timers,
  system_state: systemState,
  stream_queries: streamQueries,
  stream_state: streamState,
  stream_shards: streamShards,
  placements,
  placement_directory: placementDirectory,
  ephemeral_declarations: ephemeralDeclarations,
  ephemeral_incarnation: ephemeralIncarnation,
  ephemeral_rings: ephemeralRings,
  ephemeral_messages: ephemeralMessages,
  ephemeral_partitions: ephemeralPartitions,
  ephemeral_groups: ephemeralGroups,
  ephemeral_cursors: ephemeralCursors,
  ephemeral_leases: ephemeralLeases,
}
