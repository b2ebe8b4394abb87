// Status reads (API 5.14) over a scripted queue: pushes to two partitions, a settled round, a
// dead-lettered message and a live lease. Live per-queue numbers (detail, messages) are right at
// once; the stats lane's numbers (list pending, /status counts, series) lag until stats/refresh runs.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { testApp, type TestApp } from '../helpers/app.js'
import { ack, acksOf, pop, push } from '../helpers/engine.js'

let app: TestApp
const get = (path: string, headers?: Record<string, string>) => app.json('GET', path, undefined, headers)
const refresh = () => app.json('POST', '/api/v1/stats/refresh')

beforeAll(async () => {
  app = await testApp()
  await app.json('POST', '/api/v1/configure', {
    queue: 'st-orders',
    namespace: 'billing',
    task: 'invoice',
    options: { leaseTime: 120, retryLimit: 0, retryDelay: 2000, ttl: 7200, maxSize: 500, priority: 4 },
  })
  await push(app, [1, 2, 3].map((n) => ({ queue: 'st-orders', partition: 'p1', payload: n })))
  await push(app, [4, 5].map((n) => ({ queue: 'st-orders', partition: 'p2', payload: n })))
  const settled = await pop(app, 'st-orders', { batch: 2 }, 'p1')
  await ack(app, acksOf(settled.messages))
  const failing = await pop(app, 'st-orders', { batch: 1 }, 'p1')
  await ack(app, acksOf(failing.messages, 'failed', { error: 'boom' }))
  await pop(app, 'st-orders', { batch: 1 }, 'p2')
  await push(app, [{ queue: 'st-other', payload: 'x' }])
  // A stats pass right after, as a running lane makes one: the DLQ row above is counted in its
  // failure minute even when a later pass falls into the next minute.
  await refresh()
})
afterAll(() => app.close())

const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/
const ISO_US = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/

describe('GET /api/v1/status/queues/:queue', () => {
  it('answers the live detail with the six-key config block', async () => {
    const res = await get('/api/v1/status/queues/st-orders?includePartitions=true')
    expect(res.status).toBe(200)
    const { queue, partitions, totals } = res.body
    expect(queue).toMatchObject({ name: 'st-orders', namespace: 'billing', task: 'invoice', priority: 4 })
    expect(queue.createdAt).toMatch(ISO_MS)
    expect(queue.config).toEqual({ leaseTime: 120, retryLimit: 0, retryDelay: 2000, ttl: 7200, maxQueueSize: 500, deadLetterQueue: true })
    expect(totals).toEqual({ total: 5, pending: 2, processing: 1, completed: 3, failed: null, deadLetter: 1 })
    expect(partitions.map((p: { name: string }) => p.name)).toEqual(['p1', 'p2'])
    const [p1, p2] = partitions
    expect(p1.messages).toEqual({ total: 3, pending: 0, processing: 0 })
    expect(p1.stats).toEqual({ total: 3, pending: 0, processing: 0, completed: 3, failed: null, deadLetter: 1 })
    // Two rounds on p1: two frames completed by acks, then one dead-lettered by a failed ack.
    expect(p1.cursor).toMatchObject({ committedOffset: 3, batchesConsumed: 2 })
    expect(p2.stats).toEqual({ total: 2, pending: 2, processing: 1, completed: 0, failed: null, deadLetter: 0 })
    expect(p2.cursor).toMatchObject({ committedOffset: 0, totalConsumed: 0, batchesConsumed: 0 })
    for (const p of partitions) {
      for (const key of ['createdAt', 'lastActivity', 'oldestMessage', 'newestMessage']) expect(p[key], key).toMatch(ISO_MS)
    }
    // The latest commit (p1's acks) is after p1's newest push.
    expect(Date.parse(p1.lastActivity)).toBeGreaterThanOrEqual(Date.parse(p1.newestMessage))
  })

  it('counts a round in batchesConsumed only when acks settle all of it, and every autoAck round', async () => {
    const cursor = async () => (await get('/api/v1/status/queues/st-rounds')).body.partitions[0].cursor
    await push(app, [1, 2, 3, 4, 5, 6].map((n) => ({ queue: 'st-rounds', payload: n })))
    const round = await pop(app, 'st-rounds', { batch: 3 })
    await ack(app, acksOf(round.messages.slice(0, 2)))
    expect(await cursor()).toMatchObject({ totalConsumed: 2, batchesConsumed: 0 }) // one frame still leased
    await ack(app, acksOf(round.messages.slice(2)))
    expect(await cursor()).toMatchObject({ totalConsumed: 3, batchesConsumed: 1 })
    const auto = await pop(app, 'st-rounds', { batch: 2, autoAck: true })
    expect(auto.messages).toHaveLength(2)
    expect(await cursor()).toMatchObject({ totalConsumed: 5, batchesConsumed: 2 })
  })

  it('answers 404 Queue not found for an unknown queue or another tenant', async () => {
    for (const path of ['/api/v1/status/queues/st-missing', '/api/v1/status/queues/st-missing/messages']) {
      const res = await get(path)
      expect(res.status, path).toBe(404)
      expect(res.body).toMatchObject({ error: 'Queue not found', code: 'queue_not_found' })
    }
  })
})

