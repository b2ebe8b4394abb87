// Tenant placement across databases (issue #26, docs/placement.md), over three real databases of
// the test server (d2 through PgBouncer when the run has one): each tenant's data lives only in its
// database, requests are routed there, one database down or behind refuses only its own tenants,
// the migration runner and the lanes cover every database, and a move copies, verifies, flips and
// purges without losing or reordering anything.
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import pg from 'pg'
import { runDueLanes } from '../cron/scheduled.js'
import { freePort } from '../src/db/embedded.js'
import { migrateAll } from '../src/db/placement/node-databases.js'
import { createLogger } from '../src/log.js'
import { withDatabase } from './global-setup.js'
import { testApp } from './helpers/app.js'
import { placedApp, type PlacedApp } from './helpers/placed-app.js'

let app: PlacedApp
beforeAll(async () => {
  app = await placedApp({ count: 3, pooled: ['d2'] })
  expect((await app.json('PUT', '/api/v1/system/placements/acme', 'ops', { database: 'd1' })).status).toBe(200)
  expect((await app.json('PUT', '/api/v1/system/placements/globex', 'ops', { database: 'd2' })).status).toBe(200)
})
afterAll(() => app?.close())

const push = (tenant: string, queue: string, payloads: unknown[], partition = 'p') =>
  app.json('POST', '/api/v1/push', tenant, { items: payloads.map((payload) => ({ queue, partition, payload })) })

async function queuesIn(name: string): Promise<string[]> {
  const rows = await app.databases[name]!.sql<{ q: string }>(`select tenant_id || '/' || name as q from queen.queues order by 1`)
  return rows.map((r) => r.q)
}

describe('routing and isolation', () => {
  it("keeps each tenant's data only in its own database, same queue names and all", async () => {
    for (const tenant of ['acme', 'globex', 'initech']) expect((await push(tenant, 'orders', [`${tenant}-1`])).status).toBe(201)
    expect(await queuesIn('d1')).toEqual(['acme/orders'])
    expect(await queuesIn('d2')).toEqual(['globex/orders'])
    // An unplaced tenant lives on the default database.
    expect(await queuesIn('default')).toEqual(['initech/orders'])
    for (const tenant of ['acme', 'globex', 'initech']) {
      const popped = await app.json('GET', '/api/v1/pop/queue/orders?wait=false', tenant)
      expect(popped.status).toBe(200)
      expect(popped.body.messages.map((m: { data: unknown }) => m.data)).toEqual([`${tenant}-1`])
    }
  })

  it('lists the configured databases and the directory; placements are admin routes with 4xx for bad input', async () => {
    const listed = await app.json('GET', '/api/v1/system/placements', 'ops')
    expect(listed.status).toBe(200)
    expect(listed.body.databases).toEqual(['default', 'd1', 'd2'])
    expect(listed.body.placements.map((p: { tenant: string; database: string }) => [p.tenant, p.database])).toEqual([
      ['acme', 'd1'],
      ['globex', 'd2'],
    ])
    const version = listed.body.version
    const unknown = await app.json('PUT', '/api/v1/system/placements/hooli', 'ops', { database: 'mars' })
    expect(unknown.status).toBe(400)
    expect(unknown.body).toMatchObject({ code: 'unknown_database' })
    const badTenant = await app.json('PUT', '/api/v1/system/placements/bad%20tenant', 'ops', { database: 'd1' })
    expect(badTenant.status).toBe(400)
    const noBody = await app.json('PUT', '/api/v1/system/placements/hooli', 'ops', {})
    expect(noBody.status).toBe(400)
    expect(noBody.body.error).toMatch(/^database:/)
    const badMove = await app.json('POST', '/api/v1/system/placements/hooli/move', 'ops', { to: 'mars' })
    expect(badMove.status).toBe(400)
    // Nothing was written by the refusals.
    expect((await app.json('GET', '/api/v1/system/placements', 'ops')).body.version).toBe(version)
  })

  it('reads the directory once per TTL, not once per request', async () => {
    const directory = app.set.get('default').db
    const call = directory.call
    let reads = 0
    directory.call = ((name: string, args: never) => {
      if (name === 'placements_directory_v1') reads++
      return call(name as never, args)
    }) as typeof directory.call
    try {
      const started = Date.now()
      for (let i = 0; i < 30; i++) expect((await push('acme', 'ttl', [i])).status).toBe(201)
      const ttlWindows = Math.ceil((Date.now() - started) / app.config.PLACEMENT_CACHE_TTL_MS) + 1
      expect(reads).toBeLessThanOrEqual(ttlWindows)
      expect(reads).toBeLessThan(30)
    } finally {
      directory.call = call
    }
  })
})

