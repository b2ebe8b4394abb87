// POST /api/v1/transaction (design decision 21): pushes and acks in one PostgreSQL transaction,
// with Queen 1.6's `kv` and `timers` riders committing in the same one (docs/kv.md, docs/timers.md).
// Structural problems are 400 with nothing executed; a business failure (missing message, wrong
// lease, lost required lease, a lost `required` KV precondition) is 200 {success:false} with nothing
// applied, never 5xx, since the SDKs would resend a 5xx. Push items go through the same validation
// and encryption loop as /push; timer payloads are encrypted the same way.
import { z } from 'zod'
import type { TransactionOpArg } from '../db/procedures.js'
import { ROLE_SETS, route } from '../http/route.js'
import { positionOf, sentence, worded } from '../http/validate.js'
import { uuidv7 } from '../ids.js'
import { ackArg, ackShape } from '../messages/ack-items.js'
import { withEncryption } from '../messages/encode.js'
import { checkItemCount, pushItems, type PushItem } from '../messages/push-items.js'
import { wakePops } from '../messages/wake-pops.js'
import { KV_RIDER_LIMITS } from '../kv/limits.js'
import { refuseReservedWrites } from '../kv/reserved.js'
import { checkTimerOps, encodeTimerOps, TIMER_HORIZON_MS, timerPayloadLimit } from '../timers/ops.js'

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
      const { operations, kv, timers } = body as Record<string, unknown>
      // A bundle that only writes a key (or schedules a timer) is a legitimate bundle.
      const riders = (Array.isArray(kv) && kv.length > 0) || (Array.isArray(timers) && timers.length > 0)
      if (!Array.isArray(operations)) ctx.addIssue({ code: 'custom', message: 'operations array required' })
      else if (operations.length === 0 && !riders) ctx.addIssue({ code: 'custom', message: 'operations array cannot be empty' })
      if (!Array.isArray(operations)) return body
      // Queen's flat push form: the operation object is itself the one item.
      const flat = (op: unknown) => {
        if (typeof op !== 'object' || op === null || (op as { type?: unknown }).type !== 'push' || 'items' in op) return op
        const { type, ...item } = op as Record<string, unknown>
        return { type, items: [item] }
      }
      return { ...(body as Record<string, unknown>), operations: operations.map(flat) }
    },
    z.object({
      requiredLeases: z.array(z.string({ error: 'requiredLeases must be an array of strings' }), { error: 'requiredLeases must be an array of strings' }).default([]),
      operations: z.array(operation),
      // Each rider element is checked where it is applied (the KV procedure, checkTimerOps), which
      // names the field it refuses.
      kv: z.array(z.unknown(), { error: 'kv must be an array of key/value operations' }).optional(),
      timers: z.array(z.unknown(), { error: 'timers must be an array of timer operations' }).optional(),
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
      const kv = body.kv ?? []
      refuseReservedWrites(kv, 'kv')
      const timers = checkTimerOps(body.timers ?? [], 'timers', timerPayloadLimit(c))
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
        async (encoded) => {
          let at = 0
          const wired: TransactionOpArg[] = ops.map((op) => {
            if (op.type !== 'push') return op
            const items = encoded.slice(at, at + op.items.length).map((item, j) => ({ ...item, index: j }))
            at += op.items.length
            return { type: 'push', items }
          })
          // Encoded on every attempt, so a corrected encryption flag reaches the timers too.
          const timerOps = timers.length > 0 ? await encodeTimerOps(c, timers) : null
          return c.get('db').call('log_transaction_v1', {
            ops: wired,
            requiredLeases,
            ...(kv.length > 0 ? { kv, kvLimits: KV_RIDER_LIMITS } : {}),
            ...(timerOps ? { timers: timerOps, horizonMs: TIMER_HORIZON_MS } : {}),
          })
        },
        // The push results name the queues, but not their flags; a stale flag shows up as QMENC.
        () => null,
      )
      if (result.success) wakePops(c, pushItems.map((i) => i.queue))

      const results: Record<string, unknown>[] = result.results.map((r, index) =>
        r.type === 'push'
          ? { index, operation: r.operation, type: 'push', success: true, status: r.status, transactionId: r.transactionId, messageId: r.messageId, partitionId: r.partitionId, queueName: r.queue, offset: r.offset }
          : { index, operation: r.operation, type: 'ack', success: r.success, transactionId: r.transactionId, offset: r.offset, error: r.error, code: r.code, dlq: r.dlq, dropped: r.dropped, leaseReleased: r.leaseReleased, ...(r.alreadyAcked ? { alreadyAcked: true } : {}) },
      )
      const transactionId = uuidv7()
      if (result.reason === 'kv_precondition') {
        // The expected outcome of a redelivery, not a fault: 200, with the row that won.
        const { failedIndex, kvReason, value, version } = result
        return c.json({ transactionId, success: false, ok: false, reason: 'kv_precondition', error: 'kv_precondition_failed', code: 'kv_precondition', failedIndex, kvReason, value: value ?? null, version: version ?? null, results: [] })
      }
      // The riders' results follow the operations' in one flat index space, kv before timers.
      results.push(
        ...(result.kv ?? []).map(({ index: opIndex, ...r }) => ({ ...r, index: results.length + opIndex, type: 'kv', opIndex })),
      )
      const timersFrom = results.length
      results.push(...(result.timers ?? []).map(({ index: opIndex, ...r }) => ({ ...r, index: timersFrom + opIndex, type: 'timer', opIndex })))
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
      if (!result.success) return c.json({ transactionId, success: false, ...(result.reason ? { reason: result.reason } : {}), error: result.error ?? 'Transaction failed', code: result.code ?? null, results })
      return c.json({ transactionId, success: true, results })
    },
  ),
]
