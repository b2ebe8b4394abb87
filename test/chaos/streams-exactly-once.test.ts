// Streams exactly once at any call latency (issue #34): seeded runs of test/helpers/stream-scenario.ts
// (tumbling and sliding windows on processing time, sessions on event and on processing time, keyed
// aggregates over four partitions, one runner or two competing ones, some cycles held past a
// one-second lease) against the real Node broker as a child
// process, with every call taking 0, 20 or 50 ms plus up to half that again of jitter, while the
// broker is SIGKILLed and restarted. Each run's sink and state must equal the offline fold of its
// source. Short here (4 runs per latency, one kill); QUEEN_CHAOS=full runs 52 per latency.
import { afterAll, beforeAll, expect, it } from 'vitest'
import { freshDatabase, type TestDatabase } from '../helpers/database.js'
import type { Send } from '../helpers/stream-protocol.js'
import { runScenario, variantOf, type ScenarioResult } from '../helpers/stream-scenario.js'
import { callUntilBack, FULL, sleep, startBroker, type Broker } from './harness.js'

const RUNS = Number(process.env.QUEEN_STREAMS_RUNS ?? (FULL ? 52 : 4))
const PARALLEL = FULL ? 6 : 4
/** Full: a kill every 6 to 10 s of each latency's runs; short: one, in the 20 ms runs. */
const killEvery = (latency: number) => (FULL ? 6000 : latency === 20 ? 2500 : 0)

let database: TestDatabase
let broker: Broker
beforeAll(async () => {
  database = await freshDatabase()
  broker = await startBroker(database.url)
})
afterAll(async () => {
  await broker?.stop()
  await database?.drop()
})

const send: Send = callUntilBack(() => broker.base, 15_000)

async function inPool<T>(jobs: (() => Promise<T>)[], width: number): Promise<T[]> {
  const out: T[] = []
  let next = 0
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < jobs.length) {
        const i = next++
        out[i] = await jobs[i]!()
      }
    }),
  )
  return out
}

for (const [step, latency] of [0, 20, 50].entries()) {
  it(`every event counts once in state and sink: ${RUNS} seeded runs at ${latency} ms per call with jitter, lease expiries and broker kills`, { timeout: FULL ? 1_800_000 : 240_000 }, async () => {
    let done = false
    let kills = 0
    const killer = (async () => {
      const every = killEvery(latency)
      if (every === 0) return
      while (!done) {
        await sleep(every + Math.random() * (FULL ? 4000 : 0))
        if (done) break
        await broker.kill()
        kills++
        await sleep(200)
        await broker.restart()
        if (!FULL) break
      }
    })()
    const jobs = Array.from({ length: RUNS }, (_, i) => () => {
      const seed = latency * 1000 + i + 1
      const { label, ...variant } = variantOf(i, step)
      return runScenario({ send, name: `eo${latency}.${i}`, seed, ...variant, latencyMs: latency, jitterMs: latency / 2 }).then(
        (r): ScenarioResult & { label: string } => ({ ...r, label: `seed ${seed} ${label}` }),
      )
    })
    const results = await inPool(jobs, PARALLEL).finally(() => (done = true))
    await killer
    const failed = results.filter((r) => r.failures.length > 0).map((r) => `${r.label}: ${r.failures.slice(0, 4).join('; ')}`)
    expect(failed).toEqual([])
    if (killEvery(latency) > 0) expect(kills, 'the runs ended before any kill').toBeGreaterThan(0)
    // The mix happened: cycles ran, idle flushes applied and were deferred, cycles were refused.
    const total = (k: keyof ScenarioResult['stats']) => results.reduce((a, r) => a + r.stats[k], 0)
    expect(total('cycles')).toBeGreaterThan(RUNS)
    expect(total('flushes')).toBeGreaterThan(total('deferred'))
    expect(total('deferred')).toBeGreaterThan(0)
    expect(total('errors')).toBeGreaterThan(0)
    console.log(`streams exactly-once at ${latency} ms: ${JSON.stringify({ runs: RUNS, kills, cycles: total('cycles'), flushes: total('flushes'), deferred: total('deferred'), refused: total('errors'), events: total('events') })}`)
  })
}
