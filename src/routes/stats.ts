// POST /api/v1/stats/refresh (design decision 41): the stats lane's procedure run for the caller's
// tenant at once, without the lane's lease, so a dashboard can ask for fresh numbers.
import { ROLE_SETS, route } from '../http/route.js'

export const statsRoutes = [
  route({ method: 'POST', path: '/api/v1/stats/refresh', summary: "Recompute the caller's tenant's stats now", roles: ROLE_SETS.A, tenant: 'required', body: 'optional' }, async (c) => {
    const started = Date.now()
    const { processed } = await c.get('db').call('log_stats_refresh_v1', {})
    return c.json({ success: true, refreshedAt: new Date().toISOString(), queues: processed, durationMs: Date.now() - started })
  }),
]
