// The reads Queen's 1.5+ dashboard makes for its Workload and Dead Letter pages: workload per
// namespace, task or queue; the shapes of a queue's dead-letter errors; partition liveness;
// retention grouped; and GET /status. Over queues that really went through push, pop and ack.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { testApp, type TestApp } from '../helpers/app.js'
import { ack, acksOf, pop, push, writtenRows } from '../helpers/engine.js'
import { SECRET, bearer, token } from '../helpers/tokens.js'

let app: TestApp
const get = (path: string) => app.json('GET', path)

beforeAll(async () => {
  app = await testApp()
  await app.json('POST', '/api/v1/configure', { queue: 'wl-orders', namespace: 'shop', task: 'orders', options: { retryLimit: 0 } })
  await app.json('POST', '/api/v1/configure', { queue: 'wl-mail', namespace: 'shop', task: 'mail' })
  await app.json('POST', '/api/v1/configure', { queue: 'wl-audit', namespace: 'ops', task: 'audit' })
  await push(app, [0, 1, 2, 3].map((i) => ({ queue: 'wl-orders', partition: `p${i % 2}`, payload: { i } })))
  await push(app, [{ queue: 'wl-mail', payload: 1 }, { queue: 'wl-audit', payload: 2 }])
  // Two orders fail into the DLQ with errors that differ only in the ids and numbers they name.
  const round = await pop(app, 'wl-orders', { batch: 2 }, 'p0')
  await ack(app, round.messages.map((m, n) => ({ ...acksOf([m], 'failed')[0], error: `order ${1000 + n} of customer 3f2a9c1e-0000-4000-8000-00000000000${n} declined on 2026-12-0${n + 1}` })))
  const mail = await pop(app, 'wl-mail', { consumerGroup: 'sender', subscriptionMode: 'all' })
  await ack(app, acksOf(mail.messages), 'sender')
  await app.json('POST', '/api/v1/stats/refresh')
})
afterAll(() => app.close())

describe('GET /api/v1/analytics/workload', () => {
  it('groups by namespace by default: window totals, a series on a complete bucket axis, current gauges, and the tenant block', async () => {
    const res = await get('/api/v1/analytics/workload')
    expect(res.status).toBe(200)
    expect(res.body).toMatchObject({ bucketMinutes: 1, groupBy: 'namespace' })
    expect(res.body.buckets.length).toBeGreaterThanOrEqual(60)
    expect(res.body.rows.map((r: { key: string }) => r.key)).toEqual(['ops', 'shop'])
    const shop = res.body.rows[1]
    expect(shop.queues).toBe(2)
    expect(shop.window).toMatchObject({ pushMessages: 5, deadLettered: 2, popMessages: null })
    expect(shop.series.push).toHaveLength(res.body.buckets.length)
    expect(shop.series.push.filter((v: number | null) => v !== null).reduce((a: number, b: number) => a + b, 0)).toBe(5)
    expect(shop.series.pop.every((v: unknown) => v === null)).toBe(true)
    expect(shop.now).toMatchObject({ pending: 2, deadLetter: 2, partitions: 3, groups: 1, queuesWithoutGroup: 0, queuesTouched: 2 })
    expect(res.body.tenant).toMatchObject({ queues: 3, window: { pushMessages: 6 } })
  })

  it('groups by task or queue, narrows by the filters while the tenant block stays whole, and pages the window', async () => {
    const byQueue = await get('/api/v1/analytics/workload?groupBy=queue&namespace=shop')
    expect(byQueue.body.rows.map((r: { key: string; namespace: string; task: string }) => [r.key, r.namespace, r.task])).toEqual([
      ['wl-mail', 'shop', 'mail'],
      ['wl-orders', 'shop', 'orders'],
    ])
    expect(byQueue.body.tenant.queues).toBe(3)
    const byTask = await get('/api/v1/analytics/workload?groupBy=task&task=audit')
    expect(byTask.body.rows).toEqual([expect.objectContaining({ key: 'audit', queues: 1, window: expect.objectContaining({ pushMessages: 1 }) })])
    const day = await get('/api/v1/analytics/workload?from=2020-01-01T00:00:00Z&to=2020-01-02T00:00:00Z')
    expect(day.body).toMatchObject({ bucketMinutes: 15, timeRange: { from: '2020-01-01T00:00:00.000Z', to: '2020-01-02T00:00:00.000Z' } })
    expect(day.body.buckets).toHaveLength(97)
    expect(day.body.rows[0].series.push.every((v: unknown) => v === null)).toBe(true)
    expect(day.body.rows[0].window.pushMessages).toBe(0)
    // However long the window, the axis stays bounded.
    const ages = await get('/api/v1/analytics/workload?from=1970-01-01T00:00:00Z&to=2026-01-01T00:00:00Z')
    expect(ages.status).toBe(200)
    expect(ages.body.buckets.length).toBeLessThanOrEqual(1441)
    expect(ages.body.bucketMinutes).toBeGreaterThan(360)
  })

  it('refuses a bad groupBy or time range with 400', async () => {
    for (const path of ['/api/v1/analytics/workload?groupBy=tenant', '/api/v1/analytics/workload?from=2021-01-02T00:00:00Z&to=2021-01-01T00:00:00Z', '/api/v1/analytics/workload?from=yesterday']) {
      expect(await get(path), path).toMatchObject({ status: 400, body: { code: 'invalid_request' } })
    }
  })
})

