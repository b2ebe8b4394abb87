// The pop routes (docs/engine.md): queue-scoped, partition-scoped and discovery. Each check is one
// log_pop_v1 call; the procedure never sleeps, so waiting (long-poll, minPopWaitTime) happens here
// with the bounds of design decision 35 and its backoff: 100 ms, doubling after every 3 empty checks, at most 1 s. A parked
// long poll woken by a push lingers POP_LINGER_MS before it claims (docs/long-poll.md).
import type { Context } from 'hono'
import { z } from 'zod'
import type { PopRequestArg, PoppedFrame, PopResult } from '../db/procedures.js'
import type { AppEnv } from '../http/env.js'
import { ROLE_SETS, route } from '../http/route.js'
import { NAME_MAX, QUEUE_MODE } from '../names.js'
import { sleepOnly, wakeKey, type WakeOutcome } from '../pop-waker.js'
import { reveal } from '../reveal.js'
import { discoveryQuery, popQuery, type PopQuery } from '../pop/query.js'
import { autopilotEcho, popSizing } from '../pop/sizing.js'

const FIRST_BACKOFF_MS = 100
const MAX_BACKOFF_MS = 1000
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
  const waker = c.get('popWaker')
  const wildcard = scope.queue !== undefined && scope.partition === undefined
  // The group's other pops parked on this queue in this process (this one is not parked while it checks).
  const waiters = () => (waker && scope.queue !== undefined ? waker.parked(wakeKey(c.get('tenant'), scope.queue), group) : 0)
  const sizing = popSizing(q, wildcard, config.QUEEN_POP_AUTOPILOT, waiters)
  const request: PopRequestArg = {
    ...scope,
    group,
    batch: sizing.batch,
    partitions: sizing.partitions,
    autoAck: q.autoAck,
    subscriptionMode,
    ...(subscriptionFrom !== undefined ? { subscriptionFrom } : {}),
    delivery: q.conflation ? 'conflate' : (q.delivery ?? 'all'),
    maxBytes: config.POP_MAX_BYTES,
    ...(q.leaseSeconds !== undefined ? { leaseSeconds: q.leaseSeconds } : {}),
    ...(sizing.autopilot ? { autopilot: sizing.autopilot } : {}),
    ...(q.conflation || q.delivery === 'conflate' ? { conflationAsked: true as const } : {}),
  }
  return { request, waiters, wait: q.wait, timeout: Math.min(q.timeout, config.MAX_POP_WAIT_MS), conflation: q.conflation }
}

