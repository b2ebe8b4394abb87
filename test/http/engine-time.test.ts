// Time-dependent behaviour, driven through the procedures' p_now (ENGINE 1.5): routes never pass
// it, so these calls use the same registry the routes use, with the clock pinned.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { PopRequestArg } from '../../src/db/procedures.js'
import { testApp, type TestApp } from '../helpers/app.js'
import { configureQueue } from '../helpers/engine.js'

let app: TestApp
beforeAll(async () => {
  app = await testApp()
})
afterAll(() => app.close())

const T0 = new Date('2031-05-01T12:00:00Z').getTime()
const at = (seconds: number) => new Date(T0 + seconds * 1000)

const pushAt = (queue: string, seconds: number, payloads: unknown[], partition = 'Default') =>
  app.db.call('log_push_v1', {
    tenant: '',
    now: at(seconds),
    items: payloads.map((data, index) => ({ index, queue, partition, transactionId: null, traceId: null, producerSub: null, enc: false, data })),
  })

const popAt = (queue: string, seconds: number, extra: Partial<PopRequestArg> = {}) =>
  app.db.call('log_pop_v1', {
    tenant: '',
    now: at(seconds),
    request: { queue, group: '', batch: 10, partitions: 1, autoAck: false, subscriptionMode: 'all', maxBytes: 8 * 1024 * 1024, ...extra },
  })

const ackAt = (seconds: number, messages: { partitionId: string; transactionId: string; leaseId: string }[], status = 'completed') =>
  app.db.call('log_ack_v1', {
    tenant: '',
    now: at(seconds),
    acks: messages.map((m, index) => ({ index, partitionId: m.partitionId, transactionId: m.transactionId, leaseId: m.leaseId, offset: null, consumerGroup: null, status, error: null })),
  })

describe('leases over time', () => {
  it('reclaims an expired lease in pop, redelivers the same range and counts one attempt', async () => {
    await configureQueue(app, 'expiry', { lease_time: 10 })
    await pushAt('expiry', 0, ['a', 'b'])
    const first = await popAt('expiry', 1)
    expect(first.messages.map((m) => m.offset)).toEqual([0, 1])
    expect((await popAt('expiry', 10)).messages).toEqual([])
    const again = await popAt('expiry', 11.5)
    expect(again.messages.map((m) => [m.offset, m.retryCount])).toEqual([[0, 1], [1, 1]])
    expect(again.leaseId).not.toBe(first.leaseId)
    // The crashed consumer's late acks are refused; the new holder's apply.
    const late = await ackAt(12, first.messages)
    expect(late.map((r) => r.code)).toEqual(['lease_invalid', 'lease_invalid'])
    const done = await ackAt(12, again.messages)
    expect(done.map((r) => r.success)).toEqual([true, true])
  })

  it('gives every message of a redelivered batch its own attempt count: 3 messages, 2 expiries', async () => {
    await configureQueue(app, 'attempts', { lease_time: 10, retry_limit: 5 })
    await pushAt('attempts', 0, ['a', 'b', 'c'])
    expect((await popAt('attempts', 1)).messages.map((m) => m.retryCount)).toEqual([0, 0, 0])
    expect((await popAt('attempts', 12)).messages.map((m) => m.retryCount)).toEqual([1, 1, 1])
    // The third delivery is a smaller batch, then a failed ack of its one message: that message has
    // been attempted three times, the two it did not take twice.
    const third = await popAt('attempts', 23, { batch: 1 })
    expect(third.messages.map((m) => [m.offset, m.retryCount])).toEqual([[0, 2]])
    await ackAt(24, third.messages, 'failed')
    expect((await popAt('attempts', 25)).messages.map((m) => [m.offset, m.retryCount])).toEqual([[0, 3], [1, 2], [2, 2]])
  })

  it('dead-letters a frame whose consumers keep crashing once expiries exhaust the budget', async () => {
    await configureQueue(app, 'crashloop', { lease_time: 5, retry_limit: 1 })
    await pushAt('crashloop', 0, ['poison', 'next'])
    expect((await popAt('crashloop', 1, { batch: 1 })).messages.map((m) => m.retryCount)).toEqual([0])
    expect((await popAt('crashloop', 7, { batch: 1 })).messages.map((m) => [m.offset, m.retryCount])).toEqual([[0, 1]])
    // The second expiry is attempt 2 > retryLimit 1: dead-lettered, and delivery resumes after it.
    expect((await popAt('crashloop', 13, { batch: 1 })).messages.map((m) => m.offset)).toEqual([1])
    const dlq = await app.database.sql(`select frame_offset::int as off, error, retry_count from queen.log_dlq d join queen.queues q on q.id = d.queue_id where q.name = 'crashloop'`)
    expect(dlq).toEqual([{ off: 0, error: 'Lease expired', retry_count: 2 }])
  })

  it('uses 60 s when leaseTime is 0 or less', async () => {
    await configureQueue(app, 'zerolease', { lease_time: 0 })
    await pushAt('zerolease', 0, ['x'])
    await popAt('zerolease', 0)
    const [row] = await app.database.sql<{ secs: number }>(`
      select extract(epoch from c.lease_expires_at - $1::timestamptz)::int as secs from queen.log_consumers c
        join queen.log_partitions p on p.id = c.partition_id join queen.queues q on q.id = p.queue_id where q.name = 'zerolease'`, [at(0)])
    expect(row!.secs).toBe(60)
  })

  it('extends every partition of a lease and never shortens it', async () => {
    await configureQueue(app, 'renew', { lease_time: 100 })
    await pushAt('renew', 0, ['a'], 'p1')
    await pushAt('renew', 0, ['b'], 'p2')
    const popped = await popAt('renew', 1, { partitions: 2 })
    expect(popped.partitionsClaimed).toBe(2)
    const shorter = await app.db.call('log_renew_v1', { tenant: '', now: at(2), items: [{ index: 0, leaseId: popped.leaseId!, seconds: 5 }] })
    expect(shorter[0]).toMatchObject({ success: true, partitionsExtended: 2, expiresAt: at(101).toISOString() })
    const longer = await app.db.call('log_renew_v1', { tenant: '', now: at(50), items: [{ index: 0, leaseId: popped.leaseId!, seconds: 300 }] })
    expect(longer[0]).toMatchObject({ success: true, partitionsExtended: 2, expiresAt: at(350).toISOString() })
    const expired = await app.db.call('log_renew_v1', { tenant: '', now: at(400), items: [{ index: 0, leaseId: popped.leaseId!, seconds: 60 }] })
    expect(expired[0]).toMatchObject({ success: false, error: 'Lease already expired', code: 'lease_expired', expiresAt: null, partitionsExtended: 0 })
  })
})

