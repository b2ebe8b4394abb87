// The benchmark harness's own logic, checked fast (no broker, no timed assertion): the closed loop
// counts only what finishes inside its window and stops early on a drained backlog, percentiles
// pick the right sample, the raw-limit client's SQL runs against a real PostgreSQL, and the cell
// bench's schedule, shedding and lost / duplicated accounting count what they claim.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { InflightGate, Ledger, dueAt, dueBy, placement } from '../bench/cell-ledger.js'
import { closedLoop, percentile } from '../bench/lib.js'
import { rawConsume, rawFill, rawInsertLoad, rawSetup } from '../bench/raw.js'
import { smallPayload } from '../bench/queen.js'
import { freshDatabase, type TestDatabase } from './helpers/database.js'

describe('bench harness', () => {
  it('percentile picks the nearest-rank sample', () => {
    const sorted = Array.from({ length: 100 }, (_, i) => i + 1)
    expect(percentile(sorted, 50)).toBe(50)
    expect(percentile(sorted, 99)).toBe(99)
    expect(percentile(sorted, 100)).toBe(100)
    expect(percentile([], 50)).toBeNull()
  })

  it('a closed loop counts items moved in its window and ends early once the work runs out', async () => {
    let left = 30
    const result = await closedLoop({
      concurrency: 3,
      warmupMs: 0,
      durationMs: 5000,
      op: async () => {
        await new Promise((done) => setTimeout(done, 1))
        if (left <= 0) return 'empty'
        left--
        return 1
      },
      isDone: () => left <= 0,
    })
    expect(result.items).toBe(30)
    expect(result.totalItems).toBe(30)
    expect(result.drained).toBe(true)
    expect(result.seconds).toBeLessThan(5)
    expect(result.errors).toBe(0)
  })

  describe('raw-limit client', () => {
    let db: TestDatabase
    let pool: Awaited<ReturnType<typeof rawSetup>>
    beforeAll(async () => {
      db = await freshDatabase()
      pool = await rawSetup(db.url, 2)
    })
    afterAll(async () => {
      await pool?.end()
      await db?.drop()
    })

    it('inserts whole batches and consumes what it leased', async () => {
      const loop = await rawInsertLoad(pool, 10, 5, smallPayload, { concurrency: 2, warmupMs: 0, durationMs: 50 })
      await rawFill(pool, 1000, 5)
      const [{ n }] = (await pool.query('select count(*)::int as n from bench_raw.messages')).rows
      expect(n).toBe(loop.totalItems + 1000)
      expect(loop.totalItems % 10).toBe(0)
      expect(await rawConsume(pool, 100)).toBe(100)
      const [{ left }] = (await pool.query('select count(*)::int as left from bench_raw.messages')).rows
      expect(left).toBe(n - 100)
    })
  })

  describe('cell bench', () => {
    it('schedules by the clock and spreads every tenant evenly over its partitions', () => {
      expect(dueAt(0, 300)).toBe(0)
      expect(dueAt(300, 300)).toBe(1000)
      expect(dueBy(-1, 300, 100)).toBe(0)
      expect(dueBy(0, 300, 100)).toBe(1)
      expect(dueBy(10, 300, 100)).toBe(4)
      expect(dueBy(60_000, 300, 100)).toBe(100)
      const counts = new Map<string, number>()
      for (let k = 0; k < 4 * 8 * 5; k++) {
        const { tenant, partition } = placement(k, 4, 8)
        counts.set(`${tenant}/${partition}`, (counts.get(`${tenant}/${partition}`) ?? 0) + 1)
      }
      expect(counts.size).toBe(32)
      expect([...counts.values()].every((n) => n === 5)).toBe(true)
    })

    it('sheds past the in-flight cap instead of queueing, and counts what it shed', () => {
      const gate = new InflightGate(2)
      expect(gate.tryEnter()).toBe(true)
      expect(gate.tryEnter()).toBe(true)
      expect(gate.tryEnter()).toBe(false)
      expect(gate.inflight).toBe(2)
      gate.leave()
      expect(gate.tryEnter()).toBe(true)
      expect(gate.tryEnter()).toBe(false)
      expect(gate.shed).toBe(2)
      expect(gate.peak).toBe(2)
    })

    it('counts lost, duplicated, stray and cross-tenant messages by id, with delays from the intended send time', () => {
      // Two tenants, two partitions: k = 0..7 land on (t0,p0) (t1,p0) (t0,p1) (t1,p1) twice over.
      const ledger = new Ledger(8, 2, 2)
      for (let k = 0; k < 8; k++) ledger.offer(k, k * 10)
      for (const k of [0, 1, 2, 3, 5, 6, 7]) ledger.accept(k)
      ledger.refuse(4)
      ledger.deliver(0, 0, 0, 5) // 5 ms
      ledger.deliver(0, 0, 0, 50) // a second copy: duplicated, its delay not counted again
      ledger.deliver(1, 1, 10, 30) // 20 ms
      ledger.deliver(2, 0, 20, 1520) // 1 500 ms: late
      ledger.deliver(4, 0, 40, 60) // refused yet delivered: stray
      ledger.deliver(5, 0, 50, 70) // tenant 1's message reached tenant 0's consumer
      ledger.deliver(6, 0, 60, 100) // 40 ms
      // 3 and 7 are never delivered: lost, and they wait until the end (2 000 ms).
      expect(ledger.settled).toBe(5)
      const s = ledger.summary(2000)
      expect(s).toMatchObject({ offered: 8, accepted: 7, refused: 1, delivered: 6, lost: 2, duplicated: 1, stray: 1, crossTenant: 1 })
      expect(s.latencyMs.max).toBe(1500)
      expect(s.latencyMs.p50).toBe(20)
      const part = (t: number, p: number) => s.partitions.perPartition.find((x) => x.tenant === t && x.partition === p)!
      expect(part(0, 1)).toMatchObject({ accepted: 2, delivered: 2, lost: 0, worstMs: 1500, lateOver1s: 1 })
      // (t1,p1) holds 3 and 7: both lost, the older one waited 2 000 - 30 ms.
      expect(part(1, 1)).toMatchObject({ accepted: 2, delivered: 0, lost: 2, worstMs: 1970 })
      expect(s.partitions.worstMs).toBe(1970)
      expect(s.partitions.bestWorstMs).toBe(20)
      expect(s.partitions.over1s).toBe(2)
    })

    it('settles a message whose delivery came before its push was answered', () => {
      const ledger = new Ledger(1, 1, 1)
      ledger.offer(0, 0)
      ledger.deliver(0, 0, 0, 3)
      expect(ledger.settled).toBe(0)
      ledger.accept(0)
      expect(ledger.settled).toBe(1)
      expect(ledger.summary(10)).toMatchObject({ lost: 0, stray: 0, delivered: 1 })
    })
  })
})
