// The dead-letter queue: the listing (newest failure first, every filter honoured, an unknown queue
// an empty list, payloads decrypted here), the replay of one row by id, and the bulk purge of one
// queue's rows. Replay is a move (docs/admin-messages.md): one transaction pushes the row's message
// under `dlq:<row id>` and deletes that row only.
import { z } from 'zod'
import { HttpError } from '../errors.js'
import { INT_MAX, instant, qInt, qString } from '../http/query-schema.js'
import { ROLE_SETS, route } from '../http/route.js'
import { answerMove, reencoded } from '../messages/dlq-move.js'
import { NAME_MAX } from '../names.js'
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

// A destination name is trimmed; a blank one is refused, since the allocator would create exactly
// the text it is given and a queue named "  " is one nobody can address.
const destinationName = z.string().trim().min(1, 'must not be blank').max(NAME_MAX, `must be at most ${NAME_MAX} characters`)
const replayBody = z.object({ queue: destinationName.optional(), partition: destinationName.optional() })

const purgeQuery = z.object({ queue: qString(), consumerGroup: qString() })

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
  // The queue is required at this layer too, so an omitted filter can never purge a whole tenant.
  route(
    { method: 'DELETE', path: '/api/v1/dlq', summary: "Purge one queue's dead letters, optionally one consumer group's", roles: ROLE_SETS.A, tenant: 'required', body: 'none', request: { query: purgeQuery } },
    async (c, { query }) => {
      if (query.queue === undefined) throw new HttpError(400, 'invalid_request', 'queue is required')
      return c.json(await c.get('db').call('log_dlq_purge_v1', { queue: query.queue, group: query.consumerGroup }))
    },
  ),
  route(
    {
      method: 'POST',
      path: '/api/v1/dlq/:id/replay',
      summary: 'Replay one dead letter by row id (a move), optionally to another queue or partition',
      roles: ROLE_SETS.RW_A,
      tenant: 'required',
      body: 'optional',
      request: { body: replayBody },
    },
    async (c, { params, body }) => {
      const to = { queue: body.queue, partition: body.partition }
      const verdict = await c.get('db').call('log_dlq_replay_v1', { dlqId: params.id!, ...to })
      return answerMove(c, await reencoded(c, verdict, to), { dlqId: params.id! })
    },
  ),
]