describe('one database unavailable', () => {
  it('refuses only the tenants of a database that is down; the others keep working, and metrics say which', async () => {
    const down = await placedApp({ count: 3, urls: { d2: `postgres://postgres:x@127.0.0.1:${await freePort()}/nowhere` } })
    try {
      await down.json('PUT', '/api/v1/system/placements/acme', 'ops', { database: 'd1' })
      await down.json('PUT', '/api/v1/system/placements/globex', 'ops', { database: 'd2' })
      const refused = await down.json('POST', '/api/v1/push', 'globex', { items: [{ queue: 'q', payload: 1 }] })
      expect(refused.status).toBe(503)
      expect(refused.body.code).toBe('db_unavailable')
      expect(refused.headers.get('retry-after')).toBeTruthy()
      for (const tenant of ['acme', 'initech']) {
        expect((await down.json('POST', '/api/v1/push', tenant, { items: [{ queue: 'q', payload: 1 }] })).status).toBe(201)
      }

      // Metrics are per database: each database's series carry its name, the down one reads 0.
      const scrape = await down.json('GET', '/metrics/prometheus', '')
      expect(scrape.status).toBe(200)
      const text = scrape.body as string
      expect(text).toContain('queen_database_up{database="default"} 1')
      expect(text).toContain('queen_database_up{database="d1"} 1')
      expect(text).toContain('queen_database_up{database="d2"} 0')
      expect(text).toContain('queen_queue_appended_total{database="d1",tenant="acme",queue="q"} 1')
      expect(text).toContain('queen_queue_appended_total{database="default",tenant="initech",queue="q"} 1')
      expect(text).toMatch(/^queen_db_pool_connections\{database="d1",state="total"\} \d+$/m)
      // One HELP per family, whatever the number of databases (the exposition format's rule).
      for (const family of ['queen_queue_appended_total', 'queen_database_up', 'queen_stats_age_seconds', 'queen_db_pool_connections']) {
        expect(text.split('\n').filter((l) => l.startsWith(`# HELP ${family} `))).toHaveLength(1)
      }
    } finally {
      await down.close()
    }
  })

  it('refuses the tenants of a database that is behind until the runner migrates it, then serves them', async () => {
    const admin = new pg.Client({ connectionString: inject('adminUrl') })
    await admin.connect()
    const bare = `placement_bare_${Date.now().toString(36)}`
    await admin.query(`create database ${bare}`)
    const bareUrl = withDatabase(inject('adminUrl'), bare)
    const behind = await placedApp({ count: 2, urls: { d1: bareUrl } })
    try {
      await behind.json('PUT', '/api/v1/system/placements/acme', 'ops', { database: 'd1' })
      const refused = await behind.json('POST', '/api/v1/push', 'acme', { items: [{ queue: 'q', payload: 1 }] })
      expect(refused.body.code).toBe('database_behind')
      expect(refused.status).toBe(503)
      expect(refused.body.error).not.toMatch(/postgres:|schema_migrations/)
      expect((await behind.json('POST', '/api/v1/push', 'initech', { items: [{ queue: 'q', payload: 1 }] })).status).toBe(201)

      // The runner over every database: the bare one gets everything, the others nothing new.
      const results = await migrateAll(behind.urls, 25_000)
      expect(results.find((r) => r.name === 'd1')!.result!.applied.length).toBeGreaterThan(5)
      expect(results.find((r) => r.name === 'default')!.result!.applied).toEqual([])
      expect(results.every((r) => !r.error)).toBe(true)
      expect((await migrateAll(behind.urls, 25_000)).every((r) => r.result?.applied.length === 0)).toBe(true)

      await new Promise((r) => setTimeout(r, 1100)) // the readiness re-check interval
      expect((await behind.json('POST', '/api/v1/push', 'acme', { items: [{ queue: 'q', payload: 1 }] })).status).toBe(201)
    } finally {
      await behind.close()
      await admin.query(`drop database if exists ${bare} with (force)`)
      await admin.end()
    }
  })
})

