// eviction: maxWaitTimeSeconds, dropping whole segments older than the queue's maximum wait for
// every group, leased or not. Not gated by retentionEnabled, not floored by the sink hold: dropping
// stale work is what the option is for, so this is data loss by design (docs/retention.md).
import type { Lane } from './lane.js'

export const eviction: Lane = {
  name: 'eviction',
  intervalMs: (config) => config.EVICTION_INTERVAL_MS,
  defaultLimit: 1_000,
  step: async (db, { next, limit, now }) => db.call('log_evict_max_wait_step_v1', { next, limit, now }),
}
