// GET /api/v1/resources/queues?stats=cached as a pre-rendered listing (0008_stats_listings.sql,
// docs/resources.md): one primary-key read per call; the numbers change when the stats lane's pass
// ends or at POST /stats/refresh, while queues created, deleted or renamed show at once — also when
// they race the render.
import { gunzipSync } from 'node:zlib'
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { runLane } from '../../cron/runner.js'
import { statsRefresh } from '../../cron/stats-refresh.js'
import { testApp, type TestApp } from '../helpers/app.js'
import { push } from '../helpers/engine.js'

let app: TestApp
beforeAll(async () => {
  app = await testApp()
})
afterAll(() => app.close())

type Listed = { name: string; namespace: string; partitions: number; messages: { total: number; pending: number } }
const cached = async () => {
  const res = await app.json('GET', '/api/v1/resources/queues?stats=cached')
  expect(res.status).toBe(200)
  expect(res.headers.get('content-type')).toContain('application/json')
  return res.body as { queues: Listed[]; statsAge: number }
}
const cachedQueue = async (name: string) => (await cached()).queues.find((q) => q.name === name)
const livePass = () => runLane(app.db, statsRefresh, { config: app.config, budgetMs: 30_000, force: true })

describe('?stats=cached, pre-rendered', () => {
  it('keeps its numbers until the stats lane ends a pass, then shows the fresh ones', async () => {
    await push(app, [{ queue: 'sl-count', partition: 'a', payload: 1 }])
    await livePass()
    expect(await cachedQueue('sl-count')).toMatchObject({ partitions: 1, messages: { total: 1, pending: 1 } })

    await push(app, [{ queue: 'sl-count', partition: 'b', payload: 2 }, { queue: 'sl-count', partition: 'b', payload: 3 }])
    expect(await cachedQueue('sl-count')).toMatchObject({ partitions: 1, messages: { total: 1 } })

    const run = await livePass()
    expect(run.complete).toBe(true)
    expect(await cachedQueue('sl-count')).toMatchObject({ partitions: 2, messages: { total: 3, pending: 3 } })
  })

  it('answers what the live listing answers once the stats are fresh, field for field', async () => {
    await app.json('POST', '/api/v1/configure', { queue: 'sl-fields', namespace: 'ns "quoted"', task: 't\\x' })
    await push(app, [{ queue: 'sl-fields', partition: 'p', payload: { s: 'é' } }])
    await app.json('POST', '/api/v1/stats/refresh')
    const live = (await app.json('GET', '/api/v1/resources/queues?stats=live')).body
    const listed = await cached()
    expect(listed.queues).toEqual(live.queues)
    expect(listed.statsAge).toBeGreaterThanOrEqual(0)
  })

  it('shows a queue created, renamed or deleted at once, without a refresh', async () => {
    await cached() // rendered
    await push(app, [{ queue: 'sl-new', payload: 1 }])
    expect(await cachedQueue('sl-new')).toMatchObject({ partitions: 0, messages: { total: 0 } })

    await app.json('POST', '/api/v1/configure', { queue: 'sl-new', namespace: 'moved' })
    expect(await cachedQueue('sl-new')).toMatchObject({ namespace: 'moved' })

    expect((await app.json('DELETE', '/api/v1/resources/queues/sl-new')).status).toBe(200)
    expect(await cachedQueue('sl-new')).toBeUndefined()
  })

  it('reads one row per call once rendered, and sends the text only to a broker that lacks its version', async () => {
    await cached()
    const client = new pg.Client({ connectionString: app.database.url })
    await client.connect()
    const call = async (known: string | null) =>
      ((await client.query(`select queen.log_queue_stats_cached_v1(p_tenant => '', p_known => $1::uuid) as r`, [known])).rows[0].r as string).split('\t')
    try {
      await client.query('begin')
      const [version, statsAge, queues] = await call(null)
      const { rows } = await client.query(`select relname, coalesce(seq_scan, 0) + coalesce(idx_scan, 0) as n from pg_stat_xact_user_tables
                                            where schemaname = 'queen' and relname in ('queues', 'stats', 'log_partitions', 'log_segments', 'stats_listings')`)
      await client.query('rollback')
      expect(Object.fromEntries(rows.map((r) => [r.relname, Number(r.n)]))).toEqual({ queues: 0, stats: 0, log_partitions: 0, log_segments: 0, stats_listings: 1 })
      expect(JSON.parse(queues!).length).toBeGreaterThan(0)
      expect(Number(statsAge)).toBeGreaterThanOrEqual(0)

      expect(await call(version!)).toEqual([version, expect.any(String), ''])
      // A pass that changes no number keeps the version, so brokers keep what they hold.
      await livePass()
      expect((await call(version!))[0]).toBe(version)
      await push(app, [{ queue: 'sl-count', partition: 'c', payload: 4 }])
      await livePass()
      const [newer, , text] = await call(version!)
      expect(newer).not.toBe(version)
      expect(JSON.parse(text!).find((q: Listed) => q.name === 'sl-count').partitions).toBe(3)
      // The route answers the new text too, and again from its own copy.
      expect(await cachedQueue('sl-count')).toMatchObject({ partitions: 3 })
      expect(await cachedQueue('sl-count')).toMatchObject({ partitions: 3 })
    } finally {
      await client.end()
    }
  })

  it('never misses or keeps a queue created or deleted while listings render (parallel clients)', async () => {
    for (let round = 0; round < 8; round++) {
      const names = Array.from({ length: 12 }, (_, i) => `sl-race-${round}-${i}`)
      const creators = names.map((queue) => push(app, [{ queue, payload: round }]))
      const deleters = names.slice(0, 4).map(async (queue) => {
        await new Promise((resolve) => setTimeout(resolve, 5))
        return app.json('DELETE', `/api/v1/resources/queues/${queue}`)
      })
      // Renders racing the changes: cached calls without a listing, lane passes and refreshes.
      const renders = [cached(), livePass(), cached(), app.json('POST', '/api/v1/stats/refresh'), cached()]
      await Promise.all([...creators, ...deleters, ...renders])

      const live = ((await app.json('GET', '/api/v1/resources/queues?stats=live')).body.queues as Listed[]).map((q) => q.name)
      expect((await cached()).queues.map((q) => q.name)).toEqual(live)
    }
  })

  it('keeps tenants apart: each tenant lists only its own queues', async () => {
    const tenancy = await testApp({ env: { QUEEN_TENANCY_HEADER: 'x-tenant' } })
    try {
      const as = (tenant: string) => ({ 'x-tenant': tenant })
      await tenancy.json('POST', '/api/v1/push', { items: [{ queue: 'sl-mine', payload: 1 }] }, as('t1'))
      await tenancy.json('POST', '/api/v1/push', { items: [{ queue: 'sl-theirs', payload: 1 }] }, as('t2'))
      const listed = async (tenant: string) =>
        ((await tenancy.json('GET', '/api/v1/resources/queues?stats=cached', undefined, as(tenant))).body.queues as Listed[]).map((q) => q.name)
      expect(await listed('t1')).toEqual(['sl-mine'])
      expect(await listed('t2')).toEqual(['sl-theirs'])
    } finally {
      await tenancy.close()
    }
  })
})

