// POST /api/v1/transaction's `kv` and `timers` riders: they commit in the same PostgreSQL
// transaction as the pushes and acks, both ways (a lost `required` precondition leaves no push, no
// ack, no KV write and no timer; a success commits all), a rider-only bundle is valid, and nothing a
// rider carries is silently dropped.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { testApp, type TestApp } from '../helpers/app.js'
import { pop, push, writtenRows } from '../helpers/engine.js'

let app: TestApp
beforeAll(async () => {
  app = await testApp()
})
afterAll(() => app.close())

const txn = (body: unknown) => app.json('POST', '/api/v1/transaction', body)
const kvGet = async (ns: string, key: string) => (await app.json('POST', '/api/v1/kv', { operations: [{ op: 'get', ns, key }] })).body.results[0]
const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64')

describe('transaction riders', () => {
  it('commits the gate, the push, the ack and the timer together, and a redelivery loses the gate and writes nothing', async () => {
    await push(app, [{ queue: 'rider.in', payload: { order: 1 }, transactionId: 'order-1' }])
    const first = await pop(app, 'rider.in')
    const m = first.messages[0]!
    const bundle = (leaseId: string) => ({
      operations: [
        { type: 'ack', transactionId: m.transactionId, partitionId: m.partitionId, status: 'completed' },
        { type: 'push', items: [{ queue: 'rider.out', payload: { charged: 1 }, transactionId: 'charge-1' }] },
      ],
      requiredLeases: [leaseId],
      kv: [{ op: 'putIfAbsent', ns: 'charges', key: 'order-1', value: { chargeId: 'ch_1' }, ttlSeconds: 86400, required: true }],
      timers: [{ op: 'schedule', queue: 'rider.remind', timerKey: 'order-1', delayMs: 3_600_000, txn: 'remind-1', payload: b64({ order: 1 }) }],
    })
    const ok = await txn(bundle(first.leaseId))
    expect(ok.status).toBe(200)
    expect(ok.body.success).toBe(true)
    expect(ok.body.results.map((r: { index: number; type: string }) => [r.index, r.type])).toEqual([[0, 'ack'], [1, 'push'], [2, 'kv'], [3, 'timer']])
    expect(ok.body.results[2]).toMatchObject({ opIndex: 0, op: 'put', applied: true, key: 'order-1' })
    expect(ok.body.results[3]).toMatchObject({ opIndex: 0, ok: true, status: 'scheduled', timerKey: 'order-1', txn: 'remind-1' })
    expect(await kvGet('charges', 'order-1')).toMatchObject({ found: true, value: { chargeId: 'ch_1' } })
    expect((await app.json('GET', '/api/v1/timers/rider.remind/order-1')).body).toMatchObject({ found: true, txn: 'remind-1' })
    expect((await pop(app, 'rider.out')).messages.map((x) => x.data)).toEqual([{ charged: 1 }])

    // The same message delivered again (a redelivery after a crash): the gate is lost, and the
    // whole bundle (its ack, its push, its timer reschedule) rolls back.
    await push(app, [{ queue: 'rider.in', payload: { order: 1 }, transactionId: 'order-1-again' }])
    const second = await pop(app, 'rider.in')
    const m2 = second.messages[0]!
    const before = await writtenRows(app)
    const lost = await txn({
      ...bundle(second.leaseId),
      operations: [
        { type: 'ack', transactionId: m2.transactionId, partitionId: m2.partitionId, status: 'completed' },
        { type: 'push', items: [{ queue: 'rider.out', payload: { charged: 2 }, transactionId: 'charge-2' }] },
      ],
      timers: [{ op: 'schedule', queue: 'rider.remind', timerKey: 'order-2', delayMs: 1000, txn: 'remind-2', payload: b64({}) }],
    })
    expect(lost.status).toBe(200)
    expect(lost.body).toMatchObject({ success: false, reason: 'kv_precondition', failedIndex: 2, kvReason: 'exists', value: { chargeId: 'ch_1' }, version: expect.any(Number), results: [] })
    expect(await writtenRows(app)).toEqual(before)
    expect((await app.json('GET', '/api/v1/timers/rider.remind/order-2')).body).toMatchObject({ found: false })
  })

  it('commits the rest when a precondition without required is lost, reporting applied:false', async () => {
    await txn({ operations: [], kv: [{ op: 'put', ns: 'soft', key: 'k', value: 1, forever: true }] })
    const res = await txn({
      operations: [{ type: 'push', items: [{ queue: 'rider.soft', payload: 1 }] }],
      kv: [{ op: 'putIfAbsent', ns: 'soft', key: 'k', value: 2, forever: true }],
    })
    expect(res.body.success).toBe(true)
    expect(res.body.results[1]).toMatchObject({ type: 'kv', applied: false, reason: 'exists', value: 1 })
    expect((await pop(app, 'rider.soft')).messages).toHaveLength(1)
  })

  it('accepts a rider-only bundle, and still refuses an entirely empty one', async () => {
    const kvOnly = await txn({ operations: [], kv: [{ op: 'put', ns: 'only', key: 'k', value: 'v', ttlSeconds: 60 }] })
    expect(kvOnly).toMatchObject({ status: 200, body: { success: true, results: [{ index: 0, type: 'kv', opIndex: 0, applied: true }] } })
    const timerOnly = await txn({ operations: [], timers: [{ op: 'schedule', queue: 'rider.only', timerKey: 't', delayMs: 60_000, txn: 'x', payload: b64(1) }] })
    expect(timerOnly.body).toMatchObject({ success: true, results: [{ index: 0, type: 'timer', status: 'scheduled' }] })
    expect(await txn({ operations: [] })).toMatchObject({ status: 400, body: { error: 'operations array cannot be empty' } })
    expect(await txn({ operations: [], kv: [] })).toMatchObject({ status: 400 })
  })

  it('refuses what a rider may not carry, 400 naming it, and writes nothing', async () => {
    const before = await writtenRows(app)
    const push1 = { type: 'push', items: [{ queue: 'rider.refused', payload: 1 }] }
    const cases: [Record<string, unknown>, number, RegExp][] = [
      [{ kv: [{ op: 'getPrefix', ns: 'x', prefix: 'a' }] }, 400, /kv_get_prefix_not_allowed_in_transaction/],
      [{ kv: [{ op: 'put', ns: 'x', key: 'k', value: 1 }] }, 400, /kv_expiry_not_specified/],
      [{ kv: [{ op: 'put', ns: 'x', key: 'k', value: 1, forever: true, ttlMillis: 3 }] }, 400, /ttlMillis/],
      [{ kv: Array.from({ length: 65 }, (_, i) => ({ op: 'get', ns: 'x', key: `k${i}` })) }, 400, /64 operations/],
      [{ kv: {} }, 400, /kv must be an array/],
      [{ timers: [{ op: 'schedule', queue: 'q', timerKey: 'k', delayMs: 1, txn: 't', payload: 'e30=', producerSub: 'forged' }] }, 400, /producerSub/],
      // payloadZstd is read: a payload that is not a zstd frame is refused, naming the flag.
      [{ timers: [{ op: 'schedule', queue: 'q', timerKey: 'k', delayMs: 1, txn: 't', payload: 'e30=', payloadZstd: true }] }, 400, /not a zstd frame.*payloadZstd/],
      [{ timers: [{ op: 'schedule', queue: 'q', timerKey: 'k', delaySeconds: 1, txn: 't', payload: 'e30=' }] }, 400, /delaySeconds/],
      [{ timers: [{ op: 'schedule', queue: 'q', timerKey: 'k', delayMs: 1, txn: 't', payload: 'not base64!' }] }, 400, /base64/],
    ]
    for (const [riders, status, message] of cases) {
      const res = await txn({ operations: [push1], ...riders })
      expect(res.status, JSON.stringify(riders).slice(0, 120)).toBe(status)
      expect(res.body.error).toMatch(message)
    }
    // A timer beyond the horizon rolls the bundle back: 200 with the reason, nothing written.
    const beyond = await txn({ operations: [push1], timers: [{ op: 'schedule', queue: 'q', timerKey: 'k', delayMs: 91 * 24 * 3600 * 1000, txn: 't', payload: 'e30=' }] })
    expect(beyond).toMatchObject({ status: 200, body: { success: false, reason: 'timer_horizon_exceeded', code: 'timer_horizon_exceeded', results: [] } })
    expect(await writtenRows(app)).toEqual(before)
  })
})

describe('the flat push form', () => {
  it('takes a push operation that is itself the item, as Queen does', async () => {
    const res = await txn({ operations: [{ type: 'push', queue: 'flat.q', partition: 'p', transactionId: 'flat-1', data: { via: 'data' } }] })
    expect(res.body).toMatchObject({ success: true, results: [{ type: 'push', status: 'queued', transactionId: 'flat-1', queueName: 'flat.q' }] })
    expect((await pop(app, 'flat.q', {}, 'p')).messages.map((m) => m.data)).toEqual([{ via: 'data' }])
  })
})
