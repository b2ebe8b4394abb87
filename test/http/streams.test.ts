// /streams/v1/queries and /streams/v1/state/get (docs/streams.md): registration
// with its fresh / same-hash / mismatch (409) / reset answers, the listing and admin delete, the
// state filters (keys, a literal prefix with % and _, ripe_at_or_before), validation failures
// answered 400 with nothing written, and two tenants with same-named queries kept apart.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { testApp, type TestApp } from '../helpers/app.js'
import { push } from '../helpers/engine.js'
import { cycle, queryId, register, stateGet, stateOf } from '../helpers/streams.js'

let app: TestApp
const A = { 'x-queen-tenant': 'acme' }
const B = { 'x-queen-tenant': 'globex' }
beforeAll(async () => {
  app = await testApp({ env: { QUEEN_TENANCY_HEADER: 'X-Queen-Tenant' } })
})
afterAll(() => app.close())

const PID = '01890a5d-ac96-774b-bcce-b302099a8057'
const upserts = (entries: Record<string, unknown>) => Object.entries(entries).map(([key, value]) => ({ type: 'upsert', key, value }))
const count = async (table: string) => (await app.database.sql<{ n: number }>(`select count(*)::int as n from queen.${table}`))[0]!.n

describe('POST /streams/v1/queries', () => {
  it('creates a query fresh, finds it again with the same hash, refuses another hash with 409, resets on request', async () => {
    const first = await register(app, { name: 'counts', source_queue: 'events', sink_queue: 'windows', config_hash: 'h1' }, A)
    expect(first.status).toBe(200)
    expect(first.body).toEqual({ success: true, query_id: expect.any(String), name: 'counts', config_hash: 'h1', fresh: true, reset: false })
    const id = first.body.query_id as string

    // Same hash: found, not fresh; reset:true is ignored (the chain did not change).
    await cycle(app, { query_id: id, partition_id: PID, state_ops: upserts({ k: 1 }) }, A)
    const again = await register(app, { name: 'counts', source_queue: 'events2', config_hash: 'h1', reset: true }, A)
    expect(again.body).toEqual({ success: true, query_id: id, name: 'counts', config_hash: 'h1', fresh: false, reset: false })
    expect(await stateOf(app, id, PID, A)).toEqual({ k: 1 })

    const mismatch = await register(app, { name: 'counts', source_queue: 'events', config_hash: 'h2' }, A)
    expect(mismatch.status).toBe(409)
    expect(mismatch.body).toMatchObject({
      success: false,
      query_id: id,
      name: 'counts',
      code: 'config_hash_mismatch',
      error: "config_hash mismatch: operator chain changed for queryId 'counts'. Pass reset:true to wipe existing state, or use a new queryId.",
    })
    expect(await stateOf(app, id, PID, A)).toEqual({ k: 1 })

    const reset = await register(app, { name: 'counts', source_queue: 'events', config_hash: 'h2', reset: true }, A)
    expect(reset.body).toEqual({ success: true, query_id: id, name: 'counts', config_hash: 'h2', fresh: false, reset: true })
    expect(await stateOf(app, id, PID, A)).toEqual({})
    const [row] = await app.database.sql<{ source_queue: string; sink_queue: string | null; config_hash: string }>(
      `select source_queue, sink_queue, config_hash from queen.stream_queries where id = $1`,
      [id],
    )
    expect(row).toEqual({ source_queue: 'events', sink_queue: null, config_hash: 'h2' })
  })

  it('answers 400 naming the field when name, source_queue or config_hash is missing or empty, writing nothing', async () => {
    const before = await count('stream_queries')
    const cases: [unknown, string][] = [
      [{ source_queue: 'q', config_hash: 'h' }, 'name is required'],
      [{ name: '', source_queue: 'q', config_hash: 'h' }, 'name is required'],
      [{ name: 'n', config_hash: 'h' }, 'source_queue is required'],
      [{ name: 'n', source_queue: 'q', config_hash: '' }, 'config_hash is required'],
      [{ name: 'n', source_queue: 'q', config_hash: 'h', reset: 'yes' }, 'reset must be a boolean'],
      [[1], 'Request body must be a JSON object'],
    ]
    for (const [body, error] of cases) {
      const res = await app.json('POST', '/streams/v1/queries', body, A)
      expect(res.status, JSON.stringify(body)).toBe(400)
      expect(res.body, JSON.stringify(body)).toEqual({ error, code: 'invalid_request' })
    }
    const empty = await app.json('POST', '/streams/v1/queries', '', A)
    expect(empty.status).toBe(400)
    expect(empty.body.code).toBe('invalid_json')
    expect(await count('stream_queries')).toBe(before)
  })
})

