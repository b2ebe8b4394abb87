// Ephemeral push fusion (src/db/ephemeral-push-fusion.ts) against a real PostgreSQL: pushes to one
// queue that arrive while one is in flight go out as one ephemeral_push_many_v1 call when it returns,
// whatever partition each pushes to; every caller gets its own count, the messages land in arrival
// order, pushes to other queues are not held back, and a member whose push fails for its own reason
// gets its own error while the others' pushes are written.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createDatabase, type Database } from '../src/db/database.js'
import { DbError } from '../src/db/errors.js'
import { createNodePool } from '../src/db/node-pool.js'
import { freshDatabase, type TestDatabase } from './helpers/database.js'

let database: TestDatabase
let db: Database
let single = 0
let fused = 0

beforeAll(async () => {
  database = await freshDatabase()
  const pool = createNodePool({ connectionString: database.url, max: 4 })
  // Counts the procedure calls that really reach PostgreSQL.
  const query = pool.query.bind(pool) as typeof pool.query
  pool.query = ((text: string, values?: unknown[]) => {
    if (text.includes('ephemeral_push_v1')) single++
    if (text.includes('ephemeral_push_many_v1')) fused++
    return query(text, values)
  }) as typeof pool.query
  db = createDatabase(pool, { longLived: true, fusion: { ephemeral: true } })
})
afterAll(async () => {
  await db.close()
  await database.drop()
})

const tenant = ''
const push = (queue: string, partition: string, payloads: unknown[]) => db.call('ephemeral_push_v1', { tenant, queue, partition, payloads })
const popAll = async (queue: string) => (await db.call('ephemeral_pop_v1', { tenant, queue, partition: null, group: '', batch: 1000, autoAck: true })).messages

describe('ephemeral push fusion', () => {
  it('sends a push at once with nothing in flight, and the pushes that arrive meanwhile as one call over their partitions', async () => {
    single = 0
    fused = 0
    const first = push('fu', 'a', [1, 2])
    expect(single).toBe(1)
    const rest = [push('fu', 'b', [3]), push('fu', 'a', [4, 5, 6]), push('fu', 'c', [7])]
    expect(single).toBe(1)
    const answers = await Promise.all([first, ...rest])
    expect(single).toBe(1)
    expect(fused).toBe(1)
    expect(answers.map((a) => a.pushed)).toEqual([2, 1, 3, 1])
    const messages = await popAll('fu')
    expect(messages.map((m) => [m.partition, m.payload]).sort((x, y) => Number(x[1]) - Number(y[1]))).toEqual([
      ['a', 1],
      ['a', 2],
      ['b', 3],
      ['a', 4],
      ['a', 5],
      ['a', 6],
      ['c', 7],
    ])
  })

  it('does not hold back a push to another queue', async () => {
    single = 0
    fused = 0
    const calls = [push('fu-1', 'a', [1]), push('fu-2', 'a', [2]), push('fu-3', 'a', [3])]
    expect(single).toBe(3)
    expect((await Promise.all(calls)).map((a) => a.pushed)).toEqual([1, 1, 1])
    expect(fused).toBe(0)
  })

  it("keeps a member's own failure its own: the others' pushes are written and answered", async () => {
    const first = push('fu-bad', 'a', ['x'])
    const good = push('fu-bad', 'b', ['y'])
    const bad = push('fu-bad', 'bad\u0001name', ['z'])
    const last = push('fu-bad', 'c', ['w'])
    const settled = await Promise.allSettled([first, good, bad, last])
    expect(settled.map((s) => s.status)).toEqual(['fulfilled', 'fulfilled', 'rejected', 'fulfilled'])
    const reason = (settled[2] as PromiseRejectedResult).reason
    expect(reason).toBeInstanceOf(DbError)
    expect((reason as DbError).sqlstate).toBe('QMEBR')
    expect((await popAll('fu-bad')).map((m) => m.payload).sort()).toEqual(['w', 'x', 'y'])
  })

  it('answers every member with an error all of them share', async () => {
    const first = push('fu-off', 'a', [1])
    const second = push('fu-off', 'b', [2])
    const third = push('fu-off', 'c', [3])
    await first
    await database.sql(`insert into queen.system_state (key, value) values ('ephemeral', 'false') on conflict (key) do update set value = excluded.value`)
    try {
      const settled = await Promise.allSettled([second, third])
      // Whether the fused call saw the switch depends on timing, but both members share one verdict.
      expect(new Set(settled.map((s) => s.status)).size).toBe(1)
      const after = await Promise.allSettled([push('fu-off', 'a', [4]), push('fu-off', 'b', [5])])
      for (const s of after) {
        expect(s.status).toBe('rejected')
        expect(((s as PromiseRejectedResult).reason as DbError).sqlstate).toBe('QMEOF')
      }
    } finally {
      await database.sql(`delete from queen.system_state where key = 'ephemeral'`)
    }
  })
})
