// System maintenance (API 5.15): the flags live in queen.system_state and the push and pop
// procedures read them themselves, so a switch made through one app instance applies to another
// over the same database at once. Push maintenance refuses pushes (503 maintenance, Retry-After 5)
// while pops, acks and reads keep working; pop maintenance answers 204 and takes no lease.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { testApp, type TestApp } from '../helpers/app.js'
import { ack, acksOf, pop, push } from '../helpers/engine.js'
import { SECRET, bearer, token } from '../helpers/tokens.js'

let one: TestApp
let two: TestApp
beforeAll(async () => {
  one = await testApp()
  two = await testApp({ database: one.database })
})
afterEach(async () => {
  await one.json('POST', '/api/v1/system/maintenance', { enabled: false })
  await one.json('POST', '/api/v1/system/maintenance/pop', { enabled: false })
})
afterAll(async () => {
  await two.close()
  await one.close()
})

const leases = async (queue?: string) =>
  (
    await one.database.sql<{ n: number }>(
      `select count(*)::int as n from queen.log_consumers c join queen.log_partitions p on p.id = c.partition_id
         join queen.queues q on q.id = p.queue_id where c.lease_id is not null and ($1::text is null or q.name = $1)`,
      [queue ?? null],
    )
  )[0]!.n

describe('GET /api/v1/system/maintenance', () => {
  it("reports both flags off in Queen's shape, with true buffer zeros", async () => {
    const res = await one.json('GET', '/api/v1/system/maintenance')
    expect(res.status).toBe(200)
    expect(res.body).toEqual({
      maintenanceMode: false,
      popMaintenanceMode: false,
      bufferedMessages: 0,
      bufferHealthy: true,
      bufferStats: { pending: 0, failed: 0 },
    })
  })
})

describe('push maintenance', () => {
  it('switched on one instance, refuses pushes on another with 503 maintenance and Retry-After 5', async () => {
    const on = await one.json('POST', '/api/v1/system/maintenance', { enabled: true })
    expect(on.status).toBe(200)
    expect(on.body).toMatchObject({ maintenanceMode: true, bufferedMessages: 0, bufferHealthy: true })
    expect(typeof on.body.message).toBe('string')

    const refused = await two.json('POST', '/api/v1/push', { items: [{ queue: 'mnt-push', payload: 1 }] })
    expect(refused.status).toBe(503)
    expect(refused.body).toMatchObject({ error: 'Push maintenance is on; retry later', code: 'maintenance' })
    expect(refused.headers.get('retry-after')).toBe('5')
    expect(await one.database.sql(`select 1 from queen.queues where name = 'mnt-push'`)).toEqual([])

    expect((await two.json('GET', '/api/v1/system/maintenance')).body).toMatchObject({ maintenanceMode: true, popMaintenanceMode: false })
    await one.json('POST', '/api/v1/system/maintenance', { enabled: false })
    expect((await two.json('POST', '/api/v1/push', { items: [{ queue: 'mnt-push', payload: 1 }] })).status).toBe(201)
  })

  it('refuses a transaction that pushes, but pops, acks, ack-only transactions and reads keep working', async () => {
    await push(one, [{ queue: 'mnt-work', payload: 'a' }, { queue: 'mnt-work', payload: 'b' }])
    await one.json('POST', '/api/v1/system/maintenance', { enabled: true })

    const first = await pop(two, 'mnt-work', { batch: 1 })
    expect(first.messages).toHaveLength(1)
    expect((await ack(two, acksOf(first.messages)))[0]).toMatchObject({ success: true })

    const txPush = await two.json('POST', '/api/v1/transaction', { operations: [{ type: 'push', items: [{ queue: 'mnt-out', payload: 1 }] }] })
    expect(txPush.status).toBe(503)
    expect(txPush.body.code).toBe('maintenance')

    const second = await pop(two, 'mnt-work')
    const m = second.messages[0]!
    const txAck = await two.json('POST', '/api/v1/transaction', {
      operations: [{ type: 'ack', transactionId: m.transactionId, partitionId: m.partitionId, leaseId: m.leaseId }],
    })
    expect(txAck.body).toMatchObject({ success: true })

    expect((await two.json('GET', '/api/v1/resources/queues/mnt-work')).status).toBe(200)
    expect((await two.json('GET', '/api/v1/status/queues/mnt-work')).status).toBe(200)
  })
})

