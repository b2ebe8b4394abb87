// Queen 1.6's namespaced key/value store (sql/procedures/032_kv_store.sql, docs/kv.md).
import { z } from 'zod'
import { brokerWide, defineFamily, tenantScoped } from '../procedure.js'
import { stepResult } from './shared.js'

/** The ceilings one call runs under (src/kv/limits.ts); the rider's are smaller than the route's. */
export interface KvLimits {
  maxOps: number
  maxKeys: number
  maxValueBytes: number
  maxKeyBytes: number
  maxReadBytes: number
}

/** One operation's result, index-aligned with the request; its fields depend on the op. */
const kvResult = z.looseObject({ index: z.number().int(), op: z.string() })

const kvApplied = z.union([
  z.object({ results: z.array(kvResult) }),
  z.looseObject({ ok: z.literal(false), reason: z.literal('kv_precondition'), failedIndex: z.number().int(), kvReason: z.string() }),
])

export const kvStoreFamily = defineFamily({
  /** Applies a batch of KV operations: {results} or, for a lost `required` write, the rolled-back verdict. */
  kv_apply_v1: tenantScoped<{ tenant: string; ops: unknown; limits: KvLimits; now?: Date }>({
    tenant: 'text',
    ops: 'jsonb',
    limits: 'jsonb',
    now: 'timestamptz',
  }).returns(kvApplied),
  /** Every namespace of the tenant with its exact row count, expired rows included. */
  kv_namespaces_v1: tenantScoped<{ tenant: string }>({ tenant: 'text' }).returns(
    z.object({ namespaces: z.array(z.object({ namespace: z.string(), keys: z.number().int() })) }),
  ),
  /** One keyset page of one namespace for the console, expired rows labelled. */
  kv_list_v1: tenantScoped<{ tenant: string; args: unknown; maxReadBytes: number; now?: Date }>({
    tenant: 'text',
    args: 'jsonb',
    maxReadBytes: 'bigint',
    now: 'timestamptz',
  }).returns(z.looseObject({ rows: z.array(z.looseObject({ key: z.string() })), truncated: z.boolean(), nextAfter: z.string().nullable(), bytes: z.number() })),
  /** One bounded step of the expiry sweep: deletes rows whose expiry has passed. */
  kv_sweep_step_v1: brokerWide<{ limit: number; now?: Date }>({ limit: 'int', now: 'timestamptz' }).returns(stepResult),
})
