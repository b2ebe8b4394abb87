// Admin retry and move-to-DLQ of one message (sql/procedures/024_admin_messages.sql). Refusals
// are answers ({refused: code, …}) that the route maps to 404 or 409; both kinds are sent as
// they are, hence `verbatim`.
import { z } from 'zod'
import { defineFamily, tenantScoped } from '../procedure.js'
import { offset, verbatim } from './shared.js'

const refusal = z.object({
  refused: z.enum(['message_not_found', 'ambiguous_transaction', 'ambiguous_consumer_group', 'consumer_group_not_found', 'not_in_dlq', 'already_in_dlq']),
  /** ambiguous_transaction: the partitions holding the key. */
  partitions: z.array(z.object({ partitionId: z.string(), queue: z.string(), partition: z.string() })).optional(),
  /** ambiguous_consumer_group: the groups that dead-lettered it. */
  consumerGroups: z.array(z.string()).optional(),
})

const messageAt = { transactionId: z.string(), partitionId: z.string(), queue: z.string(), partition: z.string(), consumerGroup: z.string(), offset }

const retried = z.object({
  retried: z.literal(true),
  ...messageAt,
  redelivery: z.enum(['rewind', 'repush']),
  /** repush only: where the new frame went. */
  newOffset: offset.optional(),
  newTransactionId: z.string().optional(),
})

const movedToDlq = z.object({ movedToDLQ: z.literal(true), ...messageAt, messageId: z.string() })

export const adminMessagesFamily = defineFamily({
  /** Re-delivers a dead-lettered message to its group. */
  message_retry_v1: tenantScoped<{ tenant: string; partitionId: string | null; transactionId: string; group?: string; now?: Date }>({
    tenant: 'text',
    partitionId: 'uuid',
    transactionId: 'text',
    group: 'text',
    now: 'timestamptz',
  }).returns(verbatim(z.union([retried, refusal]))),
  /** Dead-letters a message for one group and settles it for that group. */
  message_dlq_v1: tenantScoped<{ tenant: string; partitionId: string | null; transactionId: string; group?: string; error?: string; now?: Date }>({
    tenant: 'text',
    partitionId: 'uuid',
    transactionId: 'text',
    group: 'text',
    error: 'text',
    now: 'timestamptz',
  }).returns(verbatim(z.union([movedToDlq, refusal]))),
})
