// Push and ack fusion (ENGINE 12.1) against a real PostgreSQL: many parallel callers on one pool are
// fused into fewer procedure calls, every caller gets exactly its own results, a poison member fails
// alone while its neighbours are stored, and an error every member would meet alone (push
// maintenance) reaches them all. Acks: one member's refused ack is its own result, never a
// neighbour's, and acks of many items fuse too, while one of the preferred size goes out alone.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createDatabase, type CallGate, type Database } from '../src/db/database.js'
import { DbError } from '../src/db/errors.js'
import { NODE_FUSION } from '../src/db/fusion.js'
import { createNodePool } from '../src/db/node-pool.js'
import { createTenantCallLimiter } from '../src/tenant-share/call-limiter.js'
import { freshDatabase, type TestDatabase } from './helpers/database.js'

let database: TestDatabase
let db: Database
let statements = 0
let ackStatements = 0

beforeAll(async () => {
  database = await freshDatabase()
  const pool = createNodePool({ connectionString: database.url, max: 4 })
  // Counts the procedure calls that really reach PostgreSQL.
  const query = pool.query.bind(pool) as typeof pool.query
  pool.query = ((text: string, values?: unknown[]) => {
    if (text.includes('log_push_v1')) statements++
    if (text.includes('log_ack_v1')) ackStatements++
    return query(text, values)
  }) as typeof pool.query
  db = createDatabase(pool, { longLived: true, fusion: { push: { holdMs: 5, maxItems: 200, maxBytes: 64 * 1024 }, ack: { ...NODE_FUSION.ack, holdMs: 5 } } })
})
afterAll(async () => {
  await db.close()
  await database.drop()
})

const item = (index: number, queue: string, partition: string, data: unknown, transactionId: string | null = null) =>
  ({ index, queue, partition, transactionId, traceId: null, producerSub: null, enc: false, data })

/** A pool of its own that counts the push procedure calls reaching PostgreSQL. */
function countingPushPool() {
  const calls = { n: 0 }
  const pool = createNodePool({ connectionString: database.url, max: 4 })
  const query = pool.query.bind(pool) as typeof pool.query
  pool.query = ((text: string, values?: unknown[]) => {
    if (text.includes('log_push_v1')) calls.n++
    return query(text, values)
  }) as typeof pool.query
  return { pool, calls }
}

/** Resolves once a push waits on a row lock in PostgreSQL: the call in flight that fusion counts. */
async function pushWaitingOnLock() {
  for (;;) {
    const [row] = await database.sql<{ n: number }>(`select count(*)::int as n from pg_stat_activity where wait_event_type = 'Lock' and query like '%log_push_v1%'`)
    if (row!.n > 0) return
    await new Promise((r) => setTimeout(r, 10))
  }
}

