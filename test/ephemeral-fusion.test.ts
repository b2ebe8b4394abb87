// Ephemeral pop fusion (src/db/ephemeral-fusion.ts) against a real PostgreSQL: pops of one group
// that arrive while one is in flight go out as one call when it returns, every caller gets its own
// share in arrival order (the messages it would have received one after the other), other groups
// and queues are not held back, an error reaches every member, and acks are never held back.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createDatabase, type Database } from '../src/db/database.js'
import { DbError } from '../src/db/errors.js'
import { createNodePool } from '../src/db/node-pool.js'
import { freshDatabase, type TestDatabase } from './helpers/database.js'

let database: TestDatabase
let db: Database
let pops = 0
let popsV2 = 0
let acks = 0

beforeAll(async () => {
  database = await freshDatabase()
  const pool = createNodePool({ connectionString: database.url, max: 4 })
  // Counts the procedure calls that really reach PostgreSQL.
  const query = pool.query.bind(pool) as typeof pool.query
  pool.query = ((text: string, values?: unknown[]) => {
    if (text.includes('ephemeral_pop_v1')) pops++
    if (text.includes('ephemeral_pop_v2')) popsV2++
    if (text.includes('ephemeral_ack_v1')) acks++
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
const pop = (queue: string, batch: number, group = '') => db.call('ephemeral_pop_v1', { tenant, queue, partition: null, group, batch, autoAck: false })

describe('ephemeral pop fusion', () => {
  it('sends a pop at once with nothing in flight, and the pops that arrive meanwhile as one call, each its own share in order', async () => {
    await push('fp', 'a', Array.from({ length: 30 }, (_, i) => i))
    pops = 0
    const first = pop('fp', 4)
    expect(pops).toBe(1)
    const rest = [pop('fp', 5), pop('fp', 6), pop('fp', 100)]
    expect(pops).toBe(1)
    const answers = await Promise.all([first, ...rest])
    expect(pops).toBe(2)
    expect(answers.map((a) => a.messages.map((m) => m.payload))).toEqual([
      [0, 1, 2, 3],
      [4, 5, 6, 7, 8],
      [9, 10, 11, 12, 13, 14],
      Array.from({ length: 15 }, (_, i) => 15 + i),
    ])
    for (const a of answers) expect(a.windowBuffer).toBeNull()
  })

  it('does not hold back a pop of another group or queue', async () => {
    await push('fp-other', 'a', ['x'])
    pops = 0
    const calls = [pop('fp-other', 1), pop('fp-other', 1, 'g'), pop('fp-other-2', 1)]
    expect(pops).toBe(3)
    expect((await Promise.all(calls)).map((a) => a.messages.map((m) => m.payload))).toEqual([['x'], ['x'], []])
  })

  it('fails every member of a fused pop with the error each alone would meet', async () => {
    const first = pop('fp-off', 1)
    const second = pop('fp-off', 1)
    const third = pop('fp-off', 1)
    await first
    await database.sql(`insert into queen.system_state (key, value) values ('ephemeral', 'false') on conflict (key) do update set value = excluded.value`)
    try {
      const settled = await Promise.allSettled([second, third])
      // The second and third went out together after the first; whether the switch was seen depends
      // on timing, but both members share one verdict.
      expect(new Set(settled.map((s) => s.status)).size).toBe(1)
      const after = await Promise.allSettled([pop('fp-off', 1), pop('fp-off', 1)])
      for (const s of after) {
        expect(s.status).toBe('rejected')
        expect((s as PromiseRejectedResult).reason).toBeInstanceOf(DbError)
        expect(((s as PromiseRejectedResult).reason as DbError).sqlstate).toBe('QMEOF')
      }
    } finally {
      await database.sql(`delete from queen.system_state where key = 'ephemeral'`)
    }
  })
})

describe("ephemeral pop fusion of the broker's own pop (ephemeral_pop_v2)", () => {
  it('fuses the pops that arrive while one is in flight, each member its own share of the arrays in order', async () => {
    await push('fp2', 'a', Array.from({ length: 12 }, (_, i) => i))
    const popV2 = (batch: number) => db.call('ephemeral_pop_v2', { tenant, queue: 'fp2', partition: null, group: '', batch, autoAck: false })
    popsV2 = 0
    const first = popV2(2)
    const rest = [popV2(3), popV2(4)]
    expect(popsV2).toBe(1)
    const answers = await Promise.all([first, ...rest])
    expect(popsV2).toBe(2)
    expect(answers.map((a) => a.payloads)).toEqual([[0, 1], [2, 3, 4], [5, 6, 7, 8]])
    for (const a of answers) {
      expect(a.partitions).toEqual(a.payloads.map(() => 'a'))
      expect(a.attempts).toEqual(a.payloads.map(() => 0))
      expect(a.seqs).toHaveLength(a.payloads.length)
    }
    // Consecutive numbers across the members, as one pop after another would have taken them.
    const seqs = answers.flatMap((a) => a.seqs.map(BigInt))
    expect(seqs.map((n) => n - seqs[0]!)).toEqual(Array.from({ length: 9 }, (_, i) => BigInt(i)))
    // Each member's share is leased in a row of its own, as if each had popped alone: one ack per
    // consumer deletes its own row instead of every ack rewriting one row of the whole fused call.
    const rows = await database.sql<{ seqs: string[] }>(`select seqs from queen.ephemeral_leases where queue = 'fp2' order by lo`)
    expect(rows.map((r) => r.seqs.map(String))).toEqual(answers.map((a) => a.seqs))
    for (const a of answers) {
      const settled = await db.call('ephemeral_ack_v2', { tenant, queue: 'fp2', group: '', ords: a.seqs.map((_, i) => i), epochs: a.seqs.map(() => a.epoch), seqs: a.seqs, attempts: a.attempts, back: a.seqs.map(() => false) })
      expect(settled.acked).toEqual(a.seqs.map((_, i) => i))
    }
    expect(await database.sql(`select 1 from queen.ephemeral_leases where queue = 'fp2'`)).toEqual([])
  })

  it('refuses shares that do not split the batch', async () => {
    for (const shares of [[], [2, 2], [5, 0], [-1, 6]]) {
      await expect(db.call('ephemeral_pop_v2', { tenant, queue: 'fp2-shares', partition: null, group: '', batch: 5, autoAck: false, shares })).rejects.toMatchObject({ sqlstate: 'QMEBR' })
    }
    await push('fp2-shares', 'a', [1, 2, 3])
    const popped = await db.call('ephemeral_pop_v2', { tenant, queue: 'fp2-shares', partition: null, group: '', batch: 5, autoAck: false, shares: [1, 4] })
    expect(popped.payloads).toEqual([1, 2, 3])
    const rows = await database.sql<{ n: number }>(`select cardinality(seqs) as n from queen.ephemeral_leases where queue = 'fp2-shares' order by lo`)
    expect(rows.map((r) => r.n)).toEqual([1, 2])
  })
})

describe('ephemeral acks', () => {
  it('are not fused: each goes out at once while another of its group is in flight', async () => {
    await push('fa', 'a', Array.from({ length: 9 }, (_, i) => i))
    const ids = (await pop('fa', 9)).messages.map((m) => ({ id: m.id }))
    acks = 0
    const calls = [ids.slice(0, 3), ids.slice(3, 6), ids.slice(6)].map((part) => db.call('ephemeral_ack_v1', { tenant, queue: 'fa', group: '', acks: part }))
    expect(acks).toBe(3)
    const results = await Promise.all(calls)
    expect(results.flatMap((r) => r.results.map((x) => x.outcome))).toEqual(Array.from({ length: 9 }, () => 'acked'))
  })
})
