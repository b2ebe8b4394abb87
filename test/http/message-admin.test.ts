// Retry of a dead-lettered message (a move of its dead-letter row) and move-to-DLQ, in the
// two-parameter form Queen's clients send and the one-parameter form of the older Node server, over
// messages that really went through push, pop, ack and the dead-letter path. docs/admin-messages.md
// says what a move writes; these tests pin each verdict and what it leaves behind.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { testApp, type TestApp } from '../helpers/app.js'
import { ack, acksOf, pop, push, writtenRows } from '../helpers/engine.js'

let app: TestApp
let tenanted: TestApp
beforeAll(async () => {
  app = await testApp()
  tenanted = await testApp({ database: app.database, env: { QUEEN_TENANCY_HEADER: 'X-Queen-Tenant' } })
})
afterAll(async () => {
  await tenanted.close()
  await app.close()
})

const post = (path: string, body?: unknown) => app.json('POST', path, body ?? {})
const dlqOf = async (queue: string) => (await app.json('GET', `/api/v1/dlq?queue=${queue}`)).body.messages as Record<string, unknown>[]
const offsets = (messages: { offset: number }[]) => messages.map((m) => m.offset)

/** A queue whose first failure dead-letters; offset 0 is dead-lettered by queue mode. */
async function deadLettered(queue: string, n: number) {
  await app.json('POST', '/api/v1/configure', { queue, options: { retryLimit: 0 } })
  const pushed = await push(app, Array.from({ length: n }, (_, i) => ({ queue, partition: 'p', payload: { i }, transactionId: `${queue}-${i}` })))
  const first = await pop(app, queue, { batch: 1, wait: false })
  const [result] = await ack(app, acksOf(first.messages, 'failed', { error: 'boom' }))
  expect(result!.dlq).toBe(true)
  return { partitionId: pushed[0]!.partition_id, txn: (i: number) => `${queue}-${i}` }
}

