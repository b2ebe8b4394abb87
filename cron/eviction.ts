// eviction: maxWaitTimeSeconds, dropping whole segments older than the queue's maximum wait for
// every group, leased or not (ENGINE 7.4). Not gated by retentionEnabled, not floored by the sink
// hold: data loss by design (q&r).
import type { Lane } from './lane.js'

export const eviction: Lane = {
  name: 'eviction',
  intervalMs: (config) => config.EVICTION_INTERVAL_MS,
  defaultLimit: 1_000,
  step: async (db, { next, limit, now }) => db.call('log_evict_max_wait_step_v1', { next, limit, now }),
}
