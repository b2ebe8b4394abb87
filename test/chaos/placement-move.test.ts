// Chaos: a tenant moved between databases under load (issue #26, docs/placement.md). The real Node
// broker (src/node.ts) runs over two databases (QUEEN_DATABASES) with tenancy on; producers and
// consumers of one tenant keep going while an admin moves the tenant there and back (4 moves in
// `npm run chaos`, 1 in `npm test`). During each copy window the tenant's requests answer 503 with
// Retry-After, which the load retries as Queen's SDKs do. The ledger must show nothing lost, no
// second copy, nothing out of order across the moves.
import { afterAll, beforeAll, expect, it } from 'vitest'
import { freshDatabase, type TestDatabase } from '../helpers/database.js'
import { call, FULL, Load, sleep, startBroker, summarise, type Broker } from './harness.js'

const MOVES = FULL ? 4 : 1
const RETRY_LIMIT = 20
const TENANT = 'mover'
const HEADERS = { 'X-Tenant': TENANT }

let home: TestDatabase
let away: TestDatabase
let broker: Broker
beforeAll(async () => {
  home = await freshDatabase()
  away = await freshDatabase()
  await home.sql(`insert into queen.queues (tenant_id, name, lease_time, retry_limit) values ($1, 'chaos-move', 3, $2)`, [TENANT, RETRY_LIMIT])
  broker = await startBroker(home.url, {
    QUEEN_DATABASES: JSON.stringify({ away: away.url }),
    QUEEN_TENANCY_HEADER: 'X-Tenant',
    PLACEMENT_CACHE_TTL_MS: '250',
  })
})
afterAll(async () => {
  await broker?.stop()
  await home?.drop()
  await away?.drop()
})

it(`loses, duplicates and reorders nothing across ${MOVES} move(s) of a loaded tenant`, { timeout: FULL ? 600_000 : 120_000 }, async () => {
  const started = performance.now()
  const load = new Load({ base: () => broker.base, databaseUrl: home.url, otherDatabaseUrls: [away.url], tenant: TENANT, headers: HEADERS, queue: 'chaos-move', seed: 47 })
  load.start()
  await sleep(1500)
  const windows: number[] = []
  const ends: number[] = []
  for (let i = 0; i < MOVES; i++) {
    const to = i % 2 === 0 ? 'away' : 'default'
    const moved = await call(broker.base, 'POST', `/api/v1/system/placements/${TENANT}/move`, { to }, 120_000, HEADERS)
    expect(moved.status, JSON.stringify(moved.body)).toBe(200)
    expect(moved.body).toMatchObject({ moved: true, to, sourcePurged: true })
    windows.push(moved.body.ms.window)
    ends.push(performance.now())
    await sleep(1500)
  }
  await load.finish()
  const report = await load.check(RETRY_LIMIT)
  const failing = summarise({
    scenario: 'tenant move under load', variant: FULL ? 'full' : 'short', seconds: (performance.now() - started) / 1000, faults: MOVES,
    recoveryMs: ends.map((t) => load.recovery(t)), report, load: load.summary(), notes: { windowsMs: windows },
  })
  expect(failing, report.problems.join('\n')).toEqual({})
  expect(load.stats.unexpected).toEqual([])
  expect(report.acknowledged).toBeGreaterThan(0)
  // The moves really happened under load: the tenant was refused during the windows.
  expect(load.stats.codes503.tenant_moving ?? 0).toBeGreaterThan(0)
  // The tenant ends where the last move put it, and only there.
  const [last, other] = MOVES % 2 === 1 ? [away, home] : [home, away]
  expect((await last.sql(`select count(*)::int as n from queen.queues where tenant_id = $1`, [TENANT]))[0]!.n).toBe(1)
  expect((await other.sql(`select count(*)::int as n from queen.queues where tenant_id = $1`, [TENANT]))[0]!.n).toBe(0)
})