describe('GET and DELETE /streams/v1/queries', () => {
  it('lists queries with state rows, bytes, shards and the source group lag; delete removes the state only', async () => {
    await push(app, [1, 2, 3].map((n) => ({ queue: 'listed.src', payload: { n } })), A)
    const id = await queryId(app, 'listed', 'listed.src', 'listed.sink', A)
    await cycle(app, { query_id: id, partition_id: PID, state_ops: upserts({ a: { n: 1 }, b: { text: 'x'.repeat(100) } }) }, A)

    const list = await app.json('GET', '/streams/v1/queries', undefined, A)
    expect(list.status).toBe(200)
    const q = (list.body.queries as Record<string, unknown>[]).find((x) => x.name === 'listed')
    expect(q).toMatchObject({ query_id: id, source_queue: 'listed.src', sink_queue: 'listed.sink', config_hash: 'h1', state_rows: 2, partitions: 1, source_group: 'streams.listed', lag: 3 })
    expect(q!.state_bytes as number).toBeGreaterThan(100)

    expect((await app.json('DELETE', '/streams/v1/queries/listed', undefined, A)).body).toEqual({ deleted: true, state_rows: 2 })
    expect((await app.json('DELETE', '/streams/v1/queries/listed', undefined, A)).body).toEqual({ deleted: false, state_rows: 0 })
    const [left] = await app.database.sql<{ n: number }>(`select count(*)::int as n from queen.stream_state where query_id = $1`, [id])
    expect(left!.n).toBe(0)
    // The source queue and its messages stay.
    const [msgs] = await app.database.sql<{ n: number }>(
      `select coalesce(sum(frame_count), 0)::int as n from queen.log_segments s join queen.log_partitions p on p.id = s.partition_id
        join queen.queues q on q.id = p.queue_id where q.name = 'listed.src'`,
    )
    expect(msgs!.n).toBe(3)
  })

  it("keeps a query's state when its source queue is deleted", async () => {
    await push(app, [{ queue: 'doomed.src', payload: 1 }], A)
    const id = await queryId(app, 'doomed', 'doomed.src', null, A)
    await cycle(app, { query_id: id, partition_id: PID, state_ops: upserts({ kept: true }) }, A)
    expect((await app.json('DELETE', '/api/v1/resources/queues/doomed.src', undefined, A)).status).toBe(200)
    expect(await stateOf(app, id, PID, A)).toEqual({ kept: true })
  })
})

