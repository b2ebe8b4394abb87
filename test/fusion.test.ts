// Push fusion (ENGINE 12.1) against a real PostgreSQL: many parallel callers on one pool are fused
// into fewer procedure calls, every caller gets exactly its own results, a poison member fails
// alone while its neighbours are stored, and an error every member would meet alone (push
// maintenance) reaches them all.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createDatabase, type Database } from '../src/db/database.js'
import { DbError } from '../src/db/errors.js'
import { createNodePool } from '../src/db/node-pool.js'
import { freshDatabase, type TestDatabase } from './helpers/database.js'

let database: TestDatabase
let db: Database
let statements = 0

beforeAll(async () => {
  database = await freshDatabase()
  const pool = createNodePool({ connectionString: database.url, max: 4 })
  // Counts the procedure calls that really reach PostgreSQL.
  const query = pool.query.bind(pool) as typeof pool.query
  pool.query = ((text: string, values?: unknown[]) => {
    if (text.includes('log_push_v1')) statements++
    return query(text, values)
  }) as typeof pool.query
  db = createDatabase(pool, { longLived: true, fusion: { holdMs: 5, maxItems: 200, maxBytes: 64 * 1024 } })
})
afterAll(async () => {
  await db.close()
  await database.drop()
})

const item = (index: number, queue: string, partition: string, data: unknown, transactionId: string | null = null) =>
  ({ index, queue, partition, transactionId, traceId: null, producerSub: null, enc: false, data })

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
