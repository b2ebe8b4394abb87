// Ephemeral pushes to different partitions of one queue run side by side (docs/ephemeral.md,
// "Numbers and locks"): a push holds only its partition's row from numbering to commit, so a push to
// another partition goes ahead while one is held, a push to the held partition waits for it, the
// queue's bounds hold exactly, and with many producers and consumers at once every partition stays
// FIFO and every group gets every message once. No fusion here: every push is its own call on its own connection.
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createDatabase, type Database } from '../src/db/database.js'
import { createNodePool } from '../src/db/node-pool.js'
import { freshDatabase, type TestDatabase } from './helpers/database.js'

let database: TestDatabase
let db: Database

beforeAll(async () => {
  database = await freshDatabase()
  db = createDatabase(createNodePool({ connectionString: database.url, max: 12 }), { longLived: true })
})
afterAll(async () => {
  await db.close()
  await database.drop()
})

const tenant = ''
const push = (queue: string, partition: string, payloads: unknown[]) => db.call('ephemeral_push_v1', { tenant, queue, partition, payloads })
const pop = (queue: string, group: string, batch: number, autoAck: boolean) =>
  db.call('ephemeral_pop_v1', { tenant, queue, partition: null, group, batch, autoAck })
/** The number an id carries (after its last ':', before any '.attempts'). */
const numberOf = (id: string) => BigInt(id.slice(id.lastIndexOf(':') + 1).split('.')[0]!)

async function connect() {
  const client = new pg.Client({ connectionString: database.url })
  await client.connect()
  return client
}

/** Resolves once the backend `pid` waits for a lock; fails after ~10 s. */
async function waitsOnLock(observer: pg.Client, pid: number) {
  for (let i = 0; i < 400; i++) {
    const { rows } = await observer.query(`select wait_event_type from pg_stat_activity where pid = $1`, [pid])
    if (rows[0]?.wait_event_type === 'Lock') return
    await new Promise((r) => setTimeout(r, 25))
  }
  throw new Error(`backend ${pid} never waited on a lock`)
}

