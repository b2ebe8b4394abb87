// Admin retry and move-to-DLQ of one message (sql/procedures/024_admin_messages.sql). A refusal
// raises its own SQLSTATE (src/errors.ts maps each to 404 or 409); retry answers the move's verdict.
// Answers are sent as they are, hence `verbatim`. The partition id is the client's text: one that
// is not a UUID names no message.
import { z } from 'zod'
import { defineFamily, tenantScoped } from '../procedure.js'
import { moveVerdict } from './dlq.js'
import { offset, verbatim } from './shared.js'

const messageAt = { transactionId: z.string(), partitionId: z.string(), queue: z.string(), partition: z.string(), consumerGroup: z.string(), offset }

const movedToDlq = z.object({ movedToDLQ: z.literal(true), ...messageAt, messageId: z.string() })

export const adminMessagesFamily = defineFamily({
  /** Moves the newest dead-letter row of an address (030_dlq.sql's move); `gone` when there is none. */
  message_retry_v1: tenantScoped<{ tenant: string; partitionId: string | null; transactionId: string; group?: string; now?: Date }>({
    tenant: 'text',
    partitionId: 'text',
    transactionId: 'text',
    group: 'text',
    now: 'timestamptz',
  }).returns(verbatim(moveVerdict)),
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
