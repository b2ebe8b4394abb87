// Chaos: consumers hand each message forward with one transaction that acks it, pushes its output
// and, as riders, takes an idempotency marker (`putIfAbsent … required: true`) and bumps a counter,
// while the broker is killed with SIGKILL twice. A transaction whose answer a kill cut is retried
// as Queen's SDKs retry; a lost marker (`kv_precondition`: the first attempt had committed) is
// answered by acking the message alone. At the end every input has exactly one marker, the counter
// equals the number of markers (no increment without its marker, no marker without its increment),
// and the output queue holds exactly one message per input.
import { afterAll, beforeAll, expect, it } from 'vitest'
import { freshDatabase, type TestDatabase } from '../helpers/database.js'
import { FULL, callUntilBack, sleep, startBroker, type Broker } from './harness.js'

const MESSAGES = FULL ? 2000 : 300
const CONSUMERS = 3
const KILLS = 2

let database: TestDatabase
let broker: Broker
beforeAll(async () => {
  database = await freshDatabase()
  // A 3 s lease: a batch held by a killed request is redelivered within the test.
  await database.sql(`insert into queen.queues (tenant_id, name, lease_time) values ('', 'rider-in', 3)`)
  broker = await startBroker(database.url)
})
afterAll(async () => {
  await broker?.stop()
  await database?.drop()
})

it(`commits each message's marker, counter, output and ack together across ${KILLS} SIGKILLs`, { timeout: 300_000 }, async () => {
  const send = callUntilBack(() => broker.base, 15_000)
  for (let i = 0; i < MESSAGES; i += 100) {
    const items = Array.from({ length: Math.min(100, MESSAGES - i) }, (_, j) => ({ queue: 'rider-in', partition: `p${(i + j) % 4}`, transactionId: `in-${i + j}`, payload: { n: i + j } }))
    expect((await send('POST', '/api/v1/push', { items })).status).toBe(201)
  }
  let stop = false
  const stats = { committed: 0, preconditions: 0 }
  const consume = async () => {
    while (!stop) {
      const res = await send('GET', '/api/v1/pop/queue/rider-in?batch=10&wait=true&timeout=1000')
      if (res.status !== 200) continue
      for (const m of res.body.messages as { transactionId: string; partitionId: string; leaseId: string }[]) {
        const ack = { type: 'ack', transactionId: m.transactionId, partitionId: m.partitionId, status: 'completed' }
        const answer = await send('POST', '/api/v1/transaction', {
          operations: [ack, { type: 'push', items: [{ queue: 'rider-out', transactionId: `out-${m.transactionId}`, payload: { from: m.transactionId } }] }],
          requiredLeases: [m.leaseId],
          kv: [
            { op: 'putIfAbsent', ns: 'done', key: m.transactionId, value: true, ttlSeconds: 3600, required: true },
            { op: 'incr', ns: 'count', key: 'total', delta: 1, forever: true },
          ],
        })
        if (answer.body?.success === true) stats.committed++
        else if (answer.body?.reason === 'kv_precondition') {
          // Already handed forward by an attempt whose answer was lost: take it off the cursor.
          stats.preconditions++
          await send('POST', '/api/v1/ack', { transactionId: m.transactionId, partitionId: m.partitionId, leaseId: m.leaseId, status: 'completed' })
        }
        // Anything else (an expired lease after a kill) leaves the message to be redelivered.
      }
    }
  }
  const consumers = Array.from({ length: CONSUMERS }, () => consume())
  for (let k = 0; k < KILLS; k++) {
    await sleep(1500)
    await broker.kill()
    await sleep(300)
    await broker.restart()
  }
  const markers = async () => (await database.sql<{ n: number }>(`select count(*)::int as n from queen.kv_entries where ns = 'done'`))[0]!.n
  const deadline = Date.now() + 120_000
  while ((await markers()) < MESSAGES && Date.now() < deadline) await sleep(250)
  stop = true
  await Promise.all(consumers)

  const [total] = await database.sql<{ value: number }>(`select (value #>> '{}')::int as value from queen.kv_entries where ns = 'count' and key = 'total'`)
  const outputs: string[] = []
  for (;;) {
    const res = await send('GET', '/api/v1/pop/queue/rider-out?batch=500&autoAck=true')
    if (res.status !== 200) break
    outputs.push(...(res.body.messages as { transactionId: string }[]).map((m) => m.transactionId))
  }
  console.log(`rider-kill: ${MESSAGES} messages, ${stats.committed} transactions committed, ${stats.preconditions} lost markers answered by a plain ack`)
  expect(await markers()).toBe(MESSAGES)
  expect(total!.value).toBe(MESSAGES)
  expect(outputs).toHaveLength(MESSAGES)
  expect(new Set(outputs).size).toBe(MESSAGES)
})
