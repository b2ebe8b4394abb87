// Queen 1.6's key/value store over HTTP: the seven batch operations, every reason of the closed
// taxonomy, expiry at its boundary (pinned through the procedure's clock), the single-key routes
// with ETag and expect, the console's two reads, tenancy, and parallel clients for incr and expect.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { testApp, type TestApp } from '../helpers/app.js'

let app: TestApp
const A = { 'x-queen-tenant': 'acme' }
const B = { 'x-queen-tenant': 'globex' }
beforeAll(async () => {
  app = await testApp({ env: { QUEEN_TENANCY_HEADER: 'X-Queen-Tenant' } })
})
afterAll(() => app.close())

const kv = (operations: unknown[], headers = A) => app.json('POST', '/api/v1/kv', { operations }, headers)
const one = async (op: Record<string, unknown>, headers = A) => {
  const res = await kv([op], headers)
  expect(res.status, JSON.stringify(res.body)).toBe(200)
  return res.body.results[0]
}

describe('POST /api/v1/kv', () => {
  it('puts, gets, and answers an absent key 200 with found:false', async () => {
    const put = await one({ op: 'put', ns: 'orders', key: 'o/1', value: { state: 'new' }, ttlSeconds: 60 })
    expect(put).toMatchObject({ index: 0, op: 'put', applied: true, key: 'o/1', value: { state: 'new' }, version: expect.any(Number) })
    const got = await one({ op: 'get', ns: 'orders', key: 'o/1' })
    expect(got).toMatchObject({ index: 0, op: 'get', found: true, key: 'o/1', value: { state: 'new' }, version: put.version })
    expect(got.expiresAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/)
    expect(await one({ op: 'get', ns: 'orders', key: 'nope' })).toEqual({ index: 0, op: 'get', found: false, key: 'nope' })
    // A JSON null is a value, not an absence.
    await one({ op: 'put', ns: 'orders', key: 'null', value: null, forever: true })
    expect(await one({ op: 'get', ns: 'orders', key: 'null' })).toMatchObject({ found: true, value: null, expiresAt: null })
  })

  it('answers a batch index-aligned, getMany with explicit missing, getPrefix paged by an exclusive cursor', async () => {
    const res = await kv([
      { op: 'put', ns: 'p', key: 'a:1', value: 1, forever: true },
      { op: 'put', ns: 'p', key: 'a:2', value: 2, forever: true },
      { op: 'put', ns: 'p', key: 'a:3', value: 3, forever: true },
      { op: 'put', ns: 'p', key: 'b:1', value: 4, forever: true },
      { op: 'getMany', ns: 'p', keys: ['a:1', 'zz', 'b:1'] },
      { op: 'getPrefix', ns: 'p', prefix: 'a:', limit: 2 },
    ])
    expect(res.body.results.map((r: { index: number; op: string }) => [r.index, r.op])).toEqual([[0, 'put'], [1, 'put'], [2, 'put'], [3, 'put'], [4, 'getMany'], [5, 'getPrefix']])
    const many = res.body.results[4]
    expect(many.rows.map((r: { key: string }) => r.key)).toEqual(['a:1', 'b:1'])
    expect(many).toMatchObject({ missing: ['zz'], truncated: false })
    expect(res.body.results[5]).toMatchObject({ truncated: true, nextAfter: 'a:2' })
    expect(res.body.results[5].rows.map((r: { key: string }) => r.key)).toEqual(['a:1', 'a:2'])
    const page2 = await one({ op: 'getPrefix', ns: 'p', prefix: 'a:', after: 'a:2', keysOnly: true })
    expect(page2).toMatchObject({ truncated: false, nextAfter: null })
    expect(page2.rows).toEqual([{ key: 'a:3', version: expect.any(Number), expiresAt: null, updatedAt: expect.any(String) }])
  })

  it('putIfAbsent and expect answer every reason of the closed set, the loser getting the current row', async () => {
    const first = await one({ op: 'putIfAbsent', ns: 'gate', key: 'charge:1', value: { id: 'ch_1' }, ttlSeconds: 600 })
    expect(first).toMatchObject({ op: 'put', applied: true })
    const lost = await one({ op: 'putIfAbsent', ns: 'gate', key: 'charge:1', value: { id: 'ch_2' }, ttlSeconds: 600 })
    expect(lost).toEqual({ index: 0, op: 'put', applied: false, reason: 'exists', key: 'charge:1', value: { id: 'ch_1' }, version: first.version })
    const stale = await one({ op: 'put', ns: 'gate', key: 'charge:1', value: 2, ttlSeconds: 60, expect: first.version + 1000 })
    expect(stale).toMatchObject({ applied: false, reason: 'version', value: { id: 'ch_1' }, version: first.version })
    const fenced = await one({ op: 'put', ns: 'gate', key: 'charge:1', value: 3, ttlSeconds: 60, expect: first.version })
    expect(fenced).toMatchObject({ applied: true, value: 3 })
    expect(fenced.version).toBeGreaterThan(first.version)
    expect(await one({ op: 'put', ns: 'gate', key: 'never', value: 1, ttlSeconds: 60, expect: 5 })).toMatchObject({ applied: false, reason: 'absent' })
    expect(await one({ op: 'get', ns: 'gate', key: 'never' })).toMatchObject({ found: false })
    expect(await one({ op: 'delete', ns: 'gate', key: 'charge:1', expect: first.version })).toMatchObject({ applied: false, reason: 'version' })
    expect(await one({ op: 'delete', ns: 'gate', key: 'charge:1', expect: fenced.version })).toMatchObject({ applied: true, value: null, version: fenced.version })
    expect(await one({ op: 'delete', ns: 'gate', key: 'charge:1' })).toMatchObject({ applied: false, reason: 'absent' })
    await one({ op: 'put', ns: 'gate', key: 'obj', value: { a: 1 }, forever: true })
    expect(await one({ op: 'incr', ns: 'gate', key: 'obj', delta: 1, ttlSeconds: 60 })).toMatchObject({ applied: false, reason: 'type', value: { a: 1 } })
  })

  it('incr creates at delta, keeps a live row\'s expiry, and refuses to cross max (applied is the admission)', async () => {
    const created = await one({ op: 'incr', ns: 'rate', key: 'acme', delta: 2, max: 3, ttlSeconds: 3600 })
    expect(created).toMatchObject({ applied: true, value: 2 })
    const { expiresAt } = await one({ op: 'get', ns: 'rate', key: 'acme' })
    expect(await one({ op: 'incr', ns: 'rate', key: 'acme', delta: 1, max: 3, ttlSeconds: 5 })).toMatchObject({ applied: true, value: 3 })
    expect((await one({ op: 'get', ns: 'rate', key: 'acme' })).expiresAt).toBe(expiresAt)
    expect(await one({ op: 'incr', ns: 'rate', key: 'acme', delta: 1, max: 3, ttlSeconds: 5 })).toMatchObject({ applied: false, reason: 'limit', value: 3 })
    expect(await one({ op: 'incr', ns: 'rate', key: 'fresh', delta: 5, max: 3, ttlSeconds: 5 })).toMatchObject({ applied: false, reason: 'limit', value: null })
    expect(await one({ op: 'get', ns: 'rate', key: 'fresh' })).toMatchObject({ found: false })
  })

  it('refuses malformed operations 400 naming the field, and writes nothing of the batch', async () => {
    const cases: [unknown, RegExp][] = [
      [{ op: 'put', ns: 'x', key: 'k', value: 1 }, /kv_expiry_not_specified/],
      [{ op: 'put', ns: 'x', key: 'k', value: 1, ttlSeconds: 5, forever: true }, /kv_expiry_not_specified/],
      [{ op: 'put', ns: 'x', key: 'k', value: 1, ttlSeconds: 1.5 }, /ttlSeconds/],
      [{ op: 'put', ns: 'x', key: 'k', value: 1, ttlSeconds: 5, ttlMillis: 5 }, /ttlMillis/],
      [{ op: 'put', ns: 'x', key: 'k', value: 1, ttlSeconds: 5, tenant: 'globex' }, /tenant/],
      [{ op: 'put', ns: 'x', key: 'k', value: 1, ttlSeconds: 5, expect: null }, /expect/],
      [{ op: 'putIfAbsent', ns: 'x', key: 'k', value: 1, ttlSeconds: 5, expect: 3 }, /expect/],
      [{ op: 'incr', ns: 'x', key: 'k', delta: 1, ttlSeconds: 5, expect: 3 }, /expect/],
      [{ op: 'getPrefix', ns: 'x', prefix: '' }, /kv_prefix_required/],
      [{ op: 'get', key: 'k' }, /ns/],
      [{ op: 'frobnicate', ns: 'x', key: 'k' }, /unknown op/],
      [{ op: 'get', ns: 'a/b', key: 'k' }, /ns/],
    ]
    for (const [op, message] of cases) {
      const res = await kv([{ op: 'put', ns: 'x', key: 'first', value: 1, forever: true }, op])
      expect(res.status, JSON.stringify(op)).toBe(400)
      expect(res.body.code).toBe('kv_bad_request')
      expect(res.body.error).toMatch(message)
      expect(res.body.error).toMatch(/operations\[1\]/)
    }
    expect(await one({ op: 'get', ns: 'x', key: 'first' })).toMatchObject({ found: false })
    const twice = await kv([{ op: 'put', ns: 'x', key: 'k', value: 1, forever: true }, { op: 'delete', ns: 'x', key: 'k' }])
    expect(twice).toMatchObject({ status: 400, body: { code: 'kv_bad_request' } })
    expect(await app.json('POST', '/api/v1/kv', { operations: [], extra: 1 }, A)).toMatchObject({ status: 400, body: { error: expect.stringMatching(/extra/) } })
  })

  it('refuses a value or key over its ceiling 413 and a batch over the operation ceiling 400', async () => {
    const big = 'x'.repeat(65_537)
    expect(await kv([{ op: 'put', ns: 'x', key: 'k', value: big, forever: true }])).toMatchObject({ status: 413, body: { code: 'payload_too_large' } })
    expect(await kv([{ op: 'get', ns: 'x', key: 'k'.repeat(513) }])).toMatchObject({ status: 413 })
    const many = Array.from({ length: 257 }, (_, i) => ({ op: 'get', ns: 'x', key: `k${i}` }))
    expect(await kv(many)).toMatchObject({ status: 400, body: { error: expect.stringMatching(/256 operations/) } })
  })

  it('cuts reads at the byte ceiling with truncated, never calling the unread keys missing', async () => {
    const value = 'v'.repeat(60_000)
    for (let i = 0; i < 80; i += 10) {
      await kv(Array.from({ length: 10 }, (_, j) => ({ op: 'put', ns: 'big', key: `k${String(i + j).padStart(2, '0')}`, value, forever: true })))
    }
    const keys = Array.from({ length: 80 }, (_, i) => `k${String(i).padStart(2, '0')}`)
    const many = await one({ op: 'getMany', ns: 'big', keys })
    expect(many.truncated).toBe(true)
    expect(many.missing).toEqual([])
    expect(many.rows.length).toBeGreaterThan(60)
    expect(many.rows.length).toBeLessThan(80)
  })

  it('keeps tenants apart', async () => {
    await one({ op: 'put', ns: 'iso', key: 'k', value: 'acme', forever: true }, A)
    expect(await one({ op: 'get', ns: 'iso', key: 'k' }, B)).toMatchObject({ found: false })
    expect(await one({ op: 'delete', ns: 'iso', key: 'k' }, B)).toMatchObject({ applied: false })
    expect(await one({ op: 'get', ns: 'iso', key: 'k' }, A)).toMatchObject({ found: true, value: 'acme' })
  })

  it('answers a lost required precondition 200 ok:false and writes nothing of the batch', async () => {
    await one({ op: 'put', ns: 'req', key: 'marker', value: 'first', forever: true })
    const res = await kv([
      { op: 'put', ns: 'req', key: 'side', value: 1, forever: true },
      { op: 'putIfAbsent', ns: 'req', key: 'marker', value: 'second', forever: true, required: true },
    ])
    expect(res.status).toBe(200)
    expect(res.body).toEqual({ ok: false, reason: 'kv_precondition', failedIndex: 1, kvReason: 'exists', value: 'first', version: expect.any(Number) })
    expect(await one({ op: 'get', ns: 'req', key: 'side' })).toMatchObject({ found: false })
  })
})

