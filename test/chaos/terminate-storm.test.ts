// Chaos: pg_terminate_backend storm. Several times a second an admin session terminates every
// backend of the broker's database (30 s in `npm run chaos`, 3 s in `npm test`). A call whose
// connection dies answers 503 (57P01 or a dropped socket: nothing was committed, or the commit's
// answer was lost and the retry deduplicates); the pool reconnects by itself. The ledger must
// show nothing lost, no second copy, nothing out of order.
import pg from 'pg'
import { expect, it } from 'vitest'
import { chaosFixture } from './fixture.js'
import { FULL, Load, sleep, summarise } from './harness.js'

const STORM_MS = FULL ? 30_000 : 3000
const EVERY_MS = 200
const RETRY_LIMIT = 20

const fixture = chaosFixture('chaos-term', RETRY_LIMIT)

it(`survives terminating every broker connection every ${EVERY_MS} ms for ${STORM_MS / 1000} s`, { timeout: FULL ? 600_000 : 120_000 }, async () => {
  const { database, broker } = fixture
  const started = performance.now()
  const load = new Load({ base: () => broker.base, databaseUrl: database.url, queue: 'chaos-term', seed: 31 })
  load.start()
  await sleep(1000)
  const killer = new pg.Client({ connectionString: database.url })
  await killer.connect()
  let terminated = 0
  let rounds = 0
  const stormStart = performance.now()
  const ticks: number[] = []
  while (performance.now() - stormStart < STORM_MS) {
    const { rows } = await killer.query(
      `select count(*) filter (where pg_terminate_backend(pid))::int as n from pg_stat_activity
        where datname = current_database() and pid <> pg_backend_pid() and application_name = 'queen-edge'`,
    )
    terminated += rows[0].n
    rounds++
    ticks.push(performance.now())
    await sleep(EVERY_MS)
  }
  await killer.end()
  const stormEnd = performance.now()
  await sleep(1000)
  await load.finish()
  const report = await load.check(RETRY_LIMIT)
  const failing = summarise({
    scenario: 'pg_terminate_backend storm', variant: FULL ? 'full' : 'short', seconds: (performance.now() - started) / 1000, faults: rounds,
    recoveryMs: [load.recovery(stormEnd)], report, load: load.summary(),
    notes: { terminatedBackends: terminated, everyMs: EVERY_MS, pushesDuringStorm: load.stats.pushOk.filter(([, t]) => t >= stormStart && t <= stormEnd).length },
  })
  expect(failing, report.problems.join('\n')).toEqual({})
  expect(load.stats.unexpected).toEqual([])
  expect(terminated).toBeGreaterThan(0)
})
