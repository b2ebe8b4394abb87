// The retention lane's step (sql/procedures/017_retention.sql).
import { brokerWide, defineFamily } from '../procedure.js'
import { stepResult } from './shared.js'

export const retentionFamily = defineFamily({
  /** One bounded step of the retention lane: delete-and-advance under the sink hold, then housekeeping. */
  log_retention_step_v1: brokerWide<{ next: string | null; limit: number; traceDays: number; metricsDays: number; dlqDays: number; now?: Date }>({
    next: 'text',
    limit: 'int',
    traceDays: 'int',
    metricsDays: 'int',
    dlqDays: 'int',
    now: 'timestamptz',
  }).returns(stepResult),
})