describe('GET /api/v1/status/queues/:queue/messages', () => {
  it('lists the queue newest first with each message status', async () => {
    const res = await get('/api/v1/status/queues/st-orders/messages')
    expect(res.status).toBe(200)
    expect(Array.isArray(res.body)).toBe(true)
    expect(res.body.map((m: { partition: string; offset: number; status: string }) => [m.partition, m.offset, m.status])).toEqual([
      ['p2', 1, 'pending'],
      ['p2', 0, 'processing'],
      ['p1', 2, 'dead_letter'],
      ['p1', 1, 'completed'],
      ['p1', 0, 'completed'],
    ])
    const first = res.body[0]
    expect(Object.keys(first).sort()).toEqual(['createdAt', 'id', 'offset', 'partition', 'partitionId', 'queue', 'queuePath', 'status', 'transactionId'])
    expect(first).toMatchObject({ queue: 'st-orders', queuePath: 'st-orders/p2' })
    expect(first.createdAt).toMatch(ISO_US)
  })

  it('pages with limit and offset, and refuses a bad limit', async () => {
    const page = await get('/api/v1/status/queues/st-orders/messages?limit=2&offset=2')
    expect(page.body.map((m: { partition: string; offset: number }) => `${m.partition}:${m.offset}`)).toEqual(['p1:2', 'p1:1'])
    expect((await get('/api/v1/status/queues/st-orders/messages?limit=0')).status).toBe(400)
    expect((await get('/api/v1/status/queues/st-orders/messages?limit=x')).status).toBe(400)
  })

  it('pages across many segments and partitions exactly as the whole list would', async () => {
    for (let call = 0; call < 4; call++) {
      await push(app, [0, 1, 2].map((i) => ({ queue: 'st-pages', partition: 'a', payload: call * 3 + i })))
      if (call % 2 === 0) await push(app, [{ queue: 'st-pages', partition: 'b', payload: call }])
    }
    const all = (await get('/api/v1/status/queues/st-pages/messages?limit=100')).body
    expect(all).toHaveLength(14)
    const key = (m: { partition: string; offset: number }) => `${m.partition}:${m.offset}`
    for (const [limit, offset] of [[1, 0], [4, 3], [5, 9], [3, 12], [10, 20]] as const) {
      const page = (await get(`/api/v1/status/queues/st-pages/messages?limit=${limit}&offset=${offset}`)).body
      expect(page.map(key), `${limit}@${offset}`).toEqual(all.slice(offset, offset + limit).map(key))
    }
    const created = all.map((m: { createdAt: string }) => m.createdAt)
    expect(created).toEqual([...created].sort().reverse())
  })

  it('keeps listing a live message a delete refused (only dead letters are deleted)', async () => {
    await push(app, [{ queue: 'st-deleted', transactionId: 'gone', payload: 1 }, { queue: 'st-deleted', transactionId: 'kept', payload: 2 }])
    const [{ partitionId }] = (await get('/api/v1/status/queues/st-deleted/messages')).body
    expect((await app.json('DELETE', `/api/v1/messages/${partitionId}/gone`)).body).toMatchObject({ success: false, code: 'message_not_found' })
    const after = await get('/api/v1/status/queues/st-deleted/messages')
    expect(after.body.map((m: { transactionId: string }) => m.transactionId)).toEqual(['kept', 'gone'])
  })
})

