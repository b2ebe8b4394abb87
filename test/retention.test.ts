// The segment-deleting lanes with pinned time (ENGINE 7.1-7.4, q&r): which segments the retention
// and eviction steps delete, log_start advancing, cursors and leases below it resuming, the sink
// hold keeping exactly what GREATEST(windowEnd - 60 s, now - cap) says (D1, D2), and steps that
// are idempotent and never double-delete when run in parallel.
//
// Segments are written through log_push_v1 with p_now, so each push call is one segment at a known
// instant in the past; consumers then use the real routes, and the steps run with p_now.
import fc from 'fast-check'
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { eviction } from '../cron/eviction.js'
import { retention } from '../cron/retention.js'
import { runLane } from '../cron/runner.js'
import { testApp, type TestApp } from './helpers/app.js'
import { ack, acksOf, pop } from './helpers/engine.js'
import { putPointerValue } from './helpers/sink.js'

let app: TestApp
beforeAll(async () => {
  app = await testApp()
})
afterAll(() => app.close())

const T0 = new Date('2025-06-01T00:00:00Z')
const min = (m: number) => new Date(T0.getTime() + m * 60_000)

/** One push call at a pinned instant: one segment of `n` frames on `partition`. */
async function pushAt(queue: string, at: Date, n = 1, partition = 'Default') {
  const items = Array.from({ length: n }, (_, i) => ({
    index: i,
    queue,
    partition,
    transactionId: `${queue}:${partition}:${at.getTime()}:${i}`,
    traceId: null,
    producerSub: null,
    enc: false,
    data: { at: at.toISOString(), i },
  }))
  return app.db.call('log_push_v1', { tenant: '', items, now: at })
}

async function configure(body: Record<string, unknown>) {
  const res = await app.json('POST', '/api/v1/configure', body)
  expect(res.status, JSON.stringify(res.body)).toBe(200)
}

/** Base offsets of the segments left, per partition name. */
async function segments(queue: string, partition = 'Default') {
  const rows = await app.database.sql<{ base: number }>(
    `select s.base_offset::int as base from queen.log_segments s join queen.log_partitions p on p.id = s.partition_id
       join queen.queues q on q.id = p.queue_id where q.name = $1 and p.name = $2 order by 1`,
    [queue, partition],
  )
  return rows.map((r) => r.base)
}

async function logStart(queue: string, partition = 'Default') {
  const [row] = await app.database.sql<{ s: number }>(
    `select p.log_start::int as s from queen.log_partitions p join queen.queues q on q.id = p.queue_id where q.name = $1 and p.name = $2`,
    [queue, partition],
  )
  return row!.s
}

/** Runs one lane's procedure to the end of a pass, the way the runner does; returns what it deleted. */
async function pass(lane: 'retention' | 'eviction', now: Date, limit = 1000) {
  let next: string | null = null
  let processed = 0
  for (let steps = 0; ; steps++) {
    if (steps > 10_000) throw new Error('pass does not terminate')
    const result: { processed: number; next: string | null } =
      lane === 'retention'
        ? await app.db.call('log_retention_step_v1', { next, limit, traceDays: 0, metricsDays: 0, dlqDays: 0, now })
        : await app.db.call('log_evict_max_wait_step_v1', { next, limit, now })
    processed += result.processed
    next = result.next
    if (next === null) return processed
  }
}