describe('pop maintenance', () => {
  it('switched on one instance, makes pops on another answer 204 with no lease; delivery resumes after', async () => {
    await push(one, [{ queue: 'mnt-pop', payload: 1 }])
    const on = await one.json('POST', '/api/v1/system/maintenance/pop', { enabled: true })
    expect(on.status).toBe(200)
    expect(on.body).toMatchObject({ popMaintenanceMode: true })
    expect(typeof on.body.message).toBe('string')
    expect((await two.json('GET', '/api/v1/system/maintenance/pop')).body).toMatchObject({ popMaintenanceMode: true })

    const before = await leases()
    const res = await two.request('/api/v1/pop/queue/mnt-pop?wait=false')
    expect(res.status).toBe(204)
    expect(await res.text()).toBe('')
    expect(await leases()).toBe(before)
    // Pushes are unaffected by pop maintenance.
    expect((await two.json('POST', '/api/v1/push', { items: [{ queue: 'mnt-pop', payload: 2 }] })).status).toBe(201)

    await two.json('POST', '/api/v1/system/maintenance/pop', { enabled: false })
    expect((await pop(one, 'mnt-pop')).messages.length).toBeGreaterThan(0)
  })

  it('holds a waiting pop through pop maintenance and delivers once the flag is lifted', async () => {
    await push(one, [{ queue: 'mnt-wait', payload: 'held' }])
    await one.json('POST', '/api/v1/system/maintenance/pop', { enabled: true })
    const waiting = pop(two, 'mnt-wait', { wait: true, timeout: 20_000 })
    // The pop is parked (counted by its instance) before the flag goes off.
    const parked = async () => (await two.json('GET', '/api/v1/analytics/queue-parked-replicas')).body.replicas[0].parkedLongPolls as number
    for (let i = 0; i < 500 && (await parked()) === 0; i++) await new Promise((resolve) => setTimeout(resolve, 10))
    expect(await parked()).toBe(1)
    expect(await leases('mnt-wait')).toBe(0)
    await one.json('POST', '/api/v1/system/maintenance/pop', { enabled: false })
    const got = await waiting
    expect(got.status).toBe(200)
    expect(got.messages.map((m) => m.data)).toEqual(['held'])
  })

  it('lets a round leased before the switch be acked', async () => {
    await push(one, [{ queue: 'mnt-round', payload: 1 }])
    const popped = await pop(one, 'mnt-round')
    await one.json('POST', '/api/v1/system/maintenance/pop', { enabled: true })
    expect((await ack(two, acksOf(popped.messages)))[0]).toMatchObject({ success: true, leaseReleased: true })
  })
})

describe('switch validation and access', () => {
  it('answers 400 unless enabled is a boolean, and changes nothing', async () => {
    for (const body of [{}, { enabled: 'true' }, { enabled: 1 }, { enabled: null }]) {
      for (const path of ['/api/v1/system/maintenance', '/api/v1/system/maintenance/pop']) {
        const res = await one.json('POST', path, body)
        expect(res.status, `${path} ${JSON.stringify(body)}`).toBe(400)
        expect(res.body).toMatchObject({ error: 'enabled (boolean) is required', code: 'invalid_request' })
      }
    }
    expect((await one.json('GET', '/api/v1/system/maintenance')).body).toMatchObject({ maintenanceMode: false, popMaintenanceMode: false })
  })

  it('refuses the switches to a tenant-bound admin token, which may still read the flags', async () => {
    const app = await testApp({ database: one.database, env: { JWT_ENABLED: 'true', JWT_SECRET: SECRET, QUEEN_TENANCY_HEADER: 'X-Queen-Tenant' } })
    try {
      const bound = bearer(await token({ sub: 'ops-a', role: 'admin', tenant: 'acme' }))
      const operator = bearer(await token({ sub: 'ops', role: 'admin' }))
      const tenant = { 'x-queen-tenant': 'acme' }
      for (const path of ['/api/v1/system/maintenance', '/api/v1/system/maintenance/pop']) {
        const refused = await app.json('POST', path, { enabled: true }, { ...bound, ...tenant })
        expect(refused.status).toBe(403)
        expect(refused.body).toMatchObject({ error: 'Tenant-bound tokens cannot change broker-wide settings', code: 'tenant_forbidden' })
        expect((await app.json('GET', path, undefined, { ...bound, ...tenant })).status).toBe(200)
      }
      expect((await one.json('GET', '/api/v1/system/maintenance')).body).toMatchObject({ maintenanceMode: false, popMaintenanceMode: false })
      const allowed = await app.json('POST', '/api/v1/system/maintenance', { enabled: true }, { ...operator, ...tenant })
      expect(allowed.body).toMatchObject({ maintenanceMode: true })
      // Broker-wide: the operator's switch under tenant acme applies to the default tenant too.
      expect((await one.json('POST', '/api/v1/push', { items: [{ queue: 'mnt-any', payload: 1 }] })).status).toBe(503)
    } finally {
      await app.close()
    }
  })
})
