// stats_refresh: the cached pending/processing numbers of queen.stats and the per-minute
// queue_metrics (ENGINE 8.1), 500 queues per step, resuming after the last queue id.
import type { Lane } from './lane.js'

export const statsRefresh: Lane = {
  name: 'stats_refresh',
  intervalMs: (config) => config.STATS_INTERVAL_MS,
  defaultLimit: 500,
  step: async (db, { next, limit, now }) => db.call('log_stats_refresh_step_v1', { after: next ?? undefined, limit, now }),
}
