// Key/value pointers (design decision 31): tenant-scoped JSON values, among them the sink's
// committed pointer s3:<sink>:<queue>:committed that the retention lane's sink hold reads. PUT is
// read-write, GET read-only, DELETE admin. One procedure call each.
import { z } from 'zod'
import { ROLE_SETS, route } from '../http/route.js'
import { fieldColon, worded } from '../http/validate.js'

/**
 * At most 400 characters (design decision 31), counted as PostgreSQL's char_length counts them
 * (code points).
 */
export const MAX_KV_KEY_CHARS = 400

// Worded "key: ..." like the body fields: the texts predate the schema and clients see them.
const keyParams = worded(
  z.object({
    key: z
      .string()
      .refine((key) => [...key].length >= 1 && [...key].length <= MAX_KV_KEY_CHARS, `must be 1 to ${MAX_KV_KEY_CHARS} characters`)
      // PostgreSQL text cannot hold U+0000 (the body reader refuses it in bodies for the same reason).
      .refine((key) => !key.includes('\u0000'), 'must not contain U+0000'),
  }),
  fieldColon,
)

// Any JSON value, null included, but the key must be present: a body without it is a mistake.
export const putBody = z.object({ value: z.unknown() }).refine((body) => 'value' in body, { message: 'is required', path: ['value'] })

const kv = { tenant: 'required', request: { params: keyParams } } as const

export const kvRoutes = [
  route(
    { method: 'PUT', path: '/api/v1/kv/:key', summary: 'Store a JSON value under a key', roles: ROLE_SETS.RW_A, body: 'required', ...kv, request: { params: keyParams, body: putBody } },
    async (c, { params, body }) => c.json(await c.get('db').call('kv_put_v1', { key: params.key, value: body.value ?? null })),
  ),
  // An absent key is the procedure's 404 key_not_found.
  route({ method: 'GET', path: '/api/v1/kv/:key', summary: 'Read the value stored under a key', roles: ROLE_SETS.R_RW_A, body: 'none', ...kv }, async (c, { params }) =>
    c.json(await c.get('db').call('kv_get_v1', { key: params.key })),
  ),
  route({ method: 'DELETE', path: '/api/v1/kv/:key', summary: 'Delete a key', roles: ROLE_SETS.A, body: 'none', ...kv }, async (c, { params }) =>
    c.json(await c.get('db').call('kv_delete_v1', { key: params.key })),
  ),
]
