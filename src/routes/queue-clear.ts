// DELETE /api/v1/queues/:queue/clear[?partition=] (admin; docs/admin-messages.md): Queen's
// Admin.clearQueue.
// The engine advances each partition's log start as retention does, so offsets never get a hole
// and cursors stay valid; an unknown queue or partition is 404 (the procedure's refusal).
import { z } from 'zod'
import { qString } from '../http/query-schema.js'
import { ROLE_SETS, route } from '../http/route.js'

const clearQuery = z.object({ partition: qString() })

export const queueClearRoutes = [
  route(
    { method: 'DELETE', path: '/api/v1/queues/:queue/clear', summary: 'Remove every retained message of a queue or one partition', roles: ROLE_SETS.A, tenant: 'required', body: 'none', request: { query: clearQuery } },
    async (c, { params, query }) => c.json(await c.get('db').call('queue_clear_v1', { queue: params.queue!, partition: query.partition })),
  ),
]