describe('retention cutoffs', () => {
  it('deletes segments older than retentionSeconds whatever was consumed, and only where retention is enabled', async () => {
    await configure({ queue: 'age', retentionEnabled: true, retentionSeconds: 3600 })
    await configure({ queue: 'age-off', retentionEnabled: false, retentionSeconds: 3600 })
    for (const q of ['age', 'age-off']) {
      for (const m of [0, 30, 59, 60, 90]) await pushAt(q, min(m), m === 30 ? 3 : 1)
    }
    // Offsets: 0 @0, 1-3 @30, 4 @59, 5 @60, 6 @90. Cutoff at now - 1 h = minute 60: strictly older goes.
    expect(await pass('retention', min(120))).toBe(3)
    expect(await segments('age')).toEqual([5, 6])
    expect(await logStart('age')).toBe(5)
    expect(await segments('age-off')).toEqual([0, 1, 4, 5, 6])
    expect(await logStart('age-off')).toBe(0)
    // Idempotent: the same pass again deletes nothing.
    expect(await pass('retention', min(120))).toBe(0)
    // Everything older than an hour, once time moves on: log_start reaches the high watermark.
    await pass('retention', min(300))
    expect(await segments('age')).toEqual([])
    expect(await logStart('age')).toBe(7)
  })

  it('deletes by completedRetentionSeconds only what every registered group has settled', async () => {
    await configure({ queue: 'done', retentionEnabled: true, completedRetentionSeconds: 60 })
    for (let m = 0; m < 4; m++) await pushAt('done', min(m))
    // No registered group yet: nothing is settled, nothing goes.
    await pass('retention', min(600))
    expect(await segments('done')).toEqual([0, 1, 2, 3])

    const fast = await pop(app, 'done', { consumerGroup: 'fast', batch: 4, subscriptionMode: 'all' })
    await ack(app, acksOf(fast.messages), 'fast')
    const slow = await pop(app, 'done', { consumerGroup: 'slow', batch: 2, subscriptionMode: 'all' })
    expect(slow.messages.map((m) => m.offset)).toEqual([0, 1])
    // slow still holds a live lease on [0, 1]: leased is not settled.
    await pass('retention', min(600))
    expect(await segments('done')).toEqual([0, 1, 2, 3])
    await ack(app, acksOf(slow.messages), 'slow')
    // The minimum cursor is now 2; segment 3 is settled by nobody but fast.
    await pass('retention', min(600))
    expect(await segments('done')).toEqual([2, 3])
    expect(await logStart('done')).toBe(2)
    // A settled segment younger than the completed cutoff stays: cutoff minute 2, segment 2 is @2.
    const rest = await pop(app, 'done', { consumerGroup: 'slow', batch: 2, subscriptionMode: 'all' })
    await ack(app, acksOf(rest.messages), 'slow')
    await pass('retention', min(3))
    expect(await segments('done')).toEqual([2, 3])
    await pass('retention', min(4))
    expect(await segments('done')).toEqual([3])
  })

  it('deletes nothing by the completed cutoff on a partition where a registered group has no cursor row', async () => {
    await configure({ queue: 'norow', retentionEnabled: true, completedRetentionSeconds: 60 })
    for (let m = 0; m < 3; m++) {
      await pushAt('norow', min(m), 1, 'A')
      await pushAt('norow', min(m), 1, 'B')
    }
    // "g" pops partition A only: its rows exist on A, not on B. "all" reads both partitions.
    const g = await pop(app, 'norow', { consumerGroup: 'g', batch: 3, subscriptionMode: 'all' }, 'A')
    await ack(app, acksOf(g.messages), 'g')
    for (const p of ['A', 'B']) {
      const m = await pop(app, 'norow', { consumerGroup: 'all', batch: 3, subscriptionMode: 'all' }, p)
      await ack(app, acksOf(m.messages), 'all')
    }
    await pass('retention', min(600))
    expect(await segments('norow', 'A')).toEqual([])
    expect(await segments('norow', 'B')).toEqual([0, 1, 2])
  })

  it('resumes a cursor left below logStart at the next existing offset', async () => {
    await configure({ queue: 'gap', retentionEnabled: true, retentionSeconds: 60 })
    for (let m = 0; m < 5; m++) await pushAt('gap', min(m * 10))
    const first = await pop(app, 'gap', { consumerGroup: 'g', batch: 1, subscriptionMode: 'all' })
    await ack(app, acksOf(first.messages), 'g')
    // Cursor at 1; retention removes offsets 0-2 (minutes 0, 10, 20 < cutoff 29).
    await pass('retention', min(30))
    expect(await logStart('gap')).toBe(3)
    const next = await pop(app, 'gap', { consumerGroup: 'g', batch: 10, subscriptionMode: 'all' })
    expect(next.messages.map((m) => m.offset)).toEqual([3, 4])
    // A group that never popped starts at logStart too.
    expect((await pop(app, 'gap', { consumerGroup: 'late', batch: 10, subscriptionMode: 'all' })).messages.map((m) => m.offset)).toEqual([3, 4])
  })
})

