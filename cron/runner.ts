// runLane: claim the lane's row in queen.maintenance_leases with a fresh holder token and
// database time, run bounded steps until the pass completes or the budget is spent (renewing the
// lease between steps), then release with the resume point. Node timers and the Worker's
// scheduled() both call this, so a duplicate firing is harmless: the claim's due check refuses it.
import type { Config } from '../src/config.js'
import type { Database } from '../src/db/database.js'
import { DbError } from '../src/db/errors.js'
import type { PopWaker } from '../src/pop-waker.js'
import type { Lane } from './lane.js'

export interface LaneRun {
  lane: Lane['name']
  claimed: boolean
  processed: number
  steps: number
  ms: number
  /** True when the pass finished; false when the budget ran out or the lease was lost. */
  complete: boolean
}

export interface RunOptions {
  config: Config
  /** Wall-clock budget for the steps of this run. */
  budgetMs: number
  /** Skip the due check (POST /api/v1/stats/refresh). */
  force?: boolean
  /** Pins database time, for tests. */
  now?: Date
  /** The database's name (docs/placement.md), for the adaptive step size; 'default' when unset. */
  database?: string
  /** Handed to the steps (StepArgs.popWaker). */
  popWaker?: PopWaker | null
}

// Step size adapts per lane, database and process (design decision 33): halve after a statement timeout,
// grow by 10 % after a fast step, never above the lane's default or below 10. Keyed by database
// name too, since each database (docs/placement.md) has its own load.
const limits = new Map<string, number>()
const FAST_STEP_MS = 2000

export async function runLane(db: Database, lane: Lane, options: RunOptions): Promise<LaneRun> {
  const started = Date.now()
  const run: LaneRun = { lane: lane.name, claimed: false, processed: 0, steps: 0, ms: 0, complete: false }
  const step = lane.step
  if (!step) return run
  const key = `${options.database ?? 'default'}:${lane.name}`

  const token = crypto.randomUUID()
  const ttl = `${lane.leaseSeconds ?? options.config.LANE_LEASE_SECONDS} seconds`
  const progress = await db.call('lane_claim_v1', {
    lane: lane.name,
    token,
    interval: `${lane.intervalMs(options.config)} milliseconds`,
    ttl,
    force: options.force ?? false,
    now: options.now,
  })
  if (progress === null) return run
  run.claimed = true

  let next = typeof progress.next === 'string' ? progress.next : null
  let failure: unknown
  try {
    for (;;) {
      const limit = limits.get(key) ?? lane.defaultLimit
      const stepStarted = Date.now()
      try {
        const result = await step(db, { next, limit, now: options.now, config: options.config, popWaker: options.popWaker })
        run.steps++
        run.processed += result.processed
        next = result.next
      } catch (error) {
        // A step that times out even at the smallest size is a real failure, not a sizing problem.
        if (!(error instanceof DbError && error.sqlstate === '57014') || limit <= 10) throw error
        limits.set(key, Math.max(10, Math.floor(limit / 2)))
        continue
      }
      if (Date.now() - stepStarted < FAST_STEP_MS) limits.set(key, Math.min(lane.defaultLimit, Math.ceil(limit * 1.1)))
      if (next === null) {
        run.complete = true
        break
      }
      if (Date.now() - started >= options.budgetMs) break
      const held = await db.call('lane_renew_v1', { lane: lane.name, token, ttl, progress: { next }, now: options.now })
      if (!held) break
    }
  } catch (error) {
    failure = error
  }
  run.ms = Date.now() - started
  const result = failure === undefined ? { processed: run.processed, steps: run.steps, ms: run.ms } : { error: String((failure as Error).message ?? failure) }
  await db.call('lane_release_v1', { lane: lane.name, token, progress: { next: run.complete ? null : next }, result, now: options.now })
  if (failure !== undefined) throw failure
  return run
}
