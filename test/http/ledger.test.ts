// The ledger test (issue #4): producers push while concurrent consumers pop random batches and
// ack, some acks failing and some consumers "crashing" (never acking, so their leases expire).
// Afterwards every pushed message was completed or dead-lettered, each round was contiguous and
// in offset order, no frame was first delivered before every lower offset had been, no two live
// leases overlapped on one partition, and every repeated delivery is explained by an expiry or a
// failed ack. Some messages are poison (every ack fails) and must end in the DLQ. The issue's
// 20 000 messages run direct; through PgBouncer (the pooler project) 5 000 keep `npm test` quick.
// LEDGER_MESSAGES overrides both. The records and the checks are the shared ledger oracle
// (test/chaos/ledger.ts), which the chaos scenarios use too.
import { afterAll, beforeAll, expect, it } from 'vitest'
import { testApp, type TestApp } from '../helpers/app.js'
import { throughPooler } from '../helpers/database.js'
import { configureQueue, type Popped } from '../helpers/engine.js'
import { failures, Ledger, rng } from '../chaos/ledger.js'

const MESSAGES = Number(process.env.LEDGER_MESSAGES ?? (throughPooler() ? 5000 : 20_000))
const PRODUCERS = 5
const CONSUMERS = 10
const PARTITIONS = 8
const QUEUE = 'ledger'

let app: TestApp
beforeAll(async () => {
  app = await testApp()
  await configureQueue(app, QUEUE, { lease_time: 2, retry_limit: 3 })
})
afterAll(() => app.close())

