// Routes that exist only in tests, mounted beside the real ones to exercise the shared request
// chain (body classes, tenancy, error mapping) before the product routes that use it exist.
import { z } from 'zod'
import { DbError } from '../../src/db/errors.js'
import { ROLES } from '../../src/http/auth.js'
import { ROLE_SETS, route } from '../../src/http/route.js'
import { validate } from '../../src/http/validate.js'

export const probeRoutes = [
  route({ summary: 'test probe', method: 'POST', path: '/probe/required', roles: ROLE_SETS.RW_A, tenant: 'required', body: 'required' }, (c) =>
    c.json({ body: c.var.body, tenant: c.var.tenant }),
  ),
  route({ summary: 'test probe', method: 'POST', path: '/probe/optional', roles: ROLE_SETS.RW_A, tenant: 'required', body: 'optional' }, (c) =>
    c.json({ body: c.var.body, tenant: c.var.tenant }),
  ),
  route({ summary: 'test probe', method: 'POST', path: '/probe/validated', roles: ROLE_SETS.RW_A, tenant: 'required', body: 'required' }, (c) => {
    const { queue } = validate(z.object({ queue: z.string() }), c.var.body)
    return c.json({ queue })
  }),
  route({ summary: 'test probe', method: 'GET', path: '/probe/db', roles: ROLE_SETS.R_RW_A, tenant: 'required', body: 'none' }, async (c) => {
    // A real procedure call, so a database outage surfaces exactly as it would on a product route.
    return c.json(await c.var.db.brokerWide.call('log_dedup_purge_step_v1', { limit: 1 }))
  }),
  route({ summary: 'test probe', method: 'GET', path: '/probe/raise/:sqlstate', roles: ROLE_SETS.R_RW_A, tenant: 'required', body: 'none' }, (c) => {
    throw new DbError('sqlstate', c.req.param('sqlstate') ?? '', 'relation "queen.secret" does not exist at host db.internal')
  }),
  route({ summary: 'test probe', method: 'GET', path: '/probe/crash', roles: ROLE_SETS.R_RW_A, tenant: 'required', body: 'none' }, () => {
    throw new Error('postgres://user:hunter2@db.internal/queen exploded')
  }),
  // What a handler sees of the caller: the push route stamps principal.sub as producerSub (API §3.8).
  route({ summary: 'test probe', method: 'GET', path: '/probe/principal', roles: ROLES, tenant: 'required', body: 'none' }, (c) => {
    const { sub, roles, tenant } = c.var.principal
    return c.json({ sub, roles: [...roles].sort(), boundTenant: tenant, tenant: c.var.tenant })
  }),
  // Stands in for the maintenance switches (API §4.4) until they exist.
  route({ summary: 'test probe', method: 'POST', path: '/probe/broker-wide', roles: ROLE_SETS.A, tenant: 'required', body: 'optional', brokerWide: true }, (c) =>
    c.json({ changed: true }),
  ),
]
