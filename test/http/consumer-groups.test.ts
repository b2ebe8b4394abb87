// Consumer-group administration (API 5.12, API 8 delivery, D8, D15, D18): shapes, seek by timestamp
// and to the end, delete, subscription rewrite, the delivery policy, and refusals that write nothing.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { testApp, type TestApp } from '../helpers/app.js'
import { ack, acksOf, pop, push, writtenRows } from '../helpers/engine.js'

let app: TestApp
beforeAll(async () => {
  app = await testApp()
})
afterAll(() => app.close())

const fill = (queue: string, n: number, partition = 'Default', from = 0) =>
  push(app, Array.from({ length: n }, (_, i) => ({ queue, partition, payload: { v: from + i }, transactionId: `${queue}-${partition}-${from + i}` })))

/** Pops everything the group can see on the queue, acking as it goes; returns the offsets by partition. */
async function drain(queue: string, group: string) {
  const got: string[] = []
  for (;;) {
    const res = await pop(app, queue, { consumerGroup: group, batch: 100, partitions: 10, subscriptionMode: 'all' })
    if (res.status === 204) return got
    got.push(...res.messages.map((m) => `${m.partition}:${m.offset}`))
    await ack(app, acksOf(res.messages), group)
  }
}

const groupRow = async (queue: string, group: string) =>
  (await app.database.sql<{ mode: string | null; at: Date | null; delivery: string; caught: Date | null }>(
    `select g.subscription_mode as mode, g.subscription_at as at, g.delivery, g.caught_up_at as caught
       from queen.consumer_groups g join queen.queues q on q.id = g.queue_id where q.name = $1 and g.consumer_group = $2`, [queue, group]))[0]

describe('unknown groups', () => {
  it('answer 200 with {} or zero counts on every admin route', async () => {
    expect(await app.json('GET', '/api/v1/consumer-groups/nobody')).toMatchObject({ status: 200, body: {} })
    expect(await app.json('DELETE', '/api/v1/consumer-groups/nobody')).toMatchObject({
      status: 200, body: { success: true, consumerGroup: 'nobody', deletedPartitions: 0, metadataDeleted: false },
    })
    expect(await app.json('DELETE', '/api/v1/consumer-groups/nobody/queues/no-queue')).toMatchObject({
      status: 200, body: { success: true, consumerGroup: 'nobody', queueName: 'no-queue', deletedPartitions: 0 },
    })
    expect(await app.json('POST', '/api/v1/consumer-groups/nobody/subscription', { subscriptionTimestamp: '2026-01-01T00:00:00Z' })).toMatchObject({
      status: 200, body: { success: true, consumerGroup: 'nobody', rowsUpdated: 0, newTimestamp: '2026-01-01T00:00:00.000Z' },
    })
    expect((await app.json('GET', '/api/v1/consumer-groups/lagging?minLagSeconds=0')).body).toEqual([])
  })
})