describe('maxWaitTimeSeconds eviction', () => {
  it('evicts a leased range for every group, ungated by retentionEnabled and unfloored by the hold', async () => {
    await configure({ queue: 'evict', maxWaitTimeSeconds: 600, retentionSinkHold: 'lake', retentionSinkHoldMaxSeconds: 31_536_000 })
    for (const m of [0, 1, 55]) await pushAt('evict', min(m))
    // A pointer that would hold everything for retention: windowEnd before the first segment.
    await putPointerValue(app, 's3:lake:evict:committed', { windowEnd: min(-10).toISOString() })
    const leased = await pop(app, 'evict', { consumerGroup: 'g', batch: 2, subscriptionMode: 'all' })
    expect(leased.messages.map((m) => m.offset)).toEqual([0, 1])

    // retentionEnabled is false: the retention lane leaves the queue alone.
    await pass('retention', min(60))
    expect(await segments('evict')).toEqual([0, 1, 2])
    // Eviction: cutoff minute 50, the live lease and the hold notwithstanding.
    expect(await pass('eviction', min(60))).toBe(2)
    expect(await segments('evict')).toEqual([2])
    expect(await logStart('evict')).toBe(2)

    // The lease holder's ack of an evicted offset reports it, succeeds and releases the lease.
    const acked = await ack(app, acksOf(leased.messages), 'g')
    expect(acked.map((a) => [a.success, a.evicted])).toEqual([[true, true], [true, true]])
    expect(acked.some((a) => a.leaseReleased)).toBe(true)
    const byOffset = await ack(app, [{ transactionId: leased.messages[0]!.transactionId, partitionId: leased.messages[0]!.partitionId, offset: 0, status: 'completed' }], 'g')
    expect(byOffset[0]).toMatchObject({ success: true, evicted: true })
    // Neither delivered again nor dead-lettered.
    expect((await pop(app, 'evict', { consumerGroup: 'g', batch: 10, subscriptionMode: 'all' })).messages.map((m) => m.offset)).toEqual([2])
    const [dlq] = await app.database.sql<{ n: number }>(`select count(*)::int as n from queen.log_dlq`)
    expect(dlq!.n).toBe(0)
  })

  it('reclaims a lease wholly below logStart at the next pop without charging an attempt', async () => {
    await configure({ queue: 'evict-lease', maxWaitTimeSeconds: 60, leaseTime: 30, retryLimit: 0 })
    for (const m of [0, 10]) await pushAt('evict-lease', min(m))
    const [partition] = await app.database.sql<{ id: string }>(
      `select p.id from queen.log_partitions p join queen.queues q on q.id = p.queue_id where q.name = 'evict-lease'`,
    )
    const request = { queue: 'evict-lease', group: 'g', batch: 1, partitions: 1, autoAck: false, subscriptionMode: 'all' as const, maxBytes: 8 << 20 }
    const first = await app.db.call('log_pop_v1', { tenant: '', request, now: min(5) })
    expect(first.messages.map((m) => m.offset)).toEqual([0])
    await pass('eviction', min(9))
    expect(await logStart('evict-lease')).toBe(1)
    // The lease has expired by minute 20; with retryLimit 0 a charged attempt would dead-letter.
    const second = await app.db.call('log_pop_v1', { tenant: '', request, now: min(20) })
    expect(second.messages.map((m) => [m.offset, m.retryCount])).toEqual([[1, 0]])
    const [row] = await app.database.sql<{ n: number }>(`select count(*)::int as n from queen.log_dlq where partition_id = $1`, [partition!.id])
    expect(row!.n).toBe(0)
  })
})