describe('expiry', () => {
  // The procedure's clock is pinned through kv_apply_v1's p_now: a row is served up to, and never
  // at or after, its expiresAt.
  const at = (ms: number) => new Date(Date.UTC(2030, 0, 1) + ms)
  const call = (ops: unknown[], now: Date) => app.db.call('kv_apply_v1', { tenant: 'clock', ops, limits: { maxOps: 256, maxKeys: 1024, maxValueBytes: 65536, maxKeyBytes: 512, maxReadBytes: 4194304 }, now })

  it('serves a key until its expiry and never at or after it, in every read; expect:0 then wins', async () => {
    await call([{ op: 'put', ns: 'ttl', key: 'k', value: 1, ttlSeconds: 10 }], at(0))
    const reads = [{ op: 'get', ns: 'ttl', key: 'k' }, { op: 'getMany', ns: 'ttl', keys: ['k'] }, { op: 'getPrefix', ns: 'ttl', prefix: 'k' }]
    const live = (await call(reads, at(9_999))) as { results: any[] }
    expect(live.results[0].found).toBe(true)
    expect(live.results[1].rows).toHaveLength(1)
    expect(live.results[2].rows).toHaveLength(1)
    const dead = (await call(reads, at(10_000))) as { results: any[] }
    expect(dead.results[0]).toMatchObject({ found: false })
    expect(dead.results[1]).toMatchObject({ rows: [], missing: ['k'] })
    expect(dead.results[2].rows).toEqual([])
    const again = (await call([{ op: 'putIfAbsent', ns: 'ttl', key: 'k', value: 2, ttlSeconds: 10 }], at(10_000))) as { results: any[] }
    expect(again.results[0]).toMatchObject({ applied: true, value: 2 })
  })

  it('counts an expired counter as zero with a new window, and the sweep deletes expired rows only', async () => {
    await call([{ op: 'incr', ns: 'win', key: 'c', delta: 5, ttlSeconds: 10 }], at(0))
    const next = (await call([{ op: 'incr', ns: 'win', key: 'c', delta: 1, ttlSeconds: 10 }], at(10_000))) as { results: any[] }
    expect(next.results[0]).toMatchObject({ applied: true, value: 1 })
    await call([{ op: 'put', ns: 'win', key: 'old', value: 1, ttlSeconds: 1 }, { op: 'put', ns: 'win', key: 'forever', value: 1, forever: true }], at(0))
    const swept = await app.db.call('kv_sweep_step_v1', { limit: 1000, now: at(5_000) })
    expect(swept.processed).toBeGreaterThanOrEqual(1)
    const rows = await app.database.sql<{ key: string }>(`select key from queen.kv_entries where tenant_id = 'clock' and ns = 'win' order by key`)
    expect(rows.map((r) => r.key)).toEqual(['c', 'forever'])
  })
})

