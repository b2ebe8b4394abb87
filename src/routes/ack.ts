// POST /api/v1/ack and /api/v1/ack/batch (API §5.6): both answer 200 with an array of per-item
// results, because a wrong lease or a missing message is a business outcome, not an error.
// Validation here is structural only (Queen's texts); every verdict about state is the procedure's.
import type { Context } from 'hono'
import type { AckItemArg, AckItemResult } from '../db/procedures.js'
import { badRequest } from '../errors.js'
import type { AppEnv } from '../http/env.js'
import { ROLE_SETS, route } from '../http/route.js'

const NAME_MAX = 255

/** Optional string fields: absent or null is null; anything but a string is a 400 naming it. */
function optionalString(o: Record<string, unknown>, field: string, where: string): string | null {
  const v = o[field]
  if (v === undefined || v === null) return null
  if (typeof v !== 'string') throw badRequest(`${field} must be a string${where}`)
  if (v.length > NAME_MAX && field !== 'error') throw badRequest(`${field} must be at most ${NAME_MAX} characters${where}`)
  return v
}

export function parseAck(o: Record<string, unknown>, index: number, where: string, texts: { txn: string; partition: string }): AckItemArg {
  if (typeof o.transactionId !== 'string' || o.transactionId === '') throw badRequest(texts.txn + where)
  if (o.transactionId.length > NAME_MAX) throw badRequest(`transactionId must be at most ${NAME_MAX} characters${where}`)
  if (typeof o.partitionId !== 'string' || o.partitionId === '') throw badRequest(texts.partition + where)
  if (o.status !== undefined && o.status !== null && typeof o.status !== 'string') throw badRequest(`status must be a string${where}`)
  if (o.offset !== undefined && o.offset !== null && !Number.isSafeInteger(o.offset)) throw badRequest(`offset must be an integer${where}`)
  return {
    index,
    partitionId: o.partitionId,
    transactionId: o.transactionId,
    offset: (o.offset as number | null | undefined) ?? null,
    consumerGroup: optionalString(o, 'consumerGroup', where),
    leaseId: optionalString(o, 'leaseId', where),
    status: typeof o.status === 'string' && o.status !== '' ? o.status : 'completed',
    error: optionalString(o, 'error', where),
  }
}

const SINGLE = { txn: 'transactionId is required', partition: 'partitionId is required to ensure message uniqueness' }
const BATCH = {
  txn: 'Each acknowledgment must have a valid transactionId string',
  partition: 'Each acknowledgment must have a valid partitionId string to ensure message uniqueness',
}

/** Counts the items for the process metrics (API 5.3: by requested status and outcome) and passes them on. */
function observed(c: Context<AppEnv>, acks: readonly AckItemArg[], results: AckItemResult[]): AckItemResult[] {
  c.var.metrics.acked(results.map((r) => ({ status: acks[r.index]?.status ?? 'completed', success: r.success, dlq: r.dlq })))
  return results
}

const spec = { method: 'POST', roles: ROLE_SETS.RW_A, tenant: 'required', body: 'required' } as const

export const ackRoutes = [
  route({ ...spec, path: '/api/v1/ack/batch' }, async (c) => {
    const { acknowledgments, consumerGroup } = c.var.body
    if (!Array.isArray(acknowledgments)) throw badRequest('acknowledgments array is required')
    if (consumerGroup !== undefined && consumerGroup !== null && typeof consumerGroup !== 'string') throw badRequest('consumerGroup must be a string')
    const acks = acknowledgments.map((item: unknown, i) => {
      if (typeof item !== 'object' || item === null || Array.isArray(item)) throw badRequest(`Each acknowledgment must be an object (acknowledgments[${i}])`)
      const ack = parseAck(item as Record<string, unknown>, i, ` (acknowledgments[${i}])`, BATCH)
      // A non-empty top-level group applies to every item (API §5.6).
      return typeof consumerGroup === 'string' && consumerGroup !== '' ? { ...ack, consumerGroup } : ack
    })
    if (acks.length === 0) return c.json([])
    return c.json(observed(c, acks, await c.var.db.call('log_ack_v1', { tenant: c.var.tenant, acks })))
  }),
  route({ ...spec, path: '/api/v1/ack' }, async (c) => {
    const ack = parseAck(c.var.body, 0, '', SINGLE)
    return c.json(observed(c, [ack], await c.var.db.call('log_ack_v1', { tenant: c.var.tenant, acks: [ack] })))
  }),
]
