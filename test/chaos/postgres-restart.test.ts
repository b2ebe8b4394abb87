// Chaos: PostgreSQL stopped and restarted under load (twice for 5 s in `npm run chaos`, once for
// 1.5 s in `npm test`), the broker on a server of its own. Meanwhile every route answers 503
// db_unavailable with Retry-After (checked by the load for every answer), and /health, sampled
// every 200 ms throughout, answers 503 "disconnected" for every sample taken wholly inside an
// outage, never 200 unless connected, and 200 again after each restart (its delay reported).
// The broker recovers by itself; the ledger must show nothing lost or reordered.
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pg from 'pg'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { startEmbeddedPostgres, type EmbeddedServer } from '../../src/db/embedded.js'
import { FULL, Load, sleep, startBroker, summarise, watchHealth, type Broker } from './harness.js'

const OUTAGES = FULL ? 2 : 1
const DOWN_MS = FULL ? 5000 : 1500
const UP_MS = FULL ? 5000 : 1000
const RETRY_LIMIT = 20

const dataDir = mkdtempSync(join(tmpdir(), 'queen-chaos-pg-'))
let server: EmbeddedServer
let broker: Broker
beforeAll(async () => {
  server = await startEmbeddedPostgres({ dataDir })
  broker = await startBroker(server.url)
  const c = new pg.Client({ connectionString: server.url })
  await c.connect()
  await c.query(`insert into queen.queues (tenant_id, name, lease_time, retry_limit) values ('', 'chaos-pg', 3, $1)`, [RETRY_LIMIT])
  await c.end()
})
afterAll(async () => {
  await broker?.stop()
  await server?.stop()
  rmSync(dataDir, { recursive: true, force: true })
})

it(`answers 503 while PostgreSQL is down ${OUTAGES}× and recovers by itself, losing nothing`, { timeout: FULL ? 600_000 : 120_000 }, async () => {
  const started = performance.now()
  const load = new Load({ base: () => broker.base, databaseUrl: server.url, queue: 'chaos-pg', seed: 21 })
  const health = watchHealth(() => broker.base)
  load.start()
  const windows: { down: number; up: number; ready: number }[] = []
  for (let k = 0; k < OUTAGES; k++) {
    await sleep(UP_MS)
    await server.stop()
    const down = performance.now()
    await sleep(DOWN_MS)
    const up = performance.now()
    server = await startEmbeddedPostgres({ dataDir, port: server.port })
    windows.push({ down, up, ready: performance.now() })
  }
  await sleep(UP_MS)
  await load.finish()
  await health.stop()
  const report = await load.check(RETRY_LIMIT)

  // /health's truth: wholly inside an outage → 503 disconnected; a 200 only when connected.
  const inside = health.samples.filter((s) => windows.some((w) => s.sentAt >= w.down && s.doneAt <= w.up))
  const lied = inside.filter((s) => s.status !== 503 || s.database !== 'disconnected')
  const healthyWhileDown = health.samples.filter((s) => s.status === 200 && s.database !== 'connected')
  // First healthy sample after each restart: /health's own recovery time.
  const healthRecovery = windows.map((w) => {
    const first = health.samples.find((s) => s.sentAt >= w.ready && s.status === 200)
    return first ? Math.round(first.doneAt - w.ready) : -1
  })
  const failing = summarise({
    scenario: 'PostgreSQL stop + restart', variant: FULL ? 'full' : 'short', seconds: (performance.now() - started) / 1000, faults: OUTAGES,
    recoveryMs: windows.map((w) => load.recovery(w.ready)), report, load: load.summary(),
    notes: { downMs: DOWN_MS, restartMs: windows.map((w) => Math.round(w.ready - w.up)), healthSamples: health.samples.length, healthInsideOutage: inside.length, healthLied: lied.length, healthRecoveryMs: healthRecovery },
  })
  expect(failing, report.problems.join('\n')).toEqual({})
  expect(load.stats.unexpected).toEqual([])
  expect(load.stats.retryable503).toBeGreaterThan(0)
  expect(Object.keys(load.stats.codes503)).toEqual(['db_unavailable'])
  expect(inside.length).toBeGreaterThan(0)
  expect(lied).toEqual([])
  expect(healthyWhileDown).toEqual([])
  expect(healthRecovery.every((ms) => ms >= 0)).toBe(true)
  expect(windows.map((w) => load.recovery(w.ready).push).every((ms) => ms >= 0)).toBe(true)
})