describe('lanes', () => {
  it("run per database, each under its own database's lease", async () => {
    for (const name of app.set.names) {
      await app.databases[name]!.sql(`update queen.maintenance_leases set runs = 0, last_started_at = null, holder = null, expires_at = null`)
    }
    for (const name of app.set.names) await runDueLanes(app.set.get(name).db, app.config, createLogger('silent'), name)
    for (const name of app.set.names) {
      const [row] = await app.databases[name]!.sql<{ runs: number }>(`select runs::int as runs from queen.maintenance_leases where name = 'stats_refresh'`)
      expect(row!.runs, name).toBe(1)
    }
    // The stats lane of d1 computed d1's queues (acme's), nothing of the others'.
    const stats = await app.databases.d1!.sql<{ tenant_id: string }>(`select distinct tenant_id from queen.stats`)
    expect(stats.map((s) => s.tenant_id)).toEqual(['acme'])
  })
})

describe('moving a tenant', () => {
  it('copies queues, frames, cursors, DLQ, traces and kv, verifies, flips and purges the source', async () => {
    const tenant = 'umbrella'
    await app.json('POST', '/api/v1/configure', tenant, { queue: 'jobs', options: { retryLimit: 0, leaseTime: 30 } })
    expect((await push(tenant, 'jobs', [1, 2, 3, 4, 5, 6])).status).toBe(201)
    const first = await app.json('GET', '/api/v1/pop/queue/jobs?batch=2&wait=false', tenant)
    const [m1, m2] = first.body.messages
    const acked = await app.json('POST', '/api/v1/ack/batch', tenant, {
      acknowledgments: [
        { transactionId: m1.transactionId, partitionId: m1.partitionId, leaseId: m1.leaseId, status: 'completed' },
        { transactionId: m2.transactionId, partitionId: m2.partitionId, leaseId: m2.leaseId, status: 'failed', error: 'boom' },
      ],
    })
    expect(acked.status).toBe(200)
    expect((await app.json('PUT', '/api/v1/kv/state/order-1', tenant, { value: { n: 1 }, forever: true })).status).toBe(200)
    const timer = { op: 'schedule', queue: 'jobs', timerKey: 'later', delayMs: 3_600_000, txn: 'later-1', payload: 'e30=' }
    expect((await app.json('POST', '/api/v1/timers', tenant, { operations: [timer] })).status).toBe(200)
    expect((await app.json('POST', '/api/v1/traces', tenant, { transactionId: m1.transactionId, partitionId: m1.partitionId, data: { step: 'x' } })).status).toBe(201)
    const dlqBefore = await app.json('GET', '/api/v1/dlq?queue=jobs', tenant)
    expect(dlqBefore.body.messages?.length ?? dlqBefore.body.total).toBeTruthy()

    // A request during the copy window is refused with 503 + Retry-After, never half-applied.
    const moving = app.json('POST', `/api/v1/system/placements/${tenant}/move`, 'ops', { to: 'd2' })
    await new Promise((r) => setTimeout(r, 60))
    const during = await push(tenant, 'jobs', ['late'])
    expect(during.status).toBe(503)
    expect(during.body.code).toBe('tenant_moving')
    expect(during.headers.get('retry-after')).toBe('2')
    const report = await moving
    expect(report.status).toBe(200)
    expect(report.body).toMatchObject({ tenant, from: 'default', to: 'd2', moved: true, sourcePurged: true })
    expect(report.body.copied).toMatchObject({ queues: 1, log_dlq: 1, message_traces: 1, kv_entries: 1, timers: 1 })
    expect(report.body.copied.log_segments).toBeGreaterThan(0)

    // The source holds nothing of the tenant any more; the destination holds all of it.
    const count = (name: string, table: string) =>
      app.databases[name]!.sql<{ n: number }>(`select count(*)::int as n from queen.${table} where tenant_id = $1`, [tenant]).then((r) => r[0]!.n)
    for (const table of ['queues', 'log_dlq', 'message_traces', 'kv_entries', 'timers']) {
      expect(await count('default', table), table).toBe(0)
      expect(await count('d2', table), table).toBe(1)
    }
    // The cursor moved with the data: the next pop delivers 3 (1 completed, 2 dead-lettered).
    const next = await app.json('GET', '/api/v1/pop/queue/jobs?batch=10&wait=false', tenant)
    expect(next.body.messages.map((m: { data: unknown }) => m.data)).toEqual([3, 4, 5, 6])
    expect((await app.json('GET', '/api/v1/kv/state/order-1', tenant)).body).toMatchObject({ found: true, value: { n: 1 } })
    expect((await app.json('GET', '/api/v1/timers/jobs/later', tenant)).body).toMatchObject({ found: true, txn: 'later-1' })
    const dlqAfter = await app.json('GET', '/api/v1/dlq?queue=jobs', tenant)
    expect(dlqAfter.body).toEqual(dlqBefore.body)
    // Pushes continue at the next offset in the new home.
    const pushed = await push(tenant, 'jobs', ['after'])
    expect(pushed.body[0].offset).toBe(6)

    // Moving back works too (the old home's leftovers, none here, would be purged first).
    const back = await app.json('POST', `/api/v1/system/placements/${tenant}/move`, 'ops', { to: 'default' })
    expect(back.body).toMatchObject({ moved: true, from: 'd2', to: 'default' })
    expect(await count('d2', 'queues')).toBe(0)
    const again = await app.json('POST', `/api/v1/system/placements/${tenant}/move`, 'ops', { to: 'default' })
    expect(again.body).toMatchObject({ moved: false })
  })
})

