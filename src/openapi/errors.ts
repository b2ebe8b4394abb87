// The error envelope (design decision 37) and the statuses every route can answer with, as OpenAPI
// components. The codes listed are the envelope's; which of them a given route produces is in the
// route's page of docs/.
import type { RouteSpec } from '../http/route.js'

export const ERROR_SCHEMA = {
  type: 'object',
  description: 'The one error envelope (docs/design.md#37): flat, because clients read `error` as a string and key on `code`.',
  required: ['error', 'code'],
  properties: {
    error: { type: 'string', description: "Human-readable; keeps Queen's text wherever Queen had one." },
    code: {
      type: 'string',
      description: 'Stable snake_case code.',
      examples: ['invalid_request', 'invalid_json', 'tenant_required', 'unauthenticated', 'forbidden', 'queue_not_found', 'payload_too_large', 'db_unavailable'],
    },
    invalid: { type: 'string', description: 'Only on the two sink-hold refusals of configure: the option refused.' },
  },
} as const

const RESPONSES = {
  BadRequest: 'Invalid request: `invalid_json`, `invalid_request` (the message names the field; also U+0000 or a lone UTF-16 surrogate anywhere, or a body nested deeper than 128, docs/limits.md), `tenant_required`, `invalid_tenant`.',
  Unauthenticated: 'No or bad credentials (`unauthenticated`, `invalid_token`) when JWT authentication is on.',
  Forbidden: 'No role of the token is accepted (`forbidden`), or the token is bound to another tenant (`tenant_forbidden`).',
  NotFound: 'The route requires a resource that does not exist (`queue_not_found`, `partition_not_found`, `message_not_found`, `key_not_found`) or no route matches (`not_found`).',
  Conflict: 'The message is not in the state the action needs (`not_in_dlq`, `already_in_dlq`), or the one-parameter form is ambiguous (`ambiguous_transaction` with `partitions`, `ambiguous_consumer_group` with `consumerGroups`).',
  PayloadTooLarge: 'The body is over MAX_BODY_BYTES, or a push holds too many or too large items (`payload_too_large`).',
  UriTooLong: 'The URL (path and query) is over 8 192 characters (`uri_too_long`, docs/limits.md).',
  TooManyRequests: "The tenant's share is used up (`tenant_busy`: too many of its database calls waiting; `too_many_polls`: too many long polls parked), with Retry-After.",
  Unavailable: 'Database unreachable or overloaded (`db_unavailable`, with Retry-After), or push maintenance (`maintenance`).',
  Internal: 'Unexpected failure (`internal`); never carries SQL, driver messages or stack traces.',
} as const

export const ERROR_RESPONSES = Object.fromEntries(
  Object.entries(RESPONSES).map(([name, description]) => [
    name,
    { description, content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } },
  ]),
)

const ref = (name: keyof typeof RESPONSES) => ({ $ref: `#/components/responses/${name}` })

/** The error statuses of one route: every route can fail authentication and the database; the rest depend on its shape. */
export function errorResponses(spec: RouteSpec): Record<string, unknown> {
  return {
    '400': ref('BadRequest'),
    '401': ref('Unauthenticated'),
    '403': ref('Forbidden'),
    ...(spec.path.includes(':') ? { '404': ref('NotFound') } : {}),
    ...(/\/(retry|dlq)$/.test(spec.path) ? { '409': ref('Conflict') } : {}),
    ...(spec.body !== 'none' ? { '413': ref('PayloadTooLarge') } : {}),
    '414': ref('UriTooLong'),
    ...(spec.tenant === 'required' ? { '429': ref('TooManyRequests') } : {}),
    '500': ref('Internal'),
    '503': ref('Unavailable'),
  }
}