describe('stats-lane numbers', () => {
  it('lag until stats/refresh runs: /status/queues totals are live, pending comes from the lane', async () => {
    const fresh = await testApp({ database: app.database })
    try {
      await app.database.sql(`delete from queen.stats`)
      await app.database.sql(`delete from queen.queue_metrics`)
      const before = await fresh.json('GET', '/api/v1/status/queues?namespace=billing')
      expect(before.body.pagination).toEqual({ limit: 100, offset: 0, total: 1 })
      expect(before.body.queues[0]).toMatchObject({ name: 'st-orders', partitions: 2, messages: { total: 5, pending: 0, processing: 0 } })
      const overview = await fresh.json('GET', '/api/v1/status?queue=st-orders')
      expect(overview.body).toMatchObject({ statsAge: -1, queues: { total: 1, withBacklog: 0 } })
      expect(overview.body.throughput.every((p: { ingested: number }) => p.ingested === 0)).toBe(true)

      await refresh()
      const after = await fresh.json('GET', '/api/v1/status/queues?namespace=billing')
      expect(after.body.queues[0].messages).toEqual({ total: 5, pending: 2, processing: 1 })
      const status = (await fresh.json('GET', '/api/v1/status?queue=st-orders')).body
      expect(status.statsAge).toBeGreaterThanOrEqual(0)
      expect(status.queues).toEqual({ total: 1, withBacklog: 1 })
      expect(status.messages).toEqual({ total: 5, pending: 2, processing: 1, completed: 2, failed: null, deadLetter: 1 })
      expect(status.leases).toEqual({ active: 1, partitionsLeased: 1 })
      expect(status.deadLetterQueue).toEqual({ total: 1, inRange: 1 })
      const ingested = status.throughput.reduce((n: number, p: { ingested: number }) => n + p.ingested, 0)
      const processed = status.throughput.reduce((n: number, p: { processed: number }) => n + p.processed, 0)
      expect([ingested, processed]).toEqual([5, 3])
    } finally {
      await fresh.close()
    }
  })

  it('narrows /status/queues to the queue a client names, as Queen 1.6 does', async () => {
    const one = await get('/api/v1/status/queues?queue=st-other')
    expect(one.status).toBe(200)
    expect(one.body.queues.map((q: { name: string }) => q.name)).toEqual(['st-other'])
    expect(one.body.pagination.total).toBe(1)
    expect((await get('/api/v1/status/queues?queue=st-nowhere')).body).toMatchObject({ queues: [], pagination: { total: 0 } })
  })

  it('paginates /status/queues by name with the total of the filter', async () => {
    const page = await get('/api/v1/status/queues?limit=1&offset=1')
    expect(page.body.pagination).toMatchObject({ limit: 1, offset: 1 })
    expect(page.body.pagination.total).toBeGreaterThanOrEqual(3)
    expect(page.body.queues).toHaveLength(1)
    const all = (await get('/api/v1/status/queues')).body.queues.map((q: { name: string }) => q.name)
    expect(all).toEqual([...all].sort())
    expect(page.body.queues[0].name).toBe(all[1])
  })
})

describe('GET /api/v1/status', () => {
  it('picks the smallest bucket keeping at most 360 points and zero-fills the range', async () => {
    const hour = (await get('/api/v1/status?from=2026-01-01T00:00:00Z&to=2026-01-01T01:00:00Z')).body
    expect(hour).toMatchObject({ bucketMinutes: 1, pointCount: 61, timeRange: { from: '2026-01-01T00:00:00.000Z', to: '2026-01-01T01:00:00.000Z' } })
    expect(hour.throughput).toHaveLength(61)
    expect(hour.throughput[0]).toEqual({ timestamp: '2026-01-01T00:00:00.000Z', ingested: 0, processed: 0, ingestedPerSecond: 0, processedPerSecond: 0 })
    const week = (await get('/api/v1/status?from=2026-01-01T00:00:00Z&to=2026-01-08T00:00:00Z')).body
    expect(week.bucketMinutes).toBe(60)
    expect(week.pointCount).toBeLessThanOrEqual(360)
    const year = (await get('/api/v1/status?from=2025-01-01T00:00:00Z&to=2026-01-01T00:00:00Z')).body
    expect(year.bucketMinutes).toBe(1440)
    expect((await get('/api/v1/status?from=yesterday')).status).toBe(400)
    expect((await get('/api/v1/status?from=2026-01-02T00:00:00Z&to=2026-01-01T00:00:00Z')).status).toBe(400)
  })
})

