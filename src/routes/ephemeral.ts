// Ephemeral queues (docs/ephemeral.md): eight routes over rings of messages that may be lost, in
// UNLOGGED tables every replica and Worker shares. Queen's wire: one queue per push, {payload}
// items, pop answers 200 with an empty array when there is nothing, per-id ack verdicts, a closed
// option list on configure. A refused input answers 400 ephemeral_bad_request and writes nothing.
import { z } from 'zod'
import { ackVerdicts, parseAcks } from '../ephemeral/ack-ids.js'
import { ephemeralPop, wakeEphemeralPops } from '../ephemeral/long-poll.js'
import { qBool, qInt } from '../http/query-schema.js'
import { ROLE_SETS, route } from '../http/route.js'

const NAME_MAX_BYTES = 512
const MAX_ITEMS = 10_000
const MAX_TIMEOUT_MS = 300_000
const DEFAULT_TIMEOUT_MS = 30_000
const DEFAULT_PARTITION = 'Default'

const utf8Bytes = (s: string) => new TextEncoder().encode(s).length

/**
 * Queue, partition and group names: 1 to 512 bytes without control characters, because they are
 * joined into one key.
 */
const ephemeralName = z
  .string()
  .min(1, 'must not be empty')
  .refine((s) => utf8Bytes(s) <= NAME_MAX_BYTES, `must be at most ${NAME_MAX_BYTES} bytes`)
  // eslint-disable-next-line no-control-regex
  .refine((s) => !/[\u0000-\u001f\u007f]/.test(s), 'must not contain control characters')

const pushBody = z.object({
  queue: ephemeralName,
  partition: ephemeralName.optional(),
  messages: z
    .array(
      // {payload} and nothing else: no transactionId (there is no deduplication), no queue or partition
      // (the envelope names them). A null payload is a payload.
      z.strictObject({ payload: z.unknown() }).refine((m) => 'payload' in m, { message: 'is required', path: ['payload'] }),
    )
    .max(MAX_ITEMS, `must hold at most ${MAX_ITEMS} messages`),
})

const popQuery = z.object({
  queue: ephemeralName,
  partition: ephemeralName.optional(),
  group: ephemeralName.optional(),
  batch: qInt(1, 1, MAX_ITEMS),
  wait: qBool(false),
  timeout: qInt(DEFAULT_TIMEOUT_MS, 0, MAX_TIMEOUT_MS),
  autoAck: qBool(false),
})

const ackBody = z.object({
  queue: ephemeralName,
  group: ephemeralName.optional(),
  acks: z
    .array(
      z.object({
        id: z.string().min(1, 'must not be empty'),
        status: z.enum(['completed', 'failed', 'retry'], { error: 'must be completed, failed or retry' }).optional(),
        // Accepted and ignored: this class has no dead-letter table or trace store to keep it in.
        error: z.string().optional(),
      }),
    )
    .max(MAX_ITEMS, `must hold at most ${MAX_ITEMS} acks`),
})

const bound = z.number().int('must be a non-negative integer').min(0, 'must be a non-negative integer')
/** The closed option list: an unknown key is refused, never dropped, because every option bounds something. */
export const EPHEMERAL_OPTIONS = ['maxBytes', 'maxLength', 'policy', 'ttlSeconds', 'leaseSeconds', 'retryLimit', 'windowBuffer'] as const
const optionsSchema = z.strictObject(
  {
    maxBytes: bound.optional(),
    maxLength: bound.optional(),
    policy: z.enum(['reject', 'dropOldest'], { error: 'must be reject or dropOldest' }).optional(),
    ttlSeconds: bound.optional(),
    leaseSeconds: bound.optional(),
    retryLimit: bound.optional(),
    windowBuffer: z.strictObject({ ms: bound, count: bound }, { error: 'must be {ms, count}' }).optional(),
  },
  { error: (iss) => (iss.code === 'unrecognized_keys' ? `unknown option(s) ${iss.keys.join(', ')}; the options are ${EPHEMERAL_OPTIONS.join(', ')}` : undefined) },
)
const configureBody = z.object({ queue: ephemeralName, options: optionsSchema.optional() })
const queueBody = z.object({ queue: ephemeralName })
const queueParams = z.object({ queue: ephemeralName })
const depthQuery = z.object({ group: ephemeralName.optional() })

