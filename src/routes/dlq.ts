// GET /api/v1/dlq (API 5.10): dead-lettered copies, newest failure first, every filter honoured;
// an unknown queue is an empty list. Payloads are decrypted here.
import { INT_MAX, parseInstant, Query } from '../http/query.js'
import { ROLE_SETS, route } from '../http/route.js'
import { reveal } from '../reveal.js'

export const dlqRoutes = [
  route({ method: 'GET', path: '/api/v1/dlq', roles: ROLE_SETS.R_RW_A, tenant: 'required', body: 'none' }, async (c) => {
    const q = new Query(c.req.url)
    const from = q.string('from')
    const to = q.string('to')
    const limit = Math.max(q.int('limit', 100, 0, 1000), 1)
    const offset = q.int('offset', 0, 0, INT_MAX)
    const filter = {
      queue: q.string('queue'),
      consumerGroup: q.string('consumerGroup'),
      partition: q.string('partition'),
      from: from ? parseInstant(from, 'from') : undefined,
      to: to ? parseInstant(to, 'to') : undefined,
      limit,
      offset,
    }
    const { messages, total } = await c.var.db.call('log_dlq_v1', { tenant: c.var.tenant, filter })
    return c.json({ messages: await reveal(c.var.config, messages), total, pagination: { limit, offset, total } })
  }),
]
