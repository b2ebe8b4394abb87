// Key/value pointers (API 8 addenda, D2): tenant-scoped JSON values, among them the sink's
// committed pointer s3:<sink>:<queue>:committed that the retention lane's sink hold reads. PUT is
// read-write, GET read-only, DELETE admin. One procedure call each.
import { z } from 'zod'
import { HttpError, badRequest } from '../errors.js'
import { ROLE_SETS, route } from '../http/route.js'
import { validate } from '../http/validate.js'

/** D2: at most 400 characters, counted as PostgreSQL's char_length counts them (code points). */
export const MAX_KV_KEY_CHARS = 400

const keyNotFound = () => new HttpError(404, 'key_not_found', 'Key not found')

function keyOf(raw: string | undefined): string {
  const key = raw ?? ''
  const chars = [...key].length
  if (chars === 0 || chars > MAX_KV_KEY_CHARS) throw badRequest(`key: must be 1 to ${MAX_KV_KEY_CHARS} characters`)
  // PostgreSQL text cannot hold U+0000 (the body reader refuses it in bodies for the same reason).
  if (key.includes('\u0000')) throw badRequest('key: must not contain U+0000')
  return key
}

// Any JSON value, null included, but the key must be present: a body without it is a mistake.
const putBody = z.object({ value: z.unknown() }).refine((body) => 'value' in body, { message: 'is required', path: ['value'] })

export const kvRoutes = [
  route({ method: 'PUT', path: '/api/v1/kv/:key', roles: ROLE_SETS.RW_A, tenant: 'required', body: 'required' }, async (c) => {
    const key = keyOf(c.req.param('key'))
    const { value } = validate(putBody, c.var.body)
    return c.json(await c.var.db.call('kv_put_v1', { tenant: c.var.tenant, key, value: value ?? null }))
  }),

  route({ method: 'GET', path: '/api/v1/kv/:key', roles: ROLE_SETS.R_RW_A, tenant: 'required', body: 'none' }, async (c) => {
    const entry = await c.var.db.call('kv_get_v1', { tenant: c.var.tenant, key: keyOf(c.req.param('key')) })
    if (!entry) throw keyNotFound()
    return c.json(entry)
  }),

  route({ method: 'DELETE', path: '/api/v1/kv/:key', roles: ROLE_SETS.A, tenant: 'required', body: 'none' }, async (c) => {
    return c.json(await c.var.db.call('kv_delete_v1', { tenant: c.var.tenant, key: keyOf(c.req.param('key')) }))
  }),
]
