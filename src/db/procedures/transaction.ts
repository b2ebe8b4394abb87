// Transaction (sql/procedures/006_log_transaction.sql): pushes and acks all or nothing; business
// failures are results, not raises.
import { z } from 'zod'
import { defineFamily, tenantScoped } from '../procedure.js'
import { ackItemResult, type AckItemArg } from './ack.js'
import { pushItemResult, type PushItemArg } from './push.js'

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
})

export const transactionFamily = defineFamily({
  /** Applies every push and ack of the transaction, or none; one result per item of each operation. */
  log_transaction_v1: tenantScoped<{ tenant: string; ops: TransactionOpArg[]; requiredLeases: string[]; now?: Date }>({
    tenant: 'text',
    ops: 'jsonb',
    requiredLeases: 'jsonb',
    now: 'timestamptz',
  }).returns(transactionResult),
})
