// The maxWaitTimeSeconds eviction lane's step (sql/procedures/018_eviction.sql).
import { brokerWide, defineFamily } from '../procedure.js'
import { stepResult } from './shared.js'

export const evictionFamily = defineFamily({
  /** One bounded step of the eviction lane: no sink hold, no groups consulted. */
  log_evict_max_wait_step_v1: brokerWide<{ next: string | null; limit: number; now?: Date }>({ next: 'text', limit: 'int', now: 'timestamptz' }).returns(
    stepResult,
  ),
})
