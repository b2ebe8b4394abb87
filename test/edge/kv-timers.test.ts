// Queen 1.6's key/value store, timers and transaction riders through the real worker bundle in
// workerd (miniflare) over PostgreSQL through the WebSocket bridge: the same answers as on Node, and
// a timer reaching a consumer parked on its queue although Workers run the lanes once a minute (the
// pop fires its queue's due timers), and through scheduled() for a queue nobody is reading.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { zstdCompress } from '../../src/zstd/index.js'
import { startEdgeStack, type EdgeStack, type EdgeWorker } from './edge-stack.js'

let stack: EdgeStack
let worker: EdgeWorker
beforeAll(async () => {
  stack = await startEdgeStack()
  worker = await stack.worker()
}, 120_000)
afterAll(() => stack?.close())

const call = (method: string, path: string, body?: unknown) => worker.call(method, path, body)
const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64')

describe('key/value store in workerd', () => {
  it('applies a batch with every outcome, the single-key routes with an ETag, and the console reads', async () => {
    // One batch writes a key once; the losing writes come in a second batch.
    const ops = (id: number, delta: number) => [
      { op: 'putIfAbsent', ns: 'edge', key: 'gate', value: { id }, ttlSeconds: 60 },
      { op: 'incr', ns: 'edge', key: 'count', delta, max: 2, forever: true },
      { op: 'getMany', ns: 'edge', keys: ['gate', 'none'] },
    ]
    const first = await call('POST', '/api/v1/kv', { operations: ops(1, 2) })
    expect(first.status).toBe(200)
    expect(first.body.results).toMatchObject([{ index: 0, applied: true }, { index: 1, applied: true, value: 2 }, { index: 2, missing: ['none'], truncated: false }])
    const second = await call('POST', '/api/v1/kv', { operations: ops(2, 1) })
    expect(second.body.results).toMatchObject([
      { index: 0, applied: false, reason: 'exists', value: { id: 1 } },
      { index: 1, applied: false, reason: 'limit', value: 2 },
      { index: 2, rows: [{ key: 'gate', value: { id: 1 } }] },
    ])
    const put = await call('PUT', '/api/v1/kv/edge/a/b', { value: 'x', forever: true })
    const got = await call('GET', '/api/v1/kv/edge/a/b')
    expect(got.body).toMatchObject({ found: true, value: 'x', version: put.body.version })
    expect(got.headers.get('etag')).toBe(`"${put.body.version}"`)
    expect((await call('GET', '/api/v1/kv/edge/none')).body).toEqual({ found: false, key: 'none' })
    expect((await call('GET', '/api/v1/kv/edge/a?x=1')).body.code).toBe('kv_no_query_string')
    expect((await call('GET', '/api/v1/resources/kv/namespaces')).body.namespaces).toContainEqual({ namespace: 'edge', keys: 3 })
    expect((await call('POST', '/api/v1/resources/kv/list', { namespace: 'edge', keysOnly: true })).body.rows.map((r: { key: string }) => r.key)).toEqual(['a/b', 'count', 'gate'])
  })

  it('commits riders with the bundle and rolls everything back on a lost required gate', async () => {
    const first = await call('POST', '/api/v1/transaction', {
      operations: [{ type: 'push', items: [{ queue: 'edge.rider', payload: 1 }] }],
      kv: [{ op: 'putIfAbsent', ns: 'edge.gate', key: 'once', value: true, ttlSeconds: 600, required: true }],
    })
    expect(first.body).toMatchObject({ success: true, results: [{ type: 'push' }, { type: 'kv', applied: true }] })
    const second = await call('POST', '/api/v1/transaction', {
      operations: [{ type: 'push', items: [{ queue: 'edge.rider', payload: 2 }] }],
      kv: [{ op: 'putIfAbsent', ns: 'edge.gate', key: 'once', value: true, ttlSeconds: 600, required: true }],
    })
    expect(second).toMatchObject({ status: 200, body: { success: false, reason: 'kv_precondition', failedIndex: 1, kvReason: 'exists' } })
    const popped = await call('GET', '/api/v1/pop/queue/edge.rider?batch=10')
    expect(popped.body.messages.map((m: { data: unknown }) => m.data)).toEqual([1])
  })
})

