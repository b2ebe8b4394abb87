// Queen 1.6's key/value store (docs/kv.md): the batch route every SDK uses, the single-key routes
// with ETag and `expect`, and the console's two reads. One procedure (kv_apply_v1) answers the
// batch and the path routes, so they share one validation and one reason taxonomy. The status
// describes the call, never the predicate: an absent key or a lost race is 200 with a field.
// Namespaces starting "queen." are the broker's: readable here, refused to every write (src/kv/reserved.ts).
import type { Context } from 'hono'
import { z } from 'zod'
import { HttpError } from '../errors.js'
import type { AppEnv } from '../http/env.js'
import { ROLE_SETS, route } from '../http/route.js'
import { KV_LIMITS } from '../kv/limits.js'
import { isReservedNamespace, refuseReservedWrites, reservedNamespaceError } from '../kv/reserved.js'
import { refuseQueryString, refuseUnknownFields } from '../kv/wire.js'

// Any op shape: the procedure validates each one and names the field it refuses.
const batchBody = z.object({ operations: z.array(z.looseObject({ op: z.string() }).or(z.unknown())) })
const listBody = z.object({
  namespace: z.string(),
  prefix: z.string().optional(),
  after: z.string().optional(),
  limit: z.number().int().optional(),
  keysOnly: z.boolean().optional(),
  includeExpired: z.boolean().optional(),
})
// The URL names op, ns and key; a body naming them too would be a second, conflicting spelling.
const PATH_NAMED = ['op', 'ns', 'namespace', 'key'] as const
// Loose: every other field reaches the procedure, which refuses it by name rather than dropping it.
const putBody = z.looseObject({ value: z.unknown(), ttlSeconds: z.number().optional(), forever: z.boolean().optional(), expect: z.number().optional() })
const deleteBody = z.looseObject({ expect: z.number().optional() })

/** The `:ns/*key` of a path route. */
const pathKey = '/api/v1/kv/:ns/:key{.+}'
const keyParams = z.object({ ns: z.string(), key: z.string() })

function refusePathNamed(body: Record<string, unknown>): void {
  const named = PATH_NAMED.filter((key) => key in body)
  if (named.length > 0) throw new HttpError(400, 'kv_bad_request', `The path names the operation, namespace and key; the body may not (${named.join(', ')})`)
}

/** A path route's write into a broker namespace (reads of them are allowed). */
function refuseReservedPath(ns: string): void {
  if (isReservedNamespace(ns)) throw reservedNamespaceError('ns', ns)
}

/** One operation through the batch procedure, its result without the batch's index and op. */
async function single(c: Context<AppEnv>, op: Record<string, unknown>): Promise<Record<string, unknown>> {
  const answer = await c.get('db').call('kv_apply_v1', { ops: [op], limits: KV_LIMITS })
  if (!Array.isArray(answer.results)) return answer
  const { index: _index, op: _op, ...result } = answer.results[0] as Record<string, unknown>
  return result
}

export const kvStoreRoutes = [
  route(
    {
      method: 'POST',
      path: '/api/v1/kv',
      summary: 'A batch of key/value operations (get, getMany, getPrefix, put, putIfAbsent, delete, incr)',
      roles: ROLE_SETS.RW_A,
      tenant: 'required',
      body: 'required',
      request: { body: batchBody, admit: (_c, raw) => refuseUnknownFields(raw, ['operations']) },
    },
    async (c, { body }) => {
      refuseReservedWrites(body.operations, 'operations')
      return c.json(await c.get('db').call('kv_apply_v1', { ops: body.operations, limits: KV_LIMITS }))
    },
  ),
  route(
    { method: 'GET', path: '/api/v1/resources/kv/namespaces', summary: 'Key/value namespaces with their key counts', roles: ROLE_SETS.R_RW_A, tenant: 'required', body: 'none' },
    async (c) => {
      refuseQueryString(c)
      return c.json(await c.get('db').call('kv_namespaces_v1', {}))
    },
  ),
  route(
    {
      method: 'POST',
      path: '/api/v1/resources/kv/list',
      summary: 'One keyset page of a key/value namespace, expired rows labelled',
      roles: ROLE_SETS.R_RW_A,
      tenant: 'required',
      body: 'required',
      request: { body: listBody, admit: (c, raw) => (refuseQueryString(c), refuseUnknownFields(raw, Object.keys(listBody.shape))) },
    },
    async (c, { body }) => c.json(await c.get('db').call('kv_list_v1', { args: body, maxReadBytes: KV_LIMITS.maxReadBytes })),
  ),
  route({ method: 'GET', path: pathKey, summary: 'Read one key (ETag: its version)', roles: ROLE_SETS.R_RW_A, tenant: 'required', body: 'none', request: { params: keyParams } }, async (c, { params }) => {
    refuseQueryString(c)
    const result = await single(c, { op: 'get', ns: params.ns, key: params.key })
    if (result.found === true) c.header('ETag', `"${String(result.version)}"`)
    return c.json(result)
  }),
  route(
    {
      method: 'PUT',
      path: pathKey,
      summary: 'Write one key, with ttlSeconds or forever and an optional expect',
      roles: ROLE_SETS.RW_A,
      tenant: 'required',
      body: 'required',
      request: { params: keyParams, body: putBody, admit: (c, raw) => (refuseQueryString(c), refusePathNamed(raw)) },
    },
    async (c, { params, body }) => {
      refuseReservedPath(params.ns)
      return c.json(await single(c, { ...body, op: 'put', ns: params.ns, key: params.key }))
    },
  ),
  route(
    {
      method: 'DELETE',
      path: pathKey,
      summary: 'Delete one key, with an optional expect',
      roles: ROLE_SETS.RW_A,
      tenant: 'required',
      body: 'optional',
      request: { params: keyParams, body: deleteBody, admit: (c, raw) => (refuseQueryString(c), refusePathNamed(raw)) },
    },
    async (c, { params, body }) => {
      refuseReservedPath(params.ns)
      return c.json(await single(c, { ...body, op: 'delete', ns: params.ns, key: params.key }))
    },
  ),
]
