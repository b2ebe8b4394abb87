// Message reads and admin delete (design decision 43): a listing without payloads, the detail of one
// key with its payload decrypted, and delete by tombstone. One procedure call each.
import { z } from 'zod'
import { INT_MAX, instant, qInt, qOneOf, qString } from '../http/query-schema.js'
import { ROLE_SETS, route } from '../http/route.js'
import { isUuid } from '../ids.js'
import { reveal } from '../reveal.js'

const STATUSES = ['pending', 'processing', 'completed', 'dead_letter'] as const
const HOUR_MS = 3_600_000

/**
 * The key of a message, and whether it can name one: a partition id that is not a UUID names
 * nothing (it is "not found", never a failed cast: design decision 37).
 */
function keyOf(params: Record<string, string>) {
  const partitionId = params.partitionId!
  return { partitionId, transactionId: params.transactionId!, wellFormed: isUuid(partitionId) }
}

// Ordered as the checks have always run. `ns` is Queen's older spelling of namespace.
const listQuery = z.object({
  queue: qString(),
  partition: qString(),
  namespace: qString(),
  ns: qString(),
  task: qString(),
  status: qOneOf(STATUSES).optional(),
  from: instant().optional(),
  to: instant().optional(),
  limit: qInt(200, 0, 1000, 1),
  offset: qInt(0, 0, INT_MAX),
})

export const messageRoutes = [
  route(
    { method: 'GET', path: '/api/v1/messages', summary: 'List messages (no payloads) by queue, status and time', roles: ROLE_SETS.R_RW_A, tenant: 'required', body: 'none', request: { query: listQuery } },
    async (c, { query }) => {
      const now = Date.now()
      const { ns, ...rest } = query
      const filter = {
        ...rest,
        namespace: query.namespace ?? ns,
        from: query.from ?? new Date(now - HOUR_MS).toISOString(),
        to: query.to ?? new Date(now).toISOString(),
      }
      return c.json(await c.get('db').call('log_messages_v1', { filter }))
    },
  ),

  // No such message, a malformed partition id included, is the procedure's 404 message_not_found.
  route({ method: 'GET', path: '/api/v1/messages/:partitionId/:transactionId', summary: 'One message with its payload', roles: ROLE_SETS.R_RW_A, tenant: 'required', body: 'none' }, async (c, { params }) => {
    const message = await c.get('db').call('log_message_v1', { partitionId: params.partitionId!, transactionId: params.transactionId! })
    const { isEncrypted, payload, ...rest } = message
    const [opened] = await reveal(c.get('config'), [{ enc: isEncrypted, data: payload }], () => ({ tenant: c.get('db').tenant, queue: rest.queue, partition: rest.partition }))
    return c.json({ ...rest, payload: opened!.data, isEncrypted, ...(opened!.decryptError ? { decryptError: opened!.decryptError } : {}) })
  }),

  route({ method: 'DELETE', path: '/api/v1/messages/:partitionId/:transactionId', summary: 'Delete one message (tombstone)', roles: ROLE_SETS.A, tenant: 'required', body: 'none' }, async (c, { params }) => {
    const { wellFormed, ...key } = keyOf(params)
    // A malformed id deletes nothing, like an unknown one: the cleanup idiom answers 200.
    if (!wellFormed) return c.json({ success: false, ...key, deleted: 0, message: 'Message not found' })
    return c.json(await c.get('db').call('log_message_delete_v1', key))
  }),
]