describe('timers in workerd', () => {
  it('delivers a timer to a consumer parked on its queue, fired by the pop', async () => {
    const parked = call('GET', '/api/v1/pop/queue/edge.timer?wait=true&timeout=15000')
    const scheduled = await call('POST', '/api/v1/timers', { operations: [{ op: 'schedule', queue: 'edge.timer', timerKey: 'k', delayMs: 300, txn: 'edge-t-1', payload: b64({ due: true }) }] })
    expect(scheduled.body.results[0]).toMatchObject({ ok: true, status: 'scheduled', messageId: expect.stringMatching(/^[0-9a-f-]{36}$/) })
    const got = await parked
    expect(got.status).toBe(200)
    expect(got.body.messages.map((m: { transactionId: string; data: unknown }) => [m.transactionId, m.data])).toEqual([['edge-t-1', { due: true }]])
    // Delivered under the id its schedule answered.
    expect(got.body.messages[0].id).toBe(scheduled.body.results[0].messageId)
    expect((await call('GET', '/api/v1/timers/edge.timer/k')).body.found).toBe(false)
  })

  it('fires a due timer of a queue nobody reads from scheduled(), and cancels and peeks like Node', async () => {
    await call('POST', '/api/v1/timers', { operations: [
      { op: 'schedule', queue: 'edge.idle', timerKey: 'now', delayMs: 0, txn: 'idle-1', payload: b64('late') },
      { op: 'schedule', queue: 'edge.idle', timerKey: 'later', delayMs: 3_600_000, txn: 'idle-2', payload: b64('later') },
    ] })
    expect((await call('GET', '/api/v1/timers/edge.idle?mode=count&prefix=l')).body).toEqual({ count: 1 })
    await (await worker.mf.getWorker()).scheduled({ cron: '* * * * *' })
    const deadline = Date.now() + 10_000
    let left = 2
    while (Date.now() < deadline && left > 1) {
      const [row] = await stack.database.sql<{ n: number }>(`select count(*)::int as n from queen.timers where queue = 'edge.idle'`)
      left = row!.n
      if (left > 1) await new Promise((r) => setTimeout(r, 100))
    }
    expect(left).toBe(1)
    expect((await call('DELETE', '/api/v1/timers/edge.idle/later?txn=idle-2')).body).toEqual({ ok: true, status: 'cancelled', queue: 'edge.idle', timerKey: 'later', txn: 'idle-2' })
    const popped = await call('GET', '/api/v1/pop/queue/edge.idle?batch=10')
    expect(popped.body.messages.map((m: { data: unknown }) => m.data)).toEqual(['late'])
  })

  it('decompresses a payload sent with payloadZstd in workerd, and refuses one that is not a zstd frame', async () => {
    const frame = Buffer.from(zstdCompress(Buffer.from(JSON.stringify({ packed: 'x'.repeat(500) })))).toString('base64')
    const ok = await call('POST', '/api/v1/timers', { operations: [{ op: 'schedule', queue: 'edge.zstd', timerKey: 'z', delayMs: 0, txn: 'zstd-1', payloadZstd: true, payload: frame }] })
    expect(ok.body.results[0]).toMatchObject({ ok: true, status: 'scheduled' })
    const refused = await call('POST', '/api/v1/timers', { operations: [{ op: 'schedule', queue: 'edge.zstd', timerKey: 'y', delayMs: 0, txn: 'zstd-2', payloadZstd: true, payload: b64({ plain: true }) }] })
    expect(refused).toMatchObject({ status: 400, body: { code: 'timers_bad_request' } })
    const popped = await call('GET', '/api/v1/pop/queue/edge.zstd?batch=10')
    expect(popped.body.messages.map((m: { data: unknown }) => m.data)).toEqual([{ packed: 'x'.repeat(500) }])
  })
})
