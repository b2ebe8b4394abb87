// Node's lane timers: every replica runs one timer per lane; the maintenance lease decides who
// works. The delay is jittered one-sided, interval to interval × 1.1 (design decision 33), so a single replica
// never arrives early enough to find the lane not yet due and skip a run.
import type { Config } from '../src/config.js'
import type { Database } from '../src/db/database.js'
import { describeError, type Logger } from '../src/log.js'
import type { PopWaker } from '../src/pop-waker.js'
import { LANES } from './lanes.js'
import { runLane } from './runner.js'

export interface LaneTimers {
  /** Stops scheduling and waits for running lanes to release their leases. */
  stop(): Promise<void>
}

/** `database` names the database in the log lines (docs/placement.md: lanes run per database). */
export function startLaneTimers(db: Database, config: Config, log: Logger, database = 'default', popWaker: PopWaker | null = null): LaneTimers {
  let stopped = false
  const timers = new Set<ReturnType<typeof setTimeout>>()
  const running = new Set<Promise<unknown>>()

  for (const lane of LANES) {
    if (!lane.step) continue
    const interval = lane.intervalMs(config)
    const schedule = () => {
      if (stopped) return
      const timer = setTimeout(() => {
        timers.delete(timer)
        const work = runLane(db, lane, { config, budgetMs: Math.max(Math.min(interval, 20_000), 1000), database, popWaker })
          .then((run) => run.claimed && (!lane.quiet || run.processed > 0) && log.info('lane', { database, ...run }))
          .catch((error) => log.error('lane failed', { database, lane: lane.name, ...describeError(error) }))
          .finally(() => {
            running.delete(work)
            schedule()
          })
        running.add(work)
      }, interval * (1 + Math.random() * 0.1))
      timer.unref?.()
      timers.add(timer)
    }
    schedule()
  }

  return {
    async stop() {
      stopped = true
      for (const timer of timers) clearTimeout(timer)
      await Promise.allSettled(running)
    },
  }
}
