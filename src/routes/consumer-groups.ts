// Consumer-group administration and the delivery policy route (docs/consumer-groups.md). Each
// route is one procedure call (sql/procedures/021_consumer_groups.sql). Any name, __QUEUE_MODE__
// included, may be :group, except on the delivery route (design decision 19). An unknown group
// answers 200 with zero counts or {} (design decision 30); only the seek routes need their queue
// (and partition) to exist.
import { z } from 'zod'
import { badRequest } from '../errors.js'
import { instant, instantOf, qBool, qInt } from '../http/query-schema.js'
import { ROLE_SETS, route } from '../http/route.js'
import { sentence, worded } from '../http/validate.js'
import { NAME_MAX, QUEUE_MODE } from '../names.js'

const read = { roles: ROLE_SETS.R_RW_A, tenant: 'required', body: 'none' } as const
const write = { roles: ROLE_SETS.RW_A, tenant: 'required' } as const

/** Path names of at most 255 characters ("group must be at most 255 characters"). */
const name = () => z.string().max(NAME_MAX, `must be at most ${NAME_MAX} characters`)
const groupParams = z.object({ group: name() })
const groupQueueParams = z.object({ group: name(), queue: name() })
const partitionParams = z.object({ group: name(), queue: name(), partition: name() })
const deleteQuery = z.object({ deleteMetadata: qBool(true) })

const SUBSCRIPTION_REQUIRED = 'subscriptionTimestamp is required'
const SUBSCRIPTION_INSTANT = 'subscriptionTimestamp must be an ISO-8601 timestamp'
export const subscriptionBody = worded(
  z.object({
    subscriptionTimestamp: z
      .string({ error: (iss) => (iss.input === undefined || iss.input === null ? SUBSCRIPTION_REQUIRED : SUBSCRIPTION_INSTANT) })
      .min(1, SUBSCRIPTION_REQUIRED)
      .pipe(instant(SUBSCRIPTION_INSTANT)),
  }),
  sentence,
)

// toEnd:true wins and the timestamp is then not read at all (Queen's order), so the timestamp's
// rules are checked by the object, not by its field.
const TIMESTAMP_INSTANT = 'timestamp must be an ISO-8601 timestamp'
export const seekBody = worded(
  z
    .object({
      toEnd: z.boolean({ error: 'toEnd must be true or false' }).nullish(),
      timestamp: z.unknown().optional().meta({ type: 'string', format: 'date-time', description: 'required unless toEnd is true' }),
    })
    .transform((body, ctx): { toEnd: true } | { toEnd: false; timestamp: string } => {
      if (body.toEnd === true) return { toEnd: true }
      const { timestamp } = body
      const at = typeof timestamp === 'string' && timestamp !== '' ? instantOf(timestamp) : null
      if (at !== null) return { toEnd: false, timestamp: at }
      const absent = timestamp === undefined || timestamp === null || timestamp === ''
      ctx.addIssue({ code: 'custom', message: absent ? "Must specify either 'toEnd': true or 'timestamp'" : TIMESTAMP_INSTANT })
      return z.NEVER
    }),
  sentence,
)

// One partition's seek takes the same two targets. A body naming neither (no body, or `{}`) is the
// console's "skip to end" button; a timestamp is honoured, never read as "to the end".
export const partitionSeekBody = worded(
  z
    .object({
      toEnd: z.boolean({ error: 'toEnd must be true or false' }).nullish(),
      timestamp: z.unknown().optional().meta({ type: 'string', format: 'date-time', description: 'omit (or send toEnd: true) to seek to the end' }),
    })
    .transform((body, ctx): { timestamp?: string } => {
      const { toEnd, timestamp } = body
      if (toEnd === true) return {}
      const absent = timestamp === undefined || timestamp === null || timestamp === ''
      if (absent) {
        if (toEnd === false) ctx.addIssue({ code: 'custom', message: "Must specify either 'toEnd': true or 'timestamp'" })
        return {}
      }
      const at = typeof timestamp === 'string' ? instantOf(timestamp) : null
      if (at === null) {
        ctx.addIssue({ code: 'custom', message: TIMESTAMP_INSTANT })
        return z.NEVER
      }
      return { timestamp: at }
    }),
  sentence,
)

