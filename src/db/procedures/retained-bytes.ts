// The retained-bytes lane's step (sql/procedures/019_retained_bytes.sql).
import { brokerWide, defineFamily } from '../procedure.js'
import { stepResult } from './shared.js'

export const retainedBytesFamily = defineFamily({
  /** One bounded step of the retained-bytes lane: segment_count, retained_bytes and dlq_total per queue. */
  log_retained_bytes_step_v1: brokerWide<{ next: string | null; limit: number; now?: Date }>({ next: 'text', limit: 'int', now: 'timestamptz' }).returns(
    stepResult,
  ),
})
