// A pop reads from the group's frontier, and frames above it that the group already settled (acked,
// or moved to the dead-letter queue) sit in acked_set. A pop skips them: a dead-lettered message
// behind an unsettled one is never delivered again, and neither is one already acknowledged.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { testApp, type TestApp } from '../helpers/app.js'
import { ack, pop, push } from '../helpers/engine.js'

let app: TestApp
beforeAll(async () => {
  app = await testApp()
})
afterAll(() => app.close())

const settled = async (queue: string, group: string) => {
  const [row] = await app.database.sql<{ committed: number; acked: number[] }>(
    `select c.committed_offset::int as committed, c.acked_set::int[] as acked
       from queen.log_consumers c join queen.log_partitions p on p.id = c.partition_id join queen.queues q on q.id = p.queue_id
      where q.name = $1 and c.consumer_group = $2`, [queue, group])
  return row
}

describe('pop skips settled frames', () => {
  it('redelivers only the unsettled frame of a round whose later frames were acknowledged or dead-lettered', async () => {
    await app.json('POST', '/api/v1/configure', { queue: 'skips', options: { retryLimit: 5 } })
    await push(app, [0, 1, 2, 3].map((n) => ({ queue: 'skips', partition: 'p', payload: n })))
    const round = await pop(app, 'skips', { batch: 4, consumerGroup: 'g', subscriptionMode: 'all', wait: false })
    expect(round.messages.map((m) => m.offset)).toEqual([0, 1, 2, 3])
    const [m0, m1, m2] = round.messages
    // 0 fails and will be retried, 1 completes, 2 goes to the dead-letter queue; 3 stays leased.
    const acked = await ack(app, [
      { transactionId: m0!.transactionId, partitionId: m0!.partitionId, leaseId: round.leaseId, status: 'failed', error: 'transient' },
      { transactionId: m1!.transactionId, partitionId: m1!.partitionId, leaseId: round.leaseId, status: 'completed' },
      { transactionId: m2!.transactionId, partitionId: m2!.partitionId, leaseId: round.leaseId, status: 'dlq', error: 'poison' },
    ], 'g')
    expect(acked.map((a) => a.success)).toEqual([true, true, true])
    expect(await settled('skips', 'g')).toEqual({ committed: 0, acked: [1, 2] })
    // The lease ends; the next round starts at the frontier again.
    await app.database.sql(`update queen.log_consumers set lease_expires_at = now() - interval '1 second' where consumer_group = 'g'`)
    const again = await pop(app, 'skips', { batch: 4, consumerGroup: 'g', subscriptionMode: 'all', wait: false })
    expect(again.messages.map((m) => m.offset)).toEqual([0, 3])
    expect(again.messages.map((m) => m.data)).toEqual([0, 3])
    // Settling the two delivered frames completes the round and carries the frontier past all four.
    const done = await ack(app, again.messages.map((m) => ({ transactionId: m.transactionId, partitionId: m.partitionId, leaseId: again.leaseId, status: 'completed' })), 'g')
    expect(done.map((a) => a.success)).toEqual([true, true])
    expect(done[1]!.leaseReleased).toBe(true)
    expect(await settled('skips', 'g')).toEqual({ committed: 4, acked: [] })
    expect((await pop(app, 'skips', { batch: 4, consumerGroup: 'g', subscriptionMode: 'all', wait: false })).status).toBe(204)
  })
})
