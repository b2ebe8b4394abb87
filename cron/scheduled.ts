// The Worker's cron handler body: every due lane in turn, stats first, inside one shared budget of
// about 45 s per invocation, each lane at most 20 s (design decision 33). Cron fires at least once
// a minute and possibly twice; the claims make that harmless.
import type { Config } from '../src/config.js'
import type { Database } from '../src/db/database.js'
import { describeError, type Logger } from '../src/log.js'
import { LANES } from './lanes.js'
import { runLane, type LaneRun } from './runner.js'

const INVOCATION_BUDGET_MS = 45_000
const LANE_BUDGET_MS = 20_000

/** `database` names the database (docs/placement.md): scheduled() calls this once per database. */
export async function runDueLanes(db: Database, config: Config, log: Logger, database = 'default'): Promise<LaneRun[]> {
  const deadline = Date.now() + INVOCATION_BUDGET_MS
  const runs: LaneRun[] = []
  for (const lane of LANES) {
    const left = deadline - Date.now()
    if (left <= 0) break
    try {
      const run = await runLane(db, lane, { config, budgetMs: Math.min(LANE_BUDGET_MS, left), database })
      runs.push(run)
      if (run.claimed) log.info('lane', { database, ...run })
    } catch (error) {
      log.error('lane failed', { database, lane: lane.name, ...describeError(error) })
    }
  }
  return runs
}