describe('single-key routes', () => {
  const path = (ns: string, key: string) => `/api/v1/kv/${ns}/${key}`

  it('reads with an ETag, writes with expect, deletes, and misses with 200 found:false', async () => {
    const put = await app.json('PUT', path('doc', 'order/9f1/items'), { value: { n: 1 }, ttlSeconds: 60 }, A)
    expect(put).toMatchObject({ status: 200, body: { applied: true, key: 'order/9f1/items' } })
    expect(put.body.op).toBeUndefined()
    const got = await app.json('GET', path('doc', 'order/9f1/items'), undefined, A)
    expect(got.body).toMatchObject({ found: true, value: { n: 1 }, version: put.body.version })
    expect(got.headers.get('etag')).toBe(`"${put.body.version}"`)
    // A literal slash in a key travels as %2F.
    await app.json('PUT', path('doc', 'a%2Fb'), { value: 'slash', forever: true }, A)
    expect((await app.json('POST', '/api/v1/kv', { operations: [{ op: 'get', ns: 'doc', key: 'a/b' }] }, A)).body.results[0]).toMatchObject({ found: true, value: 'slash' })
    const lost = await app.json('PUT', path('doc', 'order/9f1/items'), { value: 2, ttlSeconds: 60, expect: put.body.version + 1000 }, A)
    expect(lost.body).toMatchObject({ applied: false, reason: 'version' })
    expect((await app.json('DELETE', path('doc', 'order/9f1/items'), { expect: put.body.version }, A)).body).toMatchObject({ applied: true })
    const gone = await app.json('GET', path('doc', 'order/9f1/items'), undefined, A)
    expect(gone).toMatchObject({ status: 200, body: { found: false } })
    expect(gone.headers.get('etag')).toBeNull()
  })

  it('refuses a query string and a body naming what the path names', async () => {
    expect(await app.json('GET', `${path('doc', 'k')}?prefix=a`, undefined, A)).toMatchObject({ status: 400, body: { code: 'kv_no_query_string' } })
    expect(await app.json('PUT', path('doc', 'k'), { value: 1, forever: true, key: 'other' }, A)).toMatchObject({ status: 400, body: { code: 'kv_bad_request' } })
    expect(await app.json('PUT', path('doc', 'k'), { value: 1 }, A)).toMatchObject({ status: 400, body: { error: expect.stringMatching(/kv_expiry_not_specified/) } })
  })

  it('no longer serves the one-segment pointer routes (the pointer lives in namespace queen.sink)', async () => {
    for (const method of ['PUT', 'GET', 'DELETE']) {
      const res = await app.json(method, '/api/v1/kv/s3%3Alake%3Aq%3Acommitted', method === 'PUT' ? { value: { windowEnd: 'x' } } : undefined, A)
      expect(res.status, method).toBe(404)
      expect(res.body.code, method).toBe('not_found')
    }
  })
})