describe('push fusion', () => {
  it('sends parallel callers as fewer procedure calls, each caller getting its own indexes back', async () => {
    statements = 0
    const results = await Promise.all(
      Array.from({ length: 30 }, (_, c) => db.call('log_push_v1', { tenant: '', items: [item(0, 'fuse-ok', `p${c % 3}`, { c }), item(1, 'fuse-ok', 'p9', { c })] })),
    )
    expect(statements).toBeLessThan(30)
    for (const r of results) expect(r.items.map((i) => [i.index, i.status])).toEqual([[0, 'queued'], [1, 'queued']])
    // p9 got one frame from every caller: 30 distinct, gap-free offsets.
    expect(results.map((r) => r.items[1]!.offset).sort((a, b) => a - b)).toEqual(Array.from({ length: 30 }, (_, i) => i))
  })

  it('fuses parallel callers, returns each its own results, and lets a poison member fail alone', async () => {
    const callers = 40
    const results = await Promise.allSettled(
      Array.from({ length: callers }, (_, c) =>
        db.call('log_push_v1', {
          tenant: '',
          // Caller 13 carries a NUL character, which jsonb rejects: the whole fused call fails.
          items: Array.from({ length: 3 }, (_, k) => item(k, 'fuse', `p${c % 4}`, c === 13 && k === 1 ? 'bad\u0000' : { c, k }, k === 2 ? `t-${c}` : null)),
        }),
      ),
    )
    const poison = results[13]!
    expect(poison.status).toBe('rejected')
    expect((poison as PromiseRejectedResult).reason).toBeInstanceOf(DbError)
    for (const [c, r] of results.entries()) {
      if (c === 13) continue
      expect(r.status, `caller ${c}`).toBe('fulfilled')
      const value = (r as PromiseFulfilledResult<Awaited<ReturnType<Database['call']>>>).value as { items: { index: number; status: string; transactionId: string; queue: string }[]; queues: { name: string }[] | null }
      expect(value.items.map((i) => [i.index, i.status, i.queue])).toEqual([[0, 'queued', 'fuse'], [1, 'queued', 'fuse'], [2, 'queued', 'fuse']])
      expect(value.items[2]!.transactionId).toBe(`t-${c}`)
      expect(value.queues).toEqual([{ name: 'fuse', encryptionEnabled: false }])
    }
    // Exactly the 39 good callers' frames are stored, each once, with gap-free offsets per partition.
    const rows = await database.sql<{ partition: string; offsets: string[]; frames: number }>(`
      select p.name as partition, array_agg(f.off order by f.off)::text[] as offsets, count(*)::int as frames
        from queen.log_partitions p join queen.queues q on q.id = p.queue_id
        cross join lateral (select s.base_offset + o.i - 1 as off from queen.log_segments s
                              cross join lateral unnest(s.frames) with ordinality o(frame, i)
                             where s.partition_id = p.id) f
       where q.name = 'fuse' group by p.name order by p.name`)
    expect(rows.reduce((n, r) => n + r.frames, 0)).toBe(39 * 3)
    for (const r of rows) expect(r.offsets.map(Number)).toEqual(Array.from({ length: r.frames }, (_, i) => i))
  })

  it('never fuses past maxBytes of item JSON: large pushes go out in calls of their own', async () => {
    statements = 0
    const big = 'x'.repeat(40 * 1024) // two of these exceed the 64 KiB cap of this test's pool
    const results = await Promise.all(Array.from({ length: 4 }, (_, c) => db.call('log_push_v1', { tenant: '', items: [item(0, 'fuse-big', 'Default', { c, big })] })))
    expect(results.map((r) => r.items[0]!.status)).toEqual(['queued', 'queued', 'queued', 'queued'])
    expect(statements).toBe(4)
    statements = 0
    await Promise.all(Array.from({ length: 4 }, (_, c) => db.call('log_push_v1', { tenant: '', items: [item(0, 'fuse-big', 'Default', { c })] })))
    expect(statements).toBeLessThan(4) // the same four calls, small, are fused
  })

  it('under load, holds a batch whose hold is over until a call in flight returns, gathering the calls that arrive meanwhile', async () => {
    // A push held in PostgreSQL (its partition row locked by another session) is the call in flight.
    const { pool, calls } = countingPushPool()
    // A bound far beyond the test's length, so only the return of the held call can send the batch.
    const busy = createDatabase(pool, { longLived: true, fusion: { push: { holdMs: 1, maxItems: 200, maxBytes: 1 << 20, busy: { inFlight: 1, maxHoldMs: 60_000 } } } })
    const blocker = createNodePool({ connectionString: database.url, max: 1 })
    const locker = await blocker.connect()
    try {
      await db.call('log_push_v1', { tenant: '', items: [item(0, 'fuse-busy', 'held', { warm: true })] })
      await locker.query('begin')
      await locker.query(`select 1 from queen.log_partitions p join queen.queues q on q.id = p.queue_id
                           where q.name = 'fuse-busy' and p.name = 'held' for update of p`)
      const held = busy.call('log_push_v1', { tenant: '', items: [item(0, 'fuse-busy', 'held', { n: 'held' })] })
      await pushWaitingOnLock()
      // Each arrives after the one before it has ended its 1 ms hold: only the busy wait fuses them.
      const later: Promise<Awaited<ReturnType<typeof db.call<'log_push_v1'>>>>[] = []
      for (let c = 0; c < 5; c++) {
        later.push(busy.call('log_push_v1', { tenant: '', items: [item(0, 'fuse-busy', `p${c}`, { c })] }))
        await new Promise((r) => setTimeout(r, 20))
      }
      expect(calls.n).toBe(1)
      await locker.query('commit')
      const [first, ...rest] = await Promise.all([held, ...later])
      expect(first!.items.map((i) => [i.status, i.offset])).toEqual([['queued', 1]])
      expect(rest.map((r) => r.items.map((i) => [i.index, i.status, i.offset]))).toEqual(Array.from({ length: 5 }, () => [[0, 'queued', 0]]))
      expect(calls.n).toBe(2)
    } finally {
      locker.release()
      await blocker.end()
      await busy.close()
    }
  })

  it("under load, never holds a tenant's batch for the calls in flight of a tenant held to its heavy share", async () => {
    // As above, a push held in PostgreSQL is the one call in flight; here it is a heavy tenant's.
    const { pool, calls } = countingPushPool()
    const busy = createDatabase(pool, { longLived: true, fusion: { push: { holdMs: 1, maxItems: 200, maxBytes: 1 << 20, busy: { inFlight: 1, maxHoldMs: 60_000 } } } })
    const gate = (heavy: boolean): CallGate => Object.assign(<T>(call: () => Promise<T>) => call(), { heavy: () => heavy })
    const blocker = createNodePool({ connectionString: database.url, max: 1 })
    const locker = await blocker.connect()
    try {
      await db.call('log_push_v1', { tenant: 'flood', items: [item(0, 'fuse-heavy', 'held', { warm: true })] })
      await locker.query('begin')
      await locker.query(`select 1 from queen.log_partitions p join queen.queues q on q.id = p.queue_id
                           where q.tenant_id = 'flood' and q.name = 'fuse-heavy' and p.name = 'held' for update of p`)
      const held = busy.call('log_push_v1', { tenant: 'flood', items: [item(0, 'fuse-heavy', 'held', { n: 'held' })] }, gate(true))
      await pushWaitingOnLock()
      // The steady tenant's push goes out after its 1 ms hold, not when the flood's call returns.
      const steady = await busy.call('log_push_v1', { tenant: 'steady', items: [item(0, 'fuse-heavy', 'p', { n: 1 })] }, gate(false))
      expect(steady.items.map((i) => i.status)).toEqual(['queued'])
      expect(calls.n).toBe(2)
      // Another push of the heavy tenant still waits for the call in flight.
      const more = busy.call('log_push_v1', { tenant: 'flood', items: [item(0, 'fuse-heavy', 'q', { n: 2 })] }, gate(true))
      await new Promise((r) => setTimeout(r, 50))
      expect(calls.n).toBe(2)
      await locker.query('commit')
      expect((await held).items.map((i) => i.status)).toEqual(['queued'])
      expect((await more).items.map((i) => i.status)).toEqual(['queued'])
      expect(calls.n).toBe(3)
    } finally {
      locker.release()
      await blocker.end()
      await busy.close()
    }
  })

  it("runs the fused calls, not the requests, within a tenant's share of calls in flight", async () => {
    // A share of one call at a time: before, it let one push through and queued the rest one by one,
    // where nothing could join them; beneath fusion it holds the fused calls to one at a time.
    const share = createTenantCallLimiter({ concurrency: 1, queue: 1000 })
    let inFlight = 0
    let most = 0
    const gate: CallGate = (call) =>
      share.run('t', async () => {
        most = Math.max(most, ++inFlight)
        try {
          return await call()
        } finally {
          inFlight--
        }
      })
    statements = 0
    const results = await Promise.all(
      Array.from({ length: 40 }, (_, c) => db.call('log_push_v1', { tenant: '', items: [item(0, 'fuse-share', `p${c % 4}`, { c })] }, gate)),
    )
    expect(most).toBe(1)
    expect(statements).toBeLessThan(10)
    for (const r of results) expect(r.items.map((i) => [i.index, i.status])).toEqual([[0, 'queued']])
    expect(share.load('t')).toEqual({ inFlight: 0, waiting: 0 })
  })

  it('fails every member when the error is one each would meet alone (push maintenance)', async () => {
    await database.sql(`insert into queen.system_state (key, value) values ('maintenance', 'true'::jsonb)
                        on conflict (key) do update set value = excluded.value`)
    try {
      const results = await Promise.allSettled(
        Array.from({ length: 6 }, (_, c) => db.call('log_push_v1', { tenant: '', items: [item(0, 'fuse-mnt', 'Default', { c })] })),
      )
      for (const r of results) {
        expect(r.status).toBe('rejected')
        expect(((r as PromiseRejectedResult).reason as DbError).sqlstate).toBe('QMMNT')
      }
    } finally {
      await database.sql(`update queen.system_state set value = 'false'::jsonb where key = 'maintenance'`)
    }
  })
})

