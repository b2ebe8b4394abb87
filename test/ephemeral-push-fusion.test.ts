// Ephemeral push fusion (src/db/ephemeral-push-fusion.ts) against a real PostgreSQL: up to two calls
// per queue go out at once over different partitions, pushes that arrive while they are in flight go
// out as one ephemeral_push_many_v1 call when one returns, whatever partition each pushes to; every
// caller gets its own count, the messages of a partition land in arrival order, pushes to other
// queues are not held back, and a member whose push fails for its own reason gets its own error
// while the others' pushes are written.
import pg from 'pg'
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
const pushMany = (queue: string, groups: { partition: string; payloads: unknown[] }[]) => db.call('ephemeral_push_many_v1', { tenant, queue, groups })
const configure = (queue: string, options: Record<string, unknown>) => db.call('ephemeral_configure_v1', { tenant, queue, options })
/** What a queue holds, as its readers see it: every payload in number order, the gauges and the drops. */
const contents = async (queue: string) => {
  const messages = (await db.call('ephemeral_pop_v1', { tenant, queue, partition: null, group: 'inspect', batch: 1000, autoAck: true })).messages
  const gauges = (await db.call('ephemeral_queues_v1', { tenant })).queues.find((q) => q.queue === queue)!
  return { messages: messages.map((m) => [m.partition, m.payload]), depth: gauges.depth, bytes: gauges.bytes, drops: gauges.drops }
}