describe('console reads', () => {
  it('lists namespaces with exact counts and pages one namespace, expired rows labelled on request', async () => {
    await kv([{ op: 'put', ns: 'console', key: 'a', value: 1, forever: true }, { op: 'put', ns: 'console', key: 'b', value: 2, forever: true }], B)
    await app.db.call('kv_apply_v1', { tenant: 'globex', ops: [{ op: 'put', ns: 'console', key: 'c', value: 3, ttlSeconds: 1 }], limits: { maxOps: 1, maxKeys: 1, maxValueBytes: 100, maxKeyBytes: 10, maxReadBytes: 100 }, now: new Date(Date.UTC(2020, 0, 1)) })
    const names = await app.json('GET', '/api/v1/resources/kv/namespaces', undefined, B)
    expect(names.body.namespaces).toContainEqual({ namespace: 'console', keys: 3 })
    const live = await app.json('POST', '/api/v1/resources/kv/list', { namespace: 'console', limit: 1 }, B)
    expect(live.body).toMatchObject({ truncated: true, nextAfter: 'a', rows: [{ key: 'a', value: 1, expired: false }] })
    const all = await app.json('POST', '/api/v1/resources/kv/list', { namespace: 'console', after: 'a', includeExpired: true }, B)
    expect(all.body.rows.map((r: { key: string; expired: boolean }) => [r.key, r.expired])).toEqual([['b', false], ['c', true]])
    expect(all.body.truncated).toBe(false)
    expect(await app.json('POST', '/api/v1/resources/kv/list?x=1', { namespace: 'console' }, B)).toMatchObject({ status: 400, body: { code: 'kv_no_query_string' } })
    expect(await app.json('GET', '/api/v1/resources/kv/namespaces?x=1', undefined, B)).toMatchObject({ status: 400 })
  })
})

