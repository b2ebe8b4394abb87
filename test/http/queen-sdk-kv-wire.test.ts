// The requests Queen's 1.x JavaScript SDK makes for queen.kv.*, queen.timer(...) and the
// transaction builder's riders, replayed byte for byte as its source builds them (client-v2
// kv/Kv.js, builders/TimerBuilder.js and the transaction builder, read from the published
// repository), and checked against what that source then reads from the answer: one result per
// operation, a boolean `applied` on every write, the 200 {ok:false, reason:'kv_precondition'}
// verdict, `{results:[…]}` from the timer batch with exactly one element per schedule, and a
// transaction that *returns* {success:false, reason:'kv_precondition', failedIndex, kvReason}.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { testApp, type TestApp } from '../helpers/app.js'
import { pop, push } from '../helpers/engine.js'

let app: TestApp
beforeAll(async () => {
  app = await testApp()
})
afterAll(() => app.close())

const NS = 'test-kv-ns'
const QUEUE = 'test-timers-q'
// The SDK's HttpClient: JSON bodies, the path as the builder formats it.
const post = (path: string, body: unknown) => app.json('POST', path, body)
// Kv.#apply: every operation, reads included, goes to POST /api/v1/kv as {operations}.
const apply = async (operations: Record<string, unknown>[]) => {
  const res = await post('/api/v1/kv', { operations })
  expect(res.status).toBe(200)
  return res.body
}
// Kv.#write: the verdict must carry a boolean applied, or come back as the precondition envelope.
const write = async (op: Record<string, unknown>) => {
  const body = await apply([op])
  if (body.ok === false && body.reason === 'kv_precondition') return { precondition: body }
  expect(body.results).toHaveLength(1)
  expect(typeof body.results[0].applied).toBe('boolean')
  return body.results[0]
}
// TimerBuilder.schedule's payload(): JSON encoded to UTF-8 and base64.
const b64 = (value: unknown) => Buffer.from(JSON.stringify(value), 'utf8').toString('base64')

