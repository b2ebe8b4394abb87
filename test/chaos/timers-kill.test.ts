// Chaos: 1 000 timers due over 5 s across 10 queues, a consumer long-polling each queue, and the
// broker (`node --import tsx src/node.ts`) killed with SIGKILL twice while they come due. Every
// timer must be delivered exactly once (one stored message per txn, whatever the redeliveries of
// a lease cut by a kill) and none early (the message's createdAt, by the database's clock, never
// before its timer's deliverAt). The fire's lateness (createdAt − deliverAt) is printed as p50/p99;
// BENCHMARKS.md records a run.
import { expect, it } from 'vitest'
import { freshDatabase, type TestDatabase } from '../helpers/database.js'
import { callUntilBack, sleep, startBroker, type Broker } from './harness.js'
import { afterAll, beforeAll } from 'vitest'

const QUEUES = 10
const TIMERS = 1000
const SPREAD_MS = 5000
const LEAD_MS = 1000

let database: TestDatabase
let broker: Broker
beforeAll(async () => {
  database = await freshDatabase()
  // A 3 s lease: a batch whose pop answer a kill cut is redelivered within the test.
  for (let q = 0; q < QUEUES; q++) await database.sql(`insert into queen.queues (tenant_id, name, lease_time) values ('', $1, 3)`, [`chaos-timer-${q}`])
  broker = await startBroker(database.url)
})
afterAll(async () => {
  await broker?.stop()
  await database?.drop()
})

const quantile = (sorted: number[], q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!

it(`fires ${TIMERS} timers exactly once and never early across two SIGKILLs of the broker`, { timeout: 180_000 }, async () => {
  const send = callUntilBack(() => broker.base, 15_000)
  const queue = (q: number) => `chaos-timer-${q}`
  const deliverAt = new Map<string, number>()
  // txn -> the distinct stored messages (partition:offset) that carried it, and when each was stored.
  const seen = new Map<string, Map<string, number>>()
  let stop = false

  const consume = async (q: number) => {
    while (!stop) {
      const res = await send('GET', `/api/v1/pop/queue/${queue(q)}?batch=100&wait=true&timeout=2000`)
      if (res.status !== 200) continue
      const messages = res.body.messages as { transactionId: string; partitionId: string; offset: number; createdAt: string; leaseId: string }[]
      for (const m of messages) {
        const copies = seen.get(m.transactionId) ?? new Map<string, number>()
        copies.set(`${m.partitionId}:${m.offset}`, Date.parse(m.createdAt))
        seen.set(m.transactionId, copies)
      }
      await send('POST', '/api/v1/ack/batch', {
        acknowledgments: messages.map((m) => ({ transactionId: m.transactionId, partitionId: m.partitionId, leaseId: m.leaseId, status: 'completed' })),
      })
    }
  }
  const consumers = Array.from({ length: QUEUES }, (_, q) => consume(q))

  for (let q = 0; q < QUEUES; q++) {
    const per = TIMERS / QUEUES
    const operations = Array.from({ length: per }, (_, i) => ({
      op: 'schedule',
      queue: queue(q),
      timerKey: `t${i}`,
      delayMs: LEAD_MS + Math.floor(((q * per + i) / TIMERS) * SPREAD_MS),
      txn: `q${q}-t${i}`,
      payload: Buffer.from(JSON.stringify({ q, i })).toString('base64'),
    }))
    const res = await send('POST', '/api/v1/timers', { operations })
    expect(res.status).toBe(200)
    for (const r of res.body.results as { txn: string; deliverAt: string }[]) deliverAt.set(r.txn, Date.parse(r.deliverAt))
  }

  // Two kills while timers come due; `outages` are the wall-clock spans the broker was gone
  // (kill to listening again), which is when a timer cannot fire.
  const outages: [number, number][] = []
  for (const pause of [LEAD_MS + 1500, 1000]) {
    await sleep(pause)
    const killed = Date.now()
    await broker.kill()
    await sleep(300)
    await broker.restart()
    outages.push([killed, Date.now()])
  }

  const deadline = Date.now() + 60_000
  while (seen.size < TIMERS && Date.now() < deadline) await sleep(200)
  stop = true
  await Promise.all(consumers)

  const twice = [...seen].filter(([, copies]) => copies.size > 1).map(([txn]) => txn)
  const early = [...seen].filter(([txn, copies]) => [...copies.values()].some((createdAt) => createdAt < deliverAt.get(txn)!)).map(([txn]) => txn)
  const missing = [...deliverAt.keys()].filter((txn) => !seen.has(txn))
  const late = (txns: string[]) => txns.map((txn) => [...seen.get(txn)!.values()][0]! - deliverAt.get(txn)!).sort((a, b) => a - b)
  const report = (label: string, ms: number[]) => `${label}: ${ms.length} timers, p50 ${quantile(ms, 0.5)} ms, p99 ${quantile(ms, 0.99)} ms, max ${ms.at(-1)} ms`
  // Undisturbed: due more than a second before the first kill (a timer due just before it may still
  // be waiting for its lane run when the broker dies). Across the outages: due from then on.
  const firstKill = outages[0]![0] - 1000
  const delivered = [...seen.keys()]
  console.log(
    `timers-kill: ${seen.size}/${TIMERS} delivered; outages ${outages.map(([a, b]) => b - a).join(', ')} ms; fire lateness (createdAt - deliverAt) — ` +
      `${report('undisturbed', late(delivered.filter((t) => deliverAt.get(t)! < firstKill)))}; ${report('from the first kill', late(delivered.filter((t) => deliverAt.get(t)! >= firstKill)))}`,
  )
  expect({ missing: missing.slice(0, 5), twice: twice.slice(0, 5), early: early.slice(0, 5) }).toEqual({ missing: [], twice: [], early: [] })
  const [left] = await database.sql<{ n: number }>(`select count(*)::int as n from queen.timers`)
  expect(left!.n).toBe(0)
})
