// After a write: wake this process's long-polls parked on the queues just written, as many of each
// group's as the write brought messages (src/pop-waker.ts). Pops parked on other replicas, and every
// pop on Workers (no waker there), see the write at their next re-check.
import type { Context } from 'hono'
import type { AppEnv } from '../http/env.js'
import { wakeKey } from '../pop-waker.js'

/** `queues`: the queue of every message written, one entry a message. */
export function wakePops(c: Context<AppEnv>, queues: Iterable<string>): void {
  const waker = c.get('popWaker')
  if (!waker) return
  const counts = new Map<string, number>()
  for (const q of queues) {
    const key = wakeKey(c.get('tenant'), q)
    counts.set(key, (counts.get(key) ?? 0) + 1)
  }
  waker.notify(counts.keys(), counts)
}
