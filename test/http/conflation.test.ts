// Last-value (conflating) delivery (issue #5 item 3, ENGINE 5.4/6.3, D8): a conflating group's pop
// delivers only the newest visible frame of each partition and acking it retires every position the
// lease covered; frames pushed after the pop stay pending; failures are charged to the delivered frame
// and a newer frame supersedes a failing one.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { testApp, type TestApp } from '../helpers/app.js'
import { ack, acksOf, configureQueue, pop, push, type Popped } from '../helpers/engine.js'

let app: TestApp
beforeAll(async () => {
  app = await testApp()
})
afterAll(() => app.close())

const depth = async (queue: string, group?: string) => {
  const res = await app.json('GET', `/api/v1/resources/queues/${encodeURIComponent(queue)}/depth${group ? `?group=${encodeURIComponent(group)}` : ''}`)
  expect(res.status).toBe(200)
  return res.body as { pending: number; effectivePending: number; effectiveReady: number; partitionsPending: number; conflation: boolean }
}

const cursor = async (queue: string, group: string, partition = 'Default') =>
  (await app.database.sql<{ committed: number; lease: string | null; from: number | null; to: number | null }>(
    `select c.committed_offset::int as committed, c.lease_id::text as lease, c.lease_from::int as from, c.lease_to::int as to
       from queen.log_consumers c join queen.log_partitions p on p.id = c.partition_id join queen.queues q on q.id = p.queue_id
      where q.name = $1 and p.name = $2 and c.consumer_group = $3`, [queue, partition, group]))[0]

const fill = (queue: string, n: number, partition = 'Default', from = 0) =>
  push(app, Array.from({ length: n }, (_, i) => ({ queue, partition, payload: { v: from + i }, transactionId: `${queue}-${partition}-${from + i}` })))

