// retained_bytes: segment counts, stored bytes and DLQ totals per queue into queen.stats
// (docs/retention.md). It writes only its own columns of the stats row; stats_refresh owns the rest.
import type { Lane } from './lane.js'

export const retainedBytes: Lane = {
  name: 'retained_bytes',
  intervalMs: (config) => config.RETAINED_BYTES_INTERVAL_MS,
  defaultLimit: 200_000,
  step: async (db, { next, limit, now }) => db.call('log_retained_bytes_step_v1', { next, limit, now }),
}
