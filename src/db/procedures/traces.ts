// Message traces (sql/procedures/016_traces.sql).
import { z } from 'zod'
import { defineFamily, tenantScoped } from '../procedure.js'

// Trace entries are snake_case on the wire (Queen's format); the procedures build them so.
const traceEntry = z.object({
  id: z.string(),
  event_type: z.string(),
  data: z.unknown(),
  consumer_group: z.string().nullable(),
  worker_id: z.string().nullable(),
  created_at: z.string(),
  trace_names: z.array(z.string()),
})
const namedTrace = traceEntry.extend({
  transaction_id: z.string(),
  partition_id: z.string(),
  queue_name: z.string(),
  partition_name: z.string(),
  message_payload: z.unknown(),
  enc: z.boolean(),
})
const tracesByName = z.object({ traces: z.array(namedTrace), total: z.number().int() })
const traceNames = z.object({
  trace_names: z.array(z.object({ trace_name: z.string(), trace_count: z.number().int(), message_count: z.number().int(), last_seen: z.string() })),
  total: z.number().int(),
})

/** One trace as the create procedure takes it (the route has validated and defaulted every field). */
export interface TraceCreateArg {
  tenant: string
  partitionId: string
  transactionId: string
  data: unknown
  consumerGroup: string
  eventType: string
  traceNames: string[]
  now?: Date
}

export const tracesFamily = defineFamily({
  /** Records a trace against the newest retained frame of a key (the partition id as the client sent it); QMNFM when the tenant has no such frame. */
  trace_create_v1: tenantScoped<TraceCreateArg>({
    tenant: 'text',
    partitionId: 'text',
    transactionId: 'text',
    data: 'jsonb',
    consumerGroup: 'text',
    eventType: 'text',
    traceNames: 'text[]',
    now: 'timestamptz',
  }).returns(z.object({ traceId: z.string() })),
  /** The traces of one message key, oldest first; [] for an unknown key. */
  trace_list_v1: tenantScoped<{ tenant: string; partitionId: string; transactionId: string }>({
    tenant: 'text',
    partitionId: 'uuid',
    transactionId: 'text',
  }).returns(z.object({ traces: z.array(traceEntry) })),
  /** One page of the traces carrying a name, newest first, with the message payload while retained. */
  trace_by_name_v1: tenantScoped<{ tenant: string; name: string; limit: number; offset: number }>({
    tenant: 'text',
    name: 'text',
    limit: 'int',
    offset: 'bigint',
  }).returns(tracesByName),
  /** One page of the tenant's trace names, most recently seen first, with counts. */
  trace_names_v1: tenantScoped<{ tenant: string; limit: number; offset: number }>({ tenant: 'text', limit: 'int', offset: 'bigint' }).returns(traceNames),
})
