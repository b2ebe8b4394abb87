// Admin actions on one message (SDK-SURFACE A3): retry a dead-lettered message, or move a message
// to the DLQ for a consumer group. Queen's clients send the two-parameter form
// (/messages/:partitionId/:transactionId/...); the older Node server's one-parameter form
// (/messages/:transactionId/...) looks the key up across the tenant's partitions and is refused
// with 409 when it names messages in several. How retry re-delivers: docs/admin-messages.md.
import { z } from 'zod'
import { HttpError } from '../errors.js'
import { qString } from '../http/query-schema.js'
import { ROLE_SETS, route } from '../http/route.js'
import { isUuid } from '../ids.js'
import { NAME_MAX } from '../names.js'

/** A procedure's refusal code, as the status, code and text a client sees (never a 5xx). */
const REFUSALS: Record<string, [404 | 409, string]> = {
  message_not_found: [404, 'Message not found'],
  consumer_group_not_found: [404, 'Consumer group not found on this queue'],
  not_in_dlq: [409, 'Message is not in DLQ, cannot retry'],
  already_in_dlq: [409, 'Message already in DLQ for this consumer group'],
  ambiguous_transaction: [409, 'The transaction id names messages in several partitions; name the partition'],
  ambiguous_consumer_group: [409, 'Several consumer groups dead-lettered this message; name one with consumerGroup'],
}

function refusedOr(result: Record<string, unknown>): Record<string, unknown> {
  const code = result.refused
  if (typeof code !== 'string') return result
  const [status, text] = REFUSALS[code] ?? [409, code]
  const { refused: _, ...extra } = result
  throw new HttpError(status, code, text, extra)
}

const groupName = z.string().min(1, 'must not be empty').max(NAME_MAX, `must be at most ${NAME_MAX} characters`)
// The group may come in the query or the body (Queen's clients send an empty body); the query wins.
const actionQuery = z.object({ consumerGroup: qString().pipe(groupName.optional()) })
const retryBody = z.object({ consumerGroup: groupName.optional() })
const dlqBody = z.object({ consumerGroup: groupName.optional(), error: z.string().max(10_000, 'must be at most 10000 characters').optional() })

const messageNotFound = () => new HttpError(404, 'message_not_found', 'Message not found')
const action = { roles: ROLE_SETS.RW_A, tenant: 'required', body: 'optional' } as const

/** The partition id of the two-parameter form (null: look it up); one that is not a UUID names nothing (API 2.2 rule 1). */
function partitionOf(params: Record<string, string>): string | null {
  const partitionId = params.partitionId
  if (partitionId === undefined) return null
  if (!isUuid(partitionId)) throw messageNotFound()
  return partitionId
}

function retryRoute(path: string, summary: string) {
  return route({ method: 'POST', path, summary, ...action, request: { query: actionQuery, body: retryBody } }, async (c, { params, query, body }) => {
    const partitionId = partitionOf(params)
    const group = query.consumerGroup ?? body.consumerGroup
    const result = await c.get('db').call('message_retry_v1', { partitionId, transactionId: params.transactionId!, group })
    return c.json(refusedOr(result))
  })
}

function dlqRoute(path: string, summary: string) {
  return route({ method: 'POST', path, summary, ...action, request: { query: actionQuery, body: dlqBody } }, async (c, { params, query, body }) => {
    const partitionId = partitionOf(params)
    const group = query.consumerGroup ?? body.consumerGroup
    const result = await c.get('db').call('message_dlq_v1', { partitionId, transactionId: params.transactionId!, group, error: body.error })
    return c.json(refusedOr(result))
  })
}

export const messageAdminRoutes = [
  retryRoute('/api/v1/messages/:partitionId/:transactionId/retry', 'Re-deliver a dead-lettered message to its consumer group'),
  dlqRoute('/api/v1/messages/:partitionId/:transactionId/dlq', 'Move a message to the DLQ for a consumer group'),
  retryRoute('/api/v1/messages/:transactionId/retry', 'Retry by transaction id alone (409 when several partitions hold it)'),
  dlqRoute('/api/v1/messages/:transactionId/dlq', 'Move to the DLQ by transaction id alone (409 when several partitions hold it)'),
]
