// Ack (sql/procedures/005_log_ack.sql): per-item results in index order, from whichever of the
// three answers the procedure chose.
import { z } from 'zod'
import { defineFamily, tenantScoped } from '../procedure.js'
import { offset } from './shared.js'

/** One ack item's result, as ack answers it and as transactions list it. */
export const ackItemResult = z.object({
  index: z.number().int(),
  transactionId: z.string().nullable(),
  offset: offset.nullable(),
  success: z.boolean(),
  error: z.string().nullable(),
  code: z.string().nullable(),
  queueName: z.string().nullable(),
  partitionName: z.string().nullable(),
  leaseReleased: z.boolean(),
  dlq: z.boolean(),
  dropped: z.boolean(),
  evicted: z.boolean(),
  /** Present (true) when the item's verdict already stood: a retried ack, answered success, changing nothing. */
  alreadyAcked: z.literal(true).optional(),
})
export type AckItemResult = z.infer<typeof ackItemResult>

/** One ack item as the ack procedure takes it. */
export interface AckItemArg {
  index: number
  partitionId: string
  transactionId: string
  offset: number | null
  consumerGroup: string | null
  leaseId: string | null
  status: string
  error: string | null
}

// The common ack's compact answer (_log_ack_plain): every item succeeded, so only index,
// transaction id and offset vary. Expanded here, because building one object per item in SQL cost
// as much as the ack itself.
const plainAck = z.object({
  queueName: z.string(),
  partitionName: z.string(),
  releasedIndex: z.number().int().nullable(),
  index: z.array(z.number().int()),
  transactionId: z.array(z.string()),
  offset: z.array(offset),
  alreadyAcked: z.array(z.number().int()).nullable(),
})

const expandPlain = (p: z.infer<typeof plainAck>): AckItemResult[] =>
  p.index.map((index, i) => ({
    index,
    transactionId: p.transactionId[i]!,
    offset: p.offset[i]!,
    success: true,
    error: null,
    code: null,
    queueName: p.queueName,
    partitionName: p.partitionName,
    leaseReleased: index === p.releasedIndex,
    dlq: false,
    dropped: false,
    evicted: false,
    ...(p.alreadyAcked?.includes(index) ? { alreadyAcked: true as const } : {}),
  }))

const plainAckResult = z.object({ plain: plainAck }).transform(({ plain }) => expandPlain(plain))

// An ack of several rows (_log_ack_leases, what a fused call usually is): the rows settled on the
// common path, each compact, and the general path's items for the rest; one array in index order.
const leasesAckResult = z
  .object({ leases: z.array(plainAck), rest: z.array(ackItemResult) })
  .transform(({ leases, rest }) => [...leases.flatMap(expandPlain), ...rest].sort((a, b) => a.index - b.index))

export const ackFamily = defineFamily({
  /** Settles, fails or dead-letters each item; one result per item, in index order. */
  log_ack_v1: tenantScoped<{ tenant: string; acks: AckItemArg[]; now?: Date }>({ tenant: 'text', acks: 'jsonb', now: 'timestamptz' }).returns(
    z.union([plainAckResult, leasesAckResult, z.array(ackItemResult)]),
  ),
})
