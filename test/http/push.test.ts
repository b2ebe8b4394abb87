import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { testApp, type TestApp } from '../helpers/app.js'
import { configureQueue, pop, push, writtenRows } from '../helpers/engine.js'

let app: TestApp
beforeAll(async () => {
  app = await testApp()
})
afterAll(() => app.close())

describe('POST /api/v1/push', () => {
  it('answers 201 with snake_case results in item order and creates the queue and partition', async () => {
    const trace = '0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b'
    const res = await app.json('POST', '/api/v1/push', {
      items: [
        { queue: 'billing.invoice.v2', payload: { n: 1 }, traceId: trace },
        { queue: 'billing.invoice.v2', partition: '', data: { n: 2 } },
        { queue: 'billing.invoice.v2', partition: null },
      ],
    })
    expect(res.status).toBe(201)
    expect(res.body).toHaveLength(3)
    const [a, b, c] = res.body
    expect(a).toEqual({
      index: 0, transaction_id: expect.any(String), status: 'queued', message_id: expect.any(String),
      partition_id: expect.any(String), trace_id: trace, queueName: 'billing.invoice.v2', offset: 0,
    })
    expect([b.index, b.offset, c.index, c.offset]).toEqual([1, 1, 2, 2])
    // Server-minted transaction and message ids are UUIDv7 (D17).
    expect(a.transaction_id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7/)
    expect(a.message_id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7/)
    const [queue] = await app.database.sql(`select namespace, task from queen.queues where name = 'billing.invoice.v2'`)
    expect(queue).toEqual({ namespace: 'billing', task: 'invoice' })
    const parts = await app.database.sql(`select p.name from queen.log_partitions p join queen.queues q on q.id = p.queue_id where q.name = 'billing.invoice.v2'`)
    expect(parts).toEqual([{ name: 'Default' }])
  })


  it('mints one fresh UUIDv7 per stored item: its message id, and its transaction id when it names none (docs/engine.md)', async () => {
    const v7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/
    // Without any client transaction id (the fast path) and mixed with one (the dedup path).
    const plain = await push(app, Array.from({ length: 150 }, (_, i) => ({ queue: 'minted', partition: `p${i % 3}`, payload: i })))
    const mixed = await push(app, [
      { queue: 'minted', payload: 'a' },
      { queue: 'minted', transactionId: 'client-key', payload: 'b' },
      { queue: 'minted', transactionId: 'client-key', payload: 'c' },
      { queue: 'minted', payload: 'd' },
    ])
    for (const r of [...plain, mixed[0]!, mixed[3]!]) {
      expect(r.message_id).toMatch(v7)
      expect(r.transaction_id).toBe(r.message_id)
    }
    expect(mixed[1]).toMatchObject({ transaction_id: 'client-key', status: 'queued', message_id: expect.stringMatching(v7) })
    expect(mixed[2]).toMatchObject({ transaction_id: 'client-key', status: 'duplicate', message_id: mixed[1]!.message_id })
    const ids = [...plain, ...mixed].map((r) => r.message_id)
    expect(new Set(ids).size).toBe(ids.length - 1)
    const { messages } = await pop(app, 'minted', { batch: 200 }, 'p0')
    expect(messages).toHaveLength(50)
    for (const m of messages) expect(m.transactionId).toBe(m.id)
  })
  it('answers an empty items array with 201 [] and writes nothing', async () => {
    const before = await writtenRows(app)
    const res = await app.json('POST', '/api/v1/push', { items: [] })
    expect(res).toMatchObject({ status: 201, body: [] })
    expect(await writtenRows(app)).toEqual(before)
  })

  it('round-trips payloads of any JSON type exactly, a 1 MB document included', async () => {
    const big = { rows: Array.from({ length: 10_000 }, (_, i) => ({ i, s: 'x'.repeat(90), f: i / 7, u: 'ü€😀' })) }
    expect(JSON.stringify(big).length).toBeGreaterThan(1_000_000)
    const payloads = [null, {}, [], 0, -1.5, 'text', true, false, [1, 'a', null, { b: [] }], { nested: { deep: [{ x: null }] } }, big]
    await push(app, payloads.map((payload) => ({ queue: 'payloads', payload })))
    await push(app, [{ queue: 'payloads' }])
    const { messages } = await pop(app, 'payloads', { batch: 100 })
    expect(messages.map((m) => m.data)).toEqual([...payloads, {}])
  })

  it('deduplicates within one request and across requests, reporting the winner', async () => {
    const first = await push(app, [
      { queue: 'dedup', transactionId: 'k1', payload: 1 },
      { queue: 'dedup', transactionId: 'k1', payload: 2 },
      { queue: 'dedup', transactionId: 'k2', payload: 3 },
      { queue: 'dedup', transactionId: 'k1', partition: 'other', payload: 4 },
      { queue: 'dedup', payload: 5 },
      { queue: 'dedup', payload: 5 },
    ])
    expect(first.map((r) => r.status)).toEqual(['queued', 'duplicate', 'queued', 'queued', 'queued', 'queued'])
    expect(first[1]).toMatchObject({ message_id: first[0]!.message_id, offset: first[0]!.offset, transaction_id: 'k1' })
    expect(first[1]).not.toHaveProperty('trace_id')
    expect(first[3]!.partition_id).not.toBe(first[0]!.partition_id)

    const again = await push(app, [{ queue: 'dedup', transactionId: 'k2', payload: 'x' }, { queue: 'dedup', transactionId: 'k3' }])
    expect(again[0]).toMatchObject({ status: 'duplicate', message_id: first[2]!.message_id, offset: first[2]!.offset })
    expect(again[1]!.status).toBe('queued')
    const { messages } = await pop(app, 'dedup', { batch: 100 }, 'Default')
    expect(messages.map((m) => m.data)).toEqual([1, 3, 5, 5, {}])
  })

  it('lets exactly one of many concurrent pushes of one key win', async () => {
    const answers = await Promise.all(
      Array.from({ length: 12 }, (_, i) => push(app, [{ queue: 'race', transactionId: 'same-key', payload: i }, { queue: 'race', payload: `filler-${i}` }])),
    )
    const keyed = answers.map((a) => a[0]!)
    expect(keyed.filter((r) => r.status === 'queued')).toHaveLength(1)
    const winner = keyed.find((r) => r.status === 'queued')!
    for (const r of keyed) expect(r).toMatchObject({ message_id: winner.message_id, offset: winner.offset })
    const [row] = await app.database.sql<{ n: number }>(`
      select count(*)::int as n from queen.log_segments s, unnest(s.frames) f
       join queen.log_partitions p on true
      where p.id = s.partition_id and p.name = 'Default' and f->>'txn' = 'same-key'`)
    expect(row!.n).toBe(1)
  })

  it('disables dedup entirely, inside one request too, when dedupWindowSeconds is 0', async () => {
    await push(app, [{ queue: 'nodedup', transactionId: 'k' }])
    await configureQueue(app, 'nodedup', { dedup_window_seconds: 0 })
    const res = await push(app, [{ queue: 'nodedup', transactionId: 'k' }, { queue: 'nodedup', transactionId: 'k' }])
    expect(res.map((r) => r.status)).toEqual(['queued', 'queued'])
    expect(res.map((r) => r.offset)).toEqual([1, 2])
  })

  it('accepts a key again once its dedup window has passed', async () => {
    const t0 = new Date('2030-01-01T10:00:00Z')
    const item = { index: 0, queue: 'window', partition: 'Default', transactionId: 'k', traceId: null, producerSub: null, enc: false, data: 1 }
    await app.db.call('log_push_v1', { tenant: '', items: [item], now: t0 })
    const inside = await app.db.call('log_push_v1', { tenant: '', items: [item], now: new Date(t0.getTime() + 3599_000) })
    const after = await app.db.call('log_push_v1', { tenant: '', items: [item], now: new Date(t0.getTime() + 3601_000) })
    expect(inside.items[0]!.status).toBe('duplicate')
    expect(after.items[0]).toMatchObject({ status: 'queued', offset: 1 })
  })

  it('stamps producerSub from the token and ignores one in the body', async () => {
    const authed = await testApp({
      database: app.database,
      deps: { authenticate: async () => ({ roles: new Set(['write-only', 'read-write'] as const), sub: 'svc-billing', tenant: null }) },
    })
    try {
      await push(authed, [{ queue: 'subs', payload: 1, producerSub: 'forged' }])
      await push(app, [{ queue: 'subs', payload: 2, producerSub: 'forged' }])
      const { messages } = await pop(app, 'subs', { batch: 10 })
      expect(messages.map((m) => m.producerSub)).toEqual(['svc-billing', null])
    } finally {
      await authed.close()
    }
  })

  it('splits a large push into segments that share one createdAt, and a subscription at that instant sees all of it', async () => {
    const res = await push(app, Array.from({ length: 2500 }, (_, i) => ({ queue: 'split', payload: i })))
    expect(res.map((r) => r.offset)).toEqual(Array.from({ length: 2500 }, (_, i) => i))
    const segments = await app.database.sql<{ base: number; last: number; at: string }>(`
      select s.base_offset::int as base, s.last_offset::int as last, s.created_at::text as at
        from queen.log_segments s join queen.log_partitions p on p.id = s.partition_id join queen.queues q on q.id = p.queue_id
       where q.name = 'split' order by s.base_offset`)
    expect(segments.map((s) => [s.base, s.last])).toEqual([[0, 999], [1000, 1999], [2000, 2499]])
    expect(new Set(segments.map((s) => s.at)).size).toBe(1)
    const head = await pop(app, 'split', { batch: 1, autoAck: true })
    const sub = await pop(app, 'split', { consumerGroup: 'late', subscriptionFrom: head.messages[0]!.createdAt, batch: 1 })
    expect(sub.messages[0]!.offset).toBe(0)
  })

  it('splits at 1 MiB of frames as well as at 1000', async () => {
    await push(app, Array.from({ length: 5 }, (_, i) => ({ queue: 'bytesplit', payload: 'y'.repeat(400_000) + i })))
    const segments = await app.database.sql<{ n: number }>(`
      select s.frame_count as n from queen.log_segments s join queen.log_partitions p on p.id = s.partition_id
        join queen.queues q on q.id = p.queue_id where q.name = 'bytesplit' order by s.base_offset`)
    expect(segments.map((s) => s.n)).toEqual([3, 2])
  })

  it('quantises lastWriteAt to the second and never moves it or the head backwards', async () => {
    const item = { index: 0, queue: 'clock', partition: 'Default', transactionId: null, traceId: null, producerSub: null, enc: false, data: 1 }
    const read = async () =>
      (await app.database.sql<{ head: string; lw: string }>(`
        select to_char(p.head_at at time zone 'UTC', 'HH24:MI:SS.US') as head, to_char(p.last_write_at at time zone 'UTC', 'HH24:MI:SS.US') as lw
          from queen.log_partitions p join queen.queues q on q.id = p.queue_id where q.name = 'clock'`))[0]!
    await app.db.call('log_push_v1', { tenant: '', items: [item], now: new Date('2030-01-01T10:00:00.700Z') })
    expect(await read()).toEqual({ head: '10:00:00.700000', lw: '10:00:00.000000' })
    await app.db.call('log_push_v1', { tenant: '', items: [item], now: new Date('2030-01-01T10:00:00.900Z') })
    expect(await read()).toEqual({ head: '10:00:00.900000', lw: '10:00:00.000000' })
    // A clock that steps back: the head moves on by a microsecond, lastWriteAt stays put.
    await app.db.call('log_push_v1', { tenant: '', items: [item], now: new Date('2030-01-01T09:59:58.000Z') })
    expect(await read()).toEqual({ head: '10:00:00.900001', lw: '10:00:00.000000' })
    await app.db.call('log_push_v1', { tenant: '', items: [item], now: new Date('2030-01-01T10:00:01.200Z') })
    expect(await read()).toEqual({ head: '10:00:01.200000', lw: '10:00:01.000000' })
  })

  it('keeps offsets gap-free and createdAt strictly increasing under concurrent pushers', async () => {
    await Promise.all(
      Array.from({ length: 6 }, async (_, w) => {
        for (let k = 0; k < 8; k++) {
          const n = 1 + ((w * 7 + k * 3) % 9)
          await push(app, Array.from({ length: n }, (_, i) => ({ queue: 'gapfree', partition: `p${(w + i) % 3}`, payload: [w, k, i] })))
        }
      }),
    )
    const rows = await app.database.sql<{ name: string; offsets: number[]; ats: string[]; last: number }>(`
      select p.name, p.last_offset::int as last,
             array_agg(s.base_offset + o.i - 1 order by s.base_offset, o.i)::int[] as offsets,
             array_agg(s.created_at::text order by s.base_offset, o.i) as ats
        from queen.log_partitions p join queen.queues q on q.id = p.queue_id
        join queen.log_segments s on s.partition_id = p.id
        cross join lateral unnest(s.frames) with ordinality o(f, i)
       where q.name = 'gapfree' group by p.name, p.last_offset`)
    expect(rows).toHaveLength(3)
    for (const r of rows) {
      expect(r.offsets).toEqual(Array.from({ length: r.last + 1 }, (_, i) => i))
    }
    const segs = await app.database.sql<{ ok: boolean }>(`
      select bool_and(s.created_at > prev) as ok from (
        select s.created_at, lag(s.created_at) over (partition by s.partition_id order by s.base_offset) as prev
          from queen.log_segments s join queen.log_partitions p on p.id = s.partition_id join queen.queues q on q.id = p.queue_id
         where q.name = 'gapfree') s where prev is not null`)
    expect(segs[0]!.ok).toBe(true)
  })

  it('lands in the recreated queue when the queue it looked up is deleted before its lock (steady-state lookup)', async () => {
    const first = await push(app, [{ queue: 'reborn', partition: 'p', payload: 'old' }])
    // The delete holds the queue row until it commits; the push finds every target by its lookup,
    // then waits for that row, which is gone once it may lock it.
    const deleter = new pg.Client({ connectionString: app.database.url })
    await deleter.connect()
    try {
      await deleter.query('begin')
      await deleter.query(`select queen.delete_queue_v1('', 'reborn')`)
      const pushing = app.json('POST', '/api/v1/push', { items: [{ queue: 'reborn', partition: 'p', payload: 'new' }] })
      for (let waited = 0; ; waited += 20) {
        const [row] = await app.database.sql(`select count(*)::int as n from pg_stat_activity where wait_event_type = 'Lock' and query like '%log_push_v1%'`)
        if ((row as { n: number }).n > 0) break
        if (waited > 10_000) throw new Error('the push never waited for the deleted queue row')
        await new Promise((done) => setTimeout(done, 20))
      }
      await deleter.query('commit')
      const res = await pushing
      expect(res.status).toBe(201)
      expect(res.body[0].partition_id).not.toBe(first[0]!.partition_id)
      expect(res.body[0].offset).toBe(0)
    } finally {
      await deleter.end()
    }
    const got = await pop(app, 'reborn', { batch: 10 })
    expect(got.messages.map((m) => m.data)).toEqual(['new'])
  })
})

