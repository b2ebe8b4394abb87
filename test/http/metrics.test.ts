// GET /metrics and GET /metrics/prometheus (API 5.2, 5.3): real counters of this app instance,
// cluster series from the database (one call per scrape, cached 5 s per process, so each check of
// database state below scrapes a fresh app), D23's rule for per-queue series under tenancy, and a
// 200 with queen_database_up 0 when PostgreSQL is unreachable.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createApp } from '../../src/app.js'
import { loadConfig } from '../../src/config.js'
import { createDatabase } from '../../src/db/database.js'
import { createNodePool } from '../../src/db/node-pool.js'
import { createLogger } from '../../src/log.js'
import { createProcessMetrics } from '../../src/metrics.js'
import { testApp, type TestApp } from '../helpers/app.js'
import { ack, acksOf, pop, push } from '../helpers/engine.js'
import { SECRET, bearer, token } from '../helpers/tokens.js'

let app: TestApp
beforeAll(async () => {
  app = await testApp()
})
afterAll(() => app.close())

const UUID_V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/

async function scrape(target: TestApp, headers: Record<string, string> = {}) {
  const res = await target.request('/metrics/prometheus', { headers })
  expect(res.status).toBe(200)
  expect(res.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8')
  const text = await res.text()
  const value = (series: string) => {
    const line = text.split('\n').find((l) => l.startsWith(`${series} `))
    return line === undefined ? undefined : Number(line.slice(series.length + 1))
  }
  return { text, value }
}

describe('GET /metrics', () => {
  it("counts this instance's pushes, duplicates, pops, empty pops, acks, nacks and dead-letters", async () => {
    const own = await testApp({ database: app.database })
    try {
      await own.json('POST', '/api/v1/configure', { queue: 'm-count', options: { retryLimit: 0 } })
      await push(own, [{ queue: 'm-count', transactionId: 'a', payload: 1 }, { queue: 'm-count', transactionId: 'b', payload: 2 }])
      await push(own, [{ queue: 'm-count', transactionId: 'a', payload: 1 }])
      const first = await pop(own, 'm-count', { batch: 1 })
      await ack(own, acksOf(first.messages))
      const second = await pop(own, 'm-count', { batch: 1 })
      await ack(own, acksOf(second.messages, 'failed', { error: 'boom' }))
      expect((await pop(own, 'm-count')).status).toBe(204)
      await ack(own, [{ transactionId: 'nope', partitionId: first.messages[0]!.partitionId }])

      const res = await own.json('GET', '/metrics')
      expect(res.status).toBe(200)
      const m = res.body
      expect(m.instance).toMatch(UUID_V7)
      expect(m.uptime).toBeGreaterThanOrEqual(0)
      expect(m.counters).toEqual({ pushedMessages: 2, duplicateMessages: 1, poppedMessages: 2, emptyPops: 1, acks: 3, failedAcks: 1, deadLettered: 1 })
      expect(m.messages.total).toBe(2)
      expect(m.messages.rate).toBeGreaterThan(0)
      // The configure, 2 pushes, 3 pops and 3 acks came before this request.
      expect(m.requests.total).toBe(9)
      expect(m.requests.rate).toBeGreaterThan(0)
      expect(m.database).toEqual({ poolSize: expect.any(Number), idleConnections: expect.any(Number), waitingRequests: expect.any(Number) })
      for (const key of ['rss', 'heapTotal', 'heapUsed', 'external', 'arrayBuffers']) expect(m.memory[key], key).toBeGreaterThan(0)
      expect(m.cpu.user).toBeGreaterThan(0)
      expect(typeof m.cpu.system).toBe('number')

      // Another instance over the same database has counted nothing.
      expect((await app.json('GET', '/metrics')).body.counters.pushedMessages).toBe(0)
    } finally {
      await own.close()
    }
  })

  it('reports what a Worker cannot measure as null, never 0', () => {
    const m = createProcessMetrics('workers').json(null)
    expect(m.database).toEqual({ poolSize: null, idleConnections: null, waitingRequests: null })
    expect(m.memory).toEqual({ rss: null, heapTotal: null, heapUsed: null, external: null, arrayBuffers: null })
    expect(m.cpu).toEqual({ user: null, system: null })
  })

  it('counts only committed transactions', async () => {
    const own = await testApp({ database: app.database })
    try {
      await push(own, [{ queue: 'm-tx', payload: 1 }])
      const [m] = (await pop(own, 'm-tx')).messages
      const ok = await own.json('POST', '/api/v1/transaction', {
        operations: [
          { type: 'push', items: [{ queue: 'm-tx-out', payload: 1 }] },
          { type: 'ack', transactionId: m!.transactionId, partitionId: m!.partitionId, leaseId: m!.leaseId },
        ],
      })
      expect(ok.body.success).toBe(true)
      const failed = await own.json('POST', '/api/v1/transaction', {
        operations: [{ type: 'push', items: [{ queue: 'm-tx-out', payload: 2 }] }],
        requiredLeases: ['01890a5d-ac96-774b-bcce-b302099a8057'],
      })
      expect(failed.body.success).toBe(false)
      expect((await own.json('GET', '/metrics')).body.counters).toMatchObject({ pushedMessages: 2, acks: 1 })
    } finally {
      await own.close()
    }
  })

  it('needs no tenant header when tenancy is on', async () => {
    const tenanted = await testApp({ database: app.database, env: { QUEEN_TENANCY_HEADER: 'X-Queen-Tenant' } })
    try {
      expect((await tenanted.json('GET', '/metrics')).status).toBe(200)
      expect((await tenanted.request('/metrics/prometheus')).status).toBe(200)
      expect((await tenanted.json('GET', '/api/v1/status')).status).toBe(400)
    } finally {
      await tenanted.close()
    }
  })
})

describe('GET /metrics/prometheus', () => {
  it('exposes the process series with route patterns, never raw paths', async () => {
    const own = await testApp({ database: app.database })
    try {
      await push(own, [{ queue: 'm-prom', transactionId: 'x', payload: 1 }, { queue: 'm-prom', transactionId: 'x', payload: 1 }])
      const popped = await pop(own, 'm-prom')
      await ack(own, acksOf(popped.messages))
      await pop(own, 'm-prom')
      const { text, value } = await scrape(own)
      expect(value('queen_http_requests_total{method="GET",route="/api/v1/pop/queue/:queue",status="200"}')).toBe(1)
      expect(value('queen_http_requests_total{method="GET",route="/api/v1/pop/queue/:queue",status="204"}')).toBe(1)
      expect(text).not.toMatch(/route="[^"]*m-prom/)
      expect(value('queen_http_request_duration_seconds_count{route="/api/v1/push"}')).toBe(1)
      expect(value('queen_http_request_duration_seconds_bucket{route="/api/v1/push",le="+Inf"}')).toBe(1)
      expect(value('queen_http_request_duration_seconds_bucket{route="/api/v1/push",le="30"}')).toBe(1)
      expect(text).toContain('queen_http_request_duration_seconds_bucket{route="/api/v1/push",le="0.005"}')
      expect(value('queen_push_messages_total{result="queued"}')).toBe(1)
      expect(value('queen_push_messages_total{result="duplicate"}')).toBe(1)
      expect(value('queen_pop_requests_total{result="messages"}')).toBe(1)
      expect(value('queen_pop_requests_total{result="empty"}')).toBe(1)
      expect(value('queen_popped_messages_total')).toBe(1)
      expect(value('queen_acks_total{status="completed",outcome="ok"}')).toBe(1)
      expect(value('queen_dead_lettered_total')).toBe(0)
      expect(value('queen_long_polls_waiting')).toBe(0)
      expect(value('queen_db_pool_connections{state="total"}')).toBeGreaterThanOrEqual(1)
      expect(value('queen_process_start_time_seconds')).toBeGreaterThan(1.7e9)
      expect(value('queen_database_up')).toBe(1)
    } finally {
      await own.close()
    }
  })

  it('exposes per-queue cluster series from the stats table and the watermarks', async () => {
    await push(app, [1, 2, 3].map((n) => ({ queue: 'm-cluster', partition: `p${n}`, payload: n })))
    await pop(app, 'm-cluster', { consumerGroup: 'audit', subscriptionMode: 'all' }, 'p1')
    await app.json('POST', '/api/v1/system/maintenance/pop', { enabled: true })
    await app.json('POST', '/api/v1/stats/refresh')
    const own = await testApp({ database: app.database })
    try {
      const { value } = await scrape(own)
      const q = 'tenant="",queue="m-cluster"'
      expect(value(`queen_queue_pending{${q}}`)).toBe(3)
      // audit, the one registered group, holds a live lease on p1 (the worst-cursor rule).
      expect(value(`queen_queue_processing{${q}}`)).toBe(1)
      expect(value(`queen_queue_partitions{${q}}`)).toBe(3)
      expect(value(`queen_queue_appended_total{${q}}`)).toBe(3)
      expect(value(`queen_queue_retained_bytes{${q}}`)).toBe(0)
      expect(value(`queen_dlq_depth{${q}}`)).toBe(0)
      expect(value(`queen_consumer_group_lag{${q},group="audit"}`)).toBe(3)
      expect(value('queen_maintenance_mode{mode="pop"}')).toBe(1)
      expect(value('queen_maintenance_mode{mode="push"}')).toBe(0)
      expect(value('queen_stats_age_seconds')).toBeGreaterThanOrEqual(0)
    } finally {
      await own.close()
      await app.json('POST', '/api/v1/system/maintenance/pop', { enabled: false })
    }
  })

  it('counts a waiting long poll while it waits', async () => {
    const waiting = pop(app, 'm-long', { wait: true, timeout: 20_000 })
    let seen = 0
    for (let i = 0; i < 500 && seen === 0; i++) {
      seen = (await scrape(app)).value('queen_long_polls_waiting') ?? 0
      if (seen === 0) await new Promise((resolve) => setTimeout(resolve, 10))
    }
    expect(seen).toBe(1)
    const replicas = (await app.json('GET', '/api/v1/analytics/queue-parked-replicas')).body
    expect(replicas.replicas).toEqual([{ instance: expect.any(String), parkedLongPolls: 1 }])
    await push(app, [{ queue: 'm-long', payload: 1 }])
    expect((await waiting).status).toBe(200)
    expect((await scrape(app)).value('queen_long_polls_waiting')).toBe(0)
  })

  it('answers 200 with queen_database_up 0 and no cluster series when PostgreSQL is unreachable', async () => {
    const config = loadConfig({ LOG_LEVEL: 'silent' }, 'node')
    const db = createDatabase(createNodePool({ connectionString: 'postgres://queen@127.0.0.1:1/none', max: 1, connectionTimeoutMillis: 1000 }), { longLived: true })
    const down = createApp({ config, log: createLogger('silent'), database: () => db })
    try {
      const res = await down.request('/metrics/prometheus')
      expect(res.status).toBe(200)
      const text = await res.text()
      expect(text).toContain('\nqueen_database_up 0\n')
      expect(text).toContain('queen_process_start_time_seconds ')
      expect(text).not.toContain('queen_maintenance_mode')
      expect(text).not.toContain('queen_queue_pending')
      expect((await down.request('/metrics')).status).toBe(200)
    } finally {
      await db.close()
    }
  })
})

