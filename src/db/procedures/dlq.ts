// Dead-letter moves and purge (sql/procedures/030_dlq.sql). A move answers a verdict the route
// turns into its status (docs/admin-messages.md), so every outcome is in the answer, not a raise.
import { z } from 'zod'
import { defineFamily, tenantScoped } from '../procedure.js'
import { count, offset, verbatim } from './shared.js'

/** The verdict of one move: `moved` and `duplicate` carry the push result, the others the reason. */
export const moveVerdict = z.object({
  success: z.boolean(),
  result: z.enum(['moved', 'duplicate', 'gone', 'maintenance', 'encryption_mismatch']),
  dlqId: z.string().optional(),
  queue: z.string().optional(),
  partition: z.string().optional(),
  partitionId: z.string().optional(),
  consumerGroup: z.string().optional(),
  originalTransactionId: z.string().optional(),
  transactionId: z.string().optional(),
  replayedAs: z
    .object({ index: z.literal(0), message_id: z.string(), transaction_id: z.string(), queueName: z.string(), status: z.enum(['queued', 'duplicate']), offset })
    .optional(),
  dlqRowRemoved: z.boolean().optional(),
  encrypted: z.boolean().optional(),
  destinationEncrypted: z.boolean().optional(),
  /** encryption_mismatch only: where the stored payload was sealed (its AES-GCM binding). */
  sourceQueue: z.string().optional(),
  sourcePartition: z.string().optional(),
  /** encryption_mismatch only: the stored payload, for the route to re-encode; never sent on. */
  data: z.unknown().optional(),
})
export type MoveVerdict = z.output<typeof moveVerdict>

export const dlqFamily = defineFamily({
  /** Moves one dead-letter row by id, optionally to another queue or partition. */
  log_dlq_replay_v1: tenantScoped<{ tenant: string; dlqId: string; queue?: string; partition?: string; now?: Date; data?: unknown; enc?: boolean }>({
    tenant: 'text',
    dlqId: 'text',
    queue: 'text',
    partition: 'text',
    now: 'timestamptz',
    data: 'jsonb',
    enc: 'boolean',
  }).returns(verbatim(moveVerdict)),
  /** Deletes one queue's dead-letter rows, or one group's of it. */
  log_dlq_purge_v1: tenantScoped<{ tenant: string; queue: string; group?: string }>({ tenant: 'text', queue: 'text', group: 'text' }).returns(
    verbatim(z.object({ success: z.literal(true), deleted: count, queue: z.string(), consumerGroup: z.string().nullable() })),
  ),
})
