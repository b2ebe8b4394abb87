// Transaction (sql/procedures/006_log_transaction.sql): pushes and acks all or nothing; business
// failures are results, not raises.
import { z } from 'zod'
import { defineFamily, tenantScoped } from '../procedure.js'
import { ackItemResult, type AckItemArg } from './ack.js'
import type { KvLimits } from './kv-store.js'
import { pushItemResult, type PushItemArg } from './push.js'
import type { TimerOpArg } from './timers.js'

export type TransactionOpArg = { type: 'push'; items: PushItemArg[] } | ({ type: 'ack' } & Omit<AckItemArg, 'index'>)

const txnEntry = z.union([
  pushItemResult.extend({ operation: z.number().int(), type: z.literal('push') }),
  ackItemResult.extend({ operation: z.number().int(), type: z.literal('ack') }),
])

const transactionResult = z.object({
  success: z.boolean(),
  error: z.string().nullable().optional(),
  code: z.string().nullable().optional(),
  results: z.array(txnEntry),
  /** The riders' results, index-aligned with their arrays (committed transactions only). */
  kv: z.array(z.looseObject({ index: z.number().int(), op: z.string() })).optional(),
  timers: z.array(z.looseObject({ index: z.number().int(), ok: z.boolean(), status: z.string() })).optional(),
  /** A lost `required` KV precondition: the flat index of the failed op, its reason, and the row that won. */
  reason: z.enum(['kv_precondition', 'timer_horizon_exceeded']).optional(),
  failedIndex: z.number().int().optional(),
  kvReason: z.string().optional(),
  value: z.unknown().optional(),
  version: z.number().nullable().optional(),
})

export const transactionFamily = defineFamily({
  /** Applies every push, ack and rider of the transaction, or none; one result per item of each operation. */
  log_transaction_v1: tenantScoped<{
    tenant: string
    ops: TransactionOpArg[]
    requiredLeases: string[]
    now?: Date
    kv?: unknown[] | null
    timers?: TimerOpArg[] | null
    kvLimits?: KvLimits
    horizonMs?: number
  }>({
    tenant: 'text',
    ops: 'jsonb',
    requiredLeases: 'jsonb',
    now: 'timestamptz',
    kv: 'jsonb',
    timers: 'jsonb',
    kvLimits: 'jsonb',
    horizonMs: 'bigint',
  }).returns(transactionResult),
})