describe('ack fusion', () => {
  /** One message in each of `n` partitions of `queue`, popped one partition per call: n leases. */
  async function leased(queue: string, n: number, perPartition = 1) {
    await db.call('log_push_v1', {
      tenant: '',
      items: Array.from({ length: n * perPartition }, (_, i) => item(i, queue, `p${i % n}`, { i })),
    })
    const pops = []
    for (let k = 0; k < n; k++) {
      const popped = await db.call('log_pop_v1', {
        tenant: '',
        request: { queue, partition: `p${k}`, group: '__QUEUE_MODE__', batch: perPartition, partitions: 1, autoAck: false, subscriptionMode: 'all', maxBytes: 1 << 20 },
      })
      expect(popped.messages).toHaveLength(perPartition)
      pops.push(popped.messages)
    }
    return pops
  }
  const ackOf = (m: { partitionId: string; transactionId: string; leaseId: string }, index: number, extra: Record<string, unknown> = {}) =>
    ({ index, partitionId: m.partitionId, transactionId: m.transactionId, offset: null, consumerGroup: null, leaseId: m.leaseId, status: 'completed', error: null, ...extra })

  it('settles parallel one-item acks of many leases in fewer calls, each caller getting its own result', async () => {
    const pops = await leased('fuse-ack', 24)
    ackStatements = 0
    // Each caller acks its message with index 3, to prove its own index comes back.
    const results = await Promise.all(pops.map(([m]) => db.call('log_ack_v1', { tenant: '', acks: [ackOf(m!, 3)] })))
    expect(ackStatements).toBeLessThan(24)
    results.forEach((r, k) => {
      expect(r).toEqual([expect.objectContaining({ index: 3, success: true, transactionId: pops[k]![0]!.transactionId, offset: 0, leaseReleased: true, partitionName: `p${k}` })])
    })
    const [row] = await database.sql<{ settled: number }>(`
      select count(*)::int as settled from queen.log_consumers c join queen.log_partitions p on p.id = c.partition_id
        join queen.queues q on q.id = p.queue_id where q.name = 'fuse-ack' and c.committed_offset = 1 and c.lease_id is null`)
    expect(row!.settled).toBe(24)
  })

  it("keeps a refused ack the member's own result and lets a poison member fail alone", async () => {
    const pops = await leased('fuse-ack-mixed', 12)
    const results = await Promise.allSettled(
      pops.map(([m], k) =>
        db.call('log_ack_v1', {
          tenant: '',
          // Caller 4 names a lease it does not hold (a per-item verdict); caller 7 carries a NUL
          // character, which jsonb rejects, so a fused call holding it fails as a whole.
          acks: [ackOf(m!, 0, k === 4 ? { leaseId: '01a23d10-0000-7000-8000-000000000000' } : k === 7 ? { error: 'bad\u0000' } : {})],
        }),
      ),
    )
    expect(results[7]!.status).toBe('rejected')
    expect((results[7] as PromiseRejectedResult).reason).toBeInstanceOf(DbError)
    for (const [k, r] of results.entries()) {
      if (k === 7) continue
      expect(r.status, `caller ${k}`).toBe('fulfilled')
      const [result] = (r as PromiseFulfilledResult<Awaited<ReturnType<typeof db.call<'log_ack_v1'>>>>).value
      expect(result!.success, `caller ${k}`).toBe(k !== 4)
    }
    const rows = await database.sql<{ partition: string; committed: string }>(`
      select p.name as partition, c.committed_offset::text as committed from queen.log_consumers c
        join queen.log_partitions p on p.id = c.partition_id join queen.queues q on q.id = p.queue_id
       where q.name = 'fuse-ack-mixed' order by p.name`)
    expect(rows.filter((r) => r.committed === '1').map((r) => r.partition).sort()).toEqual(
      Array.from({ length: 12 }, (_, k) => `p${k}`).filter((_, k) => k !== 4 && k !== 7).sort(),
    )
  })

  it('sends an ack at once while fewer than maxInFlight are in flight, and fuses only the rest', async () => {
    const pops = await leased('fuse-ack-idle', 6)
    ackStatements = 0
    // pool.query is reached synchronously when a call is dispatched, so the counter tells whether
    // an ack went out at once or waits (for the hold, or for an in-flight ack to return).
    const lone = db.call('log_ack_v1', { tenant: '', acks: [ackOf(pops[0]![0]!, 0)] })
    expect(ackStatements).toBe(1)
    await lone
    await new Promise((done) => setImmediate(done)) // the lone call's slot is freed after it answers
    ackStatements = 0
    const burst = pops.slice(1).map(([m]) => db.call('log_ack_v1', { tenant: '', acks: [ackOf(m!, 0)] }))
    expect(ackStatements).toBe(NODE_FUSION.ack.maxInFlight)
    const results = await Promise.all(burst)
    expect(results.map(([r]) => r!.success)).toEqual([true, true, true, true, true])
    expect(ackStatements).toBeLessThan(5)
  })

  it('fuses acks of many items from several leases, each caller answered its own items', async () => {
    const pops = await leased('fuse-ack-big', 6, 40)
    ackStatements = 0
    // A burst beyond maxInFlight: the rest wait for a slot and go out together.
    const results = await Promise.all(pops.map((ms) => db.call('log_ack_v1', { tenant: '', acks: ms.map((m, i) => ackOf(m, i)) })))
    expect(ackStatements).toBeLessThan(6)
    results.forEach((r, k) => {
      expect(r.map((x) => [x.index, x.success, x.transactionId, x.partitionName])).toEqual(pops[k]!.map((m, i) => [i, true, m.transactionId, `p${k}`]))
      expect(r.filter((x) => x.leaseReleased)).toHaveLength(1)
    })
    const [row] = await database.sql<{ settled: number }>(`
      select count(*)::int as settled from queen.log_consumers c join queen.log_partitions p on p.id = c.partition_id
        join queen.queues q on q.id = p.queue_id where q.name = 'fuse-ack-big' and c.committed_offset = 40 and c.lease_id is null`)
    expect(row!.settled).toBe(6)
  })

  it('sends an ack of the preferred size or more in a call of its own', async () => {
    const pops = await leased('fuse-ack-whole', 3, NODE_FUSION.ack.maxItems)
    ackStatements = 0
    const results = await Promise.all(pops.map((ms) => db.call('log_ack_v1', { tenant: '', acks: ms.map((m, i) => ackOf(m, i)) })))
    expect(ackStatements).toBe(3)
    for (const r of results) expect(r.every((x) => x.success)).toBe(true)
  })
})
