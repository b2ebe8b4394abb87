// The resource routes (docs/resources.md): queue list, detail, depth and delete, the three
// aggregate listings, and the partition listing (docs/admin-messages.md). Each is one procedure
// call whose JSON is passed through; reads are read-only, delete is admin. Literal paths first,
// so a parameter does not match them.
import { z } from 'zod'
import { INT_MAX, qInt, qOneOf, qString } from '../http/query-schema.js'
import { ROLE_SETS, route } from '../http/route.js'
import { chunkStream, listingBody } from '../queues/listing-cache.js'

const read = { roles: ROLE_SETS.R_RW_A, tenant: 'required', body: 'none' } as const
// ?stats=cached: serve queen.stats as it stands, nothing computed per call (metering pollers).
// Queen's clients also send namespace, task, limit and offset here; Queen reads none of them on
// this listing (GET /api/v1/status/queues filters), so neither does this broker.
const queuesQuery = z.object({ stats: qOneOf(['live', 'cached']).default('live') })
const depthQuery = z.object({ group: qString() })
// The partition listing: the older Node server's filters, paged like the other listings.
const partitionsQuery = z.object({ queue: qString(), minDepth: qInt(0, 0, Number.MAX_SAFE_INTEGER), limit: qInt(100, 1, 1000), offset: qInt(0, 0, INT_MAX) })

export const resourceRoutes = [
  route({ method: 'GET', path: '/api/v1/resources/overview', summary: 'Totals over every queue of the tenant', ...read }, async (c) =>
    c.json(await c.get('db').call('log_resources_overview_v1', {})),
  ),
  route({ method: 'GET', path: '/api/v1/resources/namespaces', summary: 'Queues grouped by namespace', ...read }, async (c) =>
    c.json(await c.get('db').call('log_resources_grouped_v1', { by: 'namespace' })),
  ),
  route({ method: 'GET', path: '/api/v1/resources/tasks', summary: 'Queues grouped by task', ...read }, async (c) =>
    c.json(await c.get('db').call('log_resources_grouped_v1', { by: 'task' })),
  ),
  route({ method: 'GET', path: '/api/v1/resources/partitions', summary: 'Partitions with depth, by queue, paged', ...read, request: { query: partitionsQuery } }, async (c, { query }) =>
    c.json(await c.get('db').call('partition_list_v1', { filter: query })),
  ),
  route({ method: 'GET', path: '/api/v1/resources/queues', summary: 'Every queue with its stats', ...read, request: { query: queuesQuery } }, async (c, { query }) => {
    const db = c.get('db')
    if (query.stats === 'live') return c.json(await db.call('log_queue_stats_all_v1', { cached: false }))
    // The pre-rendered listing goes out as the text it is (10 000 queues are ~2.4 MiB), and only
    // crosses from PostgreSQL when it changed since this process last held it.
    const listings = c.get('listingCache')
    const tenant = db.tenant
    const held = listings.held(tenant)
    const result = await db.call('log_queue_stats_cached_v1', { known: held?.version })
    const body = await listingBody(listings.answer(tenant, result, held), c.get('deflater'), c.req.header('accept-encoding'))
    const length = body.chunks.reduce((sum, chunk) => sum + chunk.byteLength, 0)
    const headers: Record<string, string> = { 'content-type': 'application/json', 'content-length': String(length), vary: 'Accept-Encoding' }
    if (body.gzip) headers['content-encoding'] = 'gzip'
    return c.body(chunkStream(body.chunks), 200, headers)
  }),
  // An unknown queue is the procedure's 404 queue_not_found, here and on depth.
  route({ method: 'GET', path: '/api/v1/resources/queues/:queue', summary: 'One queue: options, partitions and counts', ...read }, async (c, { params }) =>
    c.json(await c.get('db').call('log_queue_detail_v1', { queue: params.queue! })),
  ),
  route({ method: 'GET', path: '/api/v1/resources/queues/:queue/depth', summary: "A queue's depth, for one consumer group or the worst", ...read, request: { query: depthQuery } }, async (c, { params, query }) =>
    c.json(await c.get('db').call('log_queue_depth_v1', { queue: params.queue!, group: query.group })),
  ),
  // 200 with a body both ways, never 204 or 404: SDKs read res.deleted, and delete-before-create is
  // their cleanup idiom.
  route({ method: 'DELETE', path: '/api/v1/resources/queues/:queue', summary: 'Delete a queue and everything in it', roles: ROLE_SETS.A, tenant: 'required', body: 'none' }, async (c, { params }) =>
    c.json(await c.get('db').call('delete_queue_v1', { queue: params.queue! })),
  ),
]
