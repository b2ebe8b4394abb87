// Message reads and the dead-letter delete: a listing without payloads, the detail of one key with
// its payload decrypted, and the delete of an address's dead-letter rows (a live message is never
// deleted: docs/admin-messages.md). One procedure call each.
import { z } from 'zod'
import { INT_MAX, instant, qInt, qOneOf, qString } from '../http/query-schema.js'
import { ROLE_SETS, route } from '../http/route.js'
import { reveal } from '../reveal.js'

const STATUSES = ['pending', 'processing', 'completed', 'dead_letter'] as const
const HOUR_MS = 3_600_000

// Ordered as the checks have always run. `ns` is Queen's older spelling of namespace. Queen's Go
// client also sends consumerGroup, which Queen's listing does not read either.
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

  // Nothing to delete, a malformed partition id included, is the procedure's 404 (QMNDL), so a
  // caller that ignores the body never reads a no-op as a deletion.
  route({ method: 'DELETE', path: '/api/v1/messages/:partitionId/:transactionId', summary: 'Delete the dead-letter rows of one message', roles: ROLE_SETS.RW_A, tenant: 'required', body: 'none' }, async (c, { params }) =>
    c.json(await c.get('db').call('log_message_delete_v1', { partitionId: params.partitionId!, transactionId: params.transactionId! })),
  ),
]
