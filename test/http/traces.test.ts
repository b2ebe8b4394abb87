// Message traces (API §5.11, ENGINE §2.8): create with its defaults, limits and refusals; worker_id
// as the lease the message was under; the three reads with their orders, shapes and paging;
// decrypted payloads that turn null once retention removes the frame; traces that survive their
// queue; and tenant isolation on all four routes.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { testApp, type TestApp } from '../helpers/app.js'
import { ack, acksOf, pop, push } from '../helpers/engine.js'

const KEY = 'a'.repeat(64)
const UUID_V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/
const MS = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/
const ENTRY_KEYS = ['consumer_group', 'created_at', 'data', 'event_type', 'id', 'trace_names', 'worker_id']
const NAMED_KEYS = [...ENTRY_KEYS, 'message_payload', 'partition_id', 'partition_name', 'queue_name', 'transaction_id'].sort()

let app: TestApp
let tenants: TestApp
beforeAll(async () => {
  app = await testApp({ env: { QUEEN_ENCRYPTION_KEY: KEY } })
  tenants = await testApp({ env: { QUEEN_TENANCY_HEADER: 'X-Tenant' } })
})
afterAll(async () => {
  await app.close()
  await tenants.close()
})

interface Key {
  partitionId: string
  transactionId: string
}

/** Pushes one message and returns its key. */
async function message(queue: string, transactionId: string, payload: unknown = { queue, transactionId }, on = app, headers?: Record<string, string>): Promise<Key> {
  const [item] = await push(on, [{ queue, transactionId, payload }], headers)
  return { partitionId: item!.partition_id, transactionId }
}

const trace = (body: unknown, on = app, headers?: Record<string, string>) => on.json('POST', '/api/v1/traces', body, headers)
const list = (key: Key, on = app, headers?: Record<string, string>) =>
  on.json('GET', `/api/v1/traces/${key.partitionId}/${encodeURIComponent(key.transactionId)}`, undefined, headers)
const byName = (name: string, query = '', on = app, headers?: Record<string, string>) =>
  on.json('GET', `/api/v1/traces/by-name/${encodeURIComponent(name)}${query}`, undefined, headers)
const names = (query = '', on = app, headers?: Record<string, string>) => on.json('GET', `/api/v1/traces/names${query}`, undefined, headers)
const traceRows = async (on = app) => (await on.database.sql<{ n: number }>(`select count(*)::int as n from queen.message_traces`))[0]!.n

async function created(body: Record<string, unknown>, on = app, headers?: Record<string, string>): Promise<string> {
  const res = await trace(body, on, headers)
  expect(res.status, JSON.stringify(res.body)).toBe(201)
  return res.body.traceId
}

