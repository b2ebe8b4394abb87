// The pop routes (docs/engine.md): queue-scoped, partition-scoped and discovery. Each check is one
// log_pop_v1 call; the procedure never sleeps, so waiting (long-poll, minPopWaitTime) happens here
// with the bounds of design decision 35 and its backoff: 100 ms, doubling after every 3 empty checks, at most 1 s. A parked
// long poll woken by a push lingers POP_LINGER_MS before it claims (docs/long-poll.md).
import type { Context } from 'hono'
import { z } from 'zod'
import type { PopRequestArg, PoppedFrame } from '../db/procedures.js'
import type { AppEnv } from '../http/env.js'
import { instantOf, qBool, qInt, qOneOf, qString } from '../http/query-schema.js'
import { ROLE_SETS, route } from '../http/route.js'
import { NAME_MAX, QUEUE_MODE } from '../names.js'
import { sleepOnly, wakeKey, type WakeOutcome } from '../pop-waker.js'
import { reveal } from '../reveal.js'

const FIRST_BACKOFF_MS = 100
const MAX_BACKOFF_MS = 1000
const DEFAULT_TIMEOUT_MS = 30_000
// An empty long-poll never outlasts the JS client's own abort at timeout + 5 s.
const CLIENT_ABORT_SLACK_MS = 4000

const MODES = { all: 'all', from_beginning: 'all', new: 'new', 'new-only': 'new' } as const

interface Scope {
  queue?: string
  partition?: string
  namespace?: string
  task?: string
}

const longName = `must be at most ${NAME_MAX} characters`

/**
 * The pop options, in the order Queen's route reads them. subscriptionMode has no default here:
 * it defaults to DEFAULT_SUBSCRIPTION_MODE, which is configuration.
 */
const popOptions = {
  consumerGroup: z.string().max(NAME_MAX, longName).optional(),
  subscriptionMode: qOneOf(['all', 'from_beginning', 'new', 'new-only']).optional(),
  subscriptionFrom: z
    .string()
    .transform((v, ctx) => {
      if (v.toLowerCase() === 'now') return 'now'
      const iso = instantOf(v)
      if (iso === null) ctx.addIssue({ code: 'custom', message: 'must be an ISO-8601 timestamp', params: { instant: true } })
      return iso ?? z.NEVER
    })
    .optional()
    .meta({ description: '"now" or an ISO-8601 timestamp' }),
  // A named group's delivery policy at first contact; queue mode ignores it (design decision 19).
  delivery: qOneOf(['all', 'conflate']).default('all'),
  batch: qInt(1, 1, 10_000),
  partitions: qInt(1, 1, 1000),
  autoAck: qBool(false),
  wait: qBool(false),
  timeout: qInt(DEFAULT_TIMEOUT_MS, 0, Number.MAX_SAFE_INTEGER),
}
const popQuery = z.object(popOptions)
// Queen refuses a discovery pop without namespace and task before reading any option.
const discoveryQuery = z.preprocess(
  (query, ctx) => {
    const { namespace, task } = query as Record<string, string | undefined>
    if (namespace === undefined && task === undefined) ctx.addIssue({ code: 'custom', message: 'namespace or task is required' })
    return query
  },
  z.object({ namespace: qString(), task: qString(), ...popOptions }),
)
type PopQuery = z.output<typeof popQuery>

function parseRequest(c: Context<AppEnv>, scope: Scope, q: PopQuery) {
  const config = c.get('config')
  const group = q.consumerGroup ?? QUEUE_MODE
  let subscriptionMode: PopRequestArg['subscriptionMode'] = MODES[q.subscriptionMode ?? config.DEFAULT_SUBSCRIPTION_MODE]
  let subscriptionFrom: string | undefined
  if (q.subscriptionFrom === 'now') subscriptionMode = 'new'
  else if (q.subscriptionFrom !== undefined) {
    subscriptionMode = 'timestamp'
    subscriptionFrom = q.subscriptionFrom
  }
  const request: PopRequestArg = {
    ...scope,
    group,
    batch: q.batch,
    partitions: q.partitions,
    autoAck: q.autoAck,
    subscriptionMode,
    ...(subscriptionFrom !== undefined ? { subscriptionFrom } : {}),
    delivery: q.delivery,
    maxBytes: config.POP_MAX_BYTES,
  }
  return { request, wait: q.wait, timeout: Math.min(q.timeout, config.MAX_POP_WAIT_MS) }
}

