// Chaos: a session left idle in a transaction, holding a snapshot that pins the xmin horizon (so
// no dead row of any table can be vacuumed), for a minute in `npm run chaos` and 3 s in
// `npm test`, while the load continues. Nothing the broker does may wait on that session: no
// call blocks, the ledger is clean, and throughput before, during and after is reported.
import pg from 'pg'
import { expect, it } from 'vitest'
import { chaosFixture } from './fixture.js'
import { FULL, Load, sleep, summarise } from './harness.js'

const PIN_MS = FULL ? 60_000 : 3000
const AROUND_MS = FULL ? 5000 : 1000
const RETRY_LIMIT = 20

const fixture = chaosFixture('chaos-idle', RETRY_LIMIT)

it(`keeps serving while a session pins the xmin horizon for ${PIN_MS / 1000} s`, { timeout: FULL ? 600_000 : 120_000 }, async () => {
  const { database, broker } = fixture
  const started = performance.now()
  const load = new Load({ base: () => broker.base, databaseUrl: database.url, queue: 'chaos-idle', seed: 61 })
  load.start()
  await sleep(AROUND_MS)
  const idle = new pg.Client({ connectionString: database.url })
  await idle.connect()
  await idle.query('begin isolation level repeatable read')
  await idle.query('select count(*) from queen.log_partitions')
  const pinnedAt = performance.now()
  const pinned = await database.sql<{ xmin: string | null }>(`select backend_xmin::text as xmin from pg_stat_activity where state = 'idle in transaction' and datname = current_database()`)
  const xmin = pinned[0]?.xmin ?? null
  await sleep(PIN_MS)
  const state = (await idle.query<{ state: string }>(`select 'alive' as state`)).rows[0]?.state
  await idle.query('rollback')
  await idle.end()
  const releasedAt = performance.now()
  await sleep(AROUND_MS)
  await load.finish()
  const report = await load.check(RETRY_LIMIT)
  const rate = (from: number, to: number) => Math.round((load.stats.pushOk.filter(([, t]) => t >= from && t < to).length / (to - from)) * 1000)
  const failing = summarise({
    scenario: 'idle in transaction (xmin pinned)', variant: FULL ? 'full' : 'short', seconds: (performance.now() - started) / 1000, faults: 1,
    recoveryMs: [load.recovery(releasedAt)], report, load: load.summary(),
    notes: {
      pinnedMs: PIN_MS, backendXmin: xmin, sessionSurvived: state === 'alive',
      pushRequestsPerSecond: { before: rate(pinnedAt - AROUND_MS, pinnedAt), during: rate(pinnedAt, releasedAt), after: rate(releasedAt, releasedAt + AROUND_MS) },
    },
  })
  expect(failing, report.problems.join('\n')).toEqual({})
  expect(load.stats.unexpected).toEqual([])
  expect(xmin).not.toBeNull()
  expect(load.stats.pushOk.filter(([, t]) => t >= pinnedAt && t < releasedAt).length).toBeGreaterThan(0)
})