describe('POST /streams/v1/state/get', () => {
  it('filters by keys, by a literal prefix (% and _ are plain characters) and by ripe_at_or_before, ANDed, ordered by key', async () => {
    const id = await queryId(app, 'filters', 'filters.src', null, A)
    const state = {
      'tumble\u001fa': { windowEnd: 1000, count: 1 },
      'tumble\u001fb': { windowEnd: 2000, count: 2 },
      'tumble\u001fc': { windowEnd: '1000', count: 3 },
      'slide\u001fa': { windowEnd: 500 },
      '50%_off': { x: 1 },
      '50%x': { x: 2 },
      '50a_off': { x: 3 },
      __wm__: { eventTimeMs: 1500 },
    }
    expect((await cycle(app, { query_id: id, partition_id: PID, state_ops: upserts(state) }, A)).body.success).toBe(true)
    const keysOf = async (body: Record<string, unknown>) => {
      const res = await stateGet(app, { query_id: id, partition_id: PID, ...body }, A)
      expect(res.status).toBe(200)
      expect(res.body.success).toBe(true)
      for (const row of res.body.rows) expect(row.updated_at).toMatch(/^\d{4}-\d{2}-\d{2}T/)
      return (res.body.rows as { key: string }[]).map((r) => r.key)
    }
    expect(await keysOf({})).toEqual(Object.keys(state).sort())
    expect(await keysOf({ keys: ['__wm__', 'missing', 'slide\u001fa'] })).toEqual(['__wm__', 'slide\u001fa'])
    expect(await keysOf({ key_prefix: 'tumble\u001f' })).toEqual(['tumble\u001fa', 'tumble\u001fb', 'tumble\u001fc'])
    expect(await keysOf({ key_prefix: '50%_' })).toEqual(['50%_off'])
    expect(await keysOf({ key_prefix: '50_' })).toEqual([])
    expect(await keysOf({ key_prefix: 'tumble\u001f', ripe_at_or_before: 1500 })).toEqual(['tumble\u001fa'])
    expect(await keysOf({ ripe_at_or_before: 2000 })).toEqual(['slide\u001fa', 'tumble\u001fa', 'tumble\u001fb'])
    expect(await keysOf({ keys: ['tumble\u001fb', '50a_off'], key_prefix: 'tumble' })).toEqual(['tumble\u001fb'])
    // The original reads a non-array keys as "no filter".
    expect(await keysOf({ keys: 'tumble\u001fa', key_prefix: '' })).toEqual(Object.keys(state).sort())
    // Another partition of the same query has its own state.
    expect(await keysOf({ partition_id: '01890a5d-ac96-774b-bcce-b302099a8058' })).toEqual([])
  })

  it('answers 400 for missing or malformed ids and bad filters, never 500', async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ partition_id: PID }, 'query_id is required'],
      [{ query_id: 'not-a-uuid', partition_id: PID }, 'query_id must be a UUID'],
      [{ query_id: PID, partition_id: 42 }, 'partition_id is required'],
      [{ query_id: PID, partition_id: 'x' }, 'partition_id must be a UUID'],
      [{ query_id: PID, partition_id: PID, keys: [1] }, 'keys must be an array of strings'],
      [{ query_id: PID, partition_id: PID, ripe_at_or_before: '100' }, 'ripe_at_or_before must be a number (epoch milliseconds)'],
    ]
    for (const [body, error] of cases) {
      const res = await app.json('POST', '/streams/v1/state/get', body, A)
      expect(res.status, JSON.stringify(body)).toBe(400)
      expect(res.body, JSON.stringify(body)).toEqual({ error, code: 'invalid_request' })
    }
  })

  it('stays a range scan of an index at 100 000 keys in one partition', async () => {
    const id = await queryId(app, 'wide', 'wide.src', null, A)
    await app.database.sql(
      `insert into queen.stream_state (query_id, partition_id, key, value)
       select $1, $2, 'op' || chr(31) || lpad(i::text, 6, '0'), jsonb_build_object('windowEnd', i, 'count', 1)
         from generate_series(1, 100000) i`,
      [id, PID],
    )
    await app.database.sql(`analyze queen.stream_state`)
    const ripe = await stateGet(app, { query_id: id, partition_id: PID, key_prefix: 'op\u001f', ripe_at_or_before: 3 }, A)
    expect(ripe.body.rows.map((r: { key: string }) => r.key)).toEqual(['op\u001f000001', 'op\u001f000002', 'op\u001f000003'])
    const prefixed = await stateGet(app, { query_id: id, partition_id: PID, key_prefix: 'op\u001f00001' }, A)
    expect(prefixed.body.rows).toHaveLength(10)
    // The plans the procedure's statements get, with the same fragments: index scans, no seq scan.
    const plan = async (where: string, params: unknown[]) =>
      (await app.database.sql<{ 'QUERY PLAN': string }>(`explain select key from queen.stream_state s where s.query_id = $1 and s.partition_id = $2 and ${where}`, [id, PID, ...params]))
        .map((r) => r['QUERY PLAN'])
        .join('\n')
    const ripePlan = await plan(
      `jsonb_typeof(s.value -> 'windowEnd') = 'number' and (case when jsonb_typeof(s.value -> 'windowEnd') = 'number' then (s.value ->> 'windowEnd')::numeric end) <= $3`,
      [3],
    )
    expect(ripePlan).toMatch(/stream_state_window_end_idx/)
    expect(await plan(`s.key >= $3 and s.key < $4`, ['op\u001f00001', 'op\u001f00002'])).toMatch(/Index (Only )?Scan using stream_state_pkey/)
  })
})

