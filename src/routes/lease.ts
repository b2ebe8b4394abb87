// POST /api/v1/lease/:leaseId/extend: always a one-element JSON array, never 204 or
// empty, because the JS client counts a renewal only on 2xx with a non-null body.
import { z } from 'zod'
import { ROLE_SETS, route } from '../http/route.js'
import { sentence, worded } from '../http/validate.js'

const SECONDS = 'seconds must be an integer from 1 to 86400'

export const extendBody = worded(
  z.object({ seconds: z.number({ error: SECONDS }).int(SECONDS).min(1, SECONDS).max(86_400, SECONDS).default(60) }),
  sentence,
)

export const leaseRoutes = [
  route(
    {
      method: 'POST',
      path: '/api/v1/lease/:leaseId/extend',
      summary: 'Extend a lease by some seconds (default 60)',
      roles: ROLE_SETS.RW_A,
      tenant: 'required',
      body: 'optional',
      request: { body: extendBody },
    },
    async (c, { params, body }) =>
      c.json(await c.get('db').call('log_renew_v1', { items: [{ index: 0, leaseId: params.leaseId ?? '', seconds: body.seconds }] })),
  ),
]
