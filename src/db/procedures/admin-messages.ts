// Admin retry and move-to-DLQ of one message (sql/procedures/024_admin_messages.sql). A refusal
// raises its own SQLSTATE (src/errors.ts maps each to 404 or 409); the answer is sent as it is,
// hence `verbatim`. The partition id is the client's text: one that is not a UUID names no message.
import { z } from 'zod'
import { defineFamily, tenantScoped } from '../procedure.js'
import { offset, verbatim } from './shared.js'

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
    partitionId: 'text',
    transactionId: 'text',
    group: 'text',
    now: 'timestamptz',
  }).returns(verbatim(retried)),
  /** Dead-letters a message for one group and settles it for that group. */
  message_dlq_v1: tenantScoped<{ tenant: string; partitionId: string | null; transactionId: string; group?: string; error?: string; now?: Date }>({
    tenant: 'text',
    partitionId: 'text',
    transactionId: 'text',
    group: 'text',
    error: 'text',
    now: 'timestamptz',
  }).returns(verbatim(movedToDlq)),
})
