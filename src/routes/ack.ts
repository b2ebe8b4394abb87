// POST /api/v1/ack and /api/v1/ack/batch: both answer 200 with an array of per-item
// results, because a wrong lease or a missing message is a business outcome, not an error.
// Validation here is structural only (Queen's texts); every verdict about state is the procedure's.
import type { Context } from 'hono'
import { z } from 'zod'
import type { AckItemArg, AckItemResult } from '../db/procedures.js'
import { HttpError } from '../errors.js'
import type { AppEnv } from '../http/env.js'
import { ROLE_SETS, route } from '../http/route.js'
import { queenText, sentence, worded } from '../http/validate.js'
import { ackArg, ackShape } from '../messages/ack-items.js'

const SINGLE = { txn: 'transactionId is required', partition: 'partitionId is required to ensure message uniqueness' }
const BATCH = {
  txn: 'Each acknowledgment must have a valid transactionId string',
  partition: 'Each acknowledgment must have a valid partitionId string to ensure message uniqueness',
}

export const ackBody = worded(z.object(ackShape(SINGLE)), sentence)

/**
 * Queen reads "is acknowledgments an array" first and the top-level group second, before any item;
 * the gate keeps that order (a schema's own fields would report the items first).
 */
export const ackBatchBody = worded(
  z.preprocess(
    (body, ctx) => {
      if (!Array.isArray((body as Record<string, unknown>).acknowledgments)) ctx.addIssue({ code: 'custom', message: 'acknowledgments array is required' })
      return body
    },
    z.object({
      consumerGroup: z.string({ error: 'consumerGroup must be a string' }).nullish().meta({ description: 'when non-empty, applies to every item' }),
      acknowledgments: z.array(z.object(ackShape(BATCH), queenText('Each acknowledgment must be an object'))),
    }),
  ),
  sentence,
)

/**
 * The batch size cap (MAX_ACK_ITEMS, configuration), on the raw body before the schema so a huge
 * batch is refused before any item is looked at, like push's item count.
 */
function checkAckCount(c: Context<AppEnv>, raw: Record<string, unknown>): void {
  const items = raw.acknowledgments
  const limit = c.get('config').MAX_ACK_ITEMS
  if (Array.isArray(items) && items.length > limit) {
    throw new HttpError(413, 'payload_too_large', `Too many acknowledgments: ${items.length} (limit ${limit} per batch)`)
  }
}

/** Counts the items for the process metrics (by requested status and outcome) and passes them on. */
function observed(c: Context<AppEnv>, acks: readonly AckItemArg[], results: AckItemResult[]): AckItemResult[] {
  c.get('metrics').acked(results.map((r) => ({ status: acks[r.index]?.status ?? 'completed', success: r.success, dlq: r.dlq })))
  return results
}

const spec = { method: 'POST', roles: ROLE_SETS.RW_A, tenant: 'required', body: 'required' } as const

export const ackRoutes = [
  route({ ...spec, path: '/api/v1/ack/batch', summary: 'Settle many messages; per-item results', request: { body: ackBatchBody, admit: checkAckCount } }, async (c, { body }) => {
    const { consumerGroup } = body
    const acks = body.acknowledgments.map((item, i) => {
      const ack = ackArg(item, i)
      // A non-empty top-level group applies to every item, overriding the items' own.
      return consumerGroup ? { ...ack, consumerGroup } : ack
    })
    if (acks.length === 0) return c.json([])
    return c.json(observed(c, acks, await c.get('db').call('log_ack_v1', { acks })))
  }),
  route({ ...spec, path: '/api/v1/ack', summary: 'Settle one message (completed, failed, retry)', request: { body: ackBody } }, async (c, { body }) => {
    const ack = ackArg(body, 0)
    return c.json(observed(c, [ack], await c.get('db').call('log_ack_v1', { acks: [ack] })))
  }),
]
