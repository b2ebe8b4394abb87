// dedup_purge: deletes dedup hashes whose window has passed. Pushes ignore expired hashes
// anyway (design decision 8); this lane only keeps log_txns from growing without bound.
import type { Lane } from './lane.js'

export const dedupPurge: Lane = {
  name: 'dedup_purge',
  intervalMs: (config) => config.DEDUP_PURGE_INTERVAL_MS,
  defaultLimit: 10_000,
  step: async (db, { limit, now }) => db.call('log_dedup_purge_step_v1', { limit, now }),
}
