// /streams/v1/* (docs/streams.md, issue #21): the three routes Queen's stream-processing SDKs call —
// register a query, read its state, commit a cycle — plus the listing and the admin delete. Bodies
// and statuses are the original's where the SDKs branch on them (design decision 46): 409 with `error` for a config
// hash mismatch, 200 with success:false for a cycle that rolled back. Validation failures are 400
// with the flat envelope, a malformed UUID included; the size limits are 413.
import type { Context } from 'hono'
import { z } from 'zod'
import type { StreamCycleArg, StreamCycleResult } from '../db/procedures.js'
import { HttpError } from '../errors.js'
import type { AppEnv } from '../http/env.js'
import { ROLE_SETS, route } from '../http/route.js'
import { fieldColon, positionOf, sentence, worded } from '../http/validate.js'
import { isUuid } from '../ids.js'
import { withEncryption } from '../messages/encode.js'
import { checkItemCount, pushItems } from '../messages/push-items.js'
import { wakePops } from '../messages/wake-pops.js'
import { NAME_MAX } from '../names.js'

/** State ops per cycle (design decision 46). A window runtime writes one op per touched key and window. */
export const MAX_STATE_OPS = 1000
/** State keys are btree keys: 512 characters stay under PostgreSQL's index entry limit in any UTF-8. */
export const MAX_STATE_KEY_CHARS = 512

const required = (field: string) => z.string({ error: `${field} is required` }).min(1, `${field} is required`)
const named = (field: string) => required(field).max(NAME_MAX, `${field} must be at most ${NAME_MAX} characters`)
const uuidField = (field: string) => required(field).refine(isUuid, `${field} must be a UUID`)
const bodyObject = <T extends z.core.$ZodLooseShape>(shape: T) => z.object(shape, { error: 'Body must be a JSON object' })

export const registerBody = worded(
  bodyObject({
    name: named('name'),
    source_queue: named('source_queue'),
    config_hash: required('config_hash').max(1024, 'config_hash must be at most 1024 characters'),
    sink_queue: z.string({ error: 'sink_queue must be a string' }).max(NAME_MAX, `sink_queue must be at most ${NAME_MAX} characters`).nullish(),
    reset: z.boolean({ error: 'reset must be a boolean' }).nullish(),
  }),
  sentence,
)

export const stateGetBody = worded(
  bodyObject({
    query_id: uuidField('query_id'),
    partition_id: uuidField('partition_id'),
    // The original reads anything but an array as "no keys filter"; an array must hold strings.
    keys: z.preprocess((v) => (Array.isArray(v) ? v : []), z.array(z.string({ error: 'keys must be an array of strings' }))),
    key_prefix: z.string({ error: 'key_prefix must be a string' }).nullish(),
    ripe_at_or_before: z.number({ error: 'ripe_at_or_before must be a number (epoch milliseconds)' }).int('ripe_at_or_before must be an integer').nullish(),
  }),
  sentence,
)

const stateKey = z
  .string({ error: (iss) => `State op key must be a string${positionOf(iss.path)}` })
  .refine((k) => [...k].length >= 1 && [...k].length <= MAX_STATE_KEY_CHARS, { error: (iss) => `State op key must be 1 to ${MAX_STATE_KEY_CHARS} characters${positionOf(iss.path)}` })
  // PostgreSQL text cannot hold U+0000.
  .refine((k) => !k.includes('\u0000'), { error: (iss) => `State op key must not contain U+0000${positionOf(iss.path)}` })
const stateOp = z.discriminatedUnion(
  'type',
  [z.object({ type: z.literal('upsert'), key: stateKey, value: z.unknown().optional() }), z.object({ type: z.literal('delete'), key: stateKey })],
  {
    error: (iss) => {
      if ((iss.code as string) === 'invalid_type') return `Each state op must be an object${positionOf(iss.path)}`
      const type = (iss.input as { type?: unknown } | undefined)?.type
      return `Unknown state op type: ${typeof type === 'string' ? type : JSON.stringify(type ?? null)}${positionOf(iss.path)}`
    },
  },
)