describe('GET /api/v1/analytics/dlq-signatures', () => {
  it("folds a queue's newest dead-letter errors into shapes, with the sample's figures", async () => {
    const before = await writtenRows(app)
    const res = await get('/api/v1/analytics/dlq-signatures?queue=wl-orders')
    expect(res.status).toBe(200)
    expect(res.body).toMatchObject({
      queue: 'wl-orders',
      rowsNow: 2,
      sample: 2,
      retryCounts: [expect.any(Number)],
      groups: ['__QUEUE_MODE__'],
      signatures: [{ text: 'order <n> of customer <id> declined on <date>', n: 2, share: 1 }],
      byDay: [{ day: expect.stringMatching(/^\d{4}-\d{2}-\d{2}$/), n: 2 }],
    })
    expect(res.body.avgBytes).toBe('{"i": 0}'.length)
    expect(JSON.stringify(res.body)).not.toContain('"i"')
    expect((await get('/api/v1/analytics/dlq-signatures?queue=wl-orders&limit=1')).body).toMatchObject({ rowsNow: 2, sample: 1 })
    expect((await get('/api/v1/analytics/dlq-signatures?queue=nope')).body).toMatchObject({ rowsNow: 0, sample: 0, signatures: [], oldest: null })
    expect(await writtenRows(app)).toEqual(before)
  })

  it('requires the queue', async () => {
    expect(await get('/api/v1/analytics/dlq-signatures')).toMatchObject({ status: 400, body: { error: 'queue is required', code: 'invalid_request' } })
    expect(await get('/api/v1/analytics/dlq-signatures?queue=wl-orders&limit=x')).toMatchObject({ status: 400 })
  })
})

describe('GET /api/v1/analytics/partition-liveness', () => {
  it('counts each queue\'s partitions against those written to recently, most partitions first', async () => {
    const res = await get('/api/v1/analytics/partition-liveness')
    expect(res.status).toBe(200)
    expect(res.body.rows[0]).toMatchObject({ queue: 'wl-orders', namespace: 'shop', task: 'orders', partitions: 2, live1h: 2, live24h: 2, live7d: 2, created24h: 2 })
    expect(res.body.rows[0].newestWriteAt).toEqual(expect.any(String))
    expect((await get('/api/v1/analytics/partition-liveness?namespace=ops')).body.rows.map((r: { queue: string }) => r.queue)).toEqual(['wl-audit'])
    expect((await get('/api/v1/analytics/partition-liveness?limit=1')).body.rows).toHaveLength(1)
    expect(await get('/api/v1/analytics/partition-liveness?limit=-1')).toMatchObject({ status: 400 })
  })
})

describe('GET /api/v1/analytics/retention?groupBy=', () => {
  it('adds rows beside items and leaves the plain answer as it was', async () => {
    const plain = await get('/api/v1/analytics/retention')
    expect(Object.keys(plain.body)).toEqual(['items'])
    const grouped = await get('/api/v1/analytics/retention?groupBy=namespace')
    expect(grouped.status).toBe(200)
    const { rows, ...rest } = grouped.body
    expect(rest).toEqual(plain.body)
    expect(rows.map((r: { key: string; queues: string[] }) => [r.key, r.queues])).toEqual(
      expect.arrayContaining([['shop', ['wl-mail', 'wl-orders']], ['ops', ['wl-audit']]]),
    )
    expect((await get('/api/v1/analytics/retention?groupBy=queue&queue=wl-mail')).body.rows).toEqual([expect.objectContaining({ key: 'wl-mail', queues: ['wl-mail'] })])
    expect(await get('/api/v1/analytics/retention?groupBy=partition')).toMatchObject({ status: 400, body: { code: 'invalid_request' } })
  })
})

describe('GET /status', () => {
  it('answers that the process is up, without the database', async () => {
    expect(await get('/status')).toMatchObject({ status: 200, body: { status: 'ok', engine: 'queen-edge' } })
  })
})

describe('roles and tenants', () => {
  it('lets a read-only token read, refuses no token, and shows a tenant only its own queues', async () => {
    const authed = await testApp({ database: app.database, env: { JWT_ENABLED: 'true', JWT_SECRET: SECRET } })
    try {
      const reader = bearer(await token({ sub: 'r', role: 'read-only' }))
      for (const path of ['/api/v1/analytics/workload', '/api/v1/analytics/dlq-signatures?queue=wl-orders', '/api/v1/analytics/partition-liveness', '/api/v1/analytics/retention?groupBy=task', '/status']) {
        expect((await authed.json('GET', path, undefined, reader)).status, path).toBe(200)
        expect((await authed.json('GET', path)).status, path).toBe(401)
      }
    } finally {
      await authed.close()
    }
    const tenants = await testApp({ database: app.database, env: { QUEEN_TENANCY_HEADER: 'X-Tenant' } })
    try {
      const other = { 'x-tenant': 'globex' }
      expect((await tenants.json('GET', '/api/v1/analytics/workload', undefined, other)).body).toMatchObject({ rows: [], tenant: { queues: 0 } })
      expect((await tenants.json('GET', '/api/v1/analytics/dlq-signatures?queue=wl-orders', undefined, other)).body).toMatchObject({ rowsNow: 0 })
      expect((await tenants.json('GET', '/api/v1/analytics/partition-liveness', undefined, other)).body.rows).toEqual([])
      expect((await tenants.json('GET', '/api/v1/analytics/retention?groupBy=queue', undefined, other)).body).toEqual({ items: [], rows: [] })
    } finally {
      await tenants.close()
    }
  })
})