async function pop(c: Context<AppEnv>, scope: Scope, query: PopQuery) {
  const started = Date.now()
  const { request, wait, timeout } = parseRequest(c, scope, query)
  const signal = c.req.raw.signal
  const keys = scope.queue !== undefined ? [wakeKey(c.get('tenant'), scope.queue)] : []
  const waker = c.get('popWaker')
  // A queue-wide pop parks as one of its group's, woken only as far as a push's messages go.
  const group = scope.partition === undefined ? request.group : undefined
  const park = (ms: number): Promise<WakeOutcome> => (waker ? waker.wait(keys, ms, signal, group) : sleepOnly(ms, signal))
  // Where the timer lane runs only once a minute (Workers), a queue's pop fires its due timers
  // first, so a consumer waiting on the queue sees a timer at its time (docs/timers.md).
  const fireTimers = c.get('config').TIMERS_FIRE_ON_POP && scope.queue !== undefined
  const check = async () => {
    if (fireTimers) await c.get('db').call('timers_fire_queue_v1', { queue: scope.queue!, limit: request.batch })
    return c.get('db').call('log_pop_v1', { request })
  }

  let result = await check()
  if (result.messages.length > 0) return answer(c, result, request.group)
  const floor = result.minPopWaitMs
  if (!wait) return holdEmpty()
  c.get('metrics').longPoll(1)
  try {
    return await longPoll()
  } finally {
    c.get('metrics').longPoll(-1)
  }

  async function holdEmpty() {
    // minPopWaitTime holds an empty answer; a local push during the hold earns one re-check.
    const hold = floor - (Date.now() - started)
    if (hold > 0 && (await park(hold)) === 'woken') {
      result = await check()
      if (result.messages.length > 0) return answer(c, result, request.group)
    }
    return empty(c)
  }

  function deadline() {
    return started + Math.min(Math.max(timeout, floor), c.get('config').MAX_POP_WAIT_MS, timeout + CLIENT_ABORT_SLACK_MS)
  }

  async function longPoll() {
    const end = deadline()
    let interval = FIRST_BACKOFF_MS
    let empties = 0
    for (;;) {
      const left = end - Date.now()
      if (left <= 0) break
      let outcome = await park(Math.min(interval, left))
      if (outcome === 'woken') {
        interval = FIRST_BACKOFF_MS
        empties = 0
        outcome = await linger()
      }
      // No claim after a disconnect: a claim racing it would only expire.
      if (outcome === 'aborted') break
      result = await check()
      if (result.messages.length > 0) return answer(c, result, request.group)
      empties++
      if (empties % 3 === 0) interval = Math.min(interval * 2, MAX_BACKOFF_MS)
    }
    return empty(c)
  }

  /**
   * After a wake-up, before the claim: one push woke this poll and more are likely on their way, so
   * a pop of more than one message waits up to POP_LINGER_MS (never past its deadline) for them to
   * join the same claim, instead of claiming one message and leaving the next to a pop and an ack of
   * its own. Nothing is claimed yet, so no lease is held while it waits (docs/long-poll.md). Later
   * pushes do not end it early; a disconnect or a shutdown does.
   */
  async function linger(): Promise<WakeOutcome> {
    // A pop of one message has nothing to gather.
    const ms = request.batch > 1 ? Math.min(c.get('config').POP_LINGER_MS, deadline() - Date.now()) : 0
    if (ms <= 0) return 'woken'
    const outcome = await (waker ? waker.wait([], ms, signal) : sleepOnly(ms, signal))
    if (outcome !== 'aborted') return 'woken'
    // This pop was woken instead of another of its group, which would have claimed: wake that one.
    if (group !== undefined) waker?.handOn(keys, group)
    return 'aborted'
  }
}

function empty(c: Context<AppEnv>) {
  c.get('metrics').popped(0)
  return c.body(null, 204)
}

/** A popped frame as the wire carries it, in the key order clients have always seen. */
const delivered = (m: PoppedFrame) => ({
  id: m.id,
  transactionId: m.transactionId,
  traceId: m.traceId,
  data: m.data,
  producerSub: m.producerSub,
  createdAt: m.createdAt,
  queue: m.queue,
  partition: m.partition,
  partitionId: m.partitionId,
  leaseId: m.leaseId,
  consumerGroup: m.consumerGroup,
  offset: m.offset,
  retryCount: m.retryCount,
})

async function answer(
  c: Context<AppEnv>,
  result: { messages: PoppedFrame[]; leaseId: string | null; partitionsClaimed: number; queue?: string | null; partition?: string | null; partitionId?: string | null },
  group: string,
) {
  c.get('metrics').popped(result.messages.length)
  // Only an encrypted frame needs reveal's pass (and its promise per frame); the rest go out as they came.
  const messages = result.messages.some((m) => m.enc)
    ? await reveal(c.get('config'), result.messages.map((m) => ({ ...delivered(m), enc: m.enc })))
    : result.messages.map(delivered)
  return c.json({
    success: true,
    queue: result.queue ?? null,
    partition: result.partition ?? null,
    partitionId: result.partitionId ?? null,
    leaseId: result.leaseId ?? '',
    consumerGroup: group,
    partitionsClaimed: result.partitionsClaimed,
    messages,
  })
}

const spec = { method: 'GET', roles: ROLE_SETS.RW_A, tenant: 'required', body: 'none' } as const
const queueParams = z.object({ queue: z.string().max(NAME_MAX, longName) })
const partitionParams = z.object({ queue: z.string().max(NAME_MAX, longName), partition: z.string().max(NAME_MAX, longName) })

export const popRoutes = [
  route({ ...spec, path: '/api/v1/pop', summary: 'Pop from the queues of a namespace and/or task', request: { query: discoveryQuery } }, (c, { query }) => {
    const { namespace, task, ...options } = query
    return pop(c, { ...(namespace !== undefined ? { namespace } : {}), ...(task !== undefined ? { task } : {}) }, options)
  }),
  route(
    { ...spec, path: '/api/v1/pop/queue/:queue/partition/:partition', summary: 'Pop from one partition of a queue', request: { params: partitionParams, query: popQuery } },
    (c, { params, query }) => pop(c, params, query),
  ),
  route({ ...spec, path: '/api/v1/pop/queue/:queue', summary: 'Pop from any partition of a queue', request: { params: queueParams, query: popQuery } }, (c, { params, query }) =>
    pop(c, params, query),
  ),
]