const ack = z.object(
  {
    transactionId: z.string({ error: 'ack.transactionId is required' }).min(1, 'ack.transactionId is required').max(NAME_MAX, `ack.transactionId must be at most ${NAME_MAX} characters`),
    leaseId: z
      .string({ error: 'ack.leaseId must be a string' })
      .refine((v) => v === '' || isUuid(v), 'ack.leaseId must be a UUID')
      .nullish()
      .transform((v) => (v ? v.toLowerCase() : undefined)),
    status: z.enum(['completed', 'success', 'failed', 'dlq'], { error: 'ack.status must be completed, success, failed or dlq' }).default('completed'),
    count: z.number({ error: 'ack.count must be a number' }).int('ack.count must be an integer').min(0, 'ack.count must not be negative').nullish(),
    error: z.string({ error: 'ack.error must be a string' }).nullish(),
  },
  { error: 'ack must be an object or null' },
)

/**
 * Queen's cycle uses a sink item's `messageId` as the stored message's id (and as its dedup key when
 * it has no transactionId). Message ids are minted by the push path here, so an item naming one is
 * refused rather than stored under another id.
 */
function refuseMessageIds(items: unknown, ctx: z.RefinementCtx): unknown {
  if (!Array.isArray(items)) return items
  items.forEach((item, i) => {
    const messageId = (item as { messageId?: unknown } | null)?.messageId
    if (messageId !== undefined && messageId !== null) {
      ctx.addIssue({ code: 'custom', message: `push_items[${i}].messageId is not supported: this broker mints message ids; name the message with transactionId` })
    }
  })
  return items
}

export const cycleBody = worded(
  bodyObject({
    query_id: uuidField('query_id'),
    partition_id: uuidField('partition_id'),
    consumer_group: z.string({ error: 'consumer_group must be a string' }).max(NAME_MAX, `consumer_group must be at most ${NAME_MAX} characters`).nullish(),
    release_lease: z.boolean({ error: 'release_lease must be a boolean' }).nullish(),
    state_ops: z.array(stateOp, { error: 'state_ops must be an array' }).nullish(),
    push_items: z.preprocess(refuseMessageIds, pushItems.nullish()),
    ack: ack.nullish(),
  }),
  sentence,
)

const encoder = new TextEncoder()

/** The size limits, on the raw body before the schema (as push checks its item count): 413, nothing written. */
function admitCycle(c: Context<AppEnv>, raw: Record<string, unknown>): void {
  checkItemCount(raw.push_items, c.get('config').MAX_PUSH_ITEMS)
  const ops = raw.state_ops
  if (!Array.isArray(ops)) return
  if (ops.length > MAX_STATE_OPS) throw new HttpError(413, 'payload_too_large', `Too many state ops: ${ops.length} (limit ${MAX_STATE_OPS} per cycle)`)
  const limit = c.get('config').MAX_FRAME_BYTES
  ops.forEach((op, i) => {
    const value = (op as { value?: unknown } | null)?.value
    if (value === undefined) return
    const bytes = encoder.encode(JSON.stringify(value)).length
    if (bytes > limit) throw new HttpError(413, 'payload_too_large', `State value too large: ${bytes} bytes (limit ${limit}) (state_ops[${i}])`)
  })
}

/** The digest that recognises a replayed cycle: of the request as validated, before encryption. */
async function digest(value: unknown): Promise<string> {
  const bytes = new Uint8Array(await crypto.subtle.digest('SHA-256', encoder.encode(JSON.stringify(value))))
  return Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('')
}

/** The original's push result items (snake_case, as /api/v1/push answers them). */
const pushResultItem = (r: StreamCycleResult['push_results'][number]) =>
  r.status === 'queued'
    ? { index: r.index, transaction_id: r.transactionId, status: r.status, message_id: r.messageId, partition_id: r.partitionId, trace_id: r.traceId, queueName: r.queue, offset: r.offset }
    : { index: r.index, transaction_id: r.transactionId, status: r.status, message_id: r.messageId, partition_id: r.partitionId, queueName: r.queue, offset: r.offset }

