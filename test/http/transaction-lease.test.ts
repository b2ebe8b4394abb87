import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { testApp, type TestApp } from '../helpers/app.js'
import { pop, push, writtenRows } from '../helpers/engine.js'

let app: TestApp
beforeAll(async () => {
  app = await testApp()
})
afterAll(() => app.close())

const txn = (body: unknown) => app.json('POST', '/api/v1/transaction', body)

describe('POST /api/v1/transaction', () => {
  it('pushes to the next queue and settles the input in one commit (exactly-once hand-off)', async () => {
    await push(app, [{ queue: 'stage1', payload: 'in', transactionId: 'in-1' }])
    const input = await pop(app, 'stage1')
    const m = input.messages[0]!
    const res = await txn({
      operations: [
        { type: 'push', items: [{ queue: 'stage2', payload: 'out', transactionId: 'out-1' }] },
        { type: 'ack', transactionId: m.transactionId, partitionId: m.partitionId, leaseId: m.leaseId, status: 'completed' },
      ],
      requiredLeases: [input.leaseId],
    })
    expect(res.status).toBe(200)
    expect(res.body).toMatchObject({ success: true, transactionId: expect.stringMatching(/^[0-9a-f]{8}-[0-9a-f]{4}-7/) })
    expect(res.body.results).toEqual([
      { index: 0, operation: 0, type: 'push', success: true, status: 'queued', transactionId: 'out-1', messageId: expect.any(String), partitionId: expect.any(String), queueName: 'stage2', offset: 0 },
      { index: 1, operation: 1, type: 'ack', success: true, transactionId: m.transactionId, offset: 0, error: null, code: null, dlq: false, dropped: false, leaseReleased: true },
    ])
    expect((await pop(app, 'stage2')).messages.map((x) => x.data)).toEqual(['out'])
    expect((await pop(app, 'stage1')).status).toBe(204)
    // A repeat hand-off fails on the lease it no longer holds and writes nothing.
    const before = await writtenRows(app)
    const again = await txn({ operations: [{ type: 'push', items: [{ queue: 'stage2', payload: 'dup' }] }], requiredLeases: [input.leaseId] })
    expect(again.body).toMatchObject({ success: false, error: `Lease expired or not held: ${input.leaseId}`, code: 'lease_invalid', results: [] })
    expect(await writtenRows(app)).toEqual(before)
  })

  it('answers pushes without transaction ids (the compact fast-path answer) with each item queue and minted id', async () => {
    const res = await txn({
      operations: [{ type: 'push', items: [
        { queue: 'hand.a', partition: 'x', payload: 1 },
        { queue: 'hand.b', payload: 2 },
        { queue: 'hand.a', partition: 'x', payload: 3 },
      ] }],
    })
    expect(res.body.success).toBe(true)
    const results = res.body.results as Record<string, unknown>[]
    expect(results.map((r) => [r.index, r.queueName, r.offset, r.status])).toEqual([
      [0, 'hand.a', 0, 'queued'], [1, 'hand.b', 0, 'queued'], [2, 'hand.a', 1, 'queued'],
    ])
    for (const r of results) expect(r.transactionId).toBe(r.messageId)
    expect(results[0]!.partitionId).toBe(results[2]!.partitionId)
    expect(results[1]!.partitionId).not.toBe(results[0]!.partitionId)
  })

  it('rolls everything back on a business failure and answers 200 success:false', async () => {
    await push(app, [{ queue: 'rollback', payload: 1 }])
    const { messages } = await pop(app, 'rollback')
    const before = await writtenRows(app)
    const res = await txn({
      operations: [
        { type: 'push', items: [{ queue: 'rollback-out', payload: 'never' }] },
        { type: 'ack', transactionId: messages[0]!.transactionId, partitionId: messages[0]!.partitionId, status: 'completed' },
        { type: 'ack', transactionId: 'missing', partitionId: messages[0]!.partitionId, status: 'completed' },
      ],
    })
    expect(res.status).toBe(200)
    expect(res.body).toMatchObject({ success: false, error: 'Message not found', code: 'message_not_found' })
    expect(res.body.results.map((r: { type: string; success: boolean }) => [r.type, r.success])).toEqual([['push', true], ['ack', true], ['ack', false]])
    expect(await writtenRows(app)).toEqual(before)
  })

  it('reports a duplicate push without aborting, and dead-letters a failed ack at once', async () => {
    await push(app, [{ queue: 'txdlq', payload: 'bad', transactionId: 'x1' }])
    const { messages } = await pop(app, 'txdlq')
    const m = messages[0]!
    const res = await txn({
      operations: [
        { type: 'push', items: [{ queue: 'txdlq', transactionId: 'x1', payload: 'again' }] },
        { type: 'ack', transactionId: m.transactionId, partitionId: m.partitionId, leaseId: m.leaseId, status: 'failed' },
      ],
    })
    expect(res.body.success).toBe(true)
    expect(res.body.results[0]).toMatchObject({ status: 'duplicate', offset: 0 })
    expect(res.body.results[1]).toMatchObject({ success: true, dlq: true, leaseReleased: true })
    const [row] = await app.database.sql(`select error from queen.log_dlq d join queen.queues q on q.id = d.queue_id where q.name = 'txdlq'`)
    expect(row).toEqual({ error: 'Unknown error' })
  })

  const bad: [unknown, string][] = [
    [{}, 'operations array required'],
    [{ operations: [] }, 'operations array cannot be empty'],
    [{ operations: [{ type: 'delete' }] }, 'Unknown operation type: delete'],
    [{ operations: [{ type: 'push', items: [{ queue: 'ok' }, { queue: 3 }] }] }, 'Queue must be a string (operations[0].items[1])'],
    [{ operations: [{ type: 'push', items: [{ queue: 'ok' }] }, { type: 'ack', partitionId: 'p' }] }, 'transactionId is required (operations[1])'],
    [{ operations: [{ type: 'ack', transactionId: 't' }] }, 'partitionId is required (operations[0])'],
    [{ operations: [{ type: 'push', items: [] }], requiredLeases: 'x' }, 'requiredLeases must be an array of strings'],
  ]
  it.each(bad)('refuses %j with 400 and runs nothing', async (body, error) => {
    const before = await writtenRows(app)
    const res = await txn(body)
    expect(res.status).toBe(400)
    expect(res.body).toMatchObject({ error, code: 'invalid_request' })
    expect(await writtenRows(app)).toEqual(before)
  })
})

