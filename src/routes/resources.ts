// The resource routes (q&r): queue list, detail, depth and delete, and the three aggregate
// listings. Each is one procedure call whose JSON is passed through; reads are read-only, delete
// is admin. Literal paths first (API 3.6).
import { HttpError } from '../errors.js'
import { Query } from '../http/query.js'
import { ROLE_SETS, route } from '../http/route.js'

const queueNotFound = () => new HttpError(404, 'queue_not_found', 'Queue not found')
const read = { roles: ROLE_SETS.R_RW_A, tenant: 'required', body: 'none' } as const

export const resourceRoutes = [
  route({ method: 'GET', path: '/api/v1/resources/overview', ...read }, async (c) =>
    c.json(await c.var.db.call('log_resources_overview_v1', { tenant: c.var.tenant })),
  ),
  route({ method: 'GET', path: '/api/v1/resources/namespaces', ...read }, async (c) =>
    c.json(await c.var.db.call('log_resources_grouped_v1', { tenant: c.var.tenant, by: 'namespace' })),
  ),
  route({ method: 'GET', path: '/api/v1/resources/tasks', ...read }, async (c) =>
    c.json(await c.var.db.call('log_resources_grouped_v1', { tenant: c.var.tenant, by: 'task' })),
  ),
  route({ method: 'GET', path: '/api/v1/resources/queues', ...read }, async (c) => {
    // ?stats=cached: serve queen.stats as it stands, nothing computed per call (metering pollers).
    const cached = new Query(c.req.url).oneOf('stats', ['live', 'cached'], 'live') === 'cached'
    return c.json(await c.var.db.call('log_queue_stats_all_v1', { tenant: c.var.tenant, cached }))
  }),
  route({ method: 'GET', path: '/api/v1/resources/queues/:queue', ...read }, async (c) => {
    const detail = await c.var.db.call('log_queue_detail_v1', { tenant: c.var.tenant, queue: c.req.param('queue')! })
    if (!detail) throw queueNotFound()
    return c.json(detail)
  }),
  route({ method: 'GET', path: '/api/v1/resources/queues/:queue/depth', ...read }, async (c) => {
    const group = new Query(c.req.url).string('group')
    const depth = await c.var.db.call('log_queue_depth_v1', { tenant: c.var.tenant, queue: c.req.param('queue')!, group })
    if (!depth) throw queueNotFound()
    return c.json(depth)
  }),
  // 200 with a body both ways, never 204 or 404: SDKs read res.deleted, and delete-before-create is
  // their cleanup idiom.
  route({ method: 'DELETE', path: '/api/v1/resources/queues/:queue', roles: ROLE_SETS.A, tenant: 'required', body: 'none' }, async (c) =>
    c.json(await c.var.db.call('delete_queue_v1', { tenant: c.var.tenant, queue: c.req.param('queue')! })),
  ),
]
