// The analytics routes queenctl reads (API 5.14): queue-ops from the per-minute counters,
// queue-lag live per (queue, group), retention from the options and the retained-bytes lane's
// numbers, and the admin-only process and database views.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { testApp, type TestApp } from '../helpers/app.js'
import { ack, acksOf, pop, push } from '../helpers/engine.js'
import { SECRET, bearer, token } from '../helpers/tokens.js'

let app: TestApp
const get = (path: string) => app.json('GET', path)

beforeAll(async () => {
  app = await testApp()
  await app.json('POST', '/api/v1/configure', {
    queue: 'an-orders',
    options: { retentionEnabled: true, retentionSeconds: 3600, completedRetentionSeconds: 600, maxWaitTimeSeconds: 86400 },
  })
  await push(app, [1, 2, 3, 4].map((n) => ({ queue: 'an-orders', partition: n % 2 ? 'odd' : 'even', payload: n })))
  const round = await pop(app, 'an-orders', { batch: 10 }, 'odd')
  await ack(app, acksOf(round.messages))
  await pop(app, 'an-orders', { consumerGroup: 'audit', batch: 10, subscriptionMode: 'all' }, 'odd')
  await ack(app, acksOf((await pop(app, 'an-orders', { consumerGroup: 'audit', batch: 10, subscriptionMode: 'all' }, 'even')).messages, 'completed'), 'audit')
  await push(app, [{ queue: 'an-idle', payload: 1 }])
  await app.json('POST', '/api/v1/stats/refresh')
})
afterAll(() => app.close())

describe('GET /api/v1/analytics/queue-ops', () => {
  it('answers per-queue buckets of the per-minute counters', async () => {
    const res = await get('/api/v1/analytics/queue-ops')
    expect(res.status).toBe(200)
    expect(res.body.bucketMinutes).toBe(1)
    const sum = (queue: string, key: string) =>
      res.body.series.filter((p: { queue: string }) => p.queue === queue).reduce((n: number, p: Record<string, number>) => n + p[key]!, 0)
    expect(sum('an-orders', 'ingested')).toBe(4)
    expect(sum('an-idle', 'ingested')).toBe(1)
    const one = await get('/api/v1/analytics/queue-ops?queue=an-idle')
    expect(new Set(one.body.series.map((p: { queue: string }) => p.queue))).toEqual(new Set(['an-idle']))
    const old = await get('/api/v1/analytics/queue-ops?from=2020-01-01T00:00:00Z&to=2020-01-02T00:00:00Z')
    expect(old.body).toMatchObject({ bucketMinutes: 5, series: [], timeRange: { from: '2020-01-01T00:00:00.000Z', to: '2020-01-02T00:00:00.000Z' } })
  })
})

describe('GET /api/v1/analytics/queue-lag', () => {
  it('answers the current lag of every registered group, live', async () => {
    const res = await get('/api/v1/analytics/queue-lag?queue=an-orders')
    expect(res.status).toBe(200)
    const byGroup = Object.fromEntries(res.body.items.map((i: { consumerGroup: string }) => [i.consumerGroup, i]))
    expect(Object.keys(byGroup).sort()).toEqual(['__QUEUE_MODE__', 'audit'])
    // Queue mode settled odd and owes even (2); audit settled even and holds odd under a lease (2).
    expect(byGroup.__QUEUE_MODE__).toMatchObject({ queue: 'an-orders', partitions: 2, offsetLag: 2 })
    expect(byGroup.audit).toMatchObject({ queue: 'an-orders', partitions: 2, offsetLag: 2 })
    expect(byGroup.audit.timeLagSeconds).toBeGreaterThanOrEqual(0)
    const idle = await get('/api/v1/analytics/queue-lag?queue=an-idle')
    expect(idle.body.items).toEqual([])
  })
})

describe('GET /api/v1/analytics/retention', () => {
  it('echoes the retention options with the retained-bytes lane numbers', async () => {
    await app.database.sql(
      `update queen.stats set retained_bytes = 4096, segment_count = 3 where queue_id = (select id from queen.queues where name = 'an-orders')`,
    )
    const res = await get('/api/v1/analytics/retention?queue=an-orders')
    expect(res.status).toBe(200)
    expect(res.body.items).toHaveLength(1)
    expect(res.body.items[0]).toMatchObject({
      queue: 'an-orders',
      retentionEnabled: true,
      retentionSeconds: 3600,
      completedRetentionSeconds: 600,
      maxWaitTimeSeconds: 86400,
      retainedBytes: 4096,
      segments: 3,
    })
    expect(res.body.items[0].oldestRetainedAt).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/)
    const all = await get('/api/v1/analytics/retention')
    expect(all.body.items.map((i: { queue: string }) => i.queue)).toEqual(['an-idle', 'an-orders'])
    expect(all.body.items[0]).toMatchObject({ retentionEnabled: false, retainedBytes: 0 })
  })
})

describe('broker-wide analytics (admin)', () => {
  it('system-metrics and worker-metrics carry the answering process /metrics object', async () => {
    const instance = (await get('/metrics')).body.instance
    for (const path of ['/api/v1/analytics/system-metrics', '/api/v1/analytics/worker-metrics']) {
      const res = await get(path)
      expect(res.status).toBe(200)
      expect(res.body.instances).toHaveLength(1)
      expect(res.body.instances[0]).toMatchObject({ instance, counters: expect.any(Object), requests: expect.any(Object) })
    }
    expect((await get('/api/v1/analytics/queue-parked-replicas')).body).toEqual({ replicas: [{ instance, parkedLongPolls: 0 }] })
  })

  it('postgres-stats reads this database', async () => {
    const res = await get('/api/v1/analytics/postgres-stats')
    expect(res.status).toBe(200)
    const s = res.body
    expect(s.databaseSizeBytes).toBeGreaterThan(0)
    expect(s.connections.total).toBeGreaterThanOrEqual(1)
    expect(s.connections.active).toBeGreaterThanOrEqual(1)
    expect(s.connections.total).toBeGreaterThanOrEqual(s.connections.active + s.connections.idle + s.connections.idleInTransaction)
    expect(s.cacheHitRatio).toBeGreaterThan(0)
    expect(s.cacheHitRatio).toBeLessThanOrEqual(1)
    expect(s.deadlocks).toBe(0)
    expect(s.serverVersion).toMatch(/^\d+/)
  })

  it('refuses a read-only token, which may still read the tenant-scoped analytics', async () => {
    const authed = await testApp({ database: app.database, env: { JWT_ENABLED: 'true', JWT_SECRET: SECRET } })
    try {
      const reader = bearer(await token({ sub: 'r', role: 'read-only' }))
      for (const path of ['system-metrics', 'worker-metrics', 'queue-parked-replicas', 'postgres-stats']) {
        const res = await authed.json('GET', `/api/v1/analytics/${path}`, undefined, reader)
        expect(res.status, path).toBe(403)
      }
      for (const path of ['queue-ops', 'queue-lag', 'retention']) {
        expect((await authed.json('GET', `/api/v1/analytics/${path}`, undefined, reader)).status, path).toBe(200)
      }
    } finally {
      await authed.close()
    }
  })
})
