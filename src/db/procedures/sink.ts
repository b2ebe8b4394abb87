// Archive sinks' leases, committed pointers (namespace queen.sink of the key/value store) and status (sql/procedures/027_sink.sql).
import { z } from 'zod'
import { defineFamily, tenantScoped } from '../procedure.js'

const sinkCommit = z.object({
  committed: z.boolean(),
  reason: z.enum(['lease_lost', 'version', 'behind']).nullable(),
  windowEnd: z.string().nullable(),
  /** The pointer row's version after the call, 0 when there is none. */
  version: z.number().int(),
})
/** The pointer as the sink reads it: null until the first commit. */
const sinkPointer = z.object({ windowEnd: z.string().nullable(), version: z.number().int() }).nullable()

export const sinkStatusRow = z.object({
  sink: z.string(),
  queue: z.string(),
  windowEnd: z.string().nullable(),
  lagFrames: z.number().int(),
  lagSeconds: z.number(),
  lastObject: z.string().nullable().optional(),
  /** What the last commit wrote: jsonl or parquet, its compression, and hive/queue, hive/partition or legacy. */
  format: z.string().nullable().optional(),
  compression: z.string().nullable().optional(),
  layout: z.string().nullable().optional(),
  /** The last closed window that held frames (a jump over idle windows moves windowEnd only). */
  lastWindow: z.object({ start: z.string(), end: z.string(), frames: z.number().int(), objects: z.number().int() }).nullable().optional(),
  committedAt: z.string().nullable().optional(),
  framesArchived: z.number().int(),
  running: z.boolean(),
  ran: z.boolean(),
  holdNamesSink: z.boolean(),
  holdingRetention: z.boolean(),
})
const sinkStatus = z.object({ sinks: z.array(sinkStatusRow) })

export const sinkFamily = defineFamily({
  /** Takes or keeps an archive sink's lease (one maintenance_leases row per tenant, sink and queue). */
  sink_lease_claim_v1: tenantScoped<{ tenant: string; sink: string; queue: string; token: string; ttl: string; now?: Date }>({
    tenant: 'text',
    sink: 'text',
    queue: 'text',
    token: 'uuid',
    ttl: 'interval',
    now: 'timestamptz',
  }).returns(z.boolean()),
  /** The sink's committed pointer for one queue (namespace queen.sink) with its version. */
  sink_pointer_v1: tenantScoped<{ tenant: string; sink: string; queue: string; now?: Date }>({ tenant: 'text', sink: 'text', queue: 'text', now: 'timestamptz' }).returns(
    sinkPointer,
  ),
  /** Moves the sink's committed pointer forward, only while the caller holds the lease and the pointer is still at the version it read. */
  sink_commit_v1: tenantScoped<{
    tenant: string
    sink: string
    queue: string
    token: string
    ttl: string
    windowEnd: string
    summary: Record<string, unknown>
    expectVersion: number
    now?: Date
  }>({
    tenant: 'text',
    sink: 'text',
    queue: 'text',
    token: 'uuid',
    ttl: 'interval',
    windowEnd: 'text',
    summary: 'jsonb',
    expectVersion: 'bigint',
    now: 'timestamptz',
  }).returns(sinkCommit),
  /** Every sink of the tenant with its pointer, lag and hold state (the console's sinks page). */
  sink_status_v1: tenantScoped<{ tenant: string; now?: Date }>({ tenant: 'text', now: 'timestamptz' }).returns(sinkStatus),
})
