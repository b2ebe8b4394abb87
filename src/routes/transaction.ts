// POST /api/v1/transaction (design decision 21): pushes and acks in one PostgreSQL transaction.
// Structural problems are 400 with nothing executed; a business failure (missing message, wrong
// lease, lost required lease) is 200 {success:false} with nothing applied, never 5xx, since the
// SDKs would resend a 5xx. Push items go through the same validation and encryption loop as /push.
import { z } from 'zod'
import type { TransactionOpArg } from '../db/procedures.js'
import { ROLE_SETS, route } from '../http/route.js'
import { positionOf, sentence, worded } from '../http/validate.js'
import { uuidv7 } from '../ids.js'
import { ackArg, ackShape } from '../messages/ack-items.js'
import { withEncryption } from '../messages/encode.js'
import { checkItemCount, pushItems, type PushItem } from '../messages/push-items.js'
import { wakePops } from '../messages/wake-pops.js'

type ParsedOp = { type: 'push'; items: (PushItem & { where: string })[] } | (TransactionOpArg & { type: 'ack' })

const pushOp = z.object({ type: z.literal('push'), items: pushItems })
const ackOp = z.object({ type: z.literal('ack'), ...ackShape({ txn: 'transactionId is required', partition: 'partitionId is required' }) })

const operation = z.discriminatedUnion('type', [pushOp, ackOp], {
  error: (iss) => {
    // A non-object is reported through the union's error too (zod types it as a union issue only).
    if ((iss.code as string) === 'invalid_type') return `Each operation must be an object${positionOf(iss.path?.slice(0, 2))}`
    const type = (iss.input as { type?: unknown } | undefined)?.type
    return `Unknown operation type: ${typeof type === 'string' ? type : JSON.stringify(type ?? null)}`
  },
})

/**
 * Queen reads operations (an array, not empty) first, then requiredLeases, then each operation;
 * the gate keeps that order (a schema's own fields would report the operations first).
 */
export const transactionBody = worded(
  z.preprocess(
    (body, ctx) => {
      const { operations } = body as Record<string, unknown>
      if (!Array.isArray(operations)) ctx.addIssue({ code: 'custom', message: 'operations array required' })
      else if (operations.length === 0) ctx.addIssue({ code: 'custom', message: 'operations array cannot be empty' })
      return body
    },
    z.object({
      requiredLeases: z.array(z.string({ error: 'requiredLeases must be an array of strings' }), { error: 'requiredLeases must be an array of strings' }).default([]),
      operations: z.array(operation).min(1),
    }),
  ),
  sentence,
)

/** Each push operation's item count against MAX_PUSH_ITEMS (configuration), before the schema. */
function checkItemCounts(raw: Record<string, unknown>, maxItems: number): void {
  if (!Array.isArray(raw.operations)) return
  for (const op of raw.operations as unknown[]) {
    if (typeof op === 'object' && op !== null && (op as { type?: unknown }).type === 'push') checkItemCount((op as { items?: unknown }).items, maxItems)
  }
}

export const transactionRoutes = [
  route(
    {
      method: 'POST',
      path: '/api/v1/transaction',
      summary: 'Pushes and acks in one PostgreSQL transaction',
      roles: ROLE_SETS.RW_A,
      tenant: 'required',
      body: 'required',
      request: { body: transactionBody, admit: (c, raw) => checkItemCounts(raw, c.get('config').MAX_PUSH_ITEMS) },
    },
    async (c, { body }) => {
      const { requiredLeases } = body
      const ops: ParsedOp[] = body.operations.map((op, i): ParsedOp => {
        if (op.type === 'push') return { type: 'push', items: op.items.map((item, j) => ({ ...item, where: `operations[${i}].items[${j}]` })) }
        const { index: _index, ...ack } = ackArg(op, 0)
        return { type: 'ack', ...ack }
      })

      const pushItems = ops.flatMap((op) => (op.type === 'push' ? op.items : []))
      const result = await withEncryption(
        c,
        pushItems,
        (k) => pushItems[k]!.where,
        (encoded) => {
          let at = 0
          const wired: TransactionOpArg[] = ops.map((op) => {
            if (op.type !== 'push') return op
            const items = encoded.slice(at, at + op.items.length).map((item, j) => ({ ...item, index: j }))
            at += op.items.length
            return { type: 'push', items }
          })
          return c.get('db').call('log_transaction_v1', { ops: wired, requiredLeases })
        },
        // The push results name the queues, but not their flags; a stale flag shows up as QMENC.
        () => null,
      )
      if (result.success) wakePops(c, pushItems.map((i) => i.queue))

      const results = result.results.map((r, index) =>
        r.type === 'push'
          ? { index, operation: r.operation, type: 'push', success: true, status: r.status, transactionId: r.transactionId, messageId: r.messageId, partitionId: r.partitionId, queueName: r.queue, offset: r.offset }
          : { index, operation: r.operation, type: 'ack', success: r.success, transactionId: r.transactionId, offset: r.offset, error: r.error, code: r.code, dlq: r.dlq, dropped: r.dropped, leaseReleased: r.leaseReleased, ...(r.alreadyAcked ? { alreadyAcked: true } : {}) },
      )
      const transactionId = uuidv7()
      if (result.success) {
        // Only a committed transaction counts: a rolled-back one pushed and settled nothing.
        c.get('metrics').pushed(result.results.flatMap((r) => (r.type === 'push' ? [r.status] : [])))
        c.get('metrics').acked(
          result.results.flatMap((r) => {
            if (r.type !== 'ack') return []
            const op = ops[r.operation]
            return [{ status: op?.type === 'ack' ? op.status : 'completed', success: r.success, dlq: r.dlq }]
          }),
        )
      }
      if (!result.success) return c.json({ transactionId, success: false, error: result.error ?? 'Transaction failed', code: result.code ?? null, results })
      return c.json({ transactionId, success: true, results })
    },
  ),
]