describe('push refuses bad input with 4xx and writes nothing', () => {
  const cases: [string, unknown, number, string][] = [
    ['no items', {}, 400, 'items array is required'],
    ['items not an array', { items: { queue: 'q' } }, 400, 'items array is required'],
    ['an item that is not an object', { items: [{ queue: 'ok' }, 3] }, 400, 'Each item must be an object (items[1])'],
    ['a missing queue', { items: [{ payload: 1 }] }, 400, 'Queue must be a string (items[0])'],
    ['a numeric queue', { items: [{ queue: 5 }] }, 400, 'Queue must be a string (items[0])'],
    ['an over-long queue', { items: [{ queue: 'q'.repeat(256) }] }, 400, 'Queue name must be at most 255 characters (items[0])'],
    ['a numeric partition', { items: [{ queue: 'q', partition: 1 }] }, 400, 'Partition must be a string (items[0])'],
    ['a numeric transactionId', { items: [{ queue: 'q', transactionId: 7 }] }, 400, 'TransactionId must be a string (items[0])'],
    ['a numeric traceId', { items: [{ queue: 'q', traceId: 7 }] }, 400, 'TraceId must be a string (items[0])'],
    ['a traceId that is not a UUID', { items: [{ queue: 'q' }, { queue: 'q', traceId: 'abc' }] }, 400, 'TraceId must be a UUID (items[1])'],
    ['U+0000 inside a payload', { items: [{ queue: 'q', payload: { a: 'x\u0000y' } }] }, 400, 'items[0].payload.a must not contain U+0000'],
  ]
  it.each(cases)('%s', async (_name, body, status, error) => {
    const before = await writtenRows(app)
    const res = await app.json('POST', '/api/v1/push', body)
    expect(res.status).toBe(status)
    expect(res.body).toMatchObject({ error, code: 'invalid_request' })
    expect(await writtenRows(app)).toEqual(before)
  })

  it('answers invalid JSON 400 invalid_json', async () => {
    const res = await app.json('POST', '/api/v1/push', '{"items": [')
    expect(res.status).toBe(400)
    expect(res.body.code).toBe('invalid_json')
  })

  it('refuses a frame over MAX_FRAME_BYTES with 413 naming the item', async () => {
    const small = await testApp({ database: app.database, env: { MAX_FRAME_BYTES: '2048', MAX_PUSH_ITEMS: '3' } })
    try {
      const before = await writtenRows(app)
      const res = await small.json('POST', '/api/v1/push', { items: [{ queue: 'big', payload: 'ok' }, { queue: 'big', payload: 'z'.repeat(3000) }] })
      expect(res.status).toBe(413)
      expect(res.body.code).toBe('payload_too_large')
      expect(res.body.error).toContain('(items[1])')
      // Two oversized items: the first is named, whichever way the items were encoded.
      const two = await small.json('POST', '/api/v1/push', { items: [{ queue: 'big', payload: 'ok' }, { queue: 'big', payload: 'y'.repeat(3000) }, { queue: 'big', payload: 'z'.repeat(3000) }] })
      expect(two.status).toBe(413)
      expect(two.body.error).toBe('Item too large: 3098 bytes stored (limit 2048) (items[1])')
      const many = await small.json('POST', '/api/v1/push', { items: [{ queue: 'big' }, { queue: 'big' }, { queue: 'big' }, { queue: 'big' }] })
      expect(many.status).toBe(413)
      expect(many.body.code).toBe('payload_too_large')
      expect(await writtenRows(app)).toEqual(before)
    } finally {
      await small.close()
    }
  })
})
