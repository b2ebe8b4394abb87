// Chaos for streams (issue #21): the tumbling window runner of test/helpers/stream-runner.ts over
// 20 000 events in 8 partitions while the broker is SIGKILLed and restarted 3 times. Requests cut by
// a kill are retried as the SDK's HTTP client retries (network errors and 5xx), so a cycle whose
// answer was lost is replayed; a lost pop's lease expires and redelivers. Every window must be
// emitted exactly once with the count computed offline, and the state must end as the offline fold
// leaves it (each shard's watermark only).
import { afterAll, beforeAll, expect, it } from 'vitest'
import { freshDatabase, type TestDatabase } from '../helpers/database.js'
import { offlineWindows, sortWindows, TumblingCounter, type Send, type WindowRow } from '../helpers/stream-runner.js'
import { callUntilBack, FULL, sleep, startBroker, type Broker } from './harness.js'

const EVENTS = FULL ? 100_000 : 20_000
const PARTITIONS = 8
const KILLS = 3
const WINDOW_MS = 1000

let database: TestDatabase
let broker: Broker
beforeAll(async () => {
  database = await freshDatabase()
  // A short lease, so a batch whose pop answer a kill swallowed comes back soon.
  await database.sql(`insert into queen.queues (tenant_id, name, lease_time) values ('', 'sk.src', 2)`)
  broker = await startBroker(database.url)
})
afterAll(async () => {
  await broker?.stop()
  await database?.drop()
})

const send: Send = callUntilBack(() => broker.base, 10_000)

it(`emits every window exactly once across ${KILLS} SIGKILLs of the broker`, { timeout: 300_000 }, async () => {
  const events = Array.from({ length: EVENTS }, (_, i) => ({ key: `k${i % PARTITIONS}`, ts: i * 7, partition: `p${i % PARTITIONS}` }))
  for (let i = 0; i < events.length; i += 1000) {
    const res = await send('POST', '/api/v1/push', { items: events.slice(i, i + 1000).map((e) => ({ queue: 'sk.src', partition: e.partition, payload: { key: e.key, ts: e.ts }, transactionId: `e${e.ts}` })) })
    expect(res.status).toBe(201)
  }
  const failures: string[] = []
  const runner = new TumblingCounter({ send, name: 'sk', source: 'sk.src', sink: 'sk.sink', windowMs: WINDOW_MS, onCycleError: (e) => failures.push(e.message) })
  await runner.start()

  let done = false
  const run = (async () => {
    for (;;) {
      if (await runner.step().catch(() => true)) continue
      const list = await send('GET', '/streams/v1/queries')
      const lag = (list.body?.queries ?? []).find((q: { name: string }) => q.name === 'sk')?.lag
      if (lag === 0) break
      await sleep(300)
    }
    await runner.flush(Number.MAX_SAFE_INTEGER)
    done = true
  })()
  let kills = 0
  for (let k = 0; k < KILLS && !done; k++) {
    await sleep(700)
    kills++
    await broker.kill()
    await sleep(300)
    await broker.restart()
  }
  await run
  expect(kills, 'the run ended before every kill: it proves nothing about kills mid-run').toBe(KILLS)

  // autoAck: without it the first pop's leases hold every partition it touched, and the next pop
  // answers 204 while windows remain (the full variant emits more windows than one batch holds).
  const sink: WindowRow[] = []
  for (;;) {
    const res = await send('GET', '/api/v1/pop/queue/sk.sink?batch=5000&partitions=100&consumerGroup=verify&subscriptionMode=all&wait=false&autoAck=true')
    if (res.status === 204) break
    sink.push(...res.body.messages.map((m: { data: WindowRow }) => m.data))
  }
  const expected = offlineWindows(events, WINDOW_MS)
  expect(sink.length, `cycle failures: ${failures.slice(0, 5).join('; ')}`).toBe(expected.length)
  expect(sortWindows(sink)).toEqual(expected)
  const state = await database.sql<{ key: string; n: number }>(`select key, count(*)::int as n from queen.stream_state group by key`)
  expect(state).toEqual([{ key: '__wm__', n: PARTITIONS }])
})
