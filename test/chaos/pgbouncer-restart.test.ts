// Chaos: PgBouncer (transaction mode) restarted under load with the broker behind it (3 times in
// `npm run chaos`, once in `npm test`). SIGTERM is PgBouncer's immediate shutdown: every client
// and server connection goes at once, mid-transaction or not, and the port is closed until the
// new process listens on it. The broker answers 503 meanwhile and reconnects by itself; the
// ledger must show nothing lost or reordered. Without a pgbouncer binary the scenario cannot run
// and says so loudly (test/helpers/optional.ts), as vitest.config.ts does for the pooler project.
import { inject, afterAll, beforeAll, describe, expect, it } from 'vitest'
import { freshDatabase, type TestDatabase } from '../helpers/database.js'
import { available, pgbouncerBinary } from '../helpers/optional.js'
import { findPgBouncer, startPgBouncer, type PgBouncer } from '../helpers/pgbouncer.js'
import { FULL, Load, sleep, startBroker, summarise, type Broker } from './harness.js'

const RESTARTS = FULL ? 3 : 1
const UP_MS = FULL ? 4000 : 1000
const DOWN_MS = 500
const RETRY_LIMIT = 20
const binary = available(pgbouncerBinary, 'the PgBouncer restart chaos scenario') ? findPgBouncer() : null

describe.runIf(binary !== null)('PgBouncer restart', () => {
  let database: TestDatabase
  let pooler: PgBouncer
  let broker: Broker
  beforeAll(async () => {
    database = await freshDatabase()
    await database.sql(`insert into queen.queues (tenant_id, name, lease_time, retry_limit) values ('', 'chaos-bouncer', 3, $1)`, [RETRY_LIMIT])
    pooler = await startPgBouncer(binary!, inject('adminUrl'))
    const url = new URL(database.url)
    url.host = pooler.address
    broker = await startBroker(url.toString())
  })
  afterAll(async () => {
    await broker?.stop()
    await pooler?.stop()
    await database?.drop()
  })

  it(`loses nothing across ${RESTARTS} PgBouncer restarts`, { timeout: FULL ? 600_000 : 120_000 }, async () => {
    const started = performance.now()
    const load = new Load({ base: () => broker.base, databaseUrl: database.url, queue: 'chaos-bouncer', seed: 41 })
    load.start()
    const restarts: number[] = []
    for (let k = 0; k < RESTARTS; k++) {
      await sleep(UP_MS)
      await pooler.stop()
      await sleep(DOWN_MS)
      pooler = await startPgBouncer(binary!, inject('adminUrl'), { port: pooler.port })
      restarts.push(performance.now())
    }
    await sleep(UP_MS)
    await load.finish()
    const report = await load.check(RETRY_LIMIT)
    const failing = summarise({
      scenario: 'PgBouncer restart', variant: FULL ? 'full' : 'short', seconds: (performance.now() - started) / 1000, faults: RESTARTS,
      recoveryMs: restarts.map((t) => load.recovery(t)), report, load: load.summary(), notes: { downMs: DOWN_MS, retriedAcks: load.stats.retriedAckResults },
    })
    expect(failing, report.problems.join('\n')).toEqual({})
    expect(load.stats.unexpected).toEqual([])
    expect(restarts.map((t) => load.recovery(t).push).every((ms) => ms >= 0)).toBe(true)
  })
})
