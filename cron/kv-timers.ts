// kv_timers: fires due timers (each deleted and pushed in one transaction, docs/timers.md), then
// deletes key/value rows whose expiry has passed (reads already hide them, docs/kv.md). On Node it
// runs every KV_TIMERS_INTERVAL_MS and wakes this process's pops parked on the queues it pushed to;
// on Workers it runs with the other lanes, once per cron invocation.
import { wakeKey } from '../src/pop-waker.js'
import type { Lane } from './lane.js'

export const kvTimers: Lane = {
  name: 'kv_timers',
  intervalMs: (config) => config.KV_TIMERS_INTERVAL_MS,
  defaultLimit: 1000,
  quiet: true,
  // Its steps are short (at most 1000 rows each); a replica that dies holding the lease delays the
  // fire by at most this long.
  leaseSeconds: 3,
  step: async (db, { limit, now, popWaker }) => {
    const fired = await db.call('timers_fire_step_v1', { limit, now })
    if (popWaker && fired.queues.length > 0) popWaker.notify(fired.queues.map((q) => wakeKey(q.tenant, q.queue)))
    const swept = await db.call('kv_sweep_step_v1', { limit, now })
    return { processed: fired.processed + swept.processed, next: fired.next ?? swept.next }
  },
}
