// POST /api/v1/lease/:leaseId/extend (API §5.8): always a one-element JSON array, never 204 or
// empty, because the JS client counts a renewal only on 2xx with a non-null body.
import { badRequest } from '../errors.js'
import { ROLE_SETS, route } from '../http/route.js'

export const leaseRoutes = [
  route({ method: 'POST', path: '/api/v1/lease/:leaseId/extend', roles: ROLE_SETS.RW_A, tenant: 'required', body: 'optional' }, async (c) => {
    const { seconds = 60 } = c.var.body
    if (!Number.isSafeInteger(seconds) || (seconds as number) < 1 || (seconds as number) > 86_400) {
      throw badRequest('seconds must be an integer from 1 to 86400')
    }
    const leaseId = c.req.param('leaseId') ?? ''
    return c.json(await c.var.db.call('log_renew_v1', { tenant: c.var.tenant, items: [{ index: 0, leaseId, seconds: seconds as number }] }))
  }),
]