it(`settles all of ${MESSAGES} messages in per-partition order with only explained duplicates`, { timeout: 120_000 }, async () => {
  const ledger = new Ledger()
  const completed = new Set<string>()
  const poison = new Set<string>()
  const isPoison = (p: { w: number; k: number; i: number }) => (p.w * 131 + p.k * 7 + p.i) % 211 === 0
  let producing = true

  const producer = async (w: number) => {
    const rand = rng(1000 + w)
    let k = 0
    for (let sent = 0; sent < MESSAGES / PRODUCERS; ) {
      const n = Math.min(1 + Math.floor(rand() * 150), MESSAGES / PRODUCERS - sent)
      const items = Array.from({ length: n }, (_, i) => ({
        queue: QUEUE,
        partition: `p${Math.floor(rand() * PARTITIONS)}`,
        transactionId: `w${w}-${k}-${i}`,
        payload: { w, k, i },
      }))
      const res = await app.json('POST', '/api/v1/push', { items })
      expect(res.status).toBe(201)
      res.body.forEach((r: { status: string; offset: number }, i: number) => {
        expect(r.status).toBe('queued')
        ledger.pushed({ producer: `w${w}`, seq: k * 1000 + i, partition: items[i]!.partition, transactionId: items[i]!.transactionId }, r)
        if (isPoison(items[i]!.payload)) poison.add(`${items[i]!.partition}:${r.offset}`)
      })
      sent += n
      k++
    }
  }

  const settled = async () => {
    const [row] = await app.database.sql<{ done: boolean }>(`
      select count(*) = ${PARTITIONS} and bool_and(c.committed_offset = p.last_offset + 1 and cardinality(c.acked_set) = 0) as done
        from queen.log_partitions p join queen.queues q on q.id = p.queue_id
        join queen.log_consumers c on c.partition_id = p.id and c.consumer_group = '__QUEUE_MODE__'
       where q.name = '${QUEUE}'`)
    return row!.done
  }

  const consumer = async (n: number) => {
    const rand = rng(77 + n)
    for (;;) {
      const batch = 1 + Math.floor(rand() * 50)
      const res = await app.json('GET', `/api/v1/pop/queue/${QUEUE}?batch=${batch}&wait=true&timeout=300`)
      const popAt = performance.now()
      if (res.status === 204) {
        if (!producing && (await settled())) return
        continue
      }
      expect(res.status).toBe(200)
      const messages = res.body.messages as Popped[]
      expect(messages.length).toBeGreaterThan(0)
      expect(messages.length).toBeLessThanOrEqual(batch)
      const round = ledger.popped(messages[0]!.partition, '__QUEUE_MODE__', messages[0]!.leaseId, messages.map((m) => ({ transactionId: m.transactionId, offset: m.offset, retryCount: m.retryCount })), popAt)
      if (rand() < 0.01) {
        round.crashed = true  // never acks: the lease must expire and the pop that reclaims it count one attempt
        continue
      }
      const statuses = messages.map((m) => (isPoison(m.data as { w: number; k: number; i: number }) || rand() < 0.03 ? 'failed' : 'completed'))
      const failed = messages.filter((_, i) => statuses[i] === 'failed').map((m) => m.offset)
      round.failedAt = failed.length > 0 ? Math.min(...failed) : null
      round.failedOffsets = failed
      round.ackAt = performance.now()
      const acked = await app.json('POST', '/api/v1/ack/batch', {
        acknowledgments: messages.map((m, i) => ({ transactionId: m.transactionId, partitionId: m.partitionId, leaseId: m.leaseId, offset: m.offset, status: statuses[i], error: 'ledger failure' })),
      })
      expect(acked.status).toBe(200)
      acked.body.forEach((r: { success: boolean; code: string | null }, i: number) => {
        if (!r.success) {
          // The only refusal an honest consumer can meet is a lease that expired under it.
          expect(r.code).toBe('lease_invalid')
          round.leaseLost = true
        } else if (statuses[i] === 'completed') {
          completed.add(`${messages[i]!.partition}:${messages[i]!.offset}`)
          round.completed.push(messages[i]!.offset)
        }
      })
    }
  }

  // ENGINE 13.7 under load: a watcher samples every cursor while the consumers run; none may regress.
  const highest = new Map<string, number>()
  let regressions = 0
  let watching = true
  const watcher = (async () => {
    while (watching) {
      const rows = await app.database.sql<{ p: string; c: number }>(`
        select c.partition_id::text as p, c.committed_offset::int as c from queen.log_consumers c`)
      for (const r of rows) {
        if (r.c < (highest.get(r.p) ?? -1)) regressions++
        highest.set(r.p, Math.max(r.c, highest.get(r.p) ?? -1))
      }
      await new Promise((r) => setTimeout(r, 25))
    }
  })()

  const consumers = Array.from({ length: CONSUMERS }, (_, n) => consumer(n))
  await Promise.all(Array.from({ length: PRODUCERS }, (_, w) => producer(w)))
  producing = false
  await Promise.all(consumers)
  watching = false
  await watcher
  expect(regressions).toBe(0)
  expect(highest.size).toBe(PARTITIONS)

  expect(ledger.acked.size).toBe(MESSAGES)
  const dlq = await app.database.sql<{ partition: string; offset: number }>(`
    select p.name as partition, d.frame_offset::int as offset from queen.log_dlq d join queen.log_partitions p on p.id = d.partition_id`)
  const dead = new Set(dlq.map((d) => `${d.partition}:${d.offset}`))
  expect(dead.size).toBe(dlq.length)
  // Every pushed message was completed or dead-lettered.
  for (const key of ledger.acked.keys()) expect(completed.has(key) || dead.has(key), key).toBe(true)
  // Poison frames exhausted their budget (failed acks plus counted expiries) and were dead-lettered.
  expect(poison.size).toBeGreaterThan(0)
  for (const key of poison) expect(dead.has(key), key).toBe(true)
  // The oracle: nothing lost, in order, every duplicate and dead letter explained, no overlapping leases.
  const report = ledger.check({ dlq, retryLimit: 3 })
  expect(failures(report), report.problems.join('\n')).toEqual({})
  const [state] = await app.database.sql<{ leases: number }>(`select count(*)::int as leases from queen.log_consumers where lease_id is not null`)
  expect(state!.leases).toBe(0)
  console.log(`[ledger] ${MESSAGES} messages, ${report.rounds} rounds, ${ledger.rounds.filter((r) => r.crashed).length} crashes, ${ledger.rounds.filter((r) => r.failedAt !== null).length} rounds with failures, ${report.redeliveries} redeliveries, ${dead.size} dead-lettered`)
})