describe('ephemeral push fusion', () => {
  it('sends a push at once with nothing in flight, and the pushes that arrive meanwhile as one call over their partitions', async () => {
    single = 0
    fused = 0
    // Two calls in flight at most per queue, over different partitions: a and b go out at once.
    const first = push('fu', 'a', [1, 2])
    expect(single).toBe(1)
    const beside = push('fu', 'b', [3])
    expect(single).toBe(2)
    const rest = [push('fu', 'a', [4, 5, 6]), push('fu', 'c', [7]), push('fu', 'b', [8])]
    expect(single).toBe(2)
    const answers = await Promise.all([first, beside, ...rest])
    // When either call returns, at least two waiting pushes of idle partitions go out as one call.
    expect(fused).toBeGreaterThanOrEqual(1)
    expect(single + fused).toBeLessThanOrEqual(4)
    expect(answers.map((a) => a.pushed)).toEqual([2, 1, 3, 1, 1])
    const messages = await popAll('fu')
    expect(messages.map((m) => [m.partition, m.payload]).sort((x, y) => Number(x[1]) - Number(y[1]))).toEqual([
      ['a', 1],
      ['a', 2],
      ['b', 3],
      ['a', 4],
      ['a', 5],
      ['a', 6],
      ['c', 7],
      ['b', 8],
    ])
    // Per partition, in arrival order.
    for (const partition of ['a', 'b']) {
      const own = messages.filter((m) => m.partition === partition).map((m) => Number(m.payload))
      expect(own).toEqual([...own].sort((x, y) => x - y))
    }
  })

  it("holds a push back while an earlier push to its partition is in flight, never a push to another partition", async () => {
    single = 0
    fused = 0
    const first = push('fu-order', 'a', [1])
    const second = push('fu-order', 'a', [2])
    const other = push('fu-order', 'b', [3])
    // The second push to a waits for the first; b goes out beside it.
    expect(single).toBe(2)
    await Promise.all([first, second, other])
    expect(single).toBe(3)
    expect((await popAll('fu-order')).filter((m) => m.partition === 'a').map((m) => m.payload)).toEqual([1, 2])
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
    // Two calls in flight (a, then b beside it), so the next two wait and go out as one call.
    const first = push('fu-off', 'a', [1])
    const beside = push('fu-off', 'b', [0])
    const second = push('fu-off', 'c', [2])
    const third = push('fu-off', 'd', [3])
    await Promise.all([first, beside])
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

  it('books the ring once for a fused call of several partitions, not once per partition', async () => {
    // The ring's row is written once per call (one TTL sweep, one trim per partition, one bounds
    // check, one insert): counted by the transaction's own table statistics.
    const client = new pg.Client({ connectionString: database.url })
    await client.connect()
    try {
      await client.query('begin')
      const groups = [{ partition: 'a', payloads: [1, 2] }, { partition: 'b', payloads: [3] }, { partition: 'a', payloads: [4] }]
      const { rows } = await client.query(`select queen.ephemeral_push_many_v1('', 'fu-once', $1::jsonb) as result`, [JSON.stringify(groups)])
      expect(rows[0].result).toEqual({ pushed: [2, 1, 1] })
      const stats = await client.query(`select n_tup_ins::int as ins, n_tup_upd::int as upd from pg_stat_xact_user_tables where schemaname = 'queen' and relname = $1`, ['ephemeral_rings'])
      expect(stats.rows[0]).toEqual({ ins: 1, upd: 1 })
      const messages = await client.query(`select count(*)::int as n from pg_stat_xact_user_tables where schemaname = 'queen' and relname = 'ephemeral_messages' and n_tup_ins = 4`)
      expect(messages.rows[0].n).toBe(1)
      await client.query('commit')
    } finally {
      await client.end()
    }
    expect((await contents('fu-once')).messages).toEqual([['a', 1], ['a', 2], ['b', 3], ['a', 4]])
  })

  it('leaves a queue as the same pushes one by one would, within the bounds and past them', async () => {
    const cases: { options: Record<string, unknown>; groups: { partition: string; payloads: unknown[] }[] }[] = [
      // Fits whole: one booking.
      { options: { maxLength: 10 }, groups: [{ partition: 'a', payloads: [1, 2, 3] }, { partition: 'b', payloads: [4, 5] }] },
      // Past maxLength under dropOldest: the second push drops the first one's oldest.
      { options: { maxLength: 4, policy: 'dropOldest' }, groups: [{ partition: 'a', payloads: [1, 2, 3] }, { partition: 'b', payloads: [4, 5, 6] }] },
      // Past maxBytes under dropOldest, three partitions.
      { options: { maxBytes: 12, policy: 'dropOldest' }, groups: [{ partition: 'a', payloads: ['aaaa'] }, { partition: 'b', payloads: ['bbbb', 'cccc'] }, { partition: 'c', payloads: ['d'] }] },
    ]
    for (const [i, { options, groups }] of cases.entries()) {
      const fusedQueue = `fu-same-${i}`
      const aloneQueue = `fu-alone-${i}`
      await configure(fusedQueue, options)
      await configure(aloneQueue, options)
      // Something consumed already, so the trim has work: one message every group has taken.
      for (const q of [fusedQueue, aloneQueue]) {
        await db.call('ephemeral_push_v1', { tenant, queue: q, partition: 'a', payloads: ['x'] })
        await db.call('ephemeral_pop_v1', { tenant, queue: q, partition: null, group: 'inspect', batch: 1, autoAck: true })
      }
      const fusedAnswer = await pushMany(fusedQueue, groups)
      const aloneAnswers = []
      for (const g of groups) aloneAnswers.push((await db.call('ephemeral_push_v1', { tenant, queue: aloneQueue, partition: g.partition, payloads: g.payloads })).pushed)
      expect(fusedAnswer.pushed).toEqual(aloneAnswers)
      expect(await contents(fusedQueue)).toEqual(await contents(aloneQueue))
    }
  })

  it('refuses the whole fused call when the whole does not fit under reject, as the broker then retries each alone', async () => {
    await configure('fu-full', { maxLength: 4 })
    await expect(pushMany('fu-full', [{ partition: 'a', payloads: [1, 2, 3] }, { partition: 'b', payloads: [4, 5] }])).rejects.toMatchObject({ sqlstate: 'QMEFL' })
    expect((await contents('fu-full')).depth).toBe(0)
    await expect(pushMany('fu-full', [{ partition: 'a', payloads: [1] }, { partition: 'bad\u0001', payloads: [2] }])).rejects.toMatchObject({ sqlstate: 'QMEBR' })
    expect((await contents('fu-full')).depth).toBe(0)
  })
})

