// GET /api/v1/dlq: dead-lettered copies, newest failure first, every filter honoured;
// an unknown queue is an empty list. Payloads are decrypted here.
import { z } from 'zod'
import { INT_MAX, instant, qInt, qString } from '../http/query-schema.js'
import { ROLE_SETS, route } from '../http/route.js'
import { reveal } from '../reveal.js'

// Ordered as the checks have always run: paging first, then the time bounds.
const dlqQuery = z.object({
  limit: qInt(100, 0, 1000, 1),
  offset: qInt(0, 0, INT_MAX),
  from: instant().optional(),
  to: instant().optional(),
  queue: qString(),
  consumerGroup: qString(),
  partition: qString(),
})

export const dlqRoutes = [
  route(
    { method: 'GET', path: '/api/v1/dlq', summary: 'Dead-lettered messages, newest failure first', roles: ROLE_SETS.R_RW_A, tenant: 'required', body: 'none', request: { query: dlqQuery } },
    async (c, { query }) => {
      const { limit, offset } = query
      const filter = { queue: query.queue, consumerGroup: query.consumerGroup, partition: query.partition, from: query.from, to: query.to, limit, offset }
      const { messages, total } = await c.get('db').call('log_dlq_v1', { filter })
      return c.json({ messages: await reveal(c.get('config'), messages, (m) => ({ tenant: c.get('db').tenant, queue: m.queue, partition: m.partition })), total, pagination: { limit, offset, total } })
    },
  ),
]