describe('sink hold', () => {
  // Segments every 10 minutes for two hours; now is minute 120; retentionSeconds 60 alone would take
  // all twelve. The cap is one hour, so the cap-only floor is minute 60.
  const NOW = min(120)
  const CAP = 3600
  const kept = (floor: Date | null) => {
    const cutoff = floor === null ? NOW.getTime() - 60_000 : Math.min(NOW.getTime() - 60_000, floor.getTime())
    return Array.from({ length: 12 }, (_, i) => i).filter((i) => min(i * 10).getTime() >= cutoff)
  }
  const floorFor = (windowEnd: Date | null) =>
    new Date(Math.max(windowEnd === null ? -Infinity : windowEnd.getTime() - 60_000, NOW.getTime() - CAP * 1000))

  const cases: [string, unknown | undefined, Date | null][] = [
    ['missing', undefined, null],
    ['not an object', '2025-06-01T01:30:00Z', null],
    ['an array', [{ windowEnd: '2025-06-01T01:30:00Z' }], null],
    ['another key', { window_end: '2025-06-01T01:30:00Z' }, null],
    ['an extra key', { windowEnd: '2025-06-01T01:30:00Z', sink: 'x' }, null],
    ['a number', { windowEnd: 1748741400000 }, null],
    ['no zone', { windowEnd: '2025-06-01T01:30:00' }, null],
    ['a date only', { windowEnd: '2025-06-01' }, null],
    ['unparsable', { windowEnd: '2025-13-45T99:00:00Z' }, null],
    ['a word', { windowEnd: 'now' }, null],
    ['more than 60 s in the future', { windowEnd: new Date(NOW.getTime() + 61_000).toISOString() }, null],
    ['valid', { windowEnd: '2025-06-01T01:30:30.000Z' }, new Date('2025-06-01T01:30:30Z')],
    ['valid with an offset', { windowEnd: '2025-06-01T03:30:30+02:00' }, new Date('2025-06-01T01:30:30Z')],
    ['valid, within 60 s of now', { windowEnd: new Date(NOW.getTime() + 59_000).toISOString() }, new Date(NOW.getTime() + 59_000)],
    ['valid but older than the cap', { windowEnd: '2025-06-01T00:20:00Z' }, new Date('2025-06-01T00:20:00Z')],
  ]

  it('keeps exactly what GREATEST(windowEnd - 60 s, now - cap) says, per pointer', async () => {
    const queues = cases.map((_, i) => `hold-${i}`)
    await configure({ queue: 'no-hold', retentionEnabled: true, retentionSeconds: 60 })
    for (const [i, [, value]] of cases.entries()) {
      await configure({ queue: queues[i], retentionEnabled: true, retentionSeconds: 60, retentionSinkHold: 'lake', retentionSinkHoldMaxSeconds: CAP })
      if (value !== undefined) {
        await putPointerValue(app, `s3:lake:${queues[i]}:committed`, value)
      }
    }
    for (let s = 0; s < 12; s++) for (const q of ['no-hold', ...queues]) await pushAt(q, min(s * 10))
    // One pass over every queue: a malformed pointer degrades its own queue and stops nothing.
    await pass('retention', NOW)
    expect(await segments('no-hold')).toEqual([])
    for (const [i, [name, , windowEnd]] of cases.entries()) {
      expect(await segments(queues[i]!), name).toEqual(kept(floorFor(windowEnd)))
    }
    // Concretely: missing/malformed keep minute 60 on; a valid 01:30:30 keeps minute 90 on.
    expect(await segments(queues[0]!)).toEqual([6, 7, 8, 9, 10, 11])
    expect(await segments(queues[11]!)).toEqual([9, 10, 11])
  })

  it('caps the completed cutoff too, and a disabled cutoff stays disabled under a hold', async () => {
    await configure({ queue: 'hold-done', retentionEnabled: true, completedRetentionSeconds: 60, retentionSinkHold: 'lake', retentionSinkHoldMaxSeconds: CAP })
    // Only the completed cutoff is on, and nothing is settled: the age cutoff must stay off.
    await configure({ queue: 'hold-none', retentionEnabled: true, retentionSeconds: 0, completedRetentionSeconds: 60, retentionSinkHold: 'lake', retentionSinkHoldMaxSeconds: CAP })
    for (let s = 0; s < 12; s++) for (const q of ['hold-done', 'hold-none']) await pushAt(q, min(s * 10))
    const all = await pop(app, 'hold-done', { consumerGroup: 'g', batch: 100, subscriptionMode: 'all' })
    await ack(app, acksOf(all.messages), 'g')
    await pass('retention', NOW)
    expect(await segments('hold-done')).toEqual([6, 7, 8, 9, 10, 11])
    // LEAST(NULL, floor) would be the floor and delete minutes 0-50.
    expect(await segments('hold-none')).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11])
  })

  it("reads the pointer in the queue's own tenant only", async () => {
    const tenants = await testApp({ database: app.database, env: { QUEEN_TENANCY_HEADER: 'X-Tenant' } })
    try {
      const as = (tenant: string) => ({ 'x-tenant': tenant })
      const options = { queue: 'held', retentionEnabled: true, retentionSeconds: 60, retentionSinkHold: 'lake', retentionSinkHoldMaxSeconds: CAP }
      for (const t of ['acme', 'globex']) expect((await tenants.json('POST', '/api/v1/configure', options, as(t))).status).toBe(200)
      // Only globex has a valid pointer; acme's queue of the same name must not borrow it.
      const value = { windowEnd: '2025-06-01T01:30:30Z' }
      await putPointerValue(app, 's3:lake:held:committed', value, 'globex')
      for (let i = 0; i < 12; i++) {
        for (const t of ['acme', 'globex']) {
          const items = [{ index: 0, queue: 'held', partition: 'Default', transactionId: null, traceId: null, producerSub: null, enc: false, data: i }]
          await app.db.call('log_push_v1', { tenant: t, items, now: min(i * 10) })
        }
      }
      await pass('retention', NOW)
      const left = await app.database.sql<{ tenant: string; bases: number[] }>(
        `select q.tenant_id as tenant, array_agg(s.base_offset::int order by s.base_offset) as bases
           from queen.log_segments s join queen.log_partitions p on p.id = s.partition_id join queen.queues q on q.id = p.queue_id
          where q.name = 'held' and q.tenant_id in ('acme', 'globex') group by 1 order by 1`,
      )
      expect(left).toEqual([
        { tenant: 'acme', bases: [6, 7, 8, 9, 10, 11] },
        { tenant: 'globex', bases: [9, 10, 11] },
      ])
    } finally {
      await tenants.close()
    }
  })

  it('deletes a subset of what the same settings delete without a hold (property)', async () => {
    let run = 0
    const pointer = fc.oneof(
      fc.constant<unknown>(undefined),
      fc.constantFrom<unknown>('x', { windowEnd: 'soon' }, { windowEnd: 5 }, { windowEnd: '2025-06-01T00:30:00Z', more: 1 }),
      fc.integer({ min: -30, max: 200 }).map((m) => ({ windowEnd: min(m).toISOString() })),
    )
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.integer({ min: 1, max: 30 }), { minLength: 1, maxLength: 8 }),
        fc.constantFrom(0, 60, 1800, 3600),
        fc.constantFrom(0, 60, 1800),
        fc.integer({ min: 0, max: 8 }),
        fc.constantFrom(60, 600, 3600, 86_400),
        pointer,
        fc.integer({ min: 0, max: 300 }),
        async (gaps, retentionSeconds, completedRetentionSeconds, settled, cap, value, nowMinute) => {
          run++
          const held = `prop-${run}-held`
          const free = `prop-${run}-free`
          const common = { retentionEnabled: true, retentionSeconds, completedRetentionSeconds }
          await configure({ queue: free, ...common })
          await configure({ queue: held, ...common, retentionSinkHold: 'lake', retentionSinkHoldMaxSeconds: cap })
          if (value !== undefined) await putPointerValue(app, `s3:lake:${held}:committed`, value)
          let at = 0
          for (const gap of gaps) {
            at += gap
            for (const q of [free, held]) await pushAt(q, min(at))
          }
          for (const q of [free, held]) {
            if (settled === 0) continue
            const got = await pop(app, q, { consumerGroup: 'g', batch: settled, subscriptionMode: 'all' })
            if (got.messages.length > 0) await ack(app, acksOf(got.messages), 'g')
          }
          const all = gaps.map((_, i) => i)
          const before = { free: await segments(free), held: await segments(held) }
          expect(before.free).toEqual(all)
          await pass('retention', min(nowMinute))
          const left = { free: await segments(free), held: await segments(held) }
          const deletedFree = all.filter((o) => !left.free.includes(o))
          const deletedHeld = all.filter((o) => !left.held.includes(o))
          expect(deletedFree).toEqual(expect.arrayContaining(deletedHeld))
          // Both deleted sets are prefixes, so log_start is the first survivor.
          expect(await logStart(held)).toBe(left.held[0] ?? gaps.length)
        },
      ),
      { numRuns: Number(process.env.QUEEN_PROPERTY_RUNS ?? 25) },
    )
  })
})

