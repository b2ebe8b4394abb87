// Key/value pointers (API 8 addenda, D2, D16): PUT/GET/DELETE per tenant, the 400-character key
// limit, bad bodies answered 400, and the role sets (PUT read-write, GET read-only, DELETE admin).
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { testApp, type TestApp } from '../helpers/app.js'
import { SECRET, bearer, token } from '../helpers/tokens.js'

let app: TestApp
const A = { 'x-queen-tenant': 'acme' }
const B = { 'x-queen-tenant': 'globex' }
beforeAll(async () => {
  app = await testApp({ env: { QUEEN_TENANCY_HEADER: 'X-Queen-Tenant' } })
})
afterAll(() => app.close())

const path = (key: string) => `/api/v1/kv/${encodeURIComponent(key)}`

describe('kv routes', () => {
  it('stores, reads back, replaces and deletes a value', async () => {
    const key = 's3:lake:orders:committed'
    const put = await app.json('PUT', path(key), { value: { windowEnd: '2030-01-01T00:00:00.000Z' } }, A)
    expect(put.status).toBe(200)
    expect(put.body).toMatchObject({ key, value: { windowEnd: '2030-01-01T00:00:00.000Z' } })
    expect(put.body.updatedAt).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/)
    expect((await app.json('GET', path(key), undefined, A)).body).toEqual(put.body)

    const replaced = await app.json('PUT', path(key), { value: [1, 'two', null] }, A)
    expect(replaced.body.value).toEqual([1, 'two', null])
    expect((await app.json('GET', path(key), undefined, A)).body.value).toEqual([1, 'two', null])

    expect(await app.json('DELETE', path(key), undefined, A)).toMatchObject({ status: 200, body: { deleted: true } })
    expect(await app.json('DELETE', path(key), undefined, A)).toMatchObject({ status: 200, body: { deleted: false } })
    const gone = await app.json('GET', path(key), undefined, A)
    expect(gone.status).toBe(404)
    expect(gone.body).toMatchObject({ error: 'Key not found', code: 'key_not_found' })
  })

  it('accepts any JSON value, null and scalars included', async () => {
    for (const value of [null, 0, 'text', true, { nested: { deep: [1] } }]) {
      const put = await app.json('PUT', path('any'), { value }, A)
      expect(put.status, JSON.stringify(value)).toBe(200)
      expect((await app.json('GET', path('any'), undefined, A)).body.value).toEqual(value)
    }
  })

  it('takes a key with a slash or a percent sign when the client percent-encodes it', async () => {
    // Queue names may hold '/', so a sink pointer key may too: one path segment, encoded.
    for (const key of ['s3:lake:a/b:committed', '100%']) {
      expect((await app.json('PUT', path(key), { value: key }, A)).body.key).toBe(key)
      expect((await app.json('GET', path(key), undefined, A)).body.value).toBe(key)
    }
  })

  it("keeps tenants apart: another tenant's key is absent, and the same key holds two values", async () => {
    await app.json('PUT', path('shared'), { value: 'acme' }, A)
    expect((await app.json('GET', path('shared'), undefined, B)).status).toBe(404)
    expect((await app.json('DELETE', path('shared'), undefined, B)).body).toEqual({ deleted: false })
    await app.json('PUT', path('shared'), { value: 'globex' }, B)
    expect((await app.json('GET', path('shared'), undefined, A)).body.value).toBe('acme')
    expect((await app.json('GET', path('shared'), undefined, B)).body.value).toBe('globex')
    const [row] = await app.database.sql<{ n: number }>(`select count(*)::int as n from queen.kv where key = 'shared'`)
    expect(row!.n).toBe(2)
  })

  it('limits keys to 400 characters, counted as characters rather than bytes', async () => {
    const wide = 'é'.repeat(400) // 800 bytes in UTF-8
    expect((await app.json('PUT', path(wide), { value: 1 }, A)).status).toBe(200)
    expect((await app.json('GET', path(wide), undefined, A)).body.key).toBe(wide)
    for (const method of ['PUT', 'GET', 'DELETE']) {
      const res = await app.json(method, path('k'.repeat(401)), method === 'PUT' ? { value: 1 } : undefined, A)
      expect(res.status, method).toBe(400)
      expect(res.body.code, method).toBe('invalid_request')
      expect(res.body.error, method).toMatch(/key/)
    }
    const [row] = await app.database.sql<{ n: number }>(`select count(*)::int as n from queen.kv where char_length(key) > 400`)
    expect(row!.n).toBe(0)
  })

  it('answers bad bodies and a U+0000 key with 400, writing nothing', async () => {
    const cases: [string, string][] = [
      ['', 'invalid_json'],
      ['{"value":', 'invalid_json'],
      ['[1]', 'invalid_request'],
      ['"text"', 'invalid_request'],
      ['{}', 'invalid_request'],
      ['{"other":1}', 'invalid_request'],
      ['{"value":"a\\u0000b"}', 'invalid_request'],
    ]
    for (const [body, code] of cases) {
      const res = await app.request(path('bad'), { method: 'PUT', headers: { 'content-type': 'application/json', ...A }, body })
      expect(res.status, body).toBe(400)
      expect((await res.json()).code, body).toBe(code)
    }
    const nul = await app.json('PUT', path('a\u0000b'), { value: 1 }, A)
    expect(nul.status).toBe(400)
    const [row] = await app.database.sql<{ n: number }>(`select count(*)::int as n from queen.kv where key in ('bad', 'a')`)
    expect(row!.n).toBe(0)
  })

  it('requires the tenant header when tenancy is on', async () => {
    expect((await app.json('GET', path('x'))).body.code).toBe('tenant_required')
  })
})

describe('kv role sets', () => {
  let authed: TestApp
  beforeAll(async () => {
    authed = await testApp({ database: app.database, env: { JWT_ENABLED: 'true', JWT_SECRET: SECRET } })
  })
  afterAll(() => authed.close())

  it('lets read-write write, read-only read and only admin delete', async () => {
    const as = async (role: string) => bearer(await token({ role }))
    expect((await authed.json('PUT', path('roles'), { value: 1 }, await as('read-only'))).status).toBe(403)
    expect((await authed.json('PUT', path('roles'), { value: 1 }, await as('write-only'))).status).toBe(403)
    expect((await authed.json('PUT', path('roles'), { value: 1 }, await as('read-write'))).status).toBe(200)
    expect((await authed.json('GET', path('roles'), undefined, await as('read-only'))).body.value).toBe(1)
    expect((await authed.json('DELETE', path('roles'), undefined, await as('read-write'))).status).toBe(403)
    expect((await authed.json('DELETE', path('roles'), undefined, await as('admin'))).body).toEqual({ deleted: true })
  })
})
