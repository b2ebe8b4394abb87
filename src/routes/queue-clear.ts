// DELETE /api/v1/queues/:queue/clear[?partition=] (SDK-SURFACE A1, admin): Queen's Admin.clearQueue.
// The engine advances each partition's log start as retention does, so offsets never get a hole
// and cursors stay valid; an unknown queue or partition is 404.
import { z } from 'zod'
import { HttpError } from '../errors.js'
import { qString } from '../http/query-schema.js'
import { ROLE_SETS, route } from '../http/route.js'

const clearQuery = z.object({ partition: qString() })

export const queueClearRoutes = [
  route(
    { method: 'DELETE', path: '/api/v1/queues/:queue/clear', summary: 'Remove every retained message of a queue or one partition', roles: ROLE_SETS.A, tenant: 'required', body: 'none', request: { query: clearQuery } },
    async (c, { params, query }) => {
      const result = await c.get('db').call('queue_clear_v1', { queue: params.queue!, partition: query.partition })
      if (result.notFound === 'queue') throw new HttpError(404, 'queue_not_found', 'Queue not found')
      if (result.notFound === 'partition') throw new HttpError(404, 'partition_not_found', 'Partition not found')
      return c.json(result)
    },
  ),
]