async function pop(c: Context<AppEnv>, scope: Scope, query: PopQuery) {
  const started = Date.now()
  const { request, waiters, wait, timeout, conflation } = parseRequest(c, scope, query)
  const signal = c.req.raw.signal
  const keys = scope.queue !== undefined ? [wakeKey(c.get('tenant'), scope.queue)] : []
  const waker = c.get('popWaker')
  // A queue-wide pop parks as one of its group's, woken only as far as a push's messages go.
  const group = scope.partition === undefined ? request.group : undefined
  const park = (ms: number): Promise<WakeOutcome> => (waker ? waker.wait(keys, ms, signal, group) : sleepOnly(ms, signal))
  // Where the timer lane runs only once a minute (Workers), a queue's pop fires its due timers
  // first, so a consumer waiting on the queue sees a timer at its time (docs/timers.md).
  const fireTimers = c.get('config').TIMERS_FIRE_ON_POP && scope.queue !== undefined
  let checks = 0
  const check = async () => {
    // A long poll's later checks share the sweep with whoever is parked now.
    if (request.autopilot && checks++ > 0) request.autopilot = { ...request.autopilot, waiters: waiters() }
    if (fireTimers) await c.get('db').call('timers_fire_queue_v1', { queue: scope.queue!, limit: request.batch })
    const checked = await c.get('db').call('log_pop_v1', { request })
    if (checked.autopilot && !checked.autopilot.applied) {
      c.get('log').debug('pop autopilot (shadow)', { requestId: c.get('requestId'), queue: scope.queue, group: request.group, ...checked.autopilot })
    }
    return checked
  }
  const done = (r: PopResult) => (r.messages.length > 0 ? answer(c, r, request.group, conflation) : empty(c, r, request.group, conflation))

  let result = await check()
  if (result.messages.length > 0) return done(result)
  const floor = result.minPopWaitMs
  if (!wait) return holdEmpty()
  // Past the parking caps this answers 429 with Retry-After (src/tenant-share/parked-polls.ts).
  const leave = c.get('parkedPolls').enter(c.get('tenant'))
  c.get('metrics').longPoll(1)
  try {
    return await longPoll()
  } finally {
    c.get('metrics').longPoll(-1)
    leave()
  }

  async function holdEmpty() {
    // minPopWaitTime holds an empty answer; a local push during the hold earns one re-check.
    const hold = floor - (Date.now() - started)
    if (hold > 0 && (await park(hold)) === 'woken') result = await check()
    return done(result)
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
      if (result.messages.length > 0) return done(result)
      empties++
      if (empties % 3 === 0) interval = Math.min(interval * 2, MAX_BACKOFF_MS)
    }
    return done(result)
  }

  /**
   * After a wake-up, before the claim: one push woke this poll and more are likely on their way, so
   * a pop of more than one message waits up to POP_LINGER_MS (never past its deadline) for them to
   * join the same claim, instead of claiming one message and leaving the next to a pop and an ack of
   * its own. Nothing is claimed yet, so no lease is held while it waits (docs/long-poll.md). Later
   * pushes do not end it early; a disconnect or a shutdown does.
   */
  async function linger(): Promise<WakeOutcome> {
    // A pop of one message has nothing to gather; a batch autopilot sizes may be more than one.
    const gathers = request.batch > 1 || request.autopilot?.batch === true
    const ms = gathers ? Math.min(c.get('config').POP_LINGER_MS, deadline() - Date.now()) : 0
    if (ms <= 0) return 'woken'
    const outcome = await (waker ? waker.wait([], ms, signal) : sleepOnly(ms, signal))
    if (outcome !== 'aborted') return 'woken'
    // This pop was woken instead of another of its group, which would have claimed: wake that one.
    if (group !== undefined) waker?.handOn(keys, group)
    return 'aborted'
  }
}

/**
 * Queen's conflation keys, each only when true: `conflation` when the group's stored policy
 * conflates, `conflationConflict` when this request declared conflation and the stored policy does
 * not (the policy wins; the client warns). With no group row to ask (pop maintenance, a discovery
 * pop that matched nothing) a declared conflation is echoed as applied: nothing contradicts it.
 */
function conflationKeys(result: PopResult, group: string, declared: boolean) {
  if (group === QUEUE_MODE) return {}
  const applied = result.conflation ?? declared
  if (applied) return { conflation: true as const }
  return declared ? { conflationConflict: true as const } : {}
}

/**
 * Nothing to deliver: a bare 204, except for a request that declared conflation=true, whose client
 * reads the conflation echo on every answer (an old broker's bodiless 204 is how it tells one that
 * ignored the flag), so it gets a 200 with an empty batch and the keys.
 */
function empty(c: Context<AppEnv>, result: PopResult, group: string, declared: boolean) {
  c.get('metrics').popped(0)
  if (!declared) return c.body(null, 204)
  if (result.paused) return c.json({ messages: [], paused: true, conflation: true })
  return c.json({
    success: true,
    queue: result.queue ?? null,
    partition: null,
    partitionId: null,
    leaseId: '',
    consumerGroup: group,
    partitionsClaimed: 0,
    messages: [],
    ...conflationKeys(result, group, declared),
  })
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

async function answer(c: Context<AppEnv>, result: PopResult, group: string, declared: boolean) {
  c.get('metrics').popped(result.messages.length)
  // Only an encrypted frame needs reveal's pass (and its promise per frame); the rest go out as they came.
  const messages = result.messages.some((m) => m.enc)
    ? await reveal(c.get('config'), result.messages.map((m) => ({ ...delivered(m), enc: m.enc })), (m) => ({ tenant: c.get('db').tenant, queue: m.queue, partition: m.partition }))
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
    ...conflationKeys(result, group, declared),
    ...autopilotEcho(result.autopilot),
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
