// Push (sql/procedures/003_log_push.sql): every item queued or duplicate, or a raise and nothing stored.
import { z } from 'zod'
import { defineFamily, tenantScoped } from '../procedure.js'
import { encFlags, offset } from './shared.js'

/** One pushed item's result, as push answers it and as transactions and stream cycles list it. */
export const pushItemResult = z.object({
  index: z.number().int(),
  status: z.enum(['queued', 'duplicate']),
  queue: z.string(),
  partitionId: z.string(),
  offset,
  messageId: z.string(),
  transactionId: z.string(),
  traceId: z.string().nullable(),
})
type PushItemResult = z.infer<typeof pushItemResult>

/**
 * One push item as the push procedure takes it (the route has validated and encoded it). The
 * optional keys read as null (enc as false) when absent; the route leaves them out, since every key
 * is parsed by the procedure once per item.
 */
export interface PushItemArg {
  index: number
  queue: string
  partition: string
  transactionId?: string | null
  traceId?: string | null
  producerSub?: string | null
  enc?: boolean
  data: unknown
}

// Push answers one array per item field, expanded here into the items: building an eight-key
// object per item in SQL was ~16 % of a 100-frame push. `status` absent: all queued;
// `transactionId` absent: each item's is its messageId; `queue` absent: partitionQueue names each
// partition's queue once.
const pushColumns = z.object({
  index: z.array(z.number().int()),
  status: z.array(pushItemResult.shape.status).optional(),
  queue: z.array(z.string()).optional(),
  partitionId: z.array(z.string()),
  offset: z.array(offset),
  messageId: z.array(z.string()),
  transactionId: z.array(z.string()).optional(),
  traceId: z.array(z.string().nullable()),
})
const pushResult = z
  .object({ columns: pushColumns.nullable(), partitionQueue: z.record(z.string(), z.string()).optional(), queues: encFlags.nullable() })
  .transform(({ columns: c, partitionQueue, queues }) => ({
    queues,
    items: (c?.index ?? []).map((index, i): PushItemResult => {
      const partitionId = c!.partitionId[i]!
      const messageId = c!.messageId[i]!
      return {
        index,
        status: c!.status?.[i] ?? 'queued',
        queue: c!.queue?.[i] ?? partitionQueue![partitionId]!,
        partitionId,
        offset: c!.offset[i]!,
        messageId,
        transactionId: c!.transactionId?.[i] ?? messageId,
        traceId: c!.traceId[i] ?? null,
      }
    }),
  }))

export const pushFamily = defineFamily({
  /** Stores every item, or raises and stores nothing; duplicates inside the dedup window answer the original. */
  log_push_v1: tenantScoped<{ tenant: string; items: PushItemArg[]; now?: Date }>({ tenant: 'text', items: 'jsonb', now: 'timestamptz' }).returns(pushResult),
})