describe('parallel clients', () => {
  it('counts N concurrent increments exactly and lets exactly one writer win each version', async () => {
    const N = 40
    await Promise.all(Array.from({ length: N }, () => one({ op: 'incr', ns: 'par', key: 'hits', delta: 1, forever: true })))
    expect(await one({ op: 'get', ns: 'par', key: 'hits' })).toMatchObject({ value: N })

    const base = await one({ op: 'put', ns: 'par', key: 'cas', value: 0, forever: true })
    const tries = await Promise.all(Array.from({ length: N }, (_, i) => one({ op: 'put', ns: 'par', key: 'cas', value: i, forever: true, expect: base.version })))
    expect(tries.filter((r) => r.applied)).toHaveLength(1)
    expect(new Set(tries.filter((r) => !r.applied).map((r) => r.reason))).toEqual(new Set(['version']))
    const gates = await Promise.all(Array.from({ length: N }, () => one({ op: 'putIfAbsent', ns: 'par', key: 'once', value: 1, forever: true })))
    expect(gates.filter((r) => r.applied)).toHaveLength(1)
  })
})

describe('bodies PostgreSQL could not store', () => {
  it('refuses an unpaired surrogate 400 naming where it is, on the batch and single-key routes alike', async () => {
    const raw = (method: string, path: string, body: string) => app.request(path, { method, headers: { 'content-type': 'application/json', ...A }, body })
    const batch = await raw('POST', '/api/v1/kv', '{"operations":[{"op":"get","ns":"a","key":"\\ud800"}]}')
    expect(batch.status).toBe(400)
    expect((await batch.json()).error).toMatch(/operations\[0\]\.key must not contain a lone UTF-16 surrogate/)
    expect((await raw('PUT', '/api/v1/kv/a/pointer', '{"value":"\\udfff","forever":true}')).status).toBe(400)
    expect((await raw('POST', '/api/v1/push', '{"items":[{"queue":"q","payload":"\\ud800"}]}')).status).toBe(400)
    // A well-formed pair spelled as escapes is an ordinary character.
    expect((await raw('PUT', '/api/v1/kv/emoji/k', '{"value":"\\ud83d\\ude00","forever":true}')).status).toBe(200)
    expect(await one({ op: 'get', ns: 'emoji', key: 'k' })).toMatchObject({ value: '😀' })
  })

  it('refuses an expect beyond a bigint as a bad request', async () => {
    expect(await kv([{ op: 'put', ns: 'x', key: 'k', value: 1, forever: true, expect: 6.2e109 }])).toMatchObject({ status: 400, body: { code: 'kv_bad_request' } })
  })
})

describe('timers across tenants', () => {
  it("keeps one tenant's timers out of another's reach: peek misses, cancel answers absent", async () => {
    const op = { op: 'schedule', queue: 'iso.q', timerKey: 'k', delayMs: 60_000, txn: 'iso-1', payload: 'e30=' }
    expect((await app.json('POST', '/api/v1/timers', { operations: [op] }, A)).body.results[0].status).toBe('scheduled')
    expect((await app.json('GET', '/api/v1/timers/iso.q/k', undefined, B)).body).toMatchObject({ found: false })
    expect((await app.json('GET', '/api/v1/timers/iso.q', undefined, B)).body.rows).toEqual([])
    expect((await app.json('DELETE', '/api/v1/timers/iso.q/k', undefined, B)).body).toMatchObject({ ok: false, status: 'absent' })
    expect((await app.json('GET', '/api/v1/timers/iso.q/k', undefined, A)).body).toMatchObject({ found: true })
  })
})