describe('POST /api/v1/traces', () => {
  it('answers 201 with a UUIDv7 traceId and stores the defaults, the frame offset and the names at creation', async () => {
    const key = await message('create.q', 'c-1')
    const res = await trace({ ...key, data: { step: 'received' } })
    expect(res.status).toBe(201)
    expect(res.body).toEqual({ success: true, traceId: expect.stringMatching(UUID_V7) })
    const [row] = await app.database.sql(
      `select queue_name, partition_name, frame_offset::int as frame_offset, consumer_group, event_type, data, trace_names, worker_id, tenant_id
         from queen.message_traces where id = $1`,
      [res.body.traceId],
    )
    expect(row).toEqual({
      queue_name: 'create.q',
      partition_name: 'Default',
      frame_offset: 0,
      consumer_group: '__QUEUE_MODE__',
      event_type: 'info',
      data: { step: 'received' },
      trace_names: [],
      worker_id: null,
      tenant_id: '',
    })
  })

  it('accepts any JSON data but null, and explicit consumerGroup and eventType; null means the default', async () => {
    const key = await message('create.data', 'd-1')
    for (const data of [false, 0, '', [], {}, 'text']) await created({ ...key, data })
    await created({ ...key, data: 1, consumerGroup: 'audit', eventType: 'x'.repeat(64) })
    await created({ ...key, data: 2, consumerGroup: null, eventType: null, traceNames: null })
    const { traces } = (await list(key)).body
    expect(traces.map((t: { data: unknown }) => t.data)).toEqual([false, 0, '', [], {}, 'text', 1, 2])
    expect(traces[6]).toMatchObject({ consumer_group: 'audit', event_type: 'x'.repeat(64) })
    expect(traces[7]).toMatchObject({ consumer_group: '__QUEUE_MODE__', event_type: 'info', trace_names: [] })
  })

  it('takes traceNames as a string or an array, removing duplicates in first-seen order', async () => {
    const key = await message('create.names', 'n-1')
    await created({ ...key, data: 1, traceNames: 'checkout' })
    await created({ ...key, data: 2, traceNames: ['b', 'a', 'b', 'c', 'a'] })
    // Twenty distinct names with repeats is within the limit: the limit counts distinct names.
    const twenty = Array.from({ length: 20 }, (_, i) => `n${i}`)
    await created({ ...key, data: 3, traceNames: [...twenty, 'n0', 'n19'] })
    const { traces } = (await list(key)).body
    expect(traces.map((t: { trace_names: string[] }) => t.trace_names)).toEqual([['checkout'], ['b', 'a', 'c'], twenty])
  })

  it('refuses trace names and event types outside their limits, writing nothing', async () => {
    const key = await message('create.limits', 'l-1')
    const before = await traceRows()
    const cases: [Record<string, unknown>, string][] = [
      [{ traceNames: Array.from({ length: 21 }, (_, i) => `n${i}`) }, 'traceNames must hold at most 20 distinct names'],
      [{ traceNames: [''] }, 'traceNames[0] must be 1 to 255 characters'],
      [{ traceNames: ['ok', 'x'.repeat(256)] }, 'traceNames[1] must be 1 to 255 characters'],
      [{ traceNames: '' }, 'traceNames[0] must be 1 to 255 characters'],
      [{ traceNames: ['ok', 7] }, 'traceNames[1] must be a string'],
      [{ traceNames: 7 }, 'traceNames must be a string, an array of strings or null'],
      [{ eventType: 'x'.repeat(65) }, 'eventType must be 1 to 64 characters'],
      [{ eventType: 3 }, 'eventType must be a string'],
      [{ consumerGroup: 'g'.repeat(256) }, 'consumerGroup must be 1 to 255 characters'],
      [{ consumerGroup: {} }, 'consumerGroup must be a string'],
    ]
    for (const [extra, error] of cases) {
      const res = await trace({ ...key, data: 1, ...extra })
      expect(res.status, error).toBe(400)
      expect(res.body, error).toMatchObject({ error, code: 'invalid_request' })
    }
    expect(await traceRows()).toBe(before)
  })

  it('answers 400 when the key or the data is missing; data null counts as missing', async () => {
    const key = await message('create.missing', 'm-1')
    for (const body of [{ data: 1 }, { partitionId: key.partitionId, data: 1 }, { transactionId: 'm-1', data: 1 }, { ...key, transactionId: '', data: 1 }, { ...key, partitionId: null, data: 1 }]) {
      const res = await trace(body)
      expect(res.status, JSON.stringify(body)).toBe(400)
      expect(res.body).toMatchObject({ error: 'transactionId and partitionId are required', code: 'invalid_request' })
    }
    for (const body of [key, { ...key, data: null }]) {
      const res = await trace(body)
      expect(res.status).toBe(400)
      expect(res.body).toMatchObject({ error: 'data is required', code: 'invalid_request' })
    }
    expect((await trace({ ...key, transactionId: 'x'.repeat(256), data: 1 })).body).toMatchObject({
      error: 'transactionId must be at most 255 characters',
      code: 'invalid_request',
    })
    expect((await trace('{broken')).body.code).toBe('invalid_json')
  })

  it('answers 404 message_not_found for an unknown key, an unknown or malformed partitionId, and a deleted message', async () => {
    const key = await message('create.404', 'f-1')
    const before = await traceRows()
    const bodies = [
      { ...key, transactionId: 'never-pushed' },
      { ...key, partitionId: '01890a5d-ac96-774b-bcce-b302099a8057' },
      { ...key, partitionId: 'not-a-uuid' },
      { ...key, partitionId: `${key.partitionId}x` },
    ]
    for (const body of bodies) {
      const res = await trace({ ...body, data: 1 })
      expect(res.status, JSON.stringify(body)).toBe(404)
      expect(res.body).toMatchObject({ error: 'Message not found', code: 'message_not_found' })
    }
    // A message deleted by the admin route (D20: a tombstone) is no longer there to be traced.
    await app.database.sql(`insert into queen.log_tombstones (partition_id, frame_offset) values ($1, 0)`, [key.partitionId])
    expect((await trace({ ...key, data: 1 })).status).toBe(404)
    expect(await traceRows()).toBe(before)
  })

  it('records against the newest retained frame when a key was pushed again', async () => {
    await configureNoDedup('create.repeat')
    const first = await message('create.repeat', 'r-1', 'first')
    await message('create.repeat', 'r-1', 'second')
    const id = await created({ ...first, data: 1 })
    const [row] = await app.database.sql<{ frame_offset: number }>(`select frame_offset::int as frame_offset from queen.message_traces where id = $1`, [id])
    expect(row!.frame_offset).toBe(1)
  })
})