describe('listing and detail', () => {
  it('lists one entry per (group, queue) with lag, members and subscription, and details every partition', async () => {
    await fill('orders.eu', 3, 'a')
    await fill('orders.eu', 2, 'b')
    const held = await pop(app, 'orders.eu', { consumerGroup: 'shipper', batch: 2, subscriptionMode: 'all' }, 'a')
    const list = (await app.json('GET', '/api/v1/consumer-groups')).body as Record<string, unknown>[]
    const entry = list.find((g) => g.name === 'shipper' && g.queueName === 'orders.eu')!
    expect(entry).toMatchObject({
      topics: ['orders.eu'], members: 1, partitionsWithLag: 2, totalLag: 5, state: 'Stable',
      subscriptionMode: 'all', subscriptionTimestamp: null,
    })
    expect(entry.subscriptionCreatedAt).toMatch(/Z$/)
    expect(typeof entry.maxTimeLag).toBe('number')

    const detail = (await app.json('GET', '/api/v1/consumer-groups/shipper')).body
    expect(Object.keys(detail)).toEqual(['orders.eu'])
    expect(detail['orders.eu'].conflation).toBe(false)
    const [a, b] = detail['orders.eu'].partitions
    expect(a).toMatchObject({ partition: 'a', workerId: held.leaseId, leaseActive: true, offsetLag: 3, committedOffset: 0, totalConsumed: 0, lastConsumedAt: null })
    expect(b).toMatchObject({ partition: 'b', workerId: null, leaseActive: false, offsetLag: 2 })

    await ack(app, acksOf(held.messages), 'shipper')
    const after = (await app.json('GET', '/api/v1/consumer-groups/shipper')).body['orders.eu'].partitions[0]
    expect(after).toMatchObject({ committedOffset: 2, offsetLag: 1, totalConsumed: 2, leaseActive: false })
    expect(after.lastConsumedAt).toMatch(/Z$/)
  })

  it('reports lag by age: lagging entries worst first, and Stable / Lagging / Dead by the clock', async () => {
    await fill('aging', 4)
    const got = await pop(app, 'aging', { consumerGroup: 'slowpoke', batch: 1, subscriptionMode: 'all' })
    await ack(app, acksOf(got.messages), 'slowpoke')
    const later = (s: number) => new Date(Date.now() + s * 1000)
    const state = async (s: number) =>
      ((await app.db.call('consumer_group_list_v1', { tenant: '', now: later(s) })) as { name: string; state: string; maxTimeLag: number }[])
        .find((g) => g.name === 'slowpoke')!
    expect(await state(0)).toMatchObject({ state: 'Stable' })
    expect(await state(600)).toMatchObject({ state: 'Lagging' })
    expect((await state(600)).maxTimeLag).toBeGreaterThanOrEqual(600)
    expect(await state(7200)).toMatchObject({ state: 'Dead' })

    const lagging = (await app.db.call('consumer_group_lagging_v1', { tenant: '', minLagSeconds: 3600, now: later(7200) })) as Record<string, unknown>[]
    const mine = lagging.filter((l) => l.consumer_group === 'slowpoke')
    expect(mine).toHaveLength(1)
    expect(mine[0]).toMatchObject({ queue_name: 'aging', partition_name: 'Default', offset_lag: 3, worker_id: null })
    expect(mine[0]!.lag_hours).toBeCloseTo(2, 1)
    expect(mine[0]!.oldest_unconsumed_at).toMatch(/Z$/)
    const times = lagging.map((l) => l.time_lag_seconds as number)
    expect(times).toEqual([...times].sort((x, y) => y - x))
    // Over HTTP with the default threshold (3 600 s) nothing here is that old yet.
    expect((await app.json('GET', '/api/v1/consumer-groups/lagging')).body.filter((l: { consumer_group: string }) => l.consumer_group === 'slowpoke')).toEqual([])
  })
})

