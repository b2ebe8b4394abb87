// Stream state in the resource routes (issue #21, docs/streams.md): each shard's counters, moved by the
// cycle under the shard's lock, must equal the state rows themselves — after concurrent cycles on
// the same and on different shards, replays, values big enough to be compressed on disk, a reset
// and a delete — and each tenant's overview counts only its own queries.
import fc from 'fast-check'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { testApp, type TestApp } from '../helpers/app.js'
import { push } from '../helpers/engine.js'
import { cycle, queryId, register, type Headers } from '../helpers/streams.js'

const ACME = { 'x-queen-tenant': 'acme' }
const GLOBEX = { 'x-queen-tenant': 'globex' }

let app: TestApp
beforeAll(async () => {
  app = await testApp({ env: { QUEEN_TENANCY_HEADER: 'X-Queen-Tenant' } })
})
afterAll(() => app.close())

/** The oracle: the state rows as stored now, each sized as key plus value JSON text. */
async function stateOnDisk(query: string) {
  const [row] = await app.database.sql<{ rows: number; bytes: number }>(
    `select count(*)::int as rows, coalesce(sum(octet_length(key) + octet_length(value::text)), 0)::int as bytes
       from queen.stream_state where query_id = $1`,
    [query],
  )
  return row!
}

async function listed(name: string, headers: Headers) {
  const res = await app.json('GET', '/streams/v1/queries', undefined, headers)
  expect(res.status).toBe(200)
  const q = res.body.queries.find((x: { name: string }) => x.name === name)
  return { rows: q.state_rows as number, bytes: q.state_bytes as number }
}

const overviewStreams = async (headers: Headers) => (await app.json('GET', '/api/v1/resources/overview', undefined, headers)).body.streams

/** Real source partitions for the shards (a cycle names its source partition by id). */
async function partitions(queue: string, n: number, headers: Headers): Promise<string[]> {
  const res = await push(app, Array.from({ length: n }, (_, i) => ({ queue, partition: `p${i}`, payload: { i } })), headers)
  return res.map((r) => r.partition_id)
}

const op = fc.oneof(
  fc.record({ type: fc.constant('upsert'), key: fc.constantFrom('a', 'b', 'c', 'wé\u001f1'), value: fc.oneof(fc.integer(), fc.record({ n: fc.integer(), s: fc.string({ maxLength: 40 }) })) }),
  // Past TOAST's 2 kB threshold and very compressible: stored far smaller than received.
  fc.record({ type: fc.constant('upsert'), key: fc.constantFrom('big', 'a'), value: fc.integer({ min: 3000, max: 6000 }).map((n) => ({ pad: 'x'.repeat(n) })) }),
  fc.record({ type: fc.constant('delete'), key: fc.constantFrom('a', 'b', 'big', 'missing') }),
)

it('shard counters equal the state after concurrent cycles, replays and compressed values', { timeout: 120_000 }, async () => {
  const shards = await partitions('sr.src', 3, ACME)
  const q = await queryId(app, 'sr', 'sr.src', null, ACME)
  const cycles = fc.sample(fc.record({ shard: fc.nat(2), ops: fc.array(op, { minLength: 1, maxLength: 6 }), replay: fc.boolean() }), { numRuns: 120, seed: 21 })

  // Four clients at once; two cycles of one shard serialise on its row lock, others run in parallel.
  for (let i = 0; i < cycles.length; i += 4) {
    await Promise.all(
      cycles.slice(i, i + 4).map(async (c, j) => {
        // A counter per cycle keeps otherwise equal bodies distinct, so only the deliberate replays replay.
        const body = { query_id: q, partition_id: shards[c.shard], state_ops: [...c.ops, { type: 'upsert', key: `n${i + j}`, value: 0 }] }
        const first = await cycle(app, body, ACME)
        expect(first.status).toBe(200)
        if (c.replay) expect((await cycle(app, body, ACME)).body.replayed).toBe(true)
      }),
    )
  }

  const truth = await stateOnDisk(q)
  expect(truth.rows).toBeGreaterThan(cycles.length)
  expect(await listed('sr', ACME)).toEqual(truth)
  expect(await overviewStreams(ACME)).toEqual({ queries: 1, stateRows: truth.rows, stateBytes: truth.bytes })
  // The big values really were compressed, so a count from the stored sizes would disagree.
  const [stored] = await app.database.sql<{ bytes: number }>(
    `select coalesce(sum(octet_length(key) + pg_column_size(value)), 0)::int as bytes from queen.stream_state where query_id = $1`,
    [q],
  )
  expect(stored!.bytes).toBeLessThan(truth.bytes)
})

it('a reset and a delete take their state out of the counts; other tenants never see it', async () => {
  const [shard] = await partitions('sr2.src', 1, GLOBEX)
  const q = await queryId(app, 'sr2', 'sr2.src', null, GLOBEX)
  const before = await overviewStreams(ACME)
  expect((await cycle(app, { query_id: q, partition_id: shard, state_ops: [{ type: 'upsert', key: 'k', value: { v: 1 } }] }, GLOBEX)).body.success).toBe(true)
  expect(await overviewStreams(GLOBEX)).toEqual({ queries: 1, stateRows: 1, stateBytes: (await stateOnDisk(q)).bytes })
  expect(await overviewStreams(ACME)).toEqual(before)

  const reset = await register(app, { name: 'sr2', source_queue: 'sr2.src', config_hash: 'h2', reset: true }, GLOBEX)
  expect(reset.body).toMatchObject({ success: true, reset: true })
  expect(await overviewStreams(GLOBEX)).toEqual({ queries: 1, stateRows: 0, stateBytes: 0 })

  expect((await cycle(app, { query_id: q, partition_id: shard, state_ops: [{ type: 'upsert', key: 'k2', value: 2 }] }, GLOBEX)).body.success).toBe(true)
  expect((await overviewStreams(GLOBEX)).stateRows).toBe(1)
  expect((await app.json('DELETE', '/streams/v1/queries/sr2', undefined, GLOBEX)).body).toEqual({ deleted: true, state_rows: 1 })
  expect(await overviewStreams(GLOBEX)).toEqual({ queries: 0, stateRows: 0, stateBytes: 0 })
})
