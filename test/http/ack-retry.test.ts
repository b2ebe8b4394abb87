// A retried ack (issue #20): when an ack commits but its answer is lost, the client sends it again
// with the same transaction id and lease. Within the lease's own round that retry answers success
// with alreadyAcked and changes nothing; an ack naming a lease of an earlier round keeps its answer.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { testApp, type TestApp } from '../helpers/app.js'
import { ack, acksOf, pop, push } from '../helpers/engine.js'

let app: TestApp
beforeAll(async () => {
  app = await testApp()
})
afterAll(() => app.close())

const cursor = async (queue: string, group = '__QUEUE_MODE__') => {
  const [row] = await app.database.sql(
    `select c.committed_offset::int as committed, c.acked_set::int[] as acked, c.retry_count as retries, c.total_consumed::int as consumed,
            c.batches_consumed::int as batches, (select count(*)::int from queen.log_dlq d where d.partition_id = c.partition_id) as dlq
       from queen.log_consumers c join queen.log_partitions p on p.id = c.partition_id join queen.queues q on q.id = p.queue_id
      where q.name = $1 and c.consumer_group = $2`, [queue, group])
  return row
}

describe('an ack retried after its answer was lost', () => {
  it('answers a whole batch again with success and alreadyAcked, changing nothing', async () => {
    await push(app, [1, 2, 3].map((n) => ({ queue: 'retry-batch', payload: n })))
    const { messages } = await pop(app, 'retry-batch', { batch: 3 })
    const first = await ack(app, acksOf(messages))
    expect(first.map((r) => [r.success, r.alreadyAcked])).toEqual([[true, undefined], [true, undefined], [true, undefined]])
    expect(first[2]!.leaseReleased).toBe(true)
    const before = await cursor('retry-batch')
    const again = await ack(app, acksOf(messages))
    expect(again.map((r) => ({ success: r.success, alreadyAcked: r.alreadyAcked, code: r.code, leaseReleased: r.leaseReleased }))).toEqual(
      messages.map(() => ({ success: true, alreadyAcked: true, code: null, leaseReleased: false })),
    )
    expect(await cursor('retry-batch')).toEqual(before)
  })

  it('answers a single ack and a group ack again the same way', async () => {
    for (const consumerGroup of [undefined, 'audit']) {
      const queue = `retry-one-${consumerGroup ?? 'qm'}`
      await push(app, [{ queue, payload: 'x' }])
      const { messages } = await pop(app, queue, consumerGroup ? { consumerGroup, subscriptionMode: 'all' } : {})
      const body = { ...acksOf(messages)[0], ...(consumerGroup ? { consumerGroup } : {}) }
      const first = await app.json('POST', '/api/v1/ack', body)
      expect(first.body[0]).toMatchObject({ success: true, leaseReleased: true })
      expect(first.body[0].alreadyAcked).toBeUndefined()
      const again = await app.json('POST', '/api/v1/ack', body)
      expect(again.status).toBe(200)
      expect(again.body[0]).toMatchObject({ success: true, alreadyAcked: true, error: null, code: null })
    }
  })

  it('answers a part of the round acked twice while the lease is live', async () => {
    await push(app, [1, 2].map((n) => ({ queue: 'retry-partial', payload: n })))
    const { messages } = await pop(app, 'retry-partial', { batch: 2 })
    await ack(app, acksOf(messages.slice(0, 1)))
    const again = await ack(app, acksOf(messages.slice(0, 1)))
    expect(again[0]).toMatchObject({ success: true, alreadyAcked: true, leaseReleased: false })
    const rest = await ack(app, acksOf(messages.slice(1)))
    expect(rest[0]).toMatchObject({ success: true, leaseReleased: true })
    expect(rest[0]!.alreadyAcked).toBeUndefined()
  })

  it('does not count a retried failure twice', async () => {
    await push(app, [{ queue: 'retry-failed', payload: 'boom' }])
    const { messages } = await pop(app, 'retry-failed')
    const first = await ack(app, acksOf(messages, 'failed'))
    expect(first[0]).toMatchObject({ success: true, leaseReleased: true, dlq: false })
    const again = await ack(app, acksOf(messages, 'failed'))
    expect(again[0]).toMatchObject({ success: true, alreadyAcked: true, leaseReleased: false })
    expect(await cursor('retry-failed')).toMatchObject({ committed: 0, retries: 1, dlq: 0 })
    const redelivered = await pop(app, 'retry-failed')
    expect(redelivered.messages.map((m) => m.retryCount)).toEqual([1])
  })

  it('keeps the old answers for an ack naming the lease of an earlier round, and for a completion the round never made', async () => {
    await push(app, [1, 2].map((n) => ({ queue: 'retry-earlier', payload: n })))
    const round1 = await pop(app, 'retry-earlier', { batch: 1 })
    await ack(app, acksOf(round1.messages))
    const round2 = await pop(app, 'retry-earlier', { batch: 1 })
    expect(round2.leaseId).not.toBe(round1.leaseId)
    // Its frame lies below the new round: by transaction id it is no longer found (the answer it had).
    const late = await ack(app, acksOf(round1.messages))
    expect(late[0]).toMatchObject({ success: false, code: 'message_not_found' })
    expect(late[0]!.alreadyAcked).toBeUndefined()

    // Round 2's failure ended its lease; a completion of its frame with that lease is not a retry.
    await ack(app, acksOf(round2.messages, 'failed'))
    const completion = await ack(app, acksOf(round2.messages))
    expect(completion[0]).toMatchObject({ success: false, code: 'lease_invalid' })
  })
})
