// Chaos: the broker killed with SIGKILL and restarted while producers and consumers keep going
// (10 times in `npm run chaos`, twice in `npm test`). A kill cuts requests mid-flight: pushes
// whose answer was lost are retried with the same transactionIds (dedup answers `duplicate`),
// leases held by the dead process expire and redeliver. The ledger must show nothing lost,
// nothing out of order, no second copy of a message, and only explained redeliveries.
import { expect, it } from 'vitest'
import { chaosFixture } from './fixture.js'
import { FULL, Load, sleep, summarise } from './harness.js'

const KILLS = FULL ? 10 : 2
const UP_MS = FULL ? 3000 : 1000
const RETRY_LIMIT = 20

const fixture = chaosFixture('chaos-kill', RETRY_LIMIT)

it(`loses and reorders nothing across ${KILLS} SIGKILLs of the broker`, { timeout: FULL ? 600_000 : 120_000 }, async () => {
  const { database, broker } = fixture
  const started = performance.now()
  const load = new Load({ base: () => broker.base, databaseUrl: database.url, queue: 'chaos-kill', seed: 11 })
  load.start()
  const recoveries: number[] = []
  const outages: number[] = []
  for (let k = 0; k < KILLS; k++) {
    await sleep(UP_MS)
    const killed = performance.now()
    await broker.kill()
    await sleep(300)
    await broker.restart()
    recoveries.push(performance.now())
    outages.push(Math.round(performance.now() - killed))
  }
  await sleep(UP_MS)
  await load.finish()
  const report = await load.check(RETRY_LIMIT)
  const failing = summarise({
    scenario: 'broker SIGKILL + restart', variant: FULL ? 'full' : 'short', seconds: (performance.now() - started) / 1000, faults: KILLS,
    recoveryMs: recoveries.map((t) => load.recovery(t)), report, load: load.summary(), notes: { killToListeningMs: outages, retriedAcks: load.stats.retriedAckResults },
  })
  expect(failing, report.problems.join('\n')).toEqual({})
  expect(load.stats.unexpected).toEqual([])
  expect(report.acknowledged).toBeGreaterThan(0)
  expect(recoveries.map((t) => load.recovery(t).push).every((ms) => ms >= 0)).toBe(true)
})