describe('the directory', () => {
  it('fences a move: other writes wait for its end unless forced, and every change takes the next version', async () => {
    const call = async (fn: string, args: unknown[]) => {
      const params = args.map((_, i) => `$${i + 1}`).join(', ')
      const rows = await app.databases.default!.sql<{ r: Record<string, any> }>(`select queen.${fn}(${params}) as r`, args)
      return rows[0]!.r
    }
    const refusal = (fn: string, args: unknown[]) =>
      call(fn, args).then(
        () => null,
        (error: { code?: string; message: string }) => [error.code, error.message],
      )
    const placed = await call('placement_set_v1', ['hooli', 'd1'])
    expect(placed).toMatchObject({ tenant: 'hooli', database: 'd1', state: 'placed', movingTo: null })
    // Refusals write nothing, the version included.
    expect(await refusal('placement_move_end_v1', ['hooli', 'd2'])).toEqual(['QM409', 'tenant is not being moved'])
    expect(await refusal('placement_move_begin_v1', ['hooli', 'd2', 'default'])).toEqual(['QM409', 'tenant placement changed; retry the move'])
    const fenced = await call('placement_move_begin_v1', ['hooli', 'd1', 'd2'])
    expect(fenced).toMatchObject({ database: 'd1', state: 'moving', movingTo: 'd2', version: placed.version + 1 })
    expect(await refusal('placement_move_begin_v1', ['hooli', 'd1', 'd2'])).toEqual(['QM409', 'tenant is already being moved'])
    expect(await refusal('placement_set_v1', ['hooli', 'd2'])).toEqual(['QM409', 'tenant is being moved; retry when the move has finished'])
    const ended = await call('placement_move_end_v1', ['hooli', 'd2'])
    expect(ended).toMatchObject({ database: 'd2', state: 'placed', movingTo: null, version: placed.version + 2 })
    // An operator lifts the fence of a move whose broker died.
    await call('placement_move_begin_v1', ['hooli', 'd2', 'd1'])
    const forced = await call('placement_set_v1', ['hooli', 'default', true])
    expect(forced).toMatchObject({ database: 'default', state: 'placed', movingTo: null, version: placed.version + 4 })
    // A tenant without a row lives on the default database, so its move starts from there.
    expect(await refusal('placement_move_begin_v1', ['wayne', 'd1', 'd2'])).toEqual(['QM409', 'tenant placement changed; retry the move'])
    const fresh = await call('placement_move_begin_v1', ['wayne', 'default', 'd1'])
    expect(fresh).toMatchObject({ tenant: 'wayne', database: 'default', state: 'moving', movingTo: 'd1', version: placed.version + 5 })
    expect(await call('placement_move_end_v1', ['wayne', 'default'])).toMatchObject({ database: 'default', state: 'placed' })
  })
})

describe('tenant-less deployments', () => {
  it('serve from the one database and never read a directory', async () => {
    const single = await testApp()
    try {
      let directoryReads = 0
      const call = single.db.call
      single.db.call = ((name: string, args: never) => {
        if (name === 'placements_directory_v1') directoryReads++
        return call(name as never, args)
      }) as typeof single.db.call
      for (let i = 0; i < 5; i++) expect((await single.json('POST', '/api/v1/push', { items: [{ queue: 'solo', payload: i }] })).status).toBe(201)
      expect(directoryReads).toBe(0)
      const listed = await single.json('GET', '/api/v1/system/placements')
      expect(listed.body).toMatchObject({ databases: ['default'], placements: [] })
    } finally {
      await single.close()
    }
  })
})