/** Turns dedup off for a queue, so a key can be pushed twice. */
async function configureNoDedup(queue: string) {
  const res = await app.json('POST', '/api/v1/configure', { queue, dedupWindowSeconds: 0 })
  expect(res.status, JSON.stringify(res.body)).toBe(200)
}

describe('worker_id', () => {
  it('is the lease id while the trace group holds a live lease covering the message, else null', async () => {
    const key = await message('worker.q', 'w-1')
    await message('worker.q', 'w-2')
    const { messages, leaseId } = await pop(app, 'worker.q', { batch: 1 })
    expect(messages.map((m) => m.transactionId)).toEqual(['w-1'])

    await created({ ...key, data: 'leased' })
    await created({ ...key, data: 'other group', consumerGroup: 'analytics' })
    await created({ ...key, transactionId: 'w-2', data: 'outside the leased range' })
    // An expired lease no longer covers the message, whether or not anything reclaimed it yet.
    await app.database.sql(`update queen.log_consumers set lease_expires_at = now() - interval '1 minute' where lease_id = $1`, [leaseId])
    await created({ ...key, data: 'expired' })
    await app.database.sql(`update queen.log_consumers set lease_expires_at = now() + interval '5 minutes' where lease_id = $1`, [leaseId])
    await ack(app, acksOf(messages))
    await created({ ...key, data: 'after ack' })

    const worker = async (k: Key) => (await list(k)).body.traces.map((t: { data: string; worker_id: string | null }) => [t.data, t.worker_id])
    expect(await worker(key)).toEqual([
      ['leased', leaseId],
      ['other group', null],
      ['expired', null],
      ['after ack', null],
    ])
    expect(await worker({ ...key, transactionId: 'w-2' })).toEqual([['outside the leased range', null]])
  })

  it('follows the named group whose lease it is', async () => {
    const key = await message('worker.bus', 'b-1')
    const { leaseId } = await pop(app, 'worker.bus', { consumerGroup: 'billing', subscriptionMode: 'all' })
    await created({ ...key, data: 1, consumerGroup: 'billing' })
    await created({ ...key, data: 2 })
    expect((await list(key)).body.traces.map((t: { worker_id: string | null }) => t.worker_id)).toEqual([leaseId, null])
  })
})

describe('GET /api/v1/traces/:partitionId/:transactionId', () => {
  it('lists a message’s traces oldest first as snake_case entries', async () => {
    const key = await message('list.q', 'order/1 +x')
    const ids = [
      await created({ ...key, data: { n: 1 }, traceNames: ['a'] }),
      await created({ ...key, data: { n: 2 }, eventType: 'error' }),
      await created({ ...key, data: { n: 3 }, consumerGroup: 'g' }),
    ]
    const res = await list(key)
    expect(res.status).toBe(200)
    expect(Object.keys(res.body)).toEqual(['traces'])
    expect(res.body.traces.map((t: { id: string }) => t.id)).toEqual(ids)
    for (const t of res.body.traces) expect(Object.keys(t).sort()).toEqual(ENTRY_KEYS)
    expect(res.body.traces[0]).toEqual({
      id: ids[0],
      event_type: 'info',
      data: { n: 1 },
      consumer_group: '__QUEUE_MODE__',
      worker_id: null,
      created_at: expect.stringMatching(MS),
      trace_names: ['a'],
    })
    expect(res.body.traces[1].event_type).toBe('error')
    const times = res.body.traces.map((t: { created_at: string }) => t.created_at)
    expect([...times].sort()).toEqual(times)
  })

  it('answers an empty list for an unknown key or a malformed partitionId, never an error', async () => {
    const key = await message('list.empty', 'e-1')
    await created({ ...key, data: 1 })
    for (const other of [{ ...key, transactionId: 'e-2' }, { ...key, partitionId: '01890a5d-ac96-774b-bcce-b302099a8057' }, { ...key, partitionId: 'nope' }]) {
      const res = await list(other)
      expect(res.status).toBe(200)
      expect(res.body).toEqual({ traces: [] })
    }
    expect((await list({ ...key, transactionId: 'x'.repeat(256) })).status).toBe(400)
  })
})

