// What the console's browser code needs to know about this broker before its first API call:
// whether to ask for a token, which header carries the tenant, and when stats count as stale.
// None of it is secret (a header NAME, a flag, an interval); it never carries a token.
import type { Config } from '../config.js'

export interface ConsoleSettings {
  authEnabled: boolean
  /** The tenancy header's name, or null when tenancy is off (single tenant ''). */
  tenancyHeader: string | null
  /** statsAge above this (or -1) is shown as stale: the reconciler is presumably not running. */
  staleAfterSeconds: number
  runtime: Config['runtime']
}

// Workers run the stats lane from cron, which fires about once a minute whatever
// STATS_INTERVAL_MS says, so the lane's real cadence there is at least 60 s.
const CRON_PERIOD_S = 60
// Three missed passes: one late pass is jitter, three in a row is a reconciler that is not running.
const MISSED_PASSES = 3

export function consoleSettings(config: Config): ConsoleSettings {
  const intervalS = config.STATS_INTERVAL_MS / 1000
  const cadenceS = config.runtime === 'workers' ? Math.max(intervalS, CRON_PERIOD_S) : intervalS
  return {
    authEnabled: config.JWT_ENABLED,
    tenancyHeader: config.QUEEN_TENANCY_HEADER ?? null,
    staleAfterSeconds: Math.ceil(cadenceS * MISSED_PASSES),
    runtime: config.runtime,
  }
}
