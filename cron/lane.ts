// What a maintenance lane is: a name, an interval from configuration, and one bounded,
// idempotent step. The runner (runner.ts) owns claiming, renewing and releasing.
import type { Config } from '../src/config.js'
import type { Database } from '../src/db/database.js'
import type { PopWaker } from '../src/pop-waker.js'

export interface StepResult {
  processed: number
  /** Where the next step resumes; null when the pass is complete. */
  next: string | null
}

export interface StepArgs {
  /** Where the previous step (or the unfinished last run) stopped; null at the start of a pass. */
  next: string | null
  limit: number
  /** Pins database time, for tests. */
  now?: Date
  /** For lanes whose step takes settings (retention's housekeeping ages). */
  config: Config
  /** This process's long-poll waker, for a lane whose step writes messages (Node only). */
  popWaker?: PopWaker | null
}

export interface Lane {
  name: 'stats_refresh' | 'retained_bytes' | 'retention' | 'eviction' | 'dedup_purge' | 'kv_timers'
  intervalMs(config: Config): number
  /** Rows (or queues) one step may touch; the runner halves it after a statement timeout. */
  defaultLimit: number
  /**
   * One step. Lanes whose procedure has not been written yet have no step: the runner then never
   * claims them, so their lease rows stay honest ("never ran") instead of recording empty runs.
   */
  step?: (db: Database, args: StepArgs) => Promise<StepResult>
  /** Log only runs that did something: a lane that runs several times a second would flood the log. */
  quiet?: true
  /**
   * The lease TTL when not LANE_LEASE_SECONDS: a lane whose lateness users see (the timer fire)
   * cannot wait minutes for the lease of a replica that died holding it.
   */
  leaseSeconds?: number
}