describe('GET /api/v1/traces/by-name/:name', () => {
  it('lists the traces carrying a name newest first, with the message and total', async () => {
    const a = await message('byname.q', 'a-1', { a: 1 })
    const b = await message('byname.q', 'b-1', { b: 1 })
    const first = await created({ ...a, data: 1, traceNames: ['flow', 'other'] })
    await created({ ...b, data: 'not in flow', traceNames: ['other'] })
    const second = await created({ ...b, data: 2, traceNames: 'flow' })
    const res = await byName('flow')
    expect(res.status).toBe(200)
    expect(res.body.total).toBe(2)
    expect(res.body.pagination).toEqual({ limit: 100, offset: 0 })
    expect(res.body.traces.map((t: { id: string }) => t.id)).toEqual([second, first])
    for (const t of res.body.traces) expect(Object.keys(t).sort()).toEqual(NAMED_KEYS)
    expect(res.body.traces[1]).toEqual({
      id: first,
      event_type: 'info',
      data: 1,
      consumer_group: '__QUEUE_MODE__',
      worker_id: null,
      created_at: expect.stringMatching(MS),
      trace_names: ['flow', 'other'],
      transaction_id: 'a-1',
      partition_id: a.partitionId,
      queue_name: 'byname.q',
      partition_name: 'Default',
      message_payload: { a: 1 },
    })
    expect((await byName('nobody')).body).toEqual({ traces: [], total: 0, pagination: { limit: 100, offset: 0 } })
  })

  it('pages with limit and offset; total counts every match', async () => {
    const key = await message('byname.page', 'p-1')
    const ids: string[] = []
    for (let i = 0; i < 5; i++) ids.push(await created({ ...key, data: i, traceNames: ['paged'] }))
    const newest = [...ids].reverse()
    const page1 = (await byName('paged', '?limit=2')).body
    const page2 = (await byName('paged', '?limit=2&offset=2')).body
    const page3 = (await byName('paged', '?limit=2&offset=4')).body
    expect([page1, page2, page3].map((p) => p.total)).toEqual([5, 5, 5])
    expect([...page1.traces, ...page2.traces, ...page3.traces].map((t: { id: string }) => t.id)).toEqual(newest)
    expect(page2.pagination).toEqual({ limit: 2, offset: 2 })
    expect((await byName('paged', '?offset=9')).body).toMatchObject({ traces: [], total: 5 })
  })

  it('decrypts the payload of an encrypted queue', async () => {
    const configured = await app.json('POST', '/api/v1/configure', { queue: 'byname.secret', encryptionEnabled: true })
    expect(configured.status).toBe(200)
    const key = await message('byname.secret', 's-1', { card: '4111' })
    const [stored] = await app.database.sql<{ frame: { enc: boolean; data: Record<string, unknown> } }>(
      `select frames[1] as frame from queen.log_segments where partition_id = $1`,
      [key.partitionId],
    )
    expect(stored!.frame.enc).toBe(true)
    expect(stored!.frame.data).not.toHaveProperty('card')
    await created({ ...key, data: 'seen', traceNames: 'secret-flow' })
    expect((await byName('secret-flow')).body.traces[0].message_payload).toEqual({ card: '4111' })
  })

  it('answers message_payload null once the message is no longer retained or was deleted, keeping the trace', async () => {
    const kept = await message('byname.retained', 'k-1', { keep: true })
    const gone = await message('byname.gone', 'g-1', { gone: true })
    const deleted = await message('byname.retained', 'k-2', { deleted: true })
    await created({ ...kept, data: 1, traceNames: 'ret' })
    await created({ ...gone, data: 2, traceNames: 'ret' })
    await created({ ...deleted, data: 3, traceNames: 'ret' })
    // Retention's delete-and-advance (ENGINE §7.1) of the whole partition of byname.gone.
    await app.database.sql(`delete from queen.log_segments where partition_id = $1`, [gone.partitionId])
    await app.database.sql(`update queen.log_partitions set log_start = last_offset + 1 where id = $1`, [gone.partitionId])
    // Message delete (D20) tombstones the frame.
    await app.database.sql(`insert into queen.log_tombstones (partition_id, frame_offset) values ($1, 1)`, [deleted.partitionId])
    const payloads = (await byName('ret')).body.traces.map((t: { transaction_id: string; message_payload: unknown }) => [t.transaction_id, t.message_payload])
    expect(payloads).toEqual([
      ['k-2', null],
      ['g-1', null],
      ['k-1', { keep: true }],
    ])
    expect((await list(gone)).body.traces.map((t: { data: number }) => t.data)).toEqual([2])
  })

  it('shows the payload of the frame the trace was written for, not a later message reusing the key', async () => {
    await configureNoDedup('byname.reuse')
    const key = await message('byname.reuse', 'u-1', 'first')
    await created({ ...key, data: 1, traceNames: 'reuse' })
    await message('byname.reuse', 'u-1', 'second')
    expect((await byName('reuse')).body.traces[0].message_payload).toBe('first')
  })
})

