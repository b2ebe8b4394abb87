// Tenant placement (docs/placement.md): which database each tenant lives on. All admin and
// operator-only: the listing names every tenant and its database, and the two writes change the
// directory every replica routes by, so tenant-bound tokens are refused (brokerWide). A database name must be one this broker is
// configured with (`default` or a QUEEN_DATABASES name), else 400 before anything is written.
import { z } from 'zod'
import { HttpError } from '../errors.js'
import { ROLE_SETS, route } from '../http/route.js'
import type { Context } from 'hono'
import type { AppEnv } from '../http/env.js'

const tenantParams = z.object({
  tenant: z.string().regex(/^[A-Za-z0-9._-]{1,128}$/, 'must be 1-128 characters of A-Z a-z 0-9 . _ -'),
})
export const placeBody = z.object({
  database: z.string({ error: 'is required (a database name)' }).min(1, 'is required (a database name)'),
  /** Lifts a move's fence left behind by a broker that died mid-move. */
  force: z.boolean().optional(),
})
export const moveBody = z.object({ to: z.string({ error: 'is required (a database name)' }).min(1, 'is required (a database name)') })

function knownDatabase(c: Context<AppEnv>, field: string, name: string): string {
  const names = c.get('placement').databases
  if (!names.includes(name)) {
    throw new HttpError(400, 'unknown_database', `${field}: unknown database ${JSON.stringify(name)}; configured: ${names.join(', ')}`)
  }
  return name
}

const admin = { roles: ROLE_SETS.A, tenant: 'required' } as const

export const placementRoutes = [
  route({ method: 'GET', path: '/api/v1/system/placements', summary: 'List the databases and where each placed tenant lives', body: 'none', brokerWide: true, ...admin }, async (c) => {
    const placement = c.get('placement')
    const { version, placements } = await placement.list()
    return c.json({ databases: placement.databases, defaultDatabase: 'default', version, placements })
  }),
  route(
    {
      method: 'PUT',
      path: '/api/v1/system/placements/:tenant',
      summary: 'Place a tenant on a database (no data is moved: for tenants without data, else use move)',
      body: 'required',
      brokerWide: true,
      ...admin,
      request: { params: tenantParams, body: placeBody },
    },
    async (c, { params, body }) => {
      const database = knownDatabase(c, 'database', body.database)
      const placed = await c.get('placement').set(params.tenant, database, body.force ?? false)
      c.get('log').warn('tenant placed', { requestId: c.get('requestId'), tenant: params.tenant, database, force: body.force === true })
      return c.json(placed)
    },
  ),
  route(
    {
      method: 'POST',
      path: '/api/v1/system/placements/:tenant/move',
      summary: "Move a tenant and all its data to another database (its requests answer 503 during the copy)",
      body: 'required',
      brokerWide: true,
      ...admin,
      request: { params: tenantParams, body: moveBody },
    },
    async (c, { params, body }) => c.json(await c.get('placement').move(params.tenant, knownDatabase(c, 'to', body.to))),
  ),
]
