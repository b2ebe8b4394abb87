// The ephemeral pop's two answers against a real PostgreSQL: ephemeral_pop_v2's parallel arrays,
// shaped by the broker (src/ephemeral/pop-result.ts), give exactly the messages and ids
// ephemeral_pop_v1 builds in SQL for the same state, first deliveries and redeliveries alike, and
// the ids they carry settle through the ack.
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { parseEphemeralId } from '../src/ephemeral/ack-ids.js'
import { popMessages, type PopDeliveries } from '../src/ephemeral/pop-result.js'
import { freshDatabase, type TestDatabase } from './helpers/database.js'

let database: TestDatabase
let client: pg.Client

beforeAll(async () => {
  database = await freshDatabase()
  client = new pg.Client({ connectionString: database.url })
  await client.connect()
  // The incarnation is minted on first use; minted inside the rolled-back transaction below, v1
  // and v2 would each mint their own.
  await client.query('select queen.ephemeral_system_v1()')
})
afterAll(async () => {
  await client.end()
  await database.drop()
})

const call = async <T>(sql: string, params: unknown[] = []): Promise<T> => (await client.query(`select ${sql} as result`, params)).rows[0].result as T

/** Both answers to the same pop of the same state: v1's inside a transaction rolled back, then v2's. */
async function bothPops(queue: string, group: string, batch: number) {
  await client.query('begin')
  const v1 = await call<{ messages: unknown[]; windowBuffer: unknown }>(`queen.ephemeral_pop_v1('', $1, null, $2, $3, false)`, [queue, group, batch])
  await client.query('rollback')
  const v2 = await call<PopDeliveries>(`queen.ephemeral_pop_v2('', $1, null, $2, $3, false)`, [queue, group, batch])
  return { v1, v2 }
}

describe('ephemeral_pop_v2 shaped by the broker', () => {
  it('gives the messages and ids ephemeral_pop_v1 gives, for first deliveries and redeliveries', async () => {
    await call(`queen.ephemeral_configure_v1('', 'pr', '{"windowBuffer": {"ms": 5, "count": 2}}'::jsonb)`)
    // A partition name with ':' and '.', as the id's parse must find the number after the last ':'.
    await call(`queen.ephemeral_push_v1('', 'pr', 'p:1.x', $1::jsonb)`, [JSON.stringify([{ a: 1 }, 'two', null, 4, [5]])])
    await call(`queen.ephemeral_push_v1('', 'pr', 'q', $1::jsonb)`, [JSON.stringify(['six'])])

    const first = await bothPops('pr', 'g', 3)
    expect(first.v1.messages).toHaveLength(3)
    expect(popMessages(first.v2)).toEqual(first.v1.messages)
    expect(first.v2.windowBuffer).toEqual(first.v1.windowBuffer)
    expect(first.v2.windowBuffer).toEqual({ ms: 5, count: 2 })

    // Hand two back: the next pop redelivers them (attempts 1, an id with '.1') before the new ones.
    const ids = popMessages(first.v2).map((m) => m.id)
    const settled = await call<{ results: { outcome: string }[] }>(`queen.ephemeral_ack_v1('', 'pr', 'g', $1::jsonb)`, [
      JSON.stringify([{ id: ids[0], status: 'retry' }, { id: ids[1], status: 'failed' }, { id: ids[2] }]),
    ])
    expect(settled.results.map((r) => r.outcome)).toEqual(['redelivered', 'redelivered', 'acked'])

    const second = await bothPops('pr', 'g', 10)
    const shaped = popMessages(second.v2)
    expect(shaped).toEqual(second.v1.messages)
    expect(shaped.map((m) => [m.partition, m.attempts, m.payload])).toEqual([
      ['p:1.x', 1, { a: 1 }],
      ['p:1.x', 1, 'two'],
      ['p:1.x', 0, 4],
      ['p:1.x', 0, [5]],
      ['q', 0, 'six'],
    ])
    expect(shaped[0]!.id).toBe(`${ids[0]}.1`)
    expect(shaped.map((m) => parseEphemeralId(m.id)?.attempts)).toEqual([1, 1, 0, 0, 0])

    // Every id the broker built settles.
    const acked = await call<{ results: { outcome: string }[] }>(`queen.ephemeral_ack_v1('', 'pr', 'g', $1::jsonb)`, [JSON.stringify(shaped.map((m) => ({ id: m.id })))])
    expect(acked.results.map((r) => r.outcome)).toEqual(shaped.map(() => 'acked'))
  })

  it('answers empty arrays when there is nothing to take', async () => {
    const { v1, v2 } = await bothPops('pr-empty', '', 5)
    expect(v1.messages).toEqual([])
    expect(v2).toMatchObject({ seqs: [], partitions: [], attempts: [], payloads: [], windowBuffer: null })
    expect(popMessages(v2)).toEqual([])
  })
})
