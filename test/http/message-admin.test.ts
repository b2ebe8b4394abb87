// Retry of a dead-lettered message and move-to-DLQ (SDK-SURFACE A3), in the two-parameter form
// Queen's clients send and the one-parameter form of the older Node server, over messages that
// really went through push, pop, ack and the dead-letter path. docs/admin-messages.md says how
// retry re-delivers; these tests pin both ways and what other groups see.
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
  it('rewinds the group by one position when the dead-lettered frame is the last it settled: the same frame comes back', async () => {
    const { partitionId, txn } = await deadLettered('rt-rewind', 1)
    const res = await post(`/api/v1/messages/${partitionId}/${txn(0)}/retry`)
    expect(res.status).toBe(200)
    expect(res.body).toMatchObject({ retried: true, transactionId: txn(0), consumerGroup: '__QUEUE_MODE__', partitionId, offset: 0, redelivery: 'rewind' })
    expect(await dlqOf('rt-rewind')).toEqual([])
    const again = await pop(app, 'rt-rewind', { wait: false })
    expect(again.messages.map((m) => [m.offset, m.transactionId, m.data])).toEqual([[0, txn(0), { i: 0 }]])
    expect(again.messages[0]!.retryCount).toBe(0)
    await ack(app, acksOf(again.messages))
    expect((await pop(app, 'rt-rewind', { wait: false })).status).toBe(204)
  })

  it('re-pushes the payload as a new frame when the group has moved on, linked by a retry trace, and other groups never see it', async () => {
    const { partitionId, txn } = await deadLettered('rt-repush', 3)
    // Queue mode moves on past the dead-lettered frame; group g2 reads and settles everything.
    const next = await pop(app, 'rt-repush', { batch: 1, wait: false })
    await ack(app, acksOf(next.messages))
    const g2 = await pop(app, 'rt-repush', { batch: 10, wait: false, consumerGroup: 'g2', subscriptionMode: 'all' })
    await ack(app, acksOf(g2.messages), 'g2')

    const res = await post(`/api/v1/messages/${partitionId}/${txn(0)}/retry`)
    expect(res.body).toMatchObject({ retried: true, transactionId: txn(0), consumerGroup: '__QUEUE_MODE__', offset: 0, redelivery: 'repush', newOffset: 3 })
    const newTxn = res.body.newTransactionId as string
    expect(newTxn).not.toBe(txn(0))

    const queueMode = await pop(app, 'rt-repush', { batch: 10, wait: false })
    expect(queueMode.messages.map((m) => [m.offset, m.data])).toEqual([[2, { i: 2 }], [3, { i: 0 }]])
    expect((await pop(app, 'rt-repush', { batch: 10, wait: false, consumerGroup: 'g2', subscriptionMode: 'all' })).status).toBe(204)

    const traces = await app.json('GET', `/api/v1/traces/${partitionId}/${newTxn}`)
    expect(traces.body.traces).toEqual([
      expect.objectContaining({ event_type: 'retry', consumer_group: '__QUEUE_MODE__', data: { retryOf: { partitionId, transactionId: txn(0), offset: 0 } } }),
    ])
    expect(await dlqOf('rt-repush')).toEqual([])
  })

  it('retries a named group only for that group, picked by consumerGroup when several dead-lettered the message', async () => {
    await app.json('POST', '/api/v1/configure', { queue: 'rt-groups', options: { retryLimit: 0 } })
    const [pushed] = await push(app, [{ queue: 'rt-groups', partition: 'p', payload: 'x', transactionId: 'rt-groups-0' }])
    for (const group of ['a', 'b']) {
      const popped = await pop(app, 'rt-groups', { wait: false, consumerGroup: group, subscriptionMode: 'all' })
      await ack(app, acksOf(popped.messages, 'failed'), group)
    }
    const path = `/api/v1/messages/${pushed!.partition_id}/rt-groups-0/retry`
    const ambiguous = await post(path)
    expect(ambiguous).toMatchObject({ status: 409, body: { code: 'ambiguous_consumer_group', consumerGroups: ['a', 'b'] } })
    expect(await post(`${path}?consumerGroup=b`)).toMatchObject({ status: 200, body: { retried: true, consumerGroup: 'b', redelivery: 'rewind' } })
    expect((await pop(app, 'rt-groups', { wait: false, consumerGroup: 'b', subscriptionMode: 'all' })).messages).toHaveLength(1)
    expect((await pop(app, 'rt-groups', { wait: false, consumerGroup: 'a', subscriptionMode: 'all' })).status).toBe(204)
    expect((await dlqOf('rt-groups')).map((m) => m.consumerGroup)).toEqual(['a'])
    // The body names the group too.
    expect(await post(path, { consumerGroup: 'a' })).toMatchObject({ status: 200, body: { consumerGroup: 'a' } })
  })

  it('refuses what it cannot retry with a clear 4xx and writes nothing', async () => {
    const { partitionId, txn } = await deadLettered('rt-refuse', 2)
    const before = await writtenRows(app)
    expect(await post(`/api/v1/messages/${partitionId}/${txn(1)}/retry`)).toMatchObject({ status: 409, body: { error: 'Message is not in DLQ, cannot retry', code: 'not_in_dlq' } })
    expect(await post(`/api/v1/messages/${partitionId}/nope/retry`)).toMatchObject({ status: 404, body: { error: 'Message not found', code: 'message_not_found' } })
    expect(await post(`/api/v1/messages/not-a-uuid/${txn(0)}/retry`)).toMatchObject({ status: 404, body: { code: 'message_not_found' } })
    expect(await post(`/api/v1/messages/${partitionId}/${txn(0)}/retry?consumerGroup=elsewhere`)).toMatchObject({ status: 409, body: { code: 'not_in_dlq' } })
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
    expect(await post('/api/v1/messages/op-unique/retry')).toMatchObject({ status: 200, body: { retried: true, partitionId: one!.partition_id } })

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
    expect(await post('/api/v1/messages/op-shared/retry')).toMatchObject({ status: 409, body: { code: 'not_in_dlq' } })
  })
})