describe('tenancy', () => {
  it("never touches another tenant's partition: a flush naming one is not held by that tenant's lease", async () => {
    // acme holds a lease on its own partition.
    await push(app, [{ queue: 'lk.src', partition: 'p', payload: 1 }], A)
    const popped = await app.json('GET', '/api/v1/pop/queue/lk.src?batch=1', undefined, A)
    expect(popped.status).toBe(200)
    const pid = popped.body.partitionId as string
    // globex names that partition in its own query's cycles: its state rows are its own, and the
    // flush's lease check must not reach (or lock) acme's cursor row.
    const q = await queryId(app, 'lk', 'lk.src', null, B)
    expect((await cycle(app, { query_id: q, partition_id: pid, state_ops: upserts({ k: 1 }) }, B)).body.success).toBe(true)
    await stateGet(app, { query_id: q, partition_id: pid }, B)
    const flush = await cycle(app, { query_id: q, partition_id: pid, state_ops: [{ type: 'delete', key: 'k' }] }, B)
    expect(flush.body).toMatchObject({ success: true, state_ops_applied: 1, queueName: null })
    expect(flush.body.deferred).toBeUndefined()
    // acme's lease is untouched and its ack goes through.
    const [m] = popped.body.messages
    const acked = await app.json('POST', '/api/v1/ack', { transactionId: m.transactionId, partitionId: pid, leaseId: popped.body.leaseId, status: 'completed' }, A)
    expect(acked.body[0].success).toBe(true)
  })


  it('two tenants with same-named queries get distinct ids and never see or write each other\'s state', async () => {
    const a = await queryId(app, 'same', 'same.src', null, A)
    const b = await queryId(app, 'same', 'same.src', null, B)
    expect(a).not.toBe(b)
    await cycle(app, { query_id: a, partition_id: PID, state_ops: upserts({ who: 'acme' }) }, A)
    await cycle(app, { query_id: b, partition_id: PID, state_ops: upserts({ who: 'globex' }) }, B)
    expect(await stateOf(app, a, PID, A)).toEqual({ who: 'acme' })
    expect(await stateOf(app, b, PID, B)).toEqual({ who: 'globex' })
    // Another tenant's query id reads as an empty state, and a cycle on it fails without writing.
    expect(await stateOf(app, a, PID, B)).toEqual({})
    const foreign = await cycle(app, { query_id: a, partition_id: PID, state_ops: upserts({ who: 'intruder' }) }, B)
    expect(foreign.status).toBe(200)
    expect(foreign.body).toMatchObject({ success: false, error: `Stream query not found: ${a}`, state_ops_applied: 0 })
    expect(await stateOf(app, a, PID, A)).toEqual({ who: 'acme' })
    const names = async (h: Record<string, string>) =>
      ((await app.json('GET', '/streams/v1/queries', undefined, h)).body.queries as { query_id: string }[]).map((q) => q.query_id)
    expect(await names(A)).toContain(a)
    expect(await names(A)).not.toContain(b)
    expect((await app.json('DELETE', '/streams/v1/queries/same', undefined, B)).body).toEqual({ deleted: true, state_rows: 1 })
    expect(await stateOf(app, a, PID, A)).toEqual({ who: 'acme' })
  })
})