describe('GET /api/v1/traces/names', () => {
  it('lists names most recently seen first with trace and message counts and last_seen', async () => {
    const on = await testApp()
    try {
      const [x, y] = [await message('names.q', 'x', 1, on), await message('names.q', 'y', 2, on)]
      await created({ ...x, data: 1, traceNames: ['alpha', 'beta'] }, on)
      await created({ ...x, data: 2, traceNames: ['alpha'] }, on)
      await created({ ...y, data: 3, traceNames: ['alpha'] }, on)
      await created({ ...y, data: 4, traceNames: ['gamma'] }, on)
      await created({ ...y, data: 5 }, on)
      const res = await names('', on)
      expect(res.status).toBe(200)
      expect(res.body.total).toBe(3)
      expect(res.body.pagination).toEqual({ limit: 50, offset: 0 })
      expect(res.body.trace_names.map((n: { trace_name: string; trace_count: number; message_count: number }) => [n.trace_name, n.trace_count, n.message_count])).toEqual([
        ['gamma', 1, 1],
        ['alpha', 3, 2],
        ['beta', 1, 1],
      ])
      const [last] = await on.database.sql<{ at: string }>(
        `select to_char(max(created_at) at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as at from queen.message_traces where 'alpha' = any(trace_names)`,
      )
      expect(res.body.trace_names[1]).toEqual({ trace_name: 'alpha', trace_count: 3, message_count: 2, last_seen: last!.at })
      const paged = (await names('?limit=1&offset=1', on)).body
      expect(paged).toEqual({ trace_names: [res.body.trace_names[1]], total: 3, pagination: { limit: 1, offset: 1 } })
    } finally {
      await on.close()
    }
  })
})

describe('paging parameters', () => {
  it('refuses a limit or offset that is not a base-10 integer', async () => {
    for (const query of ['?limit=abc', '?limit=1.5', '?limit=-1', '?offset=x', '?offset=-2', '?limit=1e3']) {
      for (const res of [await byName('any', query), await names(query)]) {
        expect(res.status, query).toBe(400)
        expect(res.body.code, query).toBe('invalid_request')
        expect(res.body.error, query).toMatch(/^(limit|offset) must be/)
      }
    }
  })

  it('clamps limit to 1..1000 and treats an empty value as absent', async () => {
    const key = await message('paging.q', 'pg-1')
    await created({ ...key, data: 1, traceNames: 'clamp' })
    await created({ ...key, data: 2, traceNames: 'clamp' })
    const zero = (await byName('clamp', '?limit=0')).body
    expect(zero.pagination).toEqual({ limit: 1, offset: 0 })
    expect(zero.traces).toHaveLength(1)
    expect((await byName('clamp', '?limit=5000')).body.pagination).toEqual({ limit: 1000, offset: 0 })
    expect((await names('?limit=99999&offset=')).body.pagination).toEqual({ limit: 1000, offset: 0 })
    expect((await byName('clamp', '?limit=&offset=')).body.pagination).toEqual({ limit: 100, offset: 0 })
  })
})

