// After a write: wake this process's long-polls parked on the queues just written. Pops parked on
// other replicas, and every pop on Workers (no waker there), see the write at their next re-check.
import type { Context } from 'hono'
import type { AppEnv } from '../http/env.js'
import { wakeKey } from '../pop-waker.js'

export function wakePops(c: Context<AppEnv>, queues: Iterable<string>): void {
  c.get('popWaker')?.notify([...new Set(queues)].map((q) => wakeKey(c.get('tenant'), q)))
}
