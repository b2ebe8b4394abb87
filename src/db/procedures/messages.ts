// Message reads, admin delete by tombstone, and the DLQ listing (sql/procedures/015_messages.sql).
import { z } from 'zod'
import { defineFamily, tenantScoped } from '../procedure.js'
import { count, instant, messageStatus, offset, queueOptions, verbatim } from './shared.js'

/** How the queues in scope are consumed: by queue mode, by named groups (bus), both, or not yet. */
const consumptionMode = z.object({ hasQueueMode: z.boolean(), busGroupsCount: count, type: z.enum(['queue', 'bus', 'hybrid', 'none']) })

const messageKey = {
  id: z.string(),
  transactionId: z.string(),
  partitionId: z.string(),
  queuePath: z.string(),
  queue: z.string(),
  partition: z.string(),
  namespace: z.string(),
  task: z.string(),
  status: messageStatus,
  traceId: z.string().nullable(),
  producerSub: z.string().nullable(),
  createdAt: instant,
  offset,
  leaseExpiresAt: instant.nullable(),
}

/** One message of the listing, without its payload. */
const listedMessage = z.object({
  ...messageKey,
  /** The same rule for queue mode alone; null when queue mode never read the partition. */
  queueStatus: messageStatus.nullable(),
  busStatus: z.object({ consumedBy: count, totalGroups: count }),
  queuePriority: z.number().int(),
})

const messageDetail = z.object({
  ...messageKey,
  payload: z.unknown(),
  isEncrypted: z.boolean(),
  errorMessage: z.string().nullable(),
  retryCount: count,
  queueConfig: queueOptions.pick({ leaseTime: true, retryLimit: true, retryDelay: true, ttl: true, priority: true }),
  mode: consumptionMode.extend({ consumedByGroups: count }),
  consumerGroups: z.array(z.object({ name: z.string(), consumed: z.boolean(), leaseExpiresAt: instant.nullable() })),
})

const deleted = z.object({ success: z.literal(true), partitionId: z.string(), transactionId: z.string(), deleted: count, message: z.string() })

// The route decrypts and relays each row without enc; its keys go out in the order this listing
// has always had: data first, then as jsonb orders the rest (shorter keys first). Loose, so a key
// the procedure adds later is relayed too.
const dlqRow = z.looseObject({
  enc: z.boolean(),
  data: z.unknown(),
  /** The dead-letter row's id: what POST /api/v1/dlq/:id/replay takes. */
  id: z.string(),
  messageId: z.string(),
  queue: z.string(),
  offset,
  failedAt: instant,
  createdAt: instant,
  partition: z.string(),
  retryCount: z.number().int(),
  partitionId: z.string(),
  producerSub: z.string().nullable(),
  errorMessage: z.string().nullable(),
  consumerGroup: z.string(),
  transactionId: z.string(),
})

export const messagesFamily = defineFamily({
  /** The message listing: frames in a time range with their state for every group. */
  log_messages_v1: tenantScoped<{ tenant: string; filter: Record<string, unknown>; now?: Date }>({ tenant: 'text', filter: 'jsonb', now: 'timestamptz' }).returns(
    z.object({ messages: z.array(verbatim(listedMessage)), mode: verbatim(consumptionMode) }),
  ),
  /** One message by key (the partition id as the client sent it), newest retained frame, with its payload; QMNFM when there is none. */
  log_message_v1: tenantScoped<{ tenant: string; partitionId: string; transactionId: string; now?: Date }>({
    tenant: 'text',
    partitionId: 'text',
    transactionId: 'text',
    now: 'timestamptz',
  }).returns(verbatim(messageDetail)),
  /** Deletes the dead-letter rows of an address (every group's); QMNDL when there is none. A live message is never deleted. */
  log_message_delete_v1: tenantScoped<{ tenant: string; partitionId: string; transactionId: string }>({
    tenant: 'text',
    partitionId: 'text',
    transactionId: 'text',
  }).returns(verbatim(deleted)),
  /** The DLQ listing, newest failure first, with its total. */
  log_dlq_v1: tenantScoped<{ tenant: string; filter: Record<string, unknown> }>({ tenant: 'text', filter: 'jsonb' }).returns(
    z.object({ messages: z.array(dlqRow), total: z.number().int() }),
  ),
})
