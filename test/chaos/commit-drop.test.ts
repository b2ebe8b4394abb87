// Chaos: ambiguous commits. The broker reaches PostgreSQL through a proxy that drops the
// connection right after a call's commit, before its answer (test/chaos/commit-drop-proxy.ts),
// for 5% of calls (30 s in `npm run chaos`, 3 s in `npm test`). The broker can only answer 503;
// the producer retries with the same transactionIds and must be told `duplicate` with the first
// offset — never get a second message — and a retried ack must be harmless. The ledger checks
// both (duplicateMessages, unexplained redeliveries) besides loss and order.
import { afterAll, beforeAll, expect, inject, it } from 'vitest'
import { freshDatabase, type TestDatabase } from '../helpers/database.js'
import { startCommitDropProxy, type CommitDropProxy } from './commit-drop-proxy.js'
import { FULL, Load, sleep, startBroker, summarise, type Broker } from './harness.js'
import { rng } from './ledger.js'

const RUN_MS = FULL ? 30_000 : 3000
const DROP_RATE = 0.05
const RETRY_LIMIT = 20

let database: TestDatabase
let proxy: CommitDropProxy
let broker: Broker
beforeAll(async () => {
  database = await freshDatabase()
  await database.sql(`insert into queen.queues (tenant_id, name, lease_time, retry_limit) values ('', 'chaos-commit', 3, $1)`, [RETRY_LIMIT])
  const server = new URL(inject('adminUrl'))
  // Boot (migrations, the statement-timeout check) goes through cleanly; drops start with the load.
  proxy = await startCommitDropProxy({ host: server.hostname, port: Number(server.port) }, 0, rng(51))
  const url = new URL(database.url)
  url.host = `127.0.0.1:${proxy.port}`
  broker = await startBroker(url.toString())
})
afterAll(async () => {
  await broker?.stop()
  await proxy?.close()
  await database?.drop()
})

it(`never stores a retried push twice when ${DROP_RATE * 100}% of commits lose their answer`, { timeout: FULL ? 600_000 : 120_000 }, async () => {
  const started = performance.now()
  const load = new Load({ base: () => broker.base, databaseUrl: database.url, queue: 'chaos-commit', seed: 52 })
  load.start()
  proxy.setDropRate(DROP_RATE)
  await sleep(RUN_MS)
  proxy.setDropRate(0)
  await load.finish()
  const report = await load.check(RETRY_LIMIT)
  const failing = summarise({
    scenario: 'commit-drop TCP proxy', variant: FULL ? 'full' : 'short', seconds: (performance.now() - started) / 1000, faults: proxy.dropped,
    recoveryMs: [], report, load: load.summary(),
    notes: { dropRate: DROP_RATE, droppedAfterCommit: proxy.dropped, forwarded: proxy.forwarded, retriedAcks: load.stats.retriedAckResults },
  })
  expect(failing, report.problems.join('\n')).toEqual({})
  expect(load.stats.unexpected).toEqual([])
  expect(proxy.dropped).toBeGreaterThan(0)
  // The ambiguity really happened to pushes: some retries were answered `duplicate`.
  expect(report.duplicateAnswers).toBeGreaterThan(0)
})