describe('conflating delivery', () => {
  it('hands a conflating group at most one frame per partition: 4 000 frames over 12 partitions are 12 handler calls', async () => {
    // First contact before any push fixes the policy (and subscribes from the beginning).
    expect((await pop(app, 'ticker', { consumerGroup: 'last', delivery: 'conflate', subscriptionMode: 'all' })).status).toBe(204)
    const partitions = Array.from({ length: 12 }, (_, i) => `p${i}`)
    const items = Array.from({ length: 4000 }, (_, i) => ({ queue: 'ticker', partition: partitions[i % 12], payload: { i } }))
    await push(app, items.slice(0, 2000))
    await push(app, items.slice(2000))

    expect(await depth('ticker', 'last')).toMatchObject({ conflation: true, pending: 4000, effectivePending: 12, partitionsPending: 12, effectiveReady: 12 })
    // Without a group (and for a non-conflating group) effectivePending is log depth.
    expect(await depth('ticker')).toMatchObject({ conflation: false, pending: 4000, effectivePending: 4000 })

    const handled: Popped[] = []
    for (;;) {
      const res = await pop(app, 'ticker', { consumerGroup: 'last', batch: 100, partitions: 100, subscriptionMode: 'all' })
      if (res.status === 204) break
      handled.push(...res.messages)
      const results = await ack(app, acksOf(res.messages), 'last')
      expect(results.every((r) => r.success && r.leaseReleased)).toBe(true)
    }
    expect(handled.length).toBeLessThanOrEqual(12)
    expect(handled).toHaveLength(12)
    // Each is the newest frame of its partition.
    const newest = new Map(partitions.map((p) => [p, Math.max(...items.map((it, i) => (it.partition === p ? i : -1)))] as const))
    for (const m of handled) expect((m.data as { i: number }).i, m.partition).toBe(newest.get(m.partition))
    expect(await depth('ticker', 'last')).toMatchObject({ pending: 0, effectivePending: 0, effectiveReady: 0 })
    // Other groups still see every frame (conflation is a per-group policy).
    expect((await pop(app, 'ticker', { consumerGroup: 'all-of-it', batch: 10000, partitions: 12, subscriptionMode: 'all' })).messages).toHaveLength(4000)
  })

  it('settles only the leased range: frames pushed after the pop stay pending', async () => {
    await fill('prices', 3)
    const first = await pop(app, 'prices', { consumerGroup: 'lv', delivery: 'conflate', batch: 10, subscriptionMode: 'all' })
    expect(first.messages.map((m) => m.offset)).toEqual([2])
    expect(await cursor('prices', 'lv')).toMatchObject({ committed: 0, from: 0, to: 2 })
    await fill('prices', 2, 'Default', 3)
    const [result] = await ack(app, acksOf(first.messages), 'lv')
    expect(result).toMatchObject({ success: true, leaseReleased: true, offset: 2 })
    expect(await cursor('prices', 'lv')).toMatchObject({ committed: 3, lease: null })
    expect(await depth('prices', 'lv')).toMatchObject({ pending: 2, effectivePending: 1 })
    const second = await pop(app, 'prices', { consumerGroup: 'lv', batch: 10, subscriptionMode: 'all' })
    expect(second.messages.map((m) => m.offset)).toEqual([4])
  })

  it('charges failures to the delivered frame, lets a newer frame supersede it, and dead-letters the delivered frame on exhaustion', async () => {
    await configureQueue(app, 'gauges', { retry_limit: 1 })
    await fill('gauges', 3)
    const a = await pop(app, 'gauges', { consumerGroup: 'lv', delivery: 'conflate', subscriptionMode: 'all' })
    expect(a.messages.map((m) => [m.offset, m.retryCount])).toEqual([[2, 0]])
    expect((await ack(app, acksOf(a.messages, 'failed'), 'lv'))[0]).toMatchObject({ success: true, leaseReleased: true, dlq: false })
    const b = await pop(app, 'gauges', { consumerGroup: 'lv', subscriptionMode: 'all' })
    expect(b.messages.map((m) => [m.offset, m.retryCount])).toEqual([[2, 1]])
    expect((await ack(app, acksOf(b.messages, 'failed'), 'lv'))[0]).toMatchObject({ success: true, dlq: true })
    expect(await cursor('gauges', 'lv')).toMatchObject({ committed: 3, lease: null })
    const dlq = await app.database.sql<{ off: number; group: string }>(`select frame_offset::int as off, consumer_group as group from queen.log_dlq l join queen.queues q on q.id = l.queue_id where q.name = 'gauges'`)
    expect(dlq).toEqual([{ off: 2, group: 'lv' }])

    // A newer value arriving before the retry governs and restarts the count.
    await fill('gauges', 1, 'Default', 3)
    const c = await pop(app, 'gauges', { consumerGroup: 'lv', subscriptionMode: 'all' })
    expect((await ack(app, acksOf(c.messages, 'failed'), 'lv'))[0]).toMatchObject({ dlq: false })
    await fill('gauges', 1, 'Default', 4)
    const d = await pop(app, 'gauges', { consumerGroup: 'lv', subscriptionMode: 'all' })
    expect(d.messages.map((m) => [m.offset, m.retryCount])).toEqual([[4, 0]])
    expect((await ack(app, acksOf(d.messages, 'failed'), 'lv'))[0]).toMatchObject({ dlq: false })
    const e = await pop(app, 'gauges', { consumerGroup: 'lv', subscriptionMode: 'all' })
    expect(e.messages.map((m) => [m.offset, m.retryCount])).toEqual([[4, 1]])
    expect((await ack(app, acksOf(e.messages), 'lv'))[0]).toMatchObject({ success: true, leaseReleased: true })
    expect(await cursor('gauges', 'lv')).toMatchObject({ committed: 5 })
  })

  it('charges an expired conflating lease to its delivered frame and retires the range at exhaustion', async () => {
    await configureQueue(app, 'meters', { retry_limit: 0 })
    await fill('meters', 4)
    const base = Date.now()
    const at = (s: number) => new Date(base + s * 1000)
    const request = { queue: 'meters', group: 'lv', batch: 10, partitions: 1, autoAck: false, subscriptionMode: 'all', delivery: 'conflate', maxBytes: 1 << 20 } as const
    const first = await app.db.call('log_pop_v1', { tenant: '', request, now: at(0) })
    expect(first.messages.map((m) => m.offset)).toEqual([3])
    // Past the 300 s lease with retryLimit 0: the expiry exhausts frame 3, which is dead-lettered,
    // and [0, 3] is settled, so there is nothing left to deliver.
    const second = await app.db.call('log_pop_v1', { tenant: '', request, now: at(400) })
    expect(second.messages).toEqual([])
    expect(await cursor('meters', 'lv')).toMatchObject({ committed: 4, lease: null })
    const dlq = await app.database.sql<{ off: number; error: string }>(`select frame_offset::int as off, error from queen.log_dlq l join queen.queues q on q.id = l.queue_id where q.name = 'meters'`)
    expect(dlq).toEqual([{ off: 3, error: 'Lease expired' }])
  })

  it('retires the leased range when a transaction completes the delivered frame', async () => {
    await fill('handoff', 4)
    const got = await pop(app, 'handoff', { consumerGroup: 'lv', delivery: 'conflate', subscriptionMode: 'all' })
    const m = got.messages[0]!
    expect(m.offset).toBe(3)
    const res = await app.json('POST', '/api/v1/transaction', {
      operations: [
        { type: 'push', items: [{ queue: 'handoff-out', payload: m.data }] },
        { type: 'ack', transactionId: m.transactionId, partitionId: m.partitionId, leaseId: m.leaseId, consumerGroup: 'lv', status: 'completed' },
      ],
      requiredLeases: [got.leaseId],
    })
    expect(res.body).toMatchObject({ success: true })
    expect(await cursor('handoff', 'lv')).toMatchObject({ committed: 4, lease: null })
  })

  it('autoAck retires the whole range at delivery', async () => {
    await fill('auto-lv', 5)
    const res = await pop(app, 'auto-lv', { consumerGroup: 'lv', delivery: 'conflate', autoAck: true, subscriptionMode: 'all' })
    expect(res.messages.map((m) => [m.offset, m.leaseId])).toEqual([[4, '']])
    expect(await cursor('auto-lv', 'lv')).toMatchObject({ committed: 5, lease: null })
    expect((await pop(app, 'auto-lv', { consumerGroup: 'lv', subscriptionMode: 'all' })).status).toBe(204)
  })

  it('fixes delivery at first contact and ignores it in queue mode', async () => {
    await fill('policy', 3)
    expect((await pop(app, 'policy', { consumerGroup: 'plain', batch: 10, subscriptionMode: 'all' })).messages).toHaveLength(3)
    await fill('policy', 3, 'other')
    // Later pops cannot change a fixed policy.
    expect((await pop(app, 'policy', { consumerGroup: 'plain', delivery: 'conflate', batch: 10, subscriptionMode: 'all' }, 'other')).messages).toHaveLength(3)
    expect((await pop(app, 'policy', { delivery: 'conflate', batch: 10 })).messages).toHaveLength(3)
    const rows = await app.database.sql<{ group: string; delivery: string }>(
      `select g.consumer_group as group, g.delivery from queen.consumer_groups g join queen.queues q on q.id = g.queue_id where q.name = 'policy' order by 1`)
    expect(rows).toEqual([{ group: '__QUEUE_MODE__', delivery: 'all' }, { group: 'plain', delivery: 'all' }])
  })

  it('refuses an unknown delivery value with 400 and writes nothing', async () => {
    const res = await app.json('GET', '/api/v1/pop/queue/refused-delivery?delivery=latest')
    expect(res.status).toBe(400)
    expect(res.body).toMatchObject({ code: 'invalid_request', error: 'delivery must be one of all, conflate' })
    expect(await app.database.sql(`select 1 from queen.queues where name = 'refused-delivery'`)).toEqual([])
  })
})