const common = { tenant: 'required', badRequestCode: 'ephemeral_bad_request' } as const

export const ephemeralRoutes = [
  route(
    { method: 'POST', path: '/api/v1/ephemeral/push', summary: 'Append messages to an ephemeral queue, all or nothing', roles: ROLE_SETS.W_RW_A, body: 'required', ...common, request: { body: pushBody } },
    async (c, { body }) => {
      const payloads = body.messages.map((m) => m.payload ?? null)
      const result = await c.get('db').call('ephemeral_push_v1', { queue: body.queue, partition: body.partition ?? DEFAULT_PARTITION, payloads })
      c.get('metrics').ephemeral({ pushed: result.pushed })
      wakeEphemeralPops(c, body.queue, result.pushed)
      return c.json({ pushed: result.pushed }, 201)
    },
  ),
  route(
    { method: 'GET', path: '/api/v1/ephemeral/pop', summary: 'Take messages from an ephemeral queue, optionally waiting', roles: ROLE_SETS.RW_A, body: 'none', ...common, request: { query: popQuery } },
    async (c, { query }) => {
      const messages = await ephemeralPop(c, {
        queue: query.queue,
        partition: query.partition ?? null,
        group: query.group ?? '',
        batch: query.batch,
        autoAck: query.autoAck,
        wait: query.wait,
        timeout: Math.min(query.timeout, c.get('config').MAX_POP_WAIT_MS),
      })
      c.get('metrics').ephemeral({ popped: messages.length })
      return c.json({ queue: query.queue, messages })
    },
  ),
  route(
    { method: 'POST', path: '/api/v1/ephemeral/ack', summary: 'Settle popped ephemeral messages, one verdict per id', roles: ROLE_SETS.RW_A, body: 'required', ...common, request: { body: ackBody } },
    async (c, { body }) => {
      const acks = body.acks.map((a) => ({ id: a.id, status: a.status ?? 'completed' }))
      // The ids are parsed here, not in PostgreSQL: the same string work cost it more than the settling.
      const parsed = parseAcks(acks)
      const settled = await c.get('db').call('ephemeral_ack_v2', { queue: body.queue, group: body.group ?? '', ...parsed.args })
      const results = ackVerdicts(acks, parsed, settled)
      c.get('metrics').ephemeral({ outcomes: results.map((r) => r.outcome) })
      return c.json({ results })
    },
  ),
  route(
    { method: 'POST', path: '/api/v1/ephemeral/configure', summary: 'Declare an ephemeral queue and its bounds', roles: ROLE_SETS.RW_A, body: 'required', ...common, request: { body: configureBody } },
    async (c, { body }) => c.json(await c.get('db').call('ephemeral_configure_v1', { queue: body.queue, options: body.options ?? {} }), 201),
  ),
  route(
    { method: 'POST', path: '/api/v1/ephemeral/reset', summary: "Drop an ephemeral queue's contents, keeping its declaration", roles: ROLE_SETS.RW_A, body: 'required', ...common, request: { body: queueBody } },
    async (c, { body }) => c.json(await c.get('db').call('ephemeral_reset_v1', { queue: body.queue })),
  ),
  route(
    { method: 'DELETE', path: '/api/v1/ephemeral/queue/:queue', summary: 'Delete an ephemeral queue: contents, cursors and declaration', roles: ROLE_SETS.RW_A, body: 'none', ...common, request: { params: queueParams } },
    async (c, { params }) => c.json(await c.get('db').call('ephemeral_delete_v1', { queue: params.queue })),
  ),
  route(
    { method: 'GET', path: '/api/v1/ephemeral/queues', summary: "Every ephemeral queue of the tenant with its gauges", roles: ROLE_SETS.R_RW_A, body: 'none', ...common },
    async (c) => c.json(await c.get('db').call('ephemeral_queues_v1', {})),
  ),
  route(
    { method: 'GET', path: '/api/v1/ephemeral/queues/:queue/depth', summary: 'Depth of one ephemeral queue per partition and group', roles: ROLE_SETS.R_RW_A, body: 'none', ...common, request: { params: queueParams, query: depthQuery } },
    async (c, { params, query }) => c.json(await c.get('db').call('ephemeral_depth_v1', { queue: params.queue, ...(query.group !== undefined ? { group: query.group } : {}) })),
  ),
]