describe('steps under concurrency', () => {
  it('never double-deletes when several runners step in parallel, and a repeat deletes nothing', async () => {
    const queues = ['par-a', 'par-b']
    for (const q of queues) await configure({ queue: q, retentionEnabled: true, retentionSeconds: 60 })
    for (const q of queues) {
      for (let p = 0; p < 8; p++) for (let s = 0; s < 5; s++) await pushAt(q, min(s), 1, `p${p}`)
    }
    const count = async () => (await app.database.sql<{ n: number }>(`select count(*)::int as n from queen.log_segments`))[0]!.n
    // Earlier tests' queues may still owe deletions at this instant: count every segment.
    const before = await count()
    // Four passes at once, small steps so they interleave and resume many times.
    const totals = await Promise.all(Array.from({ length: 4 }, () => pass('retention', min(120), 3)))
    // Each deleted segment is counted by exactly one runner; a partition another runner held is
    // skipped (SKIP LOCKED), left for the next pass.
    expect(totals.reduce((a, b) => a + b, 0)).toBe(before - (await count()))
    await pass('retention', min(120))
    const [finally_] = await app.database.sql<{ n: number; starts: number }>(
      `select (select count(*) from queen.log_segments s join queen.log_partitions p on p.id = s.partition_id
                 join queen.queues q on q.id = p.queue_id where q.name like 'par-%')::int as n,
              (select count(*) from queen.log_partitions p join queen.queues q on q.id = p.queue_id
                where q.name like 'par-%' and p.log_start = 5)::int as starts`,
    )
    expect(finally_).toEqual({ n: 0, starts: 16 })
    expect(await pass('retention', min(120))).toBe(0)
  })

  it('never waits on an open push: the partition it holds is skipped and trimmed on a later pass', async () => {
    await configure({ queue: 'busy', retentionEnabled: true, retentionSeconds: 60 })
    for (const p of ['held', 'free']) for (let s = 0; s < 3; s++) await pushAt('busy', min(s), 1, p)
    const writer = new pg.Client({ connectionString: app.database.url })
    await writer.connect()
    try {
      await writer.query('begin')
      // A push that has taken the allocator lock of partition "held" and not yet committed.
      const items = [{ index: 0, queue: 'busy', partition: 'held', transactionId: null, traceId: null, producerSub: null, enc: false, data: 'late' }]
      await writer.query(`select queen.log_push_v1(p_tenant => '', p_items => $1::jsonb, p_now => $2::timestamptz)`, [JSON.stringify(items), min(3).toISOString()])
      // Were the step to wait, its 1 s lock_timeout would raise here instead of returning.
      await pass('retention', min(120))
      expect(await segments('busy', 'held')).toEqual([0, 1, 2])
      expect(await segments('busy', 'free')).toEqual([])
      await writer.query('commit')
    } finally {
      await writer.end()
    }
    await pass('retention', min(120))
    expect(await segments('busy', 'held')).toEqual([])
    expect(await logStart('busy', 'held')).toBe(4)
  })

  it('lets one of two racing lane runs claim each lane, and the claimed run does the work', async () => {
    await configure({ queue: 'race', retentionEnabled: true, retentionSeconds: 60, maxWaitTimeSeconds: 60 })
    for (let s = 0; s < 3; s++) await pushAt('race', min(s))
    const options = { config: app.config, budgetMs: 10_000, now: min(60) }
    for (const lane of [retention, eviction]) {
      const runs = await Promise.all([runLane(app.db, lane, options), runLane(app.db, lane, options)])
      expect(runs.filter((r) => r.claimed), lane.name).toHaveLength(1)
      expect(runs.find((r) => r.claimed)!.complete, lane.name).toBe(true)
    }
    expect(await segments('race')).toEqual([])
    const [row] = await app.database.sql<{ result: { processed: number } }>(
      `select last_result as result from queen.maintenance_leases where name = 'retention'`,
    )
    expect(row!.result.processed).toBeGreaterThanOrEqual(3)
  })
})
