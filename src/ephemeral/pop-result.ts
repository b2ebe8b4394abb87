// The ephemeral pop's answer (docs/ephemeral.md). ephemeral_pop_v2 returns its deliveries as
// parallel arrays and the broker builds each message and its id here: the same objects and id
// strings built in PostgreSQL were a third of a pop's time there. An id is
// `e:<epoch>:<partition>:<number>` for a first delivery and `….<attempts>` for a redelivery, the
// form src/ephemeral/ack-ids.ts parses back.
import type { ResultOf } from '../db/procedures.js'

export type PopDeliveries = ResultOf<'ephemeral_pop_v2'>

export interface EphemeralMessage {
  id: string
  partition: string
  attempts: number
  payload: unknown
}

/** The messages of one pop, in delivery order. */
export function popMessages(result: PopDeliveries): EphemeralMessage[] {
  const { epoch, seqs, partitions, attempts, payloads } = result
  const messages: EphemeralMessage[] = new Array(seqs.length)
  for (let i = 0; i < seqs.length; i++) {
    const partition = partitions[i]!
    const attempt = attempts[i]!
    messages[i] = {
      id: attempt > 0 ? `e:${epoch}:${partition}:${seqs[i]}.${attempt}` : `e:${epoch}:${partition}:${seqs[i]}`,
      partition,
      attempts: attempt,
      payload: payloads[i],
    }
  }
  return messages
}

/** Deliveries from..to (exclusive) of a pop's answer: one member's share of a fused pop. */
export const sliceDeliveries = (result: PopDeliveries, from: number, to: number): PopDeliveries => ({
  ...result,
  seqs: result.seqs.slice(from, to),
  partitions: result.partitions.slice(from, to),
  attempts: result.attempts.slice(from, to),
  payloads: result.payloads.slice(from, to),
})
