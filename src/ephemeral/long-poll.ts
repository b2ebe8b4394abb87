// The ephemeral pop's wait (docs/ephemeral.md). Each check is one ephemeral_pop_v2 call, which
// never sleeps; between checks the pop parks here. On Node a push answered by this process wakes
// the parked pops of its queue at once (src/pop-waker.ts, under keys of their own); pops parked on
// other replicas, and every pop on Workers, see the push at their next re-check: 100 ms, doubling
// after every 3 empty checks, at most 1 s, as the durable long poll re-checks.
import type { Context } from 'hono'
import type { AppEnv } from '../http/env.js'
import { sleepOnly, type WakeOutcome } from '../pop-waker.js'
import { popMessages, type EphemeralMessage } from './pop-result.js'


const FIRST_BACKOFF_MS = 100
const MAX_BACKOFF_MS = 1000

/** The waker key of one tenant's ephemeral queue; ':' never appears in a tenant, so no log pop's key matches it. */
export const ephemeralWakeKey = (tenant: string, queue: string) => `ephemeral:${tenant}|${queue}`

export interface EphemeralPopArgs {
  queue: string
  partition: string | null
  /** '' is queue mode. */
  group: string
  batch: number
  autoAck: boolean
  wait: boolean
  /** Milliseconds, already clamped. */
  timeout: number
}

/** Messages for one pop: at once when there are any or the pop does not wait, else when a check finds some or the time is up. */
export async function ephemeralPop(c: Context<AppEnv>, args: EphemeralPopArgs): Promise<EphemeralMessage[]> {
  const started = Date.now()
  const { wait, timeout, ...request } = args
  const check = async () => {
    const result = await c.get('db').call('ephemeral_pop_v2', request)
    return { messages: popMessages(result), windowBuffer: result.windowBuffer }
  }
  const first = await check()
  if (first.messages.length > 0 || !wait) return first.messages

  const signal = c.req.raw.signal
  const waker = c.get('popWaker')
  const keys = [ephemeralWakeKey(c.get('tenant'), args.queue)]
  // A queue-wide pop parks as one of its group's, woken only as far as a push's messages go.
  const group = args.partition === null ? args.group : undefined
  const park = (ms: number): Promise<WakeOutcome> => (waker ? waker.wait(keys, ms, signal, group) : sleepOnly(ms, signal))
  const window = first.windowBuffer
  const end = started + timeout
  let interval = FIRST_BACKOFF_MS
  let empties = 0
  c.get('metrics').longPoll(1)
  try {
    for (;;) {
      const left = end - Date.now()
      if (left <= 0) return []
      const outcome = await park(Math.min(interval, left))
      if (outcome === 'aborted') return []
      if (outcome === 'woken') {
        interval = FIRST_BACKOFF_MS
        empties = 0
        // windowBuffer: a woken pop lets more of the burst arrive before it takes its batch.
        const linger = window ? Math.min(window.ms, end - Date.now()) : 0
        if (linger > 0 && (await sleepOnly(linger, signal)) === 'aborted') return []
      }
      const result = await check()
      if (result.messages.length > 0) return result.messages
      empties++
      if (empties % 3 === 0) interval = Math.min(interval * 2, MAX_BACKOFF_MS)
    }
  } finally {
    c.get('metrics').longPoll(-1)
  }
}

/** After a push: wake this process's pops parked on the queue, as many of each group's as messages arrived. */
export function wakeEphemeralPops(c: Context<AppEnv>, queue: string, pushed: number): void {
  const waker = c.get('popWaker')
  if (!waker || pushed === 0) return
  const key = ephemeralWakeKey(c.get('tenant'), queue)
  waker.notify([key], new Map([[key, pushed]]))
}
