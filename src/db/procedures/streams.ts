// Stream queries (sql/procedures/026_streams.sql). Answers keep the original's snake_case keys:
// the SDKs read them.
import { z } from 'zod'
import { defineFamily, tenantScoped } from '../procedure.js'
import { encFlags } from './shared.js'
import { pushItemResult, type PushItemArg } from './push.js'

const streamRegistered = z.object({
  success: z.boolean(),
  query_id: z.string(),
  name: z.string(),
  config_hash: z.string().optional(),
  fresh: z.boolean().optional(),
  reset: z.boolean().optional(),
  error: z.string().optional(),
})
const streamStateRow = z.object({ key: z.string(), value: z.unknown(), updated_at: z.string() })
const streamCycle = z.object({
  success: z.boolean(),
  query_id: z.string(),
  partition_id: z.string(),
  queueName: z.string().nullable(),
  state_ops_applied: z.number().int(),
  push_results: z.array(pushItemResult),
  ack_result: z.object({ success: z.boolean(), count: z.number().int(), lease_released: z.boolean(), dlq: z.boolean() }).nullable(),
  queues: encFlags.nullable(),
  error: z.string().nullable().optional(),
  replayed: z.boolean().optional(),
  deferred: z.boolean().optional(),
})
export type StreamCycleResult = z.output<typeof streamCycle>
const streamQuery = z.object({
  query_id: z.string(),
  name: z.string(),
  source_queue: z.string(),
  sink_queue: z.string().nullable(),
  config_hash: z.string(),
  created_at: z.string(),
  updated_at: z.string(),
  state_rows: z.number().int(),
  state_bytes: z.number().int(),
  partitions: z.number().int(),
  source_group: z.string(),
  lag: z.number().int(),
})

/** A cycle's body as streams_cycle_v1 takes it: validated, push items encoded as _log_push takes them. */
export interface StreamCycleArg {
  query_id: string
  partition_id: string
  consumer_group?: string
  release_lease: boolean
  state_ops: ({ type: 'upsert'; key: string; value?: unknown } | { type: 'delete'; key: string })[]
  push_items: PushItemArg[]
  ack: { transactionId: string; leaseId?: string; status: string; count?: number; error?: string } | null
}

export const streamsFamily = defineFamily({
  /** Creates, finds, or (reset) wipes a stream query; success:false on a config hash mismatch. */
  streams_register_query_v1: tenantScoped<{
    tenant: string
    name: string
    sourceQueue: string
    sinkQueue: string | null
    configHash: string
    reset: boolean
    now?: Date
  }>({
    tenant: 'text',
    name: 'text',
    sourceQueue: 'text',
    sinkQueue: 'text',
    configHash: 'text',
    reset: 'boolean',
    now: 'timestamptz',
  }).returns(streamRegistered),
  /** One shard's state rows, filtered by keys, literal prefix and ripeness. */
  streams_state_get_v1: tenantScoped<{
    tenant: string
    queryId: string
    partitionId: string
    keys: string[]
    keyPrefix: string | null
    ripeAtOrBefore: number | null
  }>({
    tenant: 'text',
    queryId: 'uuid',
    partitionId: 'uuid',
    keys: 'jsonb',
    keyPrefix: 'text',
    ripeAtOrBefore: 'bigint',
  }).returns(z.object({ rows: z.array(streamStateRow) })),
  /** State ops, sink pushes and the source ack of one cycle, in one transaction. */
  streams_cycle_v1: tenantScoped<{ tenant: string; body: StreamCycleArg; cycleHash: string; now?: Date }>({
    tenant: 'text',
    body: 'jsonb',
    cycleHash: 'text',
    now: 'timestamptz',
  }).returns(streamCycle),
  /** The tenant's queries with state size and source-group lag. */
  streams_queries_v1: tenantScoped<{ tenant: string }>({ tenant: 'text' }).returns(z.array(streamQuery)),
  /** Deletes a query and its state. */
  streams_query_delete_v1: tenantScoped<{ tenant: string; name: string }>({ tenant: 'text', name: 'text' }).returns(
    z.object({ deleted: z.boolean(), state_rows: z.number().int() }),
  ),
})
