// GET /health: healthy only after a real round trip to PostgreSQL within 2 s.
// No tenant header, never cached; queenctl ping/version read it.
// GET /status: the process is up. No database access, so it is the liveness signal (/health is
// readiness); not public, so an unauthenticated caller learns nothing.
import { ROLE_SETS, route } from '../http/route.js'

const PING_TIMEOUT_MS = 2000

export function healthRoutes(version: string) {
  return [
    route({ method: 'GET', path: '/health', summary: 'Liveness: healthy only after a round trip to PostgreSQL', roles: ROLE_SETS.R_RW_A, tenant: 'none', body: 'none' }, async (c) => {
      c.header('Cache-Control', 'no-store')
      try {
        await c.get('db').ping(PING_TIMEOUT_MS)
        return c.json({ status: 'healthy', database: 'connected', version })
      } catch (error) {
        c.get('log').warn('health check failed', { requestId: c.get('requestId'), sqlstate: (error as { sqlstate?: string }).sqlstate })
        return c.json({ status: 'unhealthy', database: 'disconnected', version }, 503)
      }
    }),
    route({ method: 'GET', path: '/status', summary: 'Liveness: the process answers, no database access', roles: ROLE_SETS.R_RW_A, tenant: 'required', body: 'none' }, (c) => {
      c.header('Cache-Control', 'no-store')
      return c.json({ status: 'ok', engine: 'queen-edge', version })
    }),
  ]
}
