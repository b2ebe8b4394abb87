// Message reads and admin delete (API 5.9, D20): a listing without payloads, the detail of one
// key with its payload decrypted, and delete by tombstone. One procedure call each.
import type { Context } from 'hono'
import { HttpError } from '../errors.js'
import type { AppEnv } from '../http/env.js'
import { INT_MAX, parseInstant, Query } from '../http/query.js'
import { ROLE_SETS, route } from '../http/route.js'
import { isUuid } from '../ids.js'
import { reveal } from '../reveal.js'

const STATUSES = ['pending', 'processing', 'completed', 'dead_letter'] as const
const HOUR_MS = 3_600_000

const messageNotFound = () => new HttpError(404, 'message_not_found', 'Message not found')

/** The key of a message, and whether it can name one: a partition id that is not a UUID names nothing (API 2.2 rule 1). */
function keyOf(c: Context<AppEnv>) {
  const partitionId = c.req.param('partitionId')!
  return { partitionId, transactionId: c.req.param('transactionId')!, wellFormed: isUuid(partitionId) }
}

export const messageRoutes = [
  route({ method: 'GET', path: '/api/v1/messages', roles: ROLE_SETS.R_RW_A, tenant: 'required', body: 'none' }, async (c) => {
    const q = new Query(c.req.url)
    const to = q.string('to')
    const from = q.string('from')
    const now = Date.now()
    const filter = {
      queue: q.string('queue'),
      partition: q.string('partition'),
      namespace: q.string('namespace') ?? q.string('ns'),
      task: q.string('task'),
      status: q.string('status') === undefined ? undefined : q.oneOf('status', STATUSES, 'pending'),
      from: from ? parseInstant(from, 'from') : new Date(now - HOUR_MS).toISOString(),
      to: to ? parseInstant(to, 'to') : new Date(now).toISOString(),
      limit: Math.max(q.int('limit', 200, 0, 1000), 1),
      offset: q.int('offset', 0, 0, INT_MAX),
    }
    return c.json(await c.var.db.call('log_messages_v1', { tenant: c.var.tenant, filter }))
  }),

  route({ method: 'GET', path: '/api/v1/messages/:partitionId/:transactionId', roles: ROLE_SETS.R_RW_A, tenant: 'required', body: 'none' }, async (c) => {
    const { wellFormed, ...key } = keyOf(c)
    if (!wellFormed) throw messageNotFound()
    const message = await c.var.db.call('log_message_v1', { tenant: c.var.tenant, ...key })
    if (!message) throw messageNotFound()
    const { isEncrypted, payload, ...rest } = message
    const [opened] = await reveal(c.var.config, [{ enc: isEncrypted, data: payload }])
    return c.json({ ...rest, payload: opened!.data, isEncrypted, ...(opened!.decryptError ? { decryptError: opened!.decryptError } : {}) })
  }),

  route({ method: 'DELETE', path: '/api/v1/messages/:partitionId/:transactionId', roles: ROLE_SETS.A, tenant: 'required', body: 'none' }, async (c) => {
    const { wellFormed, ...key } = keyOf(c)
    // A malformed id deletes nothing, like an unknown one: the cleanup idiom answers 200.
    if (!wellFormed) return c.json({ success: false, ...key, deleted: 0, message: 'Message not found' })
    return c.json(await c.var.db.call('log_message_delete_v1', { tenant: c.var.tenant, ...key }))
  }),
]