describe('POST /api/v1/messages/:partitionId/:transactionId/retry', () => {
  it('moves the dead-letter row: one frame under dlq:<row id> at the tail, the row gone, and the fields the SDKs read', async () => {
    const { partitionId, txn } = await deadLettered('rt-move', 2)
    const [row] = await dlqOf('rt-move')
    const res = await post(`/api/v1/messages/${partitionId}/${txn(0)}/retry`)
    expect(res.status).toBe(200)
    expect(res.body).toMatchObject({
      success: true,
      result: 'moved',
      queue: 'rt-move',
      partition: 'p',
      consumerGroup: '__QUEUE_MODE__',
      dlqId: row!.id,
      originalTransactionId: txn(0),
      replayedAs: { index: 0, transaction_id: `dlq:${row!.id}`, queueName: 'rt-move', status: 'queued', offset: 2 },
      dlqRowRemoved: true,
    })
    expect(res.body.replayedAs.message_id).toMatch(/^[0-9a-f-]{36}$/)
    expect(await dlqOf('rt-move')).toEqual([])
    // Queue mode settled the original; the replay is a new frame after everything already there.
    const again = await pop(app, 'rt-move', { batch: 10, wait: false })
    expect(again.messages.map((m) => [m.offset, m.transactionId, m.data])).toEqual([[1, txn(1), { i: 1 }], [2, `dlq:${row!.id}`, { i: 0 }]])
    // A second call finds the row gone.
    const second = await post(`/api/v1/messages/${partitionId}/${txn(0)}/retry`)
    expect(second).toMatchObject({ status: 404, body: { success: false, result: 'gone', error: 'Message not found', code: 'message_not_found', partitionId, transactionId: txn(0) } })
  })

  it("removes only one group's row: the newest failure's, or the consumerGroup's when named", async () => {
    await app.json('POST', '/api/v1/configure', { queue: 'rt-groups', options: { retryLimit: 0 } })
    const [pushed] = await push(app, [{ queue: 'rt-groups', partition: 'p', payload: 'x', transactionId: 'rt-groups-0' }])
    for (const group of ['a', 'b', 'c']) {
      const popped = await pop(app, 'rt-groups', { wait: false, consumerGroup: group, subscriptionMode: 'all' })
      await ack(app, acksOf(popped.messages, 'failed'), group)
    }
    const path = `/api/v1/messages/${pushed!.partition_id}/rt-groups-0/retry`
    expect(await post(path)).toMatchObject({ status: 200, body: { result: 'moved', consumerGroup: 'c' } })
    expect((await dlqOf('rt-groups')).map((m) => m.consumerGroup).sort()).toEqual(['a', 'b'])
    expect(await post(`${path}?consumerGroup=a`)).toMatchObject({ status: 200, body: { result: 'moved', consumerGroup: 'a' } })
    expect((await dlqOf('rt-groups')).map((m) => m.consumerGroup)).toEqual(['b'])
    // The body names the group too.
    expect(await post(path, { consumerGroup: 'b' })).toMatchObject({ status: 200, body: { consumerGroup: 'b' } })
    expect(await dlqOf('rt-groups')).toEqual([])
  })

  it('answers duplicate when the partition already holds dlq:<row id>: nothing written, the row kept', async () => {
    const { partitionId, txn } = await deadLettered('rt-dup', 1)
    const [row] = await dlqOf('rt-dup')
    const [squatter] = await push(app, [{ queue: 'rt-dup', partition: 'p', payload: 'already', transactionId: `dlq:${row!.id}` }])
    const before = await writtenRows(app)
    const res = await post(`/api/v1/messages/${partitionId}/${txn(0)}/retry`)
    expect(res.status).toBe(200)
    expect(res.body).toMatchObject({
      success: true,
      result: 'duplicate',
      dlqId: row!.id,
      dlqRowRemoved: false,
      replayedAs: { status: 'duplicate', message_id: '00000000-0000-0000-0000-000000000000', transaction_id: `dlq:${row!.id}`, offset: squatter!.offset },
    })
    expect(await writtenRows(app)).toEqual(before)
    expect(await dlqOf('rt-dup')).toHaveLength(1)
  })

  it('re-encodes the copy when the queue was encrypted after the message failed', async () => {
    const { partitionId, txn } = await deadLettered('rt-sealed-later', 1)
    const enc = await testApp({ database: app.database, env: { QUEEN_ENCRYPTION_KEY: 'f'.repeat(64) } })
    try {
      await enc.json('POST', '/api/v1/configure', { queue: 'rt-sealed-later', options: { encryptionEnabled: true } })
      expect(await enc.json('POST', `/api/v1/messages/${partitionId}/${txn(0)}/retry`, {})).toMatchObject({ status: 200, body: { result: 'moved' } })
      expect((await pop(enc, 'rt-sealed-later', { wait: false })).messages.map((m) => m.data)).toEqual([{ i: 0 }])
    } finally {
      await enc.close()
    }
  })

  it('refuses under push maintenance with 503 and the maintenance verdict, writing nothing', async () => {
    const { partitionId, txn } = await deadLettered('rt-maint', 1)
    const before = await writtenRows(app)
    await app.json('POST', '/api/v1/system/maintenance', { enabled: true })
    try {
      const res = await post(`/api/v1/messages/${partitionId}/${txn(0)}/retry`)
      expect(res).toMatchObject({ status: 503, body: { success: false, result: 'maintenance', code: 'maintenance', dlqRowRemoved: false } })
    } finally {
      await app.json('POST', '/api/v1/system/maintenance', { enabled: false })
    }
    expect(await writtenRows(app)).toEqual(before)
    expect(await post(`/api/v1/messages/${partitionId}/${txn(0)}/retry`)).toMatchObject({ status: 200, body: { result: 'moved' } })
  })

  it('refuses what it cannot retry with a clear 4xx and writes nothing', async () => {
    const { partitionId, txn } = await deadLettered('rt-refuse', 2)
    const before = await writtenRows(app)
    // A live message has nothing to replay: the same 404 as an unknown one.
    expect(await post(`/api/v1/messages/${partitionId}/${txn(1)}/retry`)).toMatchObject({ status: 404, body: { error: 'Message not found', code: 'message_not_found', result: 'gone' } })
    expect(await post(`/api/v1/messages/${partitionId}/nope/retry`)).toMatchObject({ status: 404, body: { error: 'Message not found', code: 'message_not_found' } })
    expect(await post(`/api/v1/messages/not-a-uuid/${txn(0)}/retry`)).toMatchObject({ status: 404, body: { code: 'message_not_found' } })
    expect(await post(`/api/v1/messages/${partitionId}/${txn(0)}/retry?consumerGroup=elsewhere`)).toMatchObject({ status: 404, body: { code: 'message_not_found' } })
    expect(await post(`/api/v1/messages/${partitionId}/${txn(0)}/retry`, { consumerGroup: '' })).toMatchObject({ status: 400, body: { code: 'invalid_request' } })
    expect(await post(`/api/v1/messages/${partitionId}/${txn(0)}/retry`, { consumerGroup: 7 })).toMatchObject({ status: 400, body: { code: 'invalid_request' } })
    const otherTenant = await tenanted.json('POST', `/api/v1/messages/${partitionId}/${txn(0)}/retry`, {}, { 'x-queen-tenant': 'acme' })
    expect(otherTenant).toMatchObject({ status: 404, body: { code: 'message_not_found' } })
    expect(await writtenRows(app)).toEqual(before)
    expect(await dlqOf('rt-refuse')).toHaveLength(1)
  })
})

