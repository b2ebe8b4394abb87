// stats_refresh: the cached pending/processing numbers of queen.stats and the per-minute
// queue_metrics (ENGINE 8.1). Its step procedure, log_stats_refresh_step_v1, arrives with the
// resources issue (#6); until then the lane is registered but never claimed.
import type { Lane } from './lane.js'

export const statsRefresh: Lane = {
  name: 'stats_refresh',
  intervalMs: (config) => config.STATS_INTERVAL_MS,
  defaultLimit: 500,
}
