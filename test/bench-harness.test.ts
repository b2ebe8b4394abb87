// The benchmark harness's own logic, checked fast (no broker, no timed assertion): the closed loop
// counts only what finishes inside its window and stops early on a drained backlog, percentiles
// pick the right sample, and the raw-limit client's SQL runs against a real PostgreSQL.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
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
})
