// The dedup-hash purge lane's step (sql/procedures/007_dedup_purge.sql).
import { defineFamily, brokerWide } from '../procedure.js'
import { stepResult } from './shared.js'

export const dedupPurgeFamily = defineFamily({
  /** One bounded step of the dedup-hash purge: deletes expired log_txns rows. */
  log_dedup_purge_step_v1: brokerWide<{ limit: number; now?: Date }>({ limit: 'int', now: 'timestamptz' }).returns(stepResult),
})