export const deliveryBody = worded(z.object({ conflation: z.boolean({ error: 'conflation must be true or false' }) }), sentence)

// Both deletes are the same call: without :queue in the path the procedure acts on every queue.
function deleteGroupRoute(path: string, summary: string, params: typeof groupParams | typeof groupQueueParams) {
  return route(
    { method: 'DELETE', path, summary, roles: ROLE_SETS.A, tenant: 'required', body: 'none', request: { params, query: deleteQuery } },
    async (c, input) =>
      c.json(await c.get('db').call('consumer_group_delete_v1', { ...input.params, deleteMetadata: input.query.deleteMetadata })),
  )
}

export const consumerGroupRoutes = [
  route({ method: 'GET', path: '/api/v1/consumer-groups', summary: 'Consumer groups with their queues and lag', ...read }, async (c) =>
    c.json(await c.get('db').call('consumer_group_list_v1', {})),
  ),
  // Literal before /:group, which would otherwise match it: a group named "lagging" has no detail view.
  route(
    {
      method: 'GET',
      path: '/api/v1/consumer-groups/lagging',
      summary: 'Consumer groups lagging by at least minLagSeconds',
      ...read,
      request: { query: z.object({ minLagSeconds: qInt(3600, 0, Number.MAX_SAFE_INTEGER) }) },
    },
    async (c, { query }) => c.json(await c.get('db').call('consumer_group_lagging_v1', { minLagSeconds: query.minLagSeconds })),
  ),
  route({ method: 'GET', path: '/api/v1/consumer-groups/:group', summary: "One consumer group's cursors per queue", ...read, request: { params: groupParams } }, async (c, { params }) =>
    c.json(await c.get('db').call('consumer_group_detail_v1', { group: params.group })),
  ),
  deleteGroupRoute('/api/v1/consumer-groups/:group', 'Delete a consumer group on every queue', groupParams),
  deleteGroupRoute('/api/v1/consumer-groups/:group/queues/:queue', 'Delete a consumer group on one queue', groupQueueParams),
  route(
    {
      method: 'POST',
      path: '/api/v1/consumer-groups/:group/subscription',
      summary: "Move a group's subscription start to a timestamp",
      ...write,
      body: 'required',
      request: { params: groupParams, body: subscriptionBody },
    },
    async (c, { params, body }) =>
      c.json(await c.get('db').call('consumer_group_subscription_v1', { group: params.group, timestamp: body.subscriptionTimestamp })),
  ),
  route(
    {
      method: 'POST',
      path: '/api/v1/consumer-groups/:group/queues/:queue/seek',
      summary: "Move a group's cursors on a queue to the end or to a timestamp",
      ...write,
      body: 'required',
      request: { params: groupQueueParams, body: seekBody },
    },
    async (c, { params, body }) => c.json(await c.get('db').call('consumer_group_seek_v1', { ...params, ...body })),
  ),
  route(
    {
      method: 'POST',
      path: '/api/v1/consumer-groups/:group/queues/:queue/partitions/:partition/seek',
      summary: "Move a group's cursor on one partition to its end or to a timestamp",
      ...write,
      body: 'optional',
      request: { params: partitionParams, body: partitionSeekBody },
    },
    async (c, { params, body }) => c.json(await c.get('db').call('consumer_group_partition_seek_v1', { ...params, ...body })),
  ),
  route(
    {
      method: 'POST',
      path: '/api/v1/consumer-groups/:group/queues/:queue/delivery',
      summary: "Set a named group's delivery policy (conflation) on a queue",
      ...write,
      body: 'required',
      request: { params: groupQueueParams, body: deliveryBody },
    },
    async (c, { params, body }) => {
      if (params.group === QUEUE_MODE) throw badRequest('delivery applies to named consumer groups only')
      return c.json(await c.get('db').call('consumer_group_delivery_v1', { ...params, conflation: body.conflation }))
    },
  ),
]