const nameParams = worded(z.object({ name: z.string().min(1, 'must not be empty').max(NAME_MAX, `must be at most ${NAME_MAX} characters`) }), fieldColon)

export const streamsRoutes = [
  route(
    { method: 'POST', path: '/streams/v1/queries', summary: 'Register a stream query (or find it, or reset it)', roles: ROLE_SETS.RW_A, tenant: 'required', body: 'required', request: { body: registerBody } },
    async (c, { body }) => {
      const result = await c.get('db').call('streams_register_query_v1', {
        name: body.name,
        sourceQueue: body.source_queue,
        sinkQueue: body.sink_queue ?? null,
        configHash: body.config_hash,
        reset: body.reset === true,
      })
      // The SDK turns a 409 into STREAMS_CONFIG_HASH_MISMATCH with body.error.
      if (!result.success) return c.json({ ...result, code: 'config_hash_mismatch' }, 409)
      return c.json(result)
    },
  ),
  route(
    { method: 'GET', path: '/streams/v1/queries', summary: "The tenant's stream queries with state size and source lag", roles: ROLE_SETS.R_RW_A, tenant: 'required', body: 'none' },
    async (c) => c.json({ queries: await c.get('db').call('streams_queries_v1', {}) }),
  ),
  route(
    { method: 'DELETE', path: '/streams/v1/queries/:name', summary: 'Delete a stream query and its state', roles: ROLE_SETS.A, tenant: 'required', body: 'none', request: { params: nameParams } },
    async (c, { params }) => c.json(await c.get('db').call('streams_query_delete_v1', { name: params.name })),
  ),
  route(
    { method: 'POST', path: '/streams/v1/state/get', summary: "Read a stream query's state on one source partition", roles: ROLE_SETS.R_RW_A, tenant: 'required', body: 'required', request: { body: stateGetBody } },
    async (c, { body }) => {
      const { rows } = await c.get('db').call('streams_state_get_v1', {
        queryId: body.query_id,
        partitionId: body.partition_id,
        keys: body.keys,
        keyPrefix: body.key_prefix ?? null,
        ripeAtOrBefore: body.ripe_at_or_before ?? null,
      })
      return c.json({ success: true, rows })
    },
  ),
  route(
    {
      method: 'POST',
      path: '/streams/v1/cycle',
      summary: 'Commit a stream cycle: state ops, sink pushes and the source ack in one transaction',
      roles: ROLE_SETS.RW_A,
      tenant: 'required',
      body: 'required',
      request: { body: cycleBody, admit: admitCycle },
    },
    async (c, { body }) => {
      const items = body.push_items ?? []
      const request = {
        query_id: body.query_id.toLowerCase(),
        partition_id: body.partition_id.toLowerCase(),
        ...(body.consumer_group ? { consumer_group: body.consumer_group } : {}),
        release_lease: body.release_lease ?? true,
        state_ops: body.state_ops ?? [],
        ack: body.ack ? { ...body.ack, count: body.ack.count ?? undefined, error: body.ack.error ?? undefined } : null,
      }
      const cycleHash = await digest({ ...request, push_items: items })
      const result = await withEncryption(
        c,
        items,
        (i) => `push_items[${i}]`,
        (encoded) => c.get('db').call('streams_cycle_v1', { body: { ...request, push_items: encoded } satisfies StreamCycleArg, cycleHash }),
        (r) => r.queues,
      )
      if (result.success && !result.replayed && !result.deferred && items.length > 0) {
        wakePops(c, items.map((i) => i.queue))
        c.get('metrics').pushed(result.push_results.map((r) => r.status))
      }
      const { queues: _queues, push_results, error, replayed, deferred, ...rest } = result
      return c.json({
        ...rest,
        push_results: push_results.map(pushResultItem),
        ...(error ? { error } : {}),
        ...(replayed ? { replayed } : {}),
        // A flush that would have raced the runner's cycle applied nothing (docs/streams.md).
        ...(deferred ? { deferred } : {}),
      })
    },
  ),
]