describe('POST /api/v1/lease/:leaseId/extend', () => {
  it('extends a live lease with an empty body and answers a one-element array', async () => {
    await push(app, [{ queue: 'extend', payload: 1, partition: 'a' }, { queue: 'extend', payload: 2, partition: 'b' }])
    const popped = await pop(app, 'extend', { partitions: 2, batch: 10 })
    const res = await app.json('POST', `/api/v1/lease/${popped.leaseId}/extend`)
    expect(res.status).toBe(200)
    expect(res.body).toEqual([{ index: 0, leaseId: popped.leaseId, success: true, error: null, code: null, expiresAt: expect.stringMatching(/\.\d{3}Z$/), partitionsExtended: 2 }])
  })

  it('answers an unknown or malformed lease with a not-found result, never 204', async () => {
    for (const id of ['0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b', 'not-a-uuid']) {
      const res = await app.json('POST', `/api/v1/lease/${id}/extend`, { seconds: 30 })
      expect(res.status).toBe(200)
      expect(res.body).toEqual([{ index: 0, leaseId: id, success: false, error: 'Lease not found', code: 'lease_not_found', expiresAt: null, partitionsExtended: 0 }])
    }
  })

  it.each([[0], [86_401], [1.5], ['60']])('refuses seconds=%j with 400 and extends nothing', async (seconds) => {
    await push(app, [{ queue: 'extend-bad', payload: 1 }])
    const popped = await pop(app, 'extend-bad')
    const expiry = () => app.database.sql(`select lease_expires_at::text as at from queen.log_consumers where lease_id = $1`, [popped.leaseId])
    const before = await expiry()
    const res = await app.json('POST', `/api/v1/lease/${popped.leaseId}/extend`, { seconds })
    expect(res.status).toBe(400)
    expect(res.body).toMatchObject({ error: 'seconds must be an integer from 1 to 86400', code: 'invalid_request' })
    expect(await expiry()).toEqual(before)
    await app.json('POST', '/api/v1/ack', { transactionId: popped.messages[0]!.transactionId, partitionId: popped.messages[0]!.partitionId })
  })
})
