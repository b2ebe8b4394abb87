// retention: delete-and-advance of expired segments under the sink hold, then housekeeping of
// traces, metrics and DLQ rows by age (docs/retention.md, design decisions 11 and 31).
import type { Lane } from './lane.js'

export const retention: Lane = {
  name: 'retention',
  intervalMs: (config) => config.RETENTION_INTERVAL_MS,
  defaultLimit: 1_000,
  step: async (db, { next, limit, now, config }) =>
    db.call('log_retention_step_v1', {
      next,
      limit,
      traceDays: config.TRACE_RETENTION_DAYS,
      metricsDays: config.METRICS_RETENTION_DAYS,
      dlqDays: config.DLQ_RETENTION_DAYS,
      now,
    }),
}
