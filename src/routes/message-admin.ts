// Admin actions on one message (docs/admin-messages.md): retry a dead-lettered message, or move a
// message to the DLQ for a consumer group. Queen's clients send the two-parameter form
// (/messages/:partitionId/:transactionId/...); the older Node server's one-parameter form
// (/messages/:transactionId/...) looks the key up across the tenant's partitions and is refused
// with 409 when it names messages in several. Retry is the dead-letter move of routes/dlq.ts,
// addressed by the message: its newest dead-letter row (of `consumerGroup`, when given) moves.
import { z } from 'zod'
import { qString } from '../http/query-schema.js'
import { ROLE_SETS, route } from '../http/route.js'
import { answerMove, reencoded } from '../messages/dlq-move.js'
import { NAME_MAX } from '../names.js'

const groupName = z.string().min(1, 'must not be empty').max(NAME_MAX, `must be at most ${NAME_MAX} characters`)
// The group may come in the query or the body (Queen's clients send an empty body); the query wins.
const actionQuery = z.object({ consumerGroup: qString().pipe(groupName.optional()) })
const retryBody = z.object({ consumerGroup: groupName.optional() })
const dlqBody = z.object({ consumerGroup: groupName.optional(), error: z.string().max(10_000, 'must be at most 10000 characters').optional() })

const action = { roles: ROLE_SETS.RW_A, tenant: 'required', body: 'optional' } as const

// Move-to-DLQ refuses what it cannot do, each refusal with its SQLSTATE (404 message or group not
// found, 409 already in the DLQ, or an ambiguous key): src/errors.ts answers them, so a refusal is
// never a 5xx; retry answers its move's verdict. A partition id that is not a UUID names no message (docs/design.md decision 37);
// null (the one-parameter form) has the procedure look the key up.
function retryRoute(path: string, summary: string) {
  return route({ method: 'POST', path, summary, ...action, request: { query: actionQuery, body: retryBody } }, async (c, { params, query, body }) => {
    const group = query.consumerGroup ?? body.consumerGroup
    const verdict = await c.get('db').call('message_retry_v1', { partitionId: params.partitionId ?? null, transactionId: params.transactionId!, group })
    return answerMove(c, await reencoded(c, verdict, {}), { partitionId: params.partitionId ?? null, transactionId: params.transactionId! })
  })
}

function dlqRoute(path: string, summary: string) {
  return route({ method: 'POST', path, summary, ...action, request: { query: actionQuery, body: dlqBody } }, async (c, { params, query, body }) => {
    const group = query.consumerGroup ?? body.consumerGroup
    return c.json(
      await c.get('db').call('message_dlq_v1', { partitionId: params.partitionId ?? null, transactionId: params.transactionId!, group, error: body.error }),
    )
  })
}

export const messageAdminRoutes = [
  retryRoute('/api/v1/messages/:partitionId/:transactionId/retry', 'Replay a dead-lettered message: move its newest dead-letter row back into the queue'),
  dlqRoute('/api/v1/messages/:partitionId/:transactionId/dlq', 'Move a message to the DLQ for a consumer group'),
  retryRoute('/api/v1/messages/:transactionId/retry', 'Retry by transaction id alone (409 when several partitions hold it)'),
  dlqRoute('/api/v1/messages/:transactionId/dlq', 'Move to the DLQ by transaction id alone (409 when several partitions hold it)'),
]
