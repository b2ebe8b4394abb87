// Consumer-group administration (API §5.12) and the delivery policy route (API §8). Each route is
// one procedure call (sql/procedures/021_consumer_groups.sql). Any name, __QUEUE_MODE__ included,
// may be :group, except on the delivery route (D8). An unknown group answers 200 with zero counts or
// {} (D18); only the seek routes need their queue (and partition) to exist.
import { HttpError, badRequest } from '../errors.js'
import { Query, parseInstant } from '../http/query.js'
import { ROLE_SETS, route } from '../http/route.js'

const QUEUE_MODE = '__QUEUE_MODE__'
const NAME_MAX = 255
const read = { roles: ROLE_SETS.R_RW_A, tenant: 'required', body: 'none' } as const

function name(value: string | undefined, what: string): string {
  const v = value ?? ''
  if (v.length > NAME_MAX) throw badRequest(`${what} must be at most ${NAME_MAX} characters`)
  return v
}

function notFound(result: Record<string, unknown>): Record<string, unknown> {
  if (result.notFound === 'queue') throw new HttpError(404, 'queue_not_found', 'Queue not found')
  if (result.notFound === 'partition') throw new HttpError(404, 'partition_not_found', 'Partition not found')
  return result
}

export const consumerGroupRoutes = [
  route({ method: 'GET', path: '/api/v1/consumer-groups', ...read }, async (c) =>
    c.json(await c.var.db.call('consumer_group_list_v1', { tenant: c.var.tenant })),
  ),
  // Literal before /:group (API §3.6): a group named "lagging" has no detail view.
  route({ method: 'GET', path: '/api/v1/consumer-groups/lagging', ...read }, async (c) => {
    const minLagSeconds = new Query(c.req.url).int('minLagSeconds', 3600, 0, Number.MAX_SAFE_INTEGER)
    return c.json(await c.var.db.call('consumer_group_lagging_v1', { tenant: c.var.tenant, minLagSeconds }))
  }),
  route({ method: 'GET', path: '/api/v1/consumer-groups/:group', ...read }, async (c) =>
    c.json(await c.var.db.call('consumer_group_detail_v1', { tenant: c.var.tenant, group: name(c.req.param('group'), 'group') })),
  ),
  route({ method: 'DELETE', path: '/api/v1/consumer-groups/:group', roles: ROLE_SETS.A, tenant: 'required', body: 'none' }, async (c) => {
    const deleteMetadata = new Query(c.req.url).bool('deleteMetadata', true)
    const group = name(c.req.param('group'), 'group')
    return c.json(await c.var.db.call('consumer_group_delete_v1', { tenant: c.var.tenant, group, deleteMetadata }))
  }),
  route({ method: 'DELETE', path: '/api/v1/consumer-groups/:group/queues/:queue', roles: ROLE_SETS.A, tenant: 'required', body: 'none' }, async (c) => {
    const deleteMetadata = new Query(c.req.url).bool('deleteMetadata', true)
    const group = name(c.req.param('group'), 'group')
    const queue = name(c.req.param('queue'), 'queue')
    return c.json(await c.var.db.call('consumer_group_delete_v1', { tenant: c.var.tenant, group, queue, deleteMetadata }))
  }),
  route({ method: 'POST', path: '/api/v1/consumer-groups/:group/subscription', roles: ROLE_SETS.RW_A, tenant: 'required', body: 'required' }, async (c) => {
    const { subscriptionTimestamp } = c.var.body
    if (subscriptionTimestamp === undefined || subscriptionTimestamp === null || subscriptionTimestamp === '') {
      throw badRequest('subscriptionTimestamp is required')
    }
    if (typeof subscriptionTimestamp !== 'string') throw badRequest('subscriptionTimestamp must be an ISO-8601 timestamp')
    const timestamp = parseInstant(subscriptionTimestamp, 'subscriptionTimestamp')
    const group = name(c.req.param('group'), 'group')
    return c.json(await c.var.db.call('consumer_group_subscription_v1', { tenant: c.var.tenant, group, timestamp }))
  }),
  route({ method: 'POST', path: '/api/v1/consumer-groups/:group/queues/:queue/seek', roles: ROLE_SETS.RW_A, tenant: 'required', body: 'required' }, async (c) => {
    const { toEnd, timestamp } = c.var.body
    const group = name(c.req.param('group'), 'group')
    const queue = name(c.req.param('queue'), 'queue')
    if (toEnd !== undefined && toEnd !== null && typeof toEnd !== 'boolean') throw badRequest('toEnd must be true or false')
    if (toEnd === true) {
      return c.json(notFound(await c.var.db.call('consumer_group_seek_v1', { tenant: c.var.tenant, group, queue, toEnd: true })))
    }
    if (timestamp === undefined || timestamp === null || timestamp === '') throw badRequest("Must specify either 'toEnd': true or 'timestamp'")
    if (typeof timestamp !== 'string') throw badRequest('timestamp must be an ISO-8601 timestamp')
    const at = parseInstant(timestamp, 'timestamp')
    return c.json(notFound(await c.var.db.call('consumer_group_seek_v1', { tenant: c.var.tenant, group, queue, timestamp: at, toEnd: false })))
  }),
  route(
    { method: 'POST', path: '/api/v1/consumer-groups/:group/queues/:queue/partitions/:partition/seek', roles: ROLE_SETS.RW_A, tenant: 'required', body: 'optional' },
    async (c) => {
      const args = {
        tenant: c.var.tenant,
        group: name(c.req.param('group'), 'group'),
        queue: name(c.req.param('queue'), 'queue'),
        partition: name(c.req.param('partition'), 'partition'),
      }
      return c.json(notFound(await c.var.db.call('consumer_group_partition_seek_v1', args)))
    },
  ),
  route({ method: 'POST', path: '/api/v1/consumer-groups/:group/queues/:queue/delivery', roles: ROLE_SETS.RW_A, tenant: 'required', body: 'required' }, async (c) => {
    const { conflation } = c.var.body
    if (typeof conflation !== 'boolean') throw badRequest('conflation must be true or false')
    const group = name(c.req.param('group'), 'group')
    if (group === QUEUE_MODE) throw badRequest('delivery applies to named consumer groups only')
    const queue = name(c.req.param('queue'), 'queue')
    return c.json(await c.var.db.call('consumer_group_delivery_v1', { tenant: c.var.tenant, group, queue, conflation }))
  }),
]
