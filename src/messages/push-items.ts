// The push item as /push, /transaction and the stream cycle accept it: the schema of one item, of
// an items array, and the item count limit checked before either.
import { z } from 'zod'
import { HttpError } from '../errors.js'
import { pathText, queenText } from '../http/validate.js'
import { isUuid } from '../ids.js'
import { NAME_MAX } from '../names.js'

/** A push item after validation, before encoding. */
export interface PushItem {
  queue: string
  partition: string
  transactionId: string | null
  traceId: string | null
  data: unknown
}

/** One push item. Empty partition, transactionId and traceId read as absent, as Queen's do. */
export const pushItem = z
  .object(
    {
      queue: z.string(queenText('Queue must be a string')).max(NAME_MAX, queenText(`Queue name must be at most ${NAME_MAX} characters`)),
      partition: z.string(queenText('Partition must be a string')).max(NAME_MAX, queenText(`Partition name must be at most ${NAME_MAX} characters`)).nullish(),
      transactionId: z.string(queenText('TransactionId must be a string')).max(NAME_MAX, queenText(`TransactionId must be at most ${NAME_MAX} characters`)).nullish(),
      traceId: z
        .string(queenText('TraceId must be a string'))
        .refine((v) => v === '' || isUuid(v), queenText('TraceId must be a UUID'))
        .nullish(),
      payload: z.unknown().optional().meta({ description: 'the message; `data` is accepted for it too' }),
      data: z.unknown().optional(),
      // A producerSub in the body is never honoured, as in Queen: the producer is the token's subject.
    },
    queenText('Each item must be an object'),
  )
  .transform(
    (o): PushItem => ({
      queue: o.queue,
      partition: o.partition ? o.partition : 'Default',
      transactionId: o.transactionId ? o.transactionId : null,
      traceId: o.traceId ? o.traceId.toLowerCase() : null,
      data: 'payload' in o ? o.payload : 'data' in o ? o.data : {},
    }),
  )

/** A push items array: "items array is required", or "operations[2].items array is required" inside a transaction. */
export const pushItems = z.array(pushItem, { error: (iss) => `${pathText(iss.path)} array is required` })

/**
 * The item count limit is configuration, so no static schema can hold it; it is checked on the raw
 * body before the schema, where Queen checks it (after "is it an array", before any item).
 */
export function checkItemCount(raw: unknown, maxItems: number): void {
  if (Array.isArray(raw) && raw.length > maxItems) {
    throw new HttpError(413, 'payload_too_large', `Too many items: ${raw.length} (limit ${maxItems} per push)`)
  }
}