describe('seek', () => {
  it('by timestamp redelivers from the first frame written at or after it, releasing live leases', async () => {
    await fill('replay', 2)
    const mid = await push(app, [{ queue: 'replay', payload: 'm2', transactionId: 'replay-2' }, { queue: 'replay', payload: 'm3', transactionId: 'replay-3' }])
    await fill('replay', 1, 'Default', 4)
    expect(await drain('replay', 'r')).toHaveLength(5)
    const [at] = await app.database.sql<{ created: Date }>(
      `select s.created_at as created from queen.log_segments s where s.partition_id = $1 and s.base_offset = 2`, [mid[0]!.partition_id])
    // A consumer holding a lease across the seek loses it.
    await fill('replay', 1, 'Default', 5)
    const holder = await pop(app, 'replay', { consumerGroup: 'r', subscriptionMode: 'all' })
    expect(holder.messages.map((m) => m.offset)).toEqual([5])

    const res = await app.json('POST', '/api/v1/consumer-groups/r/queues/replay/seek', { timestamp: at!.created.toISOString() })
    expect(res).toMatchObject({ status: 200, body: { success: true, consumerGroup: 'r', queueName: 'replay', seekToEnd: false, partitionsUpdated: 1 } })
    expect(res.body.targetTimestamp).toBe(at!.created.toISOString())
    expect((await ack(app, acksOf(holder.messages), 'r'))[0]).toMatchObject({ success: false, code: 'lease_invalid' })
    expect(await drain('replay', 'r')).toEqual(['Default:2', 'Default:3', 'Default:4', 'Default:5'])
    expect(await groupRow('replay', 'r')).toMatchObject({ mode: 'all' })
  })

  it('toEnd skips everything, creates missing cursors on every partition, and clears caught_up_at', async () => {
    await fill('skip', 3, 'a')
    await fill('skip', 3, 'b')
    expect(await drain('skip', 'z')).toHaveLength(6)
    // Empty wildcard pops let the caught-up check set the watermark.
    await pop(app, 'skip', { consumerGroup: 'z', subscriptionMode: 'all' })
    expect((await groupRow('skip', 'z'))!.caught).not.toBeNull()
    await fill('skip', 4, 'c')
    const res = await app.json('POST', '/api/v1/consumer-groups/z/queues/skip/seek', { toEnd: true })
    expect(res.body).toEqual({ success: true, consumerGroup: 'z', queueName: 'skip', seekToEnd: true, targetTimestamp: null, partitionsUpdated: 3 })
    expect((await groupRow('skip', 'z'))!.caught).toBeNull()
    expect((await pop(app, 'skip', { consumerGroup: 'z', partitions: 10, subscriptionMode: 'all' })).status).toBe(204)
    await fill('skip', 1, 'c', 4)
    expect(await drain('skip', 'z')).toEqual(['c:4'])

    // A group that never popped is created at the end too, and its first pop keeps the seek.
    await app.json('POST', '/api/v1/consumer-groups/fresh/queues/skip/seek', { toEnd: true })
    expect(await groupRow('skip', 'fresh')).toMatchObject({ mode: null })
    expect((await pop(app, 'skip', { consumerGroup: 'fresh', partitions: 10, delivery: 'conflate', subscriptionMode: 'all' })).status).toBe(204)
    // That first pop still fixes the subscription and the delivery it asks for.
    expect(await groupRow('skip', 'fresh')).toMatchObject({ mode: 'all', delivery: 'conflate' })
  })

  it('seeks a wildcard group back past its caught-up watermark and the partitions idle since are delivered again', async () => {
    await fill('idle', 2, 'old')
    const before = new Date(Date.now() - 1000).toISOString()
    expect(await drain('idle', 'w')).toEqual(['old:0', 'old:1'])
    // Ten minutes later an empty wildcard pop sets the watermark: 'old' has been idle since well
    // before it, so later wildcard scans would skip it unless the seek clears the watermark.
    const request = { queue: 'idle', group: 'w', batch: 10, partitions: 10, autoAck: false, subscriptionMode: 'all', maxBytes: 1 << 20 } as const
    const later = new Date(Date.now() + 600_000)
    expect((await app.db.call('log_pop_v1', { tenant: '', request, now: later })).messages).toEqual([])
    expect((await groupRow('idle', 'w'))!.caught).toEqual(later)
    await app.json('POST', '/api/v1/consumer-groups/w/queues/idle/seek', { timestamp: before })
    const again = await app.db.call('log_pop_v1', { tenant: '', request, now: new Date(later.getTime() + 1000) })
    expect(again.messages.map((m) => `${m.partition}:${m.offset}`)).toEqual(['old:0', 'old:1'])
  })

  it('seeks to the instant of a split push from its first frame, though its segments share one createdAt', async () => {
    await fill('ties', 3)
    const split = await push(app, Array.from({ length: 2500 }, (_, i) => ({ queue: 'ties', payload: i })))
    expect(split[0]!.offset).toBe(3)
    await app.json('POST', '/api/v1/consumer-groups/t/queues/ties/seek', { toEnd: true })
    const [at] = await app.database.sql<{ created: string }>(
      `select to_char(created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as created from queen.log_segments
        where partition_id = $1 and base_offset = 2003`, [split[0]!.partition_id])
    await app.json('POST', '/api/v1/consumer-groups/t/queues/ties/seek', { timestamp: at!.created })
    const first = await pop(app, 'ties', { consumerGroup: 't', batch: 1, subscriptionMode: 'all' })
    expect(first.messages.map((m) => m.offset)).toEqual([3])
  })

  it('seeks one partition to its end', async () => {
    await fill('one', 3, 'x')
    await fill('one', 2, 'y')
    const res = await app.json('POST', '/api/v1/consumer-groups/g/queues/one/partitions/x/seek')
    expect(res.status).toBe(200)
    expect(res.body).toMatchObject({ success: true, consumerGroup: 'g', queueName: 'one', partitionName: 'x', updated: true, committedOffset: 3 })
    expect(res.body.cursorMovedTo).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/)
    expect(await drain('one', 'g')).toEqual(['y:0', 'y:1'])
  })

  it('seeks one partition to a timestamp, as Queen does, instead of reading the body as "to the end"', async () => {
    await fill('onets', 3, 'x')
    await fill('onets', 2, 'x', 3)
    const [at] = await app.database.sql<{ created: string }>(
      `select to_char(s.created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as created
         from queen.log_segments s join queen.log_partitions p on p.id = s.partition_id join queen.queues q on q.id = p.queue_id
        where q.name = 'onets' and p.name = 'x' and s.base_offset = 3`)
    const res = await app.json('POST', '/api/v1/consumer-groups/g/queues/onets/partitions/x/seek', { timestamp: at!.created })
    expect(res.status).toBe(200)
    expect(res.body).toMatchObject({ success: true, partitionName: 'x', seekToEnd: false, committedOffset: 3 })
    expect(res.body.targetTimestamp).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/)
    expect(await drain('onets', 'g')).toEqual(['x:3', 'x:4'])
    // toEnd wins over a timestamp, and {} is the console's empty body: both go to the end.
    expect(await app.json('POST', '/api/v1/consumer-groups/h/queues/onets/partitions/x/seek', { toEnd: true, timestamp: at!.created })).toMatchObject({ status: 200, body: { seekToEnd: true, committedOffset: 5 } })
    expect(await app.json('POST', '/api/v1/consumer-groups/i/queues/onets/partitions/x/seek', {})).toMatchObject({ status: 200, body: { seekToEnd: true, committedOffset: 5 } })
  })

  it('refuses a partition seek whose target it cannot honour, writing nothing', async () => {
    await fill('onebad', 1, 'x')
    const before = await writtenRows(app)
    expect(await app.json('POST', '/api/v1/consumer-groups/g/queues/onebad/partitions/x/seek', { toEnd: false })).toMatchObject({ status: 400, body: { code: 'invalid_request', error: "Must specify either 'toEnd': true or 'timestamp'" } })
    expect(await app.json('POST', '/api/v1/consumer-groups/g/queues/onebad/partitions/x/seek', { timestamp: 'yesterday' })).toMatchObject({ status: 400, body: { code: 'invalid_request', error: 'timestamp must be an ISO-8601 timestamp' } })
    expect(await writtenRows(app)).toEqual(before)
  })

  it('answers 404 for an unknown queue or partition, and 400 without a target, writing nothing', async () => {
    await fill('known', 1)
    const before = await writtenRows(app)
    expect(await app.json('POST', '/api/v1/consumer-groups/g/queues/unknown/seek', { toEnd: true })).toMatchObject({ status: 404, body: { code: 'queue_not_found', error: 'Queue not found' } })
    expect(await app.json('POST', '/api/v1/consumer-groups/g/queues/unknown/partitions/x/seek')).toMatchObject({ status: 404, body: { code: 'queue_not_found' } })
    expect(await app.json('POST', '/api/v1/consumer-groups/g/queues/known/partitions/nope/seek')).toMatchObject({ status: 404, body: { code: 'partition_not_found' } })
    expect(await app.json('POST', '/api/v1/consumer-groups/g/queues/known/seek', {})).toMatchObject({ status: 400, body: { code: 'invalid_request', error: "Must specify either 'toEnd': true or 'timestamp'" } })
    expect(await app.json('POST', '/api/v1/consumer-groups/g/queues/known/seek', { toEnd: false })).toMatchObject({ status: 400 })
    expect(await app.json('POST', '/api/v1/consumer-groups/g/queues/known/seek', { timestamp: 'yesterday' })).toMatchObject({ status: 400, body: { code: 'invalid_request', error: 'timestamp must be an ISO-8601 timestamp' } })
    expect(await app.json('POST', '/api/v1/consumer-groups/g/subscription', {})).toMatchObject({ status: 400, body: { error: 'subscriptionTimestamp is required' } })
    expect(await app.json('POST', '/api/v1/consumer-groups/g/subscription', { subscriptionTimestamp: 'soon' })).toMatchObject({ status: 400, body: { code: 'invalid_request' } })
    expect(await writtenRows(app)).toEqual(before)
  })
})