describe('?stats=cached after a queue change: patched, not rendered again', () => {
  // The stored listing as it stands, and the text a full render would make right now (rolled back).
  const stored = async () =>
    (await app.database.sql<{ queues: string; rendered_at: string; version: string }>(
      `select queues, rendered_at::text, version::text from queen.stats_listings where tenant_id = ''`,
    ))[0]!
  const renderedNow = async () => {
    const client = new pg.Client({ connectionString: app.database.url })
    await client.connect()
    try {
      await client.query('begin')
      return (await client.query(`select queues from queen._stats_listing_render('')`)).rows[0].queues as string
    } finally {
      await client.query('rollback')
      await client.end()
    }
  }

  it('shows a created, renamed or deleted queue at once, in name order, with the other numbers the previous ones', async () => {
    await push(app, [{ queue: 'slp-a', payload: 1 }, { queue: 'slp-c', payload: 2 }, { queue: 'slp-e', payload: 3 }])
    await app.json('POST', '/api/v1/stats/refresh')
    const before = await cached()
    const rendered = await stored()
    expect(await cachedQueue('slp-a')).toMatchObject({ messages: { total: 1 } })
    await push(app, [{ queue: 'slp-a', payload: 4 }]) // a number the listing does not show until the next pass

    await push(app, [{ queue: 'slp-b', payload: 5 }])
    const after = await cached()
    const names = after.queues.map((q) => q.name)
    expect(names).toEqual([...before.queues.map((q) => q.name), 'slp-b'].sort((x, y) => (x < y ? -1 : x > y ? 1 : 0)))
    expect(after.queues.find((q) => q.name === 'slp-a')).toMatchObject({ messages: { total: 1 } })
    expect(after.queues.find((q) => q.name === 'slp-b')).toMatchObject({ partitions: 0, messages: { total: 0 } })
    // Patched: the render time is the old one, and the text is what a render would make from the same numbers.
    expect((await stored()).rendered_at).toBe(rendered.rendered_at)
    expect((await stored()).version).not.toBe(rendered.version)
    expect((await stored()).queues).toBe(await renderedNow())

    await app.json('POST', '/api/v1/configure', { queue: 'slp-c', namespace: 'moved "here"' })
    expect((await app.json('DELETE', '/api/v1/resources/queues/slp-e')).status).toBe(200)
    await push(app, [{ queue: 'slp-0-first', payload: 6 }, { queue: 'slp-z-last', payload: 7 }])
    const patched = await cached()
    expect(patched.queues.find((q) => q.name === 'slp-c')).toMatchObject({ namespace: 'moved "here"' })
    expect(patched.queues.map((q) => q.name)).not.toContain('slp-e')
    expect(patched.queues.map((q) => q.name)).toContain('slp-0-first')
    const live = ((await app.json('GET', '/api/v1/resources/queues?stats=live')).body.queues as Listed[]).map((q) => q.name)
    expect(patched.queues.map((q) => q.name)).toEqual(live)
    expect((await stored()).rendered_at).toBe(rendered.rendered_at)
    expect((await stored()).queues).toBe(await renderedNow())

    // The next pass shows the fresh numbers, as before.
    await app.json('POST', '/api/v1/stats/refresh')
    expect(await cachedQueue('slp-a')).toMatchObject({ messages: { total: 2 } })
  })

  it('patches the last and the only queue out and in again', async () => {
    const tenancy = await testApp({ env: { QUEEN_TENANCY_HEADER: 'x-tenant' } })
    try {
      const as = { 'x-tenant': 'slp-one' }
      const listed = async () => ((await tenancy.json('GET', '/api/v1/resources/queues?stats=cached', undefined, as)).body.queues as Listed[]).map((q) => q.name)
      const renderedAt = async () =>
        (await tenancy.database.sql<{ at: string }>(`select rendered_at::text as at from queen.stats_listings where tenant_id = 'slp-one'`))[0]!.at
      expect(await listed()).toEqual([])
      const first = await renderedAt()
      await tenancy.json('POST', '/api/v1/push', { items: [{ queue: 'only', payload: 1 }] }, as)
      expect(await listed()).toEqual(['only'])
      await tenancy.json('POST', '/api/v1/push', { items: [{ queue: 'zz', payload: 1 }] }, as)
      expect(await listed()).toEqual(['only', 'zz'])
      expect((await tenancy.json('DELETE', '/api/v1/resources/queues/zz', undefined, as)).status).toBe(200)
      expect(await listed()).toEqual(['only'])
      expect((await tenancy.json('DELETE', '/api/v1/resources/queues/only', undefined, as)).status).toBe(200)
      expect(await listed()).toEqual([])
      expect(await renderedAt()).toBe(first)
    } finally {
      await tenancy.close()
    }
  })

  it('leaves a listing as it is when a render landed between the staleness check and the patch', async () => {
    // The poll saw a change its row version had not, a render then stored a newer listing, and the
    // patch, locking that newer row, finds nothing changed since: it must keep every entry once.
    await push(app, [{ queue: 'slp-raced', payload: 1 }])
    await cached()
    const before = await stored()
    await app.database.sql(`select queen._stats_listing_patch('')`)
    expect((await stored()).queues).toBe(before.queues)
    expect((await stored()).version).toBe(before.version)
  })

  it('renders afresh when one change touches more queues than a patch is worth', async () => {
    await cached()
    const rendered = await stored()
    await push(app, Array.from({ length: 70 }, (_, i) => ({ queue: `slp-bulk-${String(i).padStart(2, '0')}`, payload: i })))
    const names = (await cached()).queues.map((q) => q.name)
    expect(names.filter((n) => n.startsWith('slp-bulk-'))).toHaveLength(70)
    expect((await stored()).rendered_at).not.toBe(rendered.rendered_at)
    expect((await stored()).queues).toBe(await renderedNow())
  })
})

