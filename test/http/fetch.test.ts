// POST /api/v1/fetch (API 5.16, ENGINE 9.3): range reads by offset with limits and byte budgets,
// logStart raising fromOffset, tombstones skipped, decryption, per-entry errors, nothing written.
import fc from 'fast-check'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { testApp, type TestApp } from '../helpers/app.js'
import { push, writtenRows } from '../helpers/engine.js'

const KEY = 'a'.repeat(64)

let app: TestApp
beforeAll(async () => {
  app = await testApp({ env: { QUEEN_ENCRYPTION_KEY: KEY } })
})
afterAll(() => app.close())

const fetchEntries = (entries: unknown) => app.json('POST', '/api/v1/fetch', { entries })
const offsets = (entry: { frames: { offset: number }[] }) => entry.frames.map((f) => f.offset)

let pushed = 0
async function fill(queue: string, partition: string, payloads: unknown[]) {
  return push(app, payloads.map((payload) => ({ queue, partition, payload, transactionId: `${queue}-${partition}-${pushed++}` })))
}

describe('fetch', () => {
  it('reads frames in offset order with their identity, and the bounds of the partition', async () => {
    const pushed = await fill('orders', 'cust-1', [{ n: 0 }, null, 'text', [1, 2], { deep: { x: 1 } }])
    const res = await fetchEntries([{ queue: 'orders', partition: 'cust-1', fromOffset: 0 }])
    expect(res.status).toBe(200)
    const [entry] = res.body.entries
    expect(entry).toMatchObject({ queue: 'orders', partition: 'cust-1', logStart: 0, lastOffset: 4, fromOffset: 0, nextOffset: 5 })
    expect(entry.frames.map((f: { data: unknown }) => f.data)).toEqual([{ n: 0 }, null, 'text', [1, 2], { deep: { x: 1 } }])
    expect(entry.frames[0]).toEqual({
      offset: 0,
      id: pushed[0]!.message_id,
      transactionId: expect.stringMatching(/^orders-cust-1-\d+$/),
      traceId: null,
      producerSub: null,
      createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/),
      data: { n: 0 },
    })
  })

  it('pages by limit and by maxBytes, always returning at least one frame', async () => {
    await fill('paged', 'p', Array.from({ length: 7 }, (_, i) => ({ i, pad: 'x'.repeat(200) })))
    const seen: number[] = []
    let from = 0
    for (let guard = 0; guard < 10; guard++) {
      const [e] = (await fetchEntries([{ queue: 'paged', partition: 'p', fromOffset: from, limit: 3 }])).body.entries
      if (e.frames.length === 0) break
      expect(e.frames.length).toBeLessThanOrEqual(3)
      seen.push(...offsets(e))
      from = e.nextOffset
    }
    expect(seen).toEqual([0, 1, 2, 3, 4, 5, 6])
    const [tiny] = (await fetchEntries([{ queue: 'paged', partition: 'p', fromOffset: 2, maxBytes: 1 }])).body.entries
    expect(offsets(tiny)).toEqual([2])
    expect(tiny.nextOffset).toBe(3)
    // The budget counts stored frame bytes: exactly the first two frames' worth returns two.
    const [sizes] = await app.database.sql<{ a: number; b: number }>(`
      select octet_length(s.frames[1]::text) as a, octet_length(s.frames[2]::text) as b from queen.log_segments s
        join queen.log_partitions p on p.id = s.partition_id join queen.queues q on q.id = p.queue_id where q.name = 'paged'`)
    const two = (await fetchEntries([{ queue: 'paged', partition: 'p', fromOffset: 0, maxBytes: sizes!.a + sizes!.b }])).body.entries[0]
    expect(offsets(two)).toEqual([0, 1])
    const justUnder = (await fetchEntries([{ queue: 'paged', partition: 'p', fromOffset: 0, maxBytes: sizes!.a + sizes!.b - 1 }])).body.entries[0]
    expect(offsets(justUnder)).toEqual([0])
  })

  it('spends one 8 MiB budget across entries; an entry past it answers no frames and is asked again', async () => {
    const big = 'x'.repeat(3 * 1024 * 1024)
    await fill('budget', 'p', [big, big, big])
    const res = await fetchEntries([
      { queue: 'budget', partition: 'p', fromOffset: 0, maxBytes: 8388608 },
      { queue: 'budget', partition: 'p', fromOffset: 1, maxBytes: 8388608 },
      { queue: 'budget', partition: 'p', fromOffset: 2, maxBytes: 8388608 },
    ])
    const [a, b, c] = res.body.entries
    expect(offsets(a)).toEqual([0, 1])
    expect(offsets(b)).toEqual([1]) // budget remained, so at least one frame
    expect(c).toMatchObject({ frames: [], fromOffset: 2, nextOffset: 2 })
  })

  it('starts mid-segment and reads across segments', async () => {
    await fill('segs', 'p', [0, 1, 2])
    await fill('segs', 'p', [3, 4])
    const [e] = (await fetchEntries([{ queue: 'segs', partition: 'p', fromOffset: 1 }])).body.entries
    expect(e.frames.map((f: { data: unknown }) => f.data)).toEqual([1, 2, 3, 4])
  })

  it('polls ahead of the log without error, and raises fromOffset to logStart after retention', async () => {
    await fill('ahead', 'p', [0, 1, 2, 3])
    const [ahead] = (await fetchEntries([{ queue: 'ahead', partition: 'p', fromOffset: 99 }])).body.entries
    expect(ahead).toMatchObject({ fromOffset: 99, nextOffset: 99, frames: [], lastOffset: 3 })
    // What delete-and-advance leaves behind: the first segment gone, logStart past it.
    await fill('ahead', 'p', [4])
    await app.database.sql(`
      with p as (select p.id from queen.log_partitions p join queen.queues q on q.id = p.queue_id where q.name = 'ahead')
      , gone as (delete from queen.log_segments s using p where s.partition_id = p.id and s.last_offset <= 3)
      update queen.log_partitions set log_start = 4 from p where log_partitions.id = p.id`)
    const [after] = (await fetchEntries([{ queue: 'ahead', partition: 'p', fromOffset: 1 }])).body.entries
    expect(after).toMatchObject({ logStart: 4, fromOffset: 4, nextOffset: 5 })
    expect(offsets(after)).toEqual([4])
  })

  it('skips deleted (tombstoned) frames', async () => {
    await fill('tomb', 'p', [0, 1, 2])
    await app.database.sql(`
      insert into queen.log_tombstones (partition_id, frame_offset)
      select p.id, 1 from queen.log_partitions p join queen.queues q on q.id = p.queue_id where q.name = 'tomb'`)
    const [e] = (await fetchEntries([{ queue: 'tomb', partition: 'p', fromOffset: 0 }])).body.entries
    expect(offsets(e)).toEqual([0, 2])
    expect(e.nextOffset).toBe(3)
  })

  it('decrypts an encrypted queue and flags a frame that fails authentication', async () => {
    await app.json('POST', '/api/v1/configure', { queue: 'secret', encryptionEnabled: true })
    await fill('secret', 'p', [{ card: '4111' }, { card: '5500' }])
    const [stored] = await app.database.sql<{ frames: { enc: boolean; data: unknown }[] }>(
      `select s.frames from queen.log_segments s join queen.log_partitions p on p.id = s.partition_id join queen.queues q on q.id = p.queue_id where q.name = 'secret'`,
    )
    expect(JSON.stringify(stored)).not.toContain('4111')
    await app.database.sql(`
      update queen.log_segments s set frames[2] = jsonb_set(frames[2], '{data,authTag}', '"AAAAAAAAAAAAAAAAAAAAAA=="')
        from queen.log_partitions p join queen.queues q on q.id = p.queue_id where p.id = s.partition_id and q.name = 'secret'`)
    const [e] = (await fetchEntries([{ queue: 'secret', partition: 'p', fromOffset: 0 }])).body.entries
    expect(e.frames[0].data).toEqual({ card: '4111' })
    expect(e.frames[1]).toMatchObject({ data: null, decryptError: expect.any(String) })
    expect(e.frames[0]).not.toHaveProperty('enc')
  })

  it('answers per-entry errors in request order, other entries unaffected', async () => {
    await fill('known', 'p', [1])
    const res = await fetchEntries([
      { queue: 'nope', partition: 'p', fromOffset: 0 },
      { queue: 'known', partition: 'missing', fromOffset: 0 },
      { queue: 'known', partition: 'p', fromOffset: 0 },
      { queue: 'known', partition: 'p', fromOffset: 0 },
    ])
    expect(res.body.entries[0]).toEqual({ queue: 'nope', partition: 'p', error: 'QUEUE_NOT_FOUND', message: 'Queue not found' })
    expect(res.body.entries[1]).toEqual({ queue: 'known', partition: 'missing', error: 'PARTITION_NOT_FOUND', message: 'Partition not found' })
    expect(offsets(res.body.entries[2])).toEqual([0])
    expect(res.body.entries[3]).toEqual(res.body.entries[2])
    expect((await fetchEntries([])).body).toEqual({ entries: [] })
  })

  it('reads any page of a many-segment log exactly as a frame-by-frame walk of the log would', async () => {
    // The model: every stored frame in offset order with its stored size, tombstones left out; a page
    // takes frames from fromOffset until limit, or until maxBytes would be passed after the first.
    const sizes = [1, 7, 40, 3, 120, 1, 15, 60, 2, 9, 33, 5]
    for (const n of sizes) await fill('model', 'p', Array.from({ length: n }, (_, i) => ({ n, i, pad: 'y'.repeat((n * 7 + i) % 90) })))
    await app.database.sql(`
      insert into queen.log_tombstones (partition_id, frame_offset)
      select p.id, o from queen.log_partitions p join queen.queues q on q.id = p.queue_id, unnest(array[0, 8, 9, 50, 51, 52, 170, 295]) o
       where q.name = 'model'`)
    const stored = await app.database.sql<{ offset: string; size: number }>(`
      select s.base_offset + o.i - 1 as offset, octet_length(o.f::text) as size
        from queen.log_segments s join queen.log_partitions p on p.id = s.partition_id join queen.queues q on q.id = p.queue_id
        cross join lateral unnest(s.frames) with ordinality as o(f, i)
       where q.name = 'model'
         and not exists (select 1 from queen.log_tombstones t where t.partition_id = p.id and t.frame_offset = s.base_offset + o.i - 1)
       order by 1`)
    const log = stored.map((r) => ({ offset: Number(r.offset), size: r.size }))
    const last = sizes.reduce((a, b) => a + b) - 1
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 0, max: last + 3 }), fc.integer({ min: 1, max: 300 }), fc.integer({ min: 1, max: 20_000 }), async (from, limit, maxBytes) => {
        const expected: number[] = []
        let bytes = 0
        for (const f of log) {
          if (f.offset < from) continue
          if (expected.length > 0 && bytes + f.size > maxBytes) break
          expected.push(f.offset)
          bytes += f.size
          if (expected.length >= limit) break
        }
        const [e] = (await fetchEntries([{ queue: 'model', partition: 'p', fromOffset: from, limit, maxBytes }])).body.entries
        expect(offsets(e)).toEqual(expected)
        expect(e.nextOffset).toBe(expected.length > 0 ? expected[expected.length - 1]! + 1 : from)
        expect(e.frames.map((f: { data: { n: number } }) => f.data.n)).toEqual(expected.map((o) => sizes[segmentOf(o)]))
      }),
      { numRuns: 60, seed: 41 },
    )
    function segmentOf(offset: number) {
      let base = 0
      for (let i = 0; ; base += sizes[i++]!) if (offset < base + sizes[i]!) return i
    }
  })

  it('refuses malformed requests with 400 and writes nothing', async () => {
    const before = await writtenRows(app)
    const bad: unknown[] = [
      'all',
      Array.from({ length: 101 }, () => ({ queue: 'known', partition: 'p', fromOffset: 0 })),
      ['entry'],
      [{ queue: 1, partition: 'p', fromOffset: 0 }],
      [{ queue: 'known', partition: '', fromOffset: 0 }],
      [{ queue: 'known', partition: 'p', fromOffset: -1 }],
      [{ queue: 'known', partition: 'p', fromOffset: 1.5 }],
      [{ queue: 'known', partition: 'p' }],
      [{ queue: 'known', partition: 'p', fromOffset: 0, limit: 0 }],
      [{ queue: 'known', partition: 'p', fromOffset: 0, maxBytes: -1 }],
    ]
    for (const entries of bad) {
      const res = await fetchEntries(entries)
      expect(res.status, JSON.stringify(entries).slice(0, 80)).toBe(400)
      expect(res.body.code).toBe('invalid_request')
    }
    expect((await app.json('POST', '/api/v1/fetch', {})).status).toBe(400)
    // Queen's long-poll knob: a wait this fetch would not honour is refused by name, never dropped.
    const entries = [{ queue: 'known', partition: 'p', fromOffset: 0 }]
    expect(await app.json('POST', '/api/v1/fetch', { entries, maxWaitMs: 500 })).toMatchObject({
      status: 400,
      body: { code: 'invalid_request', error: 'maxWaitMs: is not supported: this fetch never parks; poll again instead' },
    })
    expect((await app.json('POST', '/api/v1/fetch', { entries, maxWaitMs: 0 })).status).toBe(200)
    await fetchEntries([{ queue: 'known', partition: 'p', fromOffset: 0 }])
    expect(await writtenRows(app)).toEqual(before)
  })
})