describe('delete', () => {
  it('resets a group: the next pop is a first contact and starts from scratch', async () => {
    await fill('reset', 3)
    expect(await drain('reset', 'd')).toHaveLength(3)
    const res = await app.json('DELETE', '/api/v1/consumer-groups/d')
    expect(res.body).toEqual({ success: true, consumerGroup: 'd', deletedPartitions: 1, metadataDeleted: true })
    expect(await groupRow('reset', 'd')).toBeUndefined()
    expect(await drain('reset', 'd')).toEqual(['Default:0', 'Default:1', 'Default:2'])
  })

  it('per queue, and with deleteMetadata=false keeps the subscription that re-creates the cursors', async () => {
    await fill('keep-a', 2)
    await fill('keep-b', 2)
    expect((await pop(app, 'keep-a', { consumerGroup: 'k', subscriptionMode: 'new' })).status).toBe(204)
    expect(await drain('keep-b', 'k')).toHaveLength(2)
    await fill('keep-a', 1, 'Default', 2)
    expect(await drain('keep-a', 'k')).toEqual(['Default:2'])

    const one = await app.json('DELETE', '/api/v1/consumer-groups/k/queues/keep-a?deleteMetadata=false')
    expect(one.body).toEqual({ success: true, consumerGroup: 'k', queueName: 'keep-a', deletedPartitions: 1, metadataDeleted: false })
    // The subscription ('new', at first contact) still governs: frames 0 and 1 predate it.
    expect(await groupRow('keep-a', 'k')).toMatchObject({ mode: 'new' })
    expect(await drain('keep-a', 'k')).toEqual(['Default:2'])
    // keep-b was not touched.
    expect(await drain('keep-b', 'k')).toEqual([])
    expect((await app.json('GET', '/api/v1/consumer-groups/k')).body['keep-b'].partitions[0]).toMatchObject({ committedOffset: 2 })
  })
})

