// One acknowledgment as /ack, /ack/batch and the ack operations of /transaction accept it: its
// fields (each route words the two ids its own way) and the procedure argument it becomes.
import { z } from 'zod'
import type { AckItemArg } from '../db/procedures.js'
import { queenText } from '../http/validate.js'
import { NAME_MAX } from '../names.js'

/** Optional string fields: absent or null is null; anything but a string is a 400 naming it. */
const optionalString = (field: string, max?: number) => {
  const text = z.string(queenText(`${field} must be a string`))
  return (max === undefined ? text : text.max(max, queenText(`${field} must be at most ${max} characters`))).nullish()
}

/** The fields of one acknowledgment, with the texts of the route it is part of for the two ids. */
export function ackShape(texts: { txn: string; partition: string }) {
  return {
    transactionId: z
      .string(queenText(texts.txn))
      .min(1, queenText(texts.txn))
      .max(NAME_MAX, queenText(`transactionId must be at most ${NAME_MAX} characters`)),
    partitionId: z.string(queenText(texts.partition)).min(1, queenText(texts.partition)),
    status: z.string(queenText('status must be a string')).nullish().meta({ description: 'completed (default), failed, retry, …' }),
    offset: z.number(queenText('offset must be an integer')).int(queenText('offset must be an integer')).nullish(),
    consumerGroup: optionalString('consumerGroup', NAME_MAX),
    leaseId: optionalString('leaseId', NAME_MAX),
    error: optionalString('error'),
  }
}

type AckFields = z.output<z.ZodObject<ReturnType<typeof ackShape>>>

export function ackArg(o: AckFields, index: number): AckItemArg {
  return {
    index,
    partitionId: o.partitionId,
    transactionId: o.transactionId,
    offset: o.offset ?? null,
    consumerGroup: o.consumerGroup ?? null,
    leaseId: o.leaseId ?? null,
    status: o.status ? o.status : 'completed',
    error: o.error ?? null,
  }
}