describe('GET /api/v1/status/analytics', () => {
  it('sums the per-minute counters into minute, hour or day buckets', async () => {
    await refresh()
    const minute = (await get('/api/v1/status/analytics?interval=minute&queue=st-orders')).body
    expect(minute.interval).toBe('minute')
    expect(minute.totals).toMatchObject({ ingested: 5, processed: 3, deadLettered: 1 })
    const day = (await get('/api/v1/status/analytics?interval=day&queue=st-orders')).body
    expect(day.totals).toEqual(minute.totals)
    expect(day.series.length).toBeLessThanOrEqual(2)
    const none = (await get('/api/v1/status/analytics?queue=st-orders&from=2020-01-01T00:00:00Z&to=2020-01-01T05:00:00Z')).body
    expect(none).toMatchObject({ interval: 'hour', totals: { ingested: 0, processed: 0, deadLettered: 0 } })
    expect(none.series).toHaveLength(6)
  })

  it('serves pending as a gauge: the last recorded minute, summed over queues, null where none was recorded', async () => {
    await refresh()
    await refresh() // a second pass in the same minute overwrites the gauge; it must not add up
    const listed = (await get('/api/v1/resources/queues?stats=cached')).body.queues as { name: string; messages: { pending: number } }[]
    const pendingOf = (name: string) => listed.find((q) => q.name === name)!.messages.pending
    const lastPending = async (query: string) => {
      const { series } = (await get(`/api/v1/status/analytics?interval=minute${query}`)).body as { series: { pending: number | null }[] }
      return series.filter((p) => p.pending !== null).at(-1)?.pending
    }
    expect(pendingOf('st-orders')).toBeGreaterThan(0)
    expect(await lastPending('&queue=st-orders')).toBe(pendingOf('st-orders'))
    expect(await lastPending('')).toBe(listed.reduce((sum, q) => sum + q.messages.pending, 0))
    const hours = (await get('/api/v1/status/analytics?interval=hour&queue=st-orders')).body.series as { pending: number | null }[]
    expect(hours.filter((p) => p.pending !== null).at(-1)?.pending).toBe(pendingOf('st-orders'))
    const old = (await get('/api/v1/status/analytics?queue=st-orders&from=2020-01-01T00:00:00Z&to=2020-01-01T05:00:00Z')).body
    expect(old.series.map((p: { pending: unknown }) => p.pending)).toEqual([null, null, null, null, null, null])
  })

  it('counts a message dead-lettered late in a minute, after that minute\'s last stats pass', async () => {
    const tenant = 'dlq-minute'
    const headers = { 'x-queen-tenant': tenant }
    const [q] = await app.database.sql<{ id: string }>(`insert into queen.queues (tenant_id, name) values ($1, 'late-dlq') returning id`, [tenant])
    const step = (now: string) => app.db.call('log_stats_refresh_step_v1', { tenant, now: new Date(now) })
    await step('2030-01-01T12:00:40Z') // the 12:00 minute's last pass
    await app.database.sql(
      `insert into queen.log_dlq (tenant_id, queue_id, partition_id, partition_name, consumer_group, frame_offset, message_id, transaction_id, frame, original_created_at, failed_at)
       values ($1, $2, gen_random_uuid(), 'Default', 'g', 0, gen_random_uuid(), 't', '{}', '2030-01-01T12:00:00Z', '2030-01-01T12:00:50Z')`,
      [tenant, q!.id],
    )
    await step('2030-01-01T12:01:05Z') // the next pass is already in the 12:01 minute
    const tenanted = await testApp({ database: app.database, env: { QUEEN_TENANCY_HEADER: 'X-Queen-Tenant' } })
    try {
      const res = await tenanted.json('GET', '/api/v1/status/analytics?interval=minute&queue=late-dlq&from=2030-01-01T12:00:00Z&to=2030-01-01T12:01:59Z', undefined, headers)
      expect(res.body.series.map((p: { deadLettered: number }) => p.deadLettered)).toEqual([1, 0])
    } finally {
      await tenanted.close()
    }
  })

  it('refuses an unknown interval and a range of more than 10 000 buckets', async () => {
    const bad = await get('/api/v1/status/analytics?interval=week')
    expect(bad.status).toBe(400)
    expect(bad.body.code).toBe('invalid_request')
    expect((await get('/api/v1/status/analytics?interval=minute&from=2020-01-01T00:00:00Z&to=2026-01-01T00:00:00Z')).status).toBe(400)
  })
})

describe('GET /api/v1/status/buffers', () => {
  it('reports the true zeros of a broker without a push buffer', async () => {
    const res = await get('/api/v1/status/buffers')
    expect(res.status).toBe(200)
    expect(res.body).toEqual({ pending: 0, failed: 0, dbHealthy: true, worker: expect.stringMatching(/^[0-9a-f-]{36}$/), note: 'no local push buffer' })
    expect((await get('/metrics')).body.instance).toBe(res.body.worker)
  })
})

describe('tenancy', () => {
  it("never shows another tenant's queues", async () => {
    const tenanted = await testApp({ database: app.database, env: { QUEEN_TENANCY_HEADER: 'X-Queen-Tenant' } })
    try {
      const acme = { 'x-queen-tenant': 'acme' }
      await push(tenanted, [{ queue: 'st-orders', payload: 'acme' }], acme)
      const detail = await tenanted.json('GET', '/api/v1/status/queues/st-orders', undefined, acme)
      expect(detail.body.totals.total).toBe(1)
      const list = await tenanted.json('GET', '/api/v1/status/queues', undefined, acme)
      expect(list.body.queues.map((q: { name: string }) => q.name)).toEqual(['st-orders'])
      const other = { 'x-queen-tenant': 'globex' }
      expect((await tenanted.json('GET', '/api/v1/status/queues/st-orders', undefined, other)).status).toBe(404)
      expect((await tenanted.json('GET', '/api/v1/status', undefined, other)).body.queues).toEqual({ total: 0, withBacklog: 0 })
    } finally {
      await tenanted.close()
    }
  })
})