describe('ephemeral pushes to different partitions', () => {
  it("pushes to other partitions while one partition's row is held, and holds a push to that partition until it is free", async () => {
    await push('side', 'a', [0])
    const holder = await connect()
    const blocked = await connect()
    try {
      await holder.query('begin')
      // What a push to partition a holds while it numbers and writes its messages.
      await holder.query(`select 1 from queen.ephemeral_partitions where tenant_id = '' and queue = 'side' and partition = 'a' for update`)
      expect(await push('side', 'b', [1])).toEqual({ pushed: 1 })
      expect(await push('side', 'c', [2])).toEqual({ pushed: 1 })
      const pid = (await blocked.query('select pg_backend_pid() as pid')).rows[0].pid as number
      const waiting = blocked.query(`select queen.ephemeral_push_v1('', 'side', 'a', '[3]'::jsonb) as r`)
      await waitsOnLock(holder, pid)
      await holder.query('commit')
      expect((await waiting).rows[0].r).toEqual({ pushed: 1 })
    } finally {
      await holder.end()
      await blocked.end()
    }
    const messages = (await pop('side', 'inspect', 100, true)).messages
    const of = (partition: string) => messages.filter((m) => m.partition === partition).map((m) => m.payload)
    expect([of('a'), of('b'), of('c')]).toEqual([[0, 3], [1], [2]])
    // Across partitions a queue-wide pop reads in number order, which follows push order.
    expect(messages.map((m) => m.payload)).toEqual([0, 1, 2, 3])
  })

  it('keeps maxLength exact while pushes to different partitions run at once', async () => {
    // Each push checks the queue's counters as it books them, so those beside it cannot overrun the bound together.
    await db.call('ephemeral_configure_v1', { tenant, queue: 'side-bound', options: { maxLength: 50 } })
    const settled = await Promise.allSettled(Array.from({ length: 10 }, (_, p) => push('side-bound', `p${p}`, Array.from({ length: 10 }, (_, k) => k))))
    expect(settled.filter((s) => s.status === 'fulfilled').length).toBe(5)
    for (const s of settled) if (s.status === 'rejected') expect(s.reason).toMatchObject({ sqlstate: 'QMEFL' })
    const gauges = (await db.call('ephemeral_queues_v1', { tenant })).queues.find((q) => q.queue === 'side-bound')!
    expect(gauges.depth).toBe(50)
    expect((await pop('side-bound', 'inspect', 100, true)).messages.length).toBe(50)
  })

  it('keeps FIFO per partition and delivers every message once per group while producers push to several partitions at once', { timeout: 60_000 }, async () => {
    const queue = 'side-parallel'
    const PRODUCERS = 6
    const PUSHES = 20
    const PER_PUSH = 5
    const TOTAL = PRODUCERS * PUSHES * PER_PUSH
    await db.call('ephemeral_configure_v1', { tenant, queue, options: { maxLength: 100_000 } })
    // Three groups of two competing consumers, and one group of a single consumer whose delivery order is checked.
    const groups = ['g1', 'g2', 'g3', 'solo']
    const received = new Map<string, { partition: string; key: string; n: bigint }[]>(groups.map((g) => [g, []]))
    const outcomes: string[] = []
    // Every group exists before the first push (a group's first pop sees only what is not yet trimmed).
    for (const g of groups) expect((await pop(queue, g, 1, false)).messages).toEqual([])

    const producer = async (p: number) => {
      for (let i = 0; i < PUSHES; i++) {
        const payloads = Array.from({ length: PER_PUSH }, (_, k) => ({ p, i, k }))
        expect(await push(queue, `p${p % 3}`, payloads)).toEqual({ pushed: PER_PUSH })
      }
    }
    const consumer = async (group: string) => {
      const mine = received.get(group)!
      for (let idle = 0; mine.length < TOTAL && idle < 2000; ) {
        const messages = (await pop(queue, group, 7, false)).messages
        if (messages.length === 0) {
          idle++
          await new Promise((r) => setTimeout(r, 5))
          continue
        }
        for (const m of messages) {
          const { p, i, k } = m.payload as { p: number; i: number; k: number }
          mine.push({ partition: m.partition, key: `${p}.${i}.${k}`, n: numberOf(m.id) })
        }
        const acked = await db.call('ephemeral_ack_v1', { tenant, queue, group, acks: messages.map((m) => ({ id: m.id })) })
        outcomes.push(...acked.results.map((r) => r.outcome))
      }
    }

    await Promise.all([
      ...Array.from({ length: PRODUCERS }, (_, p) => producer(p)),
      ...groups.flatMap((g) => Array.from({ length: g === 'solo' ? 1 : 2 }, () => consumer(g))),
    ])

    const expected = Array.from({ length: PRODUCERS }, (_, p) =>
      Array.from({ length: PUSHES }, (_, i) => Array.from({ length: PER_PUSH }, (_, k) => `${p}.${i}.${k}`)),
    )
      .flat(2)
      .sort()
    for (const g of groups) expect(received.get(g)!.map((r) => r.key).sort(), g).toEqual(expected)
    expect(new Set(outcomes)).toEqual(new Set(['acked']))
    // FIFO per partition: in number order, each producer's messages come in the order it pushed them.
    const pushOrder = (key: string) => key.split('.').slice(1).map(Number)
    for (const g of groups) {
      const byNumber = [...received.get(g)!].sort((x, y) => (x.n < y.n ? -1 : x.n > y.n ? 1 : 0))
      for (let p = 0; p < PRODUCERS; p++) {
        const own = byNumber.filter((r) => r.key.startsWith(`${p}.`)).map((r) => pushOrder(r.key))
        expect(own, `${g}, producer ${p}`).toEqual([...own].sort((x, y) => x[0]! - y[0]! || x[1]! - y[1]!))
        expect(new Set(byNumber.filter((r) => r.key.startsWith(`${p}.`)).map((r) => r.partition))).toEqual(new Set([`p${p % 3}`]))
      }
    }
    // The single consumer got each partition's messages in number order.
    const solo = received.get('solo')!
    for (const partition of ['p0', 'p1', 'p2']) {
      const numbers = solo.filter((r) => r.partition === partition).map((r) => r.n)
      expect(numbers).toEqual([...numbers].sort((x, y) => (x < y ? -1 : x > y ? 1 : 0)))
    }
  })
})