describe('subscription rewrite', () => {
  it('moves the start of partitions the group meets from now on; existing cursors stay', async () => {
    await fill('resub', 2, 'met')
    expect(await drain('resub', 's')).toEqual(['met:0', 'met:1'])
    await fill('resub', 1, 'later')
    const cut = await push(app, [{ queue: 'resub', partition: 'later', payload: 'after the cut', transactionId: 'cut' }])
    const [at] = await app.database.sql<{ created: Date }>(`select created_at as created from queen.log_segments where partition_id = $1 and base_offset = 1`, [cut[0]!.partition_id])
    const res = await app.json('POST', '/api/v1/consumer-groups/s/subscription', { subscriptionTimestamp: at!.created.toISOString() })
    expect(res.body).toMatchObject({ success: true, consumerGroup: 's', rowsUpdated: 1, newTimestamp: at!.created.toISOString() })
    expect(await groupRow('resub', 's')).toMatchObject({ mode: 'timestamp', caught: null })
    await fill('resub', 1, 'met', 2)
    // 'later' was met only after the rewrite: it starts at the cut; 'met' keeps its cursor.
    expect((await drain('resub', 's')).sort()).toEqual(['later:1', 'met:2'])
  })
})

describe('delivery policy route', () => {
  it('creates the queue and the group record with only delivery set; the first pop fixes the subscription', async () => {
    const res = await app.json('POST', '/api/v1/consumer-groups/lv/queues/quotes.fx/delivery', { conflation: true })
    expect(res).toMatchObject({ status: 200, body: { success: true, consumerGroup: 'lv', queueName: 'quotes.fx', conflation: true } })
    expect(await app.database.sql(`select namespace, task from queen.queues where name = 'quotes.fx'`)).toEqual([{ namespace: 'quotes', task: 'fx' }])
    expect(await groupRow('quotes.fx', 'lv')).toMatchObject({ mode: null, at: null, delivery: 'conflate' })
    expect((await app.json('GET', '/api/v1/consumer-groups/lv')).body).toEqual({ 'quotes.fx': { conflation: true, partitions: [] } })

    await fill('quotes.fx', 3)
    expect((await pop(app, 'quotes.fx', { consumerGroup: 'lv', subscriptionMode: 'new', delivery: 'all' })).status).toBe(204)
    expect(await groupRow('quotes.fx', 'lv')).toMatchObject({ mode: 'new', delivery: 'conflate' })
    await fill('quotes.fx', 3, 'Default', 3)
    const got = await pop(app, 'quotes.fx', { consumerGroup: 'lv', batch: 10, subscriptionMode: 'all' })
    expect(got.messages.map((m) => m.offset)).toEqual([5])
    await ack(app, acksOf(got.messages), 'lv')

    // Turned off later: every frame again.
    await app.json('POST', '/api/v1/consumer-groups/lv/queues/quotes.fx/delivery', { conflation: false })
    await fill('quotes.fx', 2, 'Default', 6)
    expect((await pop(app, 'quotes.fx', { consumerGroup: 'lv', batch: 10, subscriptionMode: 'all' })).messages.map((m) => m.offset)).toEqual([6, 7])
    expect((await app.json('GET', '/api/v1/resources/queues/quotes.fx/depth?group=lv')).body).toMatchObject({ conflation: false })
  })

  it('refuses queue mode and a non-boolean with 400, writing nothing', async () => {
    const before = await writtenRows(app)
    expect(await app.json('POST', '/api/v1/consumer-groups/__QUEUE_MODE__/queues/refused/delivery', { conflation: true })).toMatchObject({
      status: 400, body: { code: 'invalid_request', error: 'delivery applies to named consumer groups only' },
    })
    expect(await app.json('POST', '/api/v1/consumer-groups/g/queues/refused/delivery', { conflation: 'yes' })).toMatchObject({ status: 400, body: { code: 'invalid_request' } })
    expect(await app.json('POST', '/api/v1/consumer-groups/g/queues/refused/delivery', {})).toMatchObject({ status: 400 })
    expect(await writtenRows(app)).toEqual(before)
  })
})