describe('POST /api/v1/messages/:partitionId/:transactionId/dlq', () => {
  it("dead-letters a message for queue mode by default and settles it, so that group's next pop skips it", async () => {
    await app.json('POST', '/api/v1/configure', { queue: 'dl-head' })
    const pushed = await push(app, [0, 1, 2].map((i) => ({ queue: 'dl-head', partition: 'p', payload: { i }, transactionId: `dl-head-${i}` })))
    const res = await post(`/api/v1/messages/${pushed[0]!.partition_id}/dl-head-0/dlq`)
    expect(res.status).toBe(200)
    expect(res.body).toMatchObject({ movedToDLQ: true, transactionId: 'dl-head-0', messageId: pushed[0]!.message_id, consumerGroup: '__QUEUE_MODE__', offset: 0 })
    const [row] = await dlqOf('dl-head')
    expect(row).toMatchObject({ transactionId: 'dl-head-0', consumerGroup: '__QUEUE_MODE__', errorMessage: 'Manually moved to DLQ', data: { i: 0 } })
    expect(offsets((await pop(app, 'dl-head', { batch: 10, wait: false })).messages)).toEqual([1, 2])
    // Another group still gets it: the move is per group.
    expect(offsets((await pop(app, 'dl-head', { batch: 10, wait: false, consumerGroup: 'other', subscriptionMode: 'all' })).messages)).toEqual([0, 1, 2])
  })

  it('takes the group and the reason from the body, and refuses a second move and an unregistered group', async () => {
    const [pushed] = await push(app, [{ queue: 'dl-body', partition: 'p', payload: 1, transactionId: 'dl-body-0' }])
    await pop(app, 'dl-body', { wait: false, consumerGroup: 'g', subscriptionMode: 'all' })
    const path = `/api/v1/messages/${pushed!.partition_id}/dl-body-0/dlq`
    expect(await post(path, { consumerGroup: 'g', error: 'poison' })).toMatchObject({ status: 200, body: { consumerGroup: 'g' } })
    expect((await dlqOf('dl-body'))[0]).toMatchObject({ consumerGroup: 'g', errorMessage: 'poison' })
    const before = await writtenRows(app)
    expect(await post(path, { consumerGroup: 'g' })).toMatchObject({ status: 409, body: { error: 'Message already in DLQ for this consumer group', code: 'already_in_dlq' } })
    expect(await post(`${path}?consumerGroup=never`)).toMatchObject({ status: 404, body: { code: 'consumer_group_not_found' } })
    expect(await post(path, { error: 'x'.repeat(10_001) })).toMatchObject({ status: 400, body: { code: 'invalid_request' } })
    expect(await writtenRows(app)).toEqual(before)
    // Then a retry brings it back to g.
    expect(await post(`/api/v1/messages/${pushed!.partition_id}/dl-body-0/retry`)).toMatchObject({ status: 200, body: { consumerGroup: 'g' } })
  })
})

describe('the one-parameter forms /api/v1/messages/:transactionId/retry|dlq', () => {
  it('find the message across partitions, and answer 409 listing them when the id is in several', async () => {
    const [one] = await push(app, [{ queue: 'op-q', partition: 'a', payload: 1, transactionId: 'op-unique' }])
    expect(await post('/api/v1/messages/op-unique/dlq')).toMatchObject({ status: 200, body: { movedToDLQ: true, partitionId: one!.partition_id } })
    expect(await post('/api/v1/messages/op-unique/retry')).toMatchObject({ status: 200, body: { result: 'moved', partitionId: one!.partition_id } })

    const twice = await push(app, [
      { queue: 'op-q', partition: 'a', payload: 1, transactionId: 'op-shared' },
      { queue: 'op-q', partition: 'b', payload: 2, transactionId: 'op-shared' },
    ])
    const res = await post('/api/v1/messages/op-shared/dlq')
    expect(res.status).toBe(409)
    expect(res.body.code).toBe('ambiguous_transaction')
    expect(res.body.partitions).toEqual([
      { partitionId: twice[0]!.partition_id, queue: 'op-q', partition: 'a' },
      { partitionId: twice[1]!.partition_id, queue: 'op-q', partition: 'b' },
    ])
    expect(await post('/api/v1/messages/op-missing/dlq')).toMatchObject({ status: 404, body: { code: 'message_not_found' } })
    expect(await post('/api/v1/messages/op-missing/retry')).toMatchObject({ status: 404, body: { code: 'message_not_found' } })
    expect(await post('/api/v1/messages/op-shared/retry')).toMatchObject({ status: 404, body: { code: 'message_not_found', result: 'gone' } })
  })
})