describe('?stats=cached, compressed once per version', () => {
  const get = (encoding?: string, target: TestApp = app) =>
    target.request('/api/v1/resources/queues?stats=cached', { headers: encoding === undefined ? {} : { 'accept-encoding': encoding } })
  const decoded = async (res: Response) => JSON.parse(gunzipSync(Buffer.from(await res.arrayBuffer())).toString())

  it('sends gzip to a client that accepts it, the same listing as the plain answer', async () => {
    // Enough queues for the listing to pass the size below which it goes out plain.
    await push(app, Array.from({ length: 60 }, (_, i) => ({ queue: `sl-gz-${i}`, payload: i })))
    await app.json('POST', '/api/v1/stats/refresh')
    const plain = await get()
    expect(plain.headers.get('content-encoding')).toBeNull()
    expect(plain.headers.get('vary')).toBe('Accept-Encoding')
    const plainBody = await plain.json()

    for (const round of ['renders the compressed copy', 'reuses it']) {
      const res = await get('gzip, deflate, br')
      expect(res.status, round).toBe(200)
      expect(res.headers.get('content-encoding'), round).toBe('gzip')
      expect(res.headers.get('content-type'), round).toContain('application/json')
      const body = await decoded(res)
      expect(body.queues, round).toEqual(plainBody.queues)
      expect(body.statsAge, round).toBeGreaterThanOrEqual(plainBody.statsAge)
    }

    // A new version (a queue created) is compressed afresh, never answered from the old copy.
    await push(app, [{ queue: 'sl-gz-new', payload: 1 }])
    const names = (await decoded(await get('gzip'))).queues.map((q: Listed) => q.name)
    expect(names).toContain('sl-gz-new')
    expect(names).toEqual((await cached()).queues.map((q) => q.name))
  })

  it('stays plain for q=0, for a small listing, and where the runtime hands no compressor (Workers)', async () => {
    expect((await get('gzip;q=0')).headers.get('content-encoding')).toBeNull()
    expect((await get('identity')).headers.get('content-encoding')).toBeNull()

    const small = await testApp({ env: { QUEEN_TENANCY_HEADER: 'x-tenant' } })
    try {
      await small.json('POST', '/api/v1/push', { items: [{ queue: 'sl-one', payload: 1 }] }, { 'x-tenant': 't' })
      const res = await small.request('/api/v1/resources/queues?stats=cached', { headers: { 'accept-encoding': 'gzip', 'x-tenant': 't' } })
      expect(res.headers.get('content-encoding')).toBeNull()
      expect((await res.json()).queues.map((q: Listed) => q.name)).toEqual(['sl-one'])
    } finally {
      await small.close()
    }

    const workers = await testApp({ database: app.database, deps: { deflater: undefined } })
    try {
      const res = await get('gzip', workers)
      expect(res.headers.get('content-encoding')).toBeNull()
      expect((await res.json()).queues.length).toBeGreaterThan(60)
    } finally {
      await workers.close()
    }
  })
})
