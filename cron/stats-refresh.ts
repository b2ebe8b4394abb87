// stats_refresh: the cached pending/processing numbers of queen.stats and the per-minute
// queue_metrics, steps of about 1 000 rows read (a queue and each of its partitions count one) or
// 250 ms, whichever ends first (the procedure's default time budget: rows alone did not bound a
// step's time, docs/lanes.md), resuming after the last queue id. A pass ends
// with a second stage: every tenant's pre-rendered `?stats=cached` listing is rendered again from
// the fresh numbers, one tenant a step (its `next` is the tenant after LISTINGS, JSON-encoded so
// the empty tenant of a tenant-less deployment is a position too).
import type { Lane, StepResult } from './lane.js'

const LISTINGS = 'listings:'

export const statsRefresh: Lane = {
  name: 'stats_refresh',
  intervalMs: (config) => config.STATS_INTERVAL_MS,
  defaultLimit: 1000,
  step: async (db, { next, limit, now }): Promise<StepResult> => {
    if (next?.startsWith(LISTINGS)) {
      const position = next.slice(LISTINGS.length)
      const after = position === '' ? undefined : (JSON.parse(position) as string)
      const step = await db.call('stats_listing_render_step_v1', { after })
      return { processed: step.processed, next: step.next === null ? null : LISTINGS + JSON.stringify(step.next) }
    }
    const step = await db.call('log_stats_refresh_step_v1', { after: next ?? undefined, limit, now })
    return step.next === null ? { processed: step.processed, next: LISTINGS } : step
  },
}