describe('admin writes racing consumers', () => {
  it('seeks, subscription rewrites, delivery changes and deletes interleave with pops and acks without an error or a deadlock', async () => {
    for (const p of ['r0', 'r1', 'r2', 'r3']) await fill('race', 50, p)
    const statuses: number[] = []
    const consumer = async () => {
      for (let i = 0; i < 15; i++) {
        const res = await app.json('GET', '/api/v1/pop/queue/race?consumerGroup=rg&subscriptionMode=all&batch=5&partitions=2')
        statuses.push(res.status)
        if (res.status === 200) {
          const acked = await app.json('POST', '/api/v1/ack/batch', { acknowledgments: acksOf(res.body.messages), consumerGroup: 'rg' })
          statuses.push(acked.status)
        }
      }
    }
    const admin = async () => {
      const calls: [string, string, unknown?][] = [
        ['POST', '/api/v1/consumer-groups/rg/queues/race/seek', { timestamp: '2000-01-01T00:00:00Z' }],
        ['POST', '/api/v1/consumer-groups/rg/queues/race/partitions/r1/seek'],
        ['POST', '/api/v1/consumer-groups/rg/subscription', { subscriptionTimestamp: '2000-01-01T00:00:00Z' }],
        ['POST', '/api/v1/consumer-groups/rg/queues/race/delivery', { conflation: true }],
        ['DELETE', '/api/v1/consumer-groups/rg/queues/race?deleteMetadata=false'],
        ['POST', '/api/v1/consumer-groups/rg/queues/race/delivery', { conflation: false }],
        ['POST', '/api/v1/consumer-groups/rg/queues/race/seek', { toEnd: true }],
        ['DELETE', '/api/v1/consumer-groups/rg'],
      ]
      for (let round = 0; round < 3; round++) {
        for (const [method, path, body] of calls) statuses.push((await app.json(method, path, body)).status)
      }
    }
    await Promise.all([consumer(), consumer(), consumer(), admin()])
    expect(statuses.filter((s) => s !== 200 && s !== 204)).toEqual([])
  })
})