describe("Queen's JS SDK against this broker", () => {
  it('kv.put / get / getMany / delete / incr / once, with the bodies the SDK builds', async () => {
    expect(await write({ op: 'put', ns: NS, key: 'k', value: { v: 1 }, ttlSeconds: 3600 })).toMatchObject({ applied: true, version: expect.any(Number) })
    expect(await write({ op: 'put', ns: NS, key: 'f', value: 1, forever: true })).toMatchObject({ applied: true })
    const got = (await apply([{ op: 'get', ns: NS, key: 'k' }])).results[0]
    expect(got).toMatchObject({ found: true, value: { v: 1 }, version: expect.any(Number), expiresAt: expect.any(String), updatedAt: expect.any(String) })
    const many = (await apply([{ op: 'getMany', ns: NS, keys: ['k', 'b'] }])).results[0]
    expect(many).toMatchObject({ missing: ['b'], truncated: false, rows: [{ key: 'k' }] })
    // kv.put without an expiry still reaches the broker, which owns the rule.
    const noExpiry = await post('/api/v1/kv', { operations: [{ op: 'put', ns: NS, key: 'k', value: 1 }] })
    expect(noExpiry.status).toBe(400)
    expect(noExpiry.body.error).toMatch(/kv_expiry_not_specified/)
    // kv.once(ns, key, {ttlSeconds}) is putIfAbsent with value true; the loser reads won=false from applied.
    expect(await write({ op: 'putIfAbsent', ns: NS, key: 'marker', value: true, ttlSeconds: 3600 })).toMatchObject({ applied: true })
    expect(await write({ op: 'putIfAbsent', ns: NS, key: 'marker', value: true, ttlSeconds: 3600 })).toMatchObject({ applied: false, reason: 'exists', value: true })
    // kv.incr(ns, key, 2, {ttlSeconds: 60, max: 100, min: 0}) and kv.incr(ns, key, undefined, {ttl: '1m'}).
    expect(await write({ op: 'incr', ns: NS, key: 'n', delta: 2, ttlSeconds: 60, min: 0, max: 100 })).toMatchObject({ applied: true, value: 2 })
    expect(await write({ op: 'incr', ns: NS, key: 'n', delta: 1, ttlSeconds: 60 })).toMatchObject({ applied: true, value: 3 })
    const v = got.version as number
    expect(await write({ op: 'delete', ns: NS, key: 'k', expect: v, required: true })).toMatchObject({ applied: true })
    // A lost required write comes back as the 200 verdict the SDK folds into a WriteResult.
    const lost = await write({ op: 'put', ns: NS, key: 'marker', value: 2, ttlSeconds: 60, expect: 0, required: true })
    expect(lost).toEqual({ precondition: { ok: false, reason: 'kv_precondition', failedIndex: 0, kvReason: 'exists', value: true, version: expect.any(Number) } })
  })

  it('kv.listAll walks getPrefix pages by nextAfter until truncated is false', async () => {
    await apply(['p:1', 'p:2', 'p:3'].map((key) => ({ op: 'put', ns: NS, key, value: key, forever: true })))
    const keys: string[] = []
    let after: string | undefined
    for (;;) {
      const page = (await apply([{ op: 'getPrefix', ns: NS, prefix: 'p:', limit: 2, ...(after ? { after } : {}) }])).results[0]
      keys.push(...page.rows.map((r: { key: string }) => r.key))
      if (!page.truncated || !page.nextAfter) break
      after = page.nextAfter
    }
    expect(keys).toEqual(['p:1', 'p:2', 'p:3'])
  })

  it('queen.timer(q).key(k).delayMs(...).payload(...).txn(...).schedule(), cancel, peek and list', async () => {
    const scheduled = await post('/api/v1/timers', { operations: [{ op: 'schedule', queue: QUEUE, timerKey: 'order/9f1', delayMs: 30000, txn: '11111111-1111-7111-8111-111111111111', payload: b64({ orderId: '9f1' }) }] })
    // TimerBuilder.#single: {results} with exactly one element.
    expect(scheduled.body.results).toHaveLength(1)
    expect(scheduled.body.results[0]).toMatchObject({ ok: true, status: 'scheduled', queue: QUEUE, timerKey: 'order/9f1', txn: '11111111-1111-7111-8111-111111111111', deliverAt: expect.any(String) })
    const withPartition = await post('/api/v1/timers', { operations: [{ op: 'schedule', queue: QUEUE, timerKey: 'k', partition: 'eu', delayMs: 1, txn: 't', payload: b64({}) }] })
    expect(withPartition.body.results[0].status).toBe('scheduled')
    // peek: GET the key encoded with encodeURIComponent; a miss is 200 found:false.
    expect((await app.json('GET', `/api/v1/timers/${QUEUE}/order%2F9f1`)).body).toMatchObject({ found: true, payload: b64({ orderId: '9f1' }) })
    expect((await app.json('GET', `/api/v1/timers/${QUEUE}/missing`)).body).toMatchObject({ found: false })
    // list({after:'k1', limit: 10}) and list().
    expect((await app.json('GET', `/api/v1/timers/${QUEUE}?after=k1&limit=10`)).body).toMatchObject({ truncated: false, nextAfter: null, rows: [{ timerKey: 'order/9f1' }] })
    expect((await app.json('GET', `/api/v1/timers/${QUEUE}`)).body.rows).toHaveLength(2)
    // cancel(): DELETE with no body, ?txn= when the builder was given one.
    const cancelled = await app.request(`/api/v1/timers/${QUEUE}/order%2F9f1`, { method: 'DELETE' })
    expect(await cancelled.json()).toMatchObject({ ok: true, status: 'cancelled' })
    expect((await app.json('DELETE', `/api/v1/timers/${QUEUE}/k?txn=tx-1`)).body).toMatchObject({ ok: true, status: 'cancelled', txn: 'tx-1' })
    expect((await app.json('DELETE', `/api/v1/timers/${QUEUE}/k?txn=tx-1`)).body).toEqual({ ok: false, status: 'absent', queue: QUEUE, timerKey: 'k', txn: 'tx-1' })
  })

  it('queen.transaction() with .kv.*, .once(), .timer(...) riders, and commit() returning the lost gate', async () => {
    await push(app, [{ queue: 'sdk.txn', payload: 1, transactionId: 'sdk-1' }])
    const p = await pop(app, 'sdk.txn')
    const m = p.messages[0]!
    // TransactionBuilder: the ack without a lease (it goes in requiredLeases), riders as top-level arrays.
    const body = {
      operations: [{ type: 'ack', transactionId: m.transactionId, partitionId: m.partitionId, status: 'completed', consumerGroup: '__QUEUE_MODE__' }],
      requiredLeases: [p.leaseId],
      kv: [{ op: 'putIfAbsent', ns: NS, key: 'order-9f1', value: true, ttlSeconds: 86400, required: true }],
      timers: [
        { op: 'schedule', queue: QUEUE, timerKey: 'tx-k', delayMs: 60000, txn: 'tx-9', payload: b64({ a: 1 }) },
        { op: 'cancel', queue: QUEUE, timerKey: 'none', txn: 'tx-0' },
      ],
    }
    const committed = await post('/api/v1/transaction', body)
    expect(committed.status).toBe(200)
    expect(committed.body).toMatchObject({ success: true })
    expect(committed.body.results.map((r: { index: number; type: string }) => [r.index, r.type])).toEqual([[0, 'ack'], [1, 'kv'], [2, 'timer'], [3, 'timer']])
    expect(committed.body.results[1]).toMatchObject({ opIndex: 0, applied: true })
    expect(committed.body.results[2]).toMatchObject({ opIndex: 0, ok: true, status: 'scheduled' })
    expect(committed.body.results[3]).toMatchObject({ opIndex: 1, ok: false, status: 'absent', txn: 'tx-0' })

    // The redelivery: commit() returns (does not throw) on this exact shape.
    await push(app, [{ queue: 'sdk.txn', payload: 2, transactionId: 'sdk-2' }])
    const p2 = await pop(app, 'sdk.txn')
    const m2 = p2.messages[0]!
    const again = await post('/api/v1/transaction', {
      operations: [{ type: 'ack', transactionId: m2.transactionId, partitionId: m2.partitionId, status: 'completed', consumerGroup: '__QUEUE_MODE__' }],
      requiredLeases: [p2.leaseId],
      kv: [{ op: 'putIfAbsent', ns: NS, key: 'order-9f1', value: true, ttlSeconds: 86400, required: true }],
    })
    expect(again.status).toBe(200)
    expect(again.body).toMatchObject({ success: false, reason: 'kv_precondition', failedIndex: 1, kvReason: 'exists', value: true, version: expect.any(Number), results: [] })
    // A kv-only bundle: operations [] and one put.
    const kvOnly = await post('/api/v1/transaction', { operations: [], kv: [{ op: 'put', ns: NS, key: 'k', value: 1, ttlSeconds: 60 }] })
    expect(kvOnly.body).toMatchObject({ success: true })
  })
})