describe('traces outlive their queue', () => {
  it('keeps listing traces, names and queue and partition names after the queue is deleted', async () => {
    const key = await message('doomed.q', 'z-1', { z: 1 })
    await created({ ...key, data: 'before delete', traceNames: 'doomed' })
    // The delete route is another issue's; its effect on these tables is the queues row going.
    await app.database.sql(`delete from queen.queues where name = 'doomed.q'`)
    expect(await app.database.sql(`select 1 from queen.log_partitions where id = $1`, [key.partitionId])).toEqual([])
    expect((await list(key)).body.traces.map((t: { data: string }) => t.data)).toEqual(['before delete'])
    expect((await byName('doomed')).body.traces).toEqual([
      expect.objectContaining({ queue_name: 'doomed.q', partition_name: 'Default', partition_id: key.partitionId, message_payload: null }),
    ])
    expect((await names()).body.trace_names.map((n: { trace_name: string }) => n.trace_name)).toContain('doomed')
    // Nothing is left to record a new trace against.
    expect((await trace({ ...key, data: 1 })).status).toBe(404)
  })
})

describe('tenant isolation', () => {
  const A = { 'X-Tenant': 'acme' }
  const B = { 'X-Tenant': 'globex' }

  it('keeps every trace route inside its tenant', async () => {
    const ka = await message('shared', 't-1', { tenant: 'acme' }, tenants, A)
    const kb = await message('shared', 't-1', { tenant: 'globex' }, tenants, B)
    expect(ka.partitionId).not.toBe(kb.partitionId)

    // Create: another tenant's partition behaves exactly like an unknown one.
    const before = await traceRows(tenants)
    const foreign = await trace({ ...ka, data: 1 }, tenants, B)
    expect(foreign.status).toBe(404)
    expect(foreign.body).toMatchObject({ error: 'Message not found', code: 'message_not_found' })
    expect(await traceRows(tenants)).toBe(before)

    await created({ ...ka, data: 'acme trace', traceNames: 'shared-flow' }, tenants, A)
    await created({ ...kb, data: 'globex trace', traceNames: ['shared-flow', 'globex-only'] }, tenants, B)

    expect((await list(ka, tenants, B)).body).toEqual({ traces: [] })
    expect((await list(ka, tenants, A)).body.traces.map((t: { data: string }) => t.data)).toEqual(['acme trace'])

    const seenByA = (await byName('shared-flow', '', tenants, A)).body
    expect(seenByA.total).toBe(1)
    expect(seenByA.traces[0]).toMatchObject({ data: 'acme trace', message_payload: { tenant: 'acme' } })
    expect((await byName('globex-only', '', tenants, A)).body).toMatchObject({ traces: [], total: 0 })

    const namesOf = async (h: Record<string, string>) => (await names('', tenants, h)).body.trace_names.map((n: { trace_name: string; trace_count: number }) => [n.trace_name, n.trace_count])
    expect(await namesOf(A)).toEqual([['shared-flow', 1]])
    expect(await namesOf(B)).toEqual([
      ['globex-only', 1],
      ['shared-flow', 1],
    ])
    expect((await names('', tenants, { 'X-Tenant': 'initech' })).body).toEqual({ trace_names: [], total: 0, pagination: { limit: 50, offset: 0 } })
  })

  it('requires the tenant header on all four routes', async () => {
    const key = { partitionId: '01890a5d-ac96-774b-bcce-b302099a8057', transactionId: 't' }
    for (const res of [await trace({ ...key, data: 1 }, tenants), await list(key, tenants), await byName('n', '', tenants), await names('', tenants)]) {
      expect(res.status).toBe(400)
      expect(res.body.code).toBe('tenant_required')
    }
  })
})