describe('the stats lane over time', () => {
  it('counts a dead letter in the minute it failed, even when no pass ran in that minute', async () => {
    await configureQueue(app, 'dl-minutes', { retry_limit: 0 })
    await pushAt('dl-minutes', 0, ['poison'])
    const refreshAt = (seconds: number) => app.db.call('log_stats_refresh_step_v1', { tenant: '', now: at(seconds) })
    await refreshAt(10) // a pass in 12:00
    const popped = await popAt('dl-minutes', 61)
    await ackAt(62, popped.messages, 'failed') // dead-lettered in 12:01, where no pass runs
    await refreshAt(130) // the next pass, in 12:02
    const buckets = await app.database.sql(
      `select to_char(m.bucket at time zone 'UTC', 'HH24:MI') as minute, m.dead_lettered::int as dead
         from queen.queue_metrics m join queen.queues q on q.id = m.queue_id where q.name = 'dl-minutes' and m.dead_lettered > 0`,
    )
    expect(buckets).toEqual([{ minute: '12:01', dead: 1 }])
  })
})

describe('delivery gates', () => {
  it('hides frames younger than delayedProcessing and stops at the first of them (FIFO)', async () => {
    await configureQueue(app, 'delayed', { delayed_processing: 5 })
    await pushAt('delayed', 0, ['old'])
    await pushAt('delayed', 4, ['young'])
    expect((await popAt('delayed', 3)).messages).toEqual([])
    const ready = await popAt('delayed', 6, { autoAck: true })
    expect(ready.messages.map((m) => m.data)).toEqual(['old'])
    expect((await popAt('delayed', 8.5, { autoAck: true })).messages).toEqual([])
    expect((await popAt('delayed', 9.5, { autoAck: true })).messages.map((m) => m.data)).toEqual(['young'])
  })

  it('holds a partition until its newest frame is windowBuffer old, then drains it whole', async () => {
    await configureQueue(app, 'windowed', { window_buffer: 3 })
    await pushAt('windowed', 0, ['a'])
    await pushAt('windowed', 2, ['b'])
    expect((await popAt('windowed', 4)).messages).toEqual([])
    const held = await popAt('windowed', 4, { partition: 'Default' })
    expect(held).toMatchObject({ messages: [], windowBufferActive: true })
    expect((await popAt('windowed', 5.5)).messages.map((m) => m.data)).toEqual(['a', 'b'])
  })

  it('starts a timestamp subscription at the first frame written at or after the instant', async () => {
    await pushAt('subscribed', 0, ['before'])
    await pushAt('subscribed', 10, ['after-1', 'after-2'])
    const sub = await popAt('subscribed', 20, { group: 'late', subscriptionMode: 'timestamp', subscriptionFrom: at(5).toISOString() })
    expect(sub.messages.map((m) => m.data)).toEqual(['after-1', 'after-2'])
  })

  it('keeps a caught-up watermark that never hides new writes or leased frames', async () => {
    await configureQueue(app, 'caught', { lease_time: 300 })
    await pushAt('caught', 0, ['a0'], 'a')
    await pushAt('caught', 0, ['b0'], 'b')
    const wildcard = (seconds: number, extra: Partial<PopRequestArg> = {}) => popAt('caught', seconds, { partitions: 10, ...extra })
    const watermark = async () =>
      (await app.database.sql<{ at: string | null; checked: string | null }>(`
        select g.caught_up_at as at, g.caught_up_checked_at as checked from queen.consumer_groups g
          join queen.queues q on q.id = g.queue_id where q.name = 'caught' and g.consumer_group = '__QUEUE_MODE__'`))[0]!
    expect((await wildcard(1, { autoAck: true })).messages.map((m) => m.data).sort()).toEqual(['a0', 'b0'])
    expect((await wildcard(2)).messages).toEqual([])
    expect(new Date((await watermark()).at!)).toEqual(at(2))
    // A write long after the watermark is still found by the filtered scan.
    await pushAt('caught', 500, ['a1'], 'a')
    const leased = await wildcard(501)
    expect(leased.messages.map((m) => m.data)).toEqual(['a1'])
    // Nothing claimable, but a1 is pending under a live lease: the watermark must not advance.
    expect((await wildcard(600)).messages).toEqual([])
    expect(new Date((await watermark()).at!)).toEqual(at(2))
    expect(new Date((await watermark()).checked!)).toEqual(at(600))
    // After the lease expires the frame comes back through the wildcard scan.
    const again = await wildcard(900)
    expect(again.messages.map((m) => [m.data, m.retryCount])).toEqual([['a1', 1]])
  })
})
