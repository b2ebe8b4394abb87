// POST /api/v1/transaction (API §5.7): pushes and acks in one PostgreSQL transaction. Structural
// problems are 400 with nothing executed; a business failure (missing message, wrong lease, lost
// required lease) is 200 {success:false} with nothing applied, never 5xx, since the SDKs would
// resend a 5xx. Push items go through the same validation and encryption loop as /push.
import type { TransactionOpArg } from '../db/procedures.js'
import { badRequest } from '../errors.js'
import { ROLE_SETS, route } from '../http/route.js'
import { uuidv7 } from '../ids.js'
import { parseAck } from './ack.js'
import { parsePushItems, wakePops, withEncryption, type PushItem } from './push.js'

type ParsedOp = { type: 'push'; items: (PushItem & { where: string })[] } | (TransactionOpArg & { type: 'ack' })

export const transactionRoutes = [
  route({ method: 'POST', path: '/api/v1/transaction', roles: ROLE_SETS.RW_A, tenant: 'required', body: 'required' }, async (c) => {
    const { operations, requiredLeases = [] } = c.var.body
    if (!Array.isArray(operations)) throw badRequest('operations array required')
    if (operations.length === 0) throw badRequest('operations array cannot be empty')
    if (!Array.isArray(requiredLeases) || requiredLeases.some((l) => typeof l !== 'string')) {
      throw badRequest('requiredLeases must be an array of strings')
    }
    const ops: ParsedOp[] = operations.map((op: unknown, i): ParsedOp => {
      if (typeof op !== 'object' || op === null || Array.isArray(op)) throw badRequest(`Each operation must be an object (operations[${i}])`)
      const o = op as Record<string, unknown>
      if (o.type === 'push') {
        const where = `operations[${i}].items`
        const items = parsePushItems(o.items, c.var.config.MAX_PUSH_ITEMS, where).map((item, j) => ({ ...item, where: `${where}[${j}]` }))
        return { type: 'push', items }
      }
      if (o.type === 'ack') {
        const { index: _index, ...ack } = parseAck(o, 0, ` (operations[${i}])`, {
          txn: 'transactionId is required',
          partition: 'partitionId is required',
        })
        return { type: 'ack', ...ack }
      }
      throw badRequest(`Unknown operation type: ${typeof o.type === 'string' ? o.type : JSON.stringify(o.type ?? null)}`)
    })

    const pushItems = ops.flatMap((op) => (op.type === 'push' ? op.items : []))
    const result = await withEncryption(
      c,
      pushItems,
      (encoded) => {
        let at = 0
        const wired: TransactionOpArg[] = ops.map((op) => {
          if (op.type !== 'push') return op
          const items = encoded.slice(at, at + op.items.length).map((item, j) => ({ ...item, index: j }))
          at += op.items.length
          return { type: 'push', items }
        })
        return c.var.db.call('log_transaction_v1', { tenant: c.var.tenant, ops: wired, requiredLeases: requiredLeases as string[] })
      },
      // The push results name the queues, but not their flags; a stale flag shows up as QMENC.
      () => null,
    )
    if (result.success) wakePops(c, pushItems.map((i) => i.queue))

    const results = result.results.map((r, index) =>
      r.type === 'push'
        ? { index, operation: r.operation, type: 'push', success: true, status: r.status, transactionId: r.transactionId, messageId: r.messageId, partitionId: r.partitionId, queueName: r.queue, offset: r.offset }
        : { index, operation: r.operation, type: 'ack', success: r.success, transactionId: r.transactionId, offset: r.offset, error: r.error, code: r.code, dlq: r.dlq, dropped: r.dropped, leaseReleased: r.leaseReleased },
    )
    const transactionId = uuidv7()
    if (result.success) {
      // Only a committed transaction counts: a rolled-back one pushed and settled nothing.
      c.var.metrics.pushed(result.results.flatMap((r) => (r.type === 'push' ? [r.status] : [])))
      c.var.metrics.acked(
        result.results.flatMap((r) => {
          if (r.type !== 'ack') return []
          const op = ops[r.operation]
          return [{ status: op?.type === 'ack' ? op.status : 'completed', success: r.success, dlq: r.dlq }]
        }),
      )
    }
    if (!result.success) return c.json({ transactionId, success: false, error: result.error ?? 'Transaction failed', code: result.code ?? null, results })
    return c.json({ transactionId, success: true, results })
  }),
]
