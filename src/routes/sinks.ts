// GET /api/v1/sinks (docs/sink.md): every archive sink of the caller's tenant with its committed
// pointer, lag in frames and seconds, last object, and whether its retentionSinkHold is holding
// retention back; the console's sinks page reads it. Read-only, one procedure call.
import { ROLE_SETS, route } from '../http/route.js'

export const sinkRoutes = [
  route(
    { method: 'GET', path: '/api/v1/sinks', summary: 'Archive sinks: pointer, lag, last object, hold state', roles: ROLE_SETS.R_RW_A, tenant: 'required', body: 'none' },
    async (c) => c.json(await c.get('db').call('sink_status_v1', {})),
  ),
]