describe('per-queue series under tenancy', () => {
  const tenancy = { QUEEN_TENANCY_HEADER: 'X-Queen-Tenant' }
  const auth = { JWT_ENABLED: 'true', JWT_SECRET: SECRET }

  it('serves them with authentication off (every caller is an unbound admin)', async () => {
    const open = await testApp({ database: app.database, env: tenancy })
    try {
      await push(open, [{ queue: 'm-tenant', payload: 1 }], { 'x-queen-tenant': 'acme' })
      const { text } = await scrape(open)
      expect(text).toContain('queen_queue_partitions{tenant="acme",queue="m-tenant"} 1')
    } finally {
      await open.close()
    }
  })

  it('serves them to an admin without a tenant binding, never to a bound admin or a skipped path', async () => {
    await app.json('POST', '/api/v1/configure', { queue: 'm-secret' })
    const authed = await testApp({ database: app.database, env: { ...tenancy, ...auth, JWT_SKIP_PATHS: '/health' } })
    const skipped = await testApp({ database: app.database, env: { ...tenancy, ...auth } })
    try {
      const operator = bearer(await token({ sub: 'ops', role: 'admin' }))
      const bound = bearer(await token({ sub: 'ops-acme', role: 'admin', tenant: 'acme' }))
      const withBound = await scrape(authed, bound)
      expect(withBound.text).not.toContain('queen_queue_')
      expect(withBound.text).not.toContain('queen_consumer_group_lag')
      expect(withBound.value('queen_maintenance_mode{mode="push"}')).toBe(0)
      expect((await scrape(authed, operator)).text).toContain('queen_queue_partitions{tenant="",queue="m-secret"} 0')
      const reader = bearer(await token({ sub: 'r', role: 'read-only' }))
      expect((await authed.request('/metrics/prometheus', { headers: reader })).status).toBe(403)
      const anonymous = await scrape(skipped)
      expect(anonymous.text).not.toContain('queen_queue_')
      expect(anonymous.value('queen_database_up')).toBe(1)
    } finally {
      await authed.close()
      await skipped.close()
    }
  })
})
