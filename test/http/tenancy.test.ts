import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { allRoutes } from '../../src/routes/index.js'
import { VERSION } from '../../src/version.js'
import { testApp, type TestApp } from '../helpers/app.js'
import { probeRoutes } from '../helpers/probe-routes.js'

let app: TestApp
beforeAll(async () => {
  app = await testApp({ env: { QUEEN_TENANCY_HEADER: 'X-Queen-Tenant' }, deps: { routes: [...allRoutes(VERSION), ...probeRoutes] } })
})
afterAll(() => app.close())

describe('tenancy header', () => {
  it('requires the header on every tenant-scoped route', async () => {
    const res = await app.json('POST', '/probe/required', { a: 1 })
    expect(res.status).toBe(400)
    expect(res.body).toEqual({ error: 'missing tenant header X-Queen-Tenant', code: 'tenant_required' })
  })

  it('treats an empty header as missing', async () => {
    const res = await app.json('POST', '/probe/required', { a: 1 }, { 'x-queen-tenant': '' })
    expect(res.body.code).toBe('tenant_required')
  })

  it('refuses a malformed tenant', async () => {
    for (const tenant of ['has space', 'a/b', 'x'.repeat(129)]) {
      const res = await app.json('POST', '/probe/required', { a: 1 }, { 'x-queen-tenant': tenant })
      expect(res.status, tenant).toBe(400)
      expect(res.body.code, tenant).toBe('invalid_tenant')
    }
  })

  it('hands the tenant to the handler, matching the header name case-insensitively', async () => {
    const res = await app.json('POST', '/probe/required', { a: 1 }, { 'X-QUEEN-TENANT': 'acme.prod_1' })
    expect(res.status).toBe(200)
    expect(res.body).toEqual({ body: { a: 1 }, tenant: 'acme.prod_1' })
  })

  it('checks the tenant before parsing the body', async () => {
    const res = await app.json('POST', '/probe/required', '{broken')
    expect(res.body.code).toBe('tenant_required')
  })

  it('leaves /health tenant-free', async () => {
    expect((await app.json('GET', '/health')).status).toBe(200)
  })

  it('lists the tenancy header among the CORS allowed headers', async () => {
    // CORS is off unless CORS_ORIGINS is set (test/http/cors.test.ts).
    const open = await testApp({ database: app.database, env: { QUEEN_TENANCY_HEADER: 'X-Queen-Tenant', CORS_ORIGINS: '*' } })
    try {
      const res = await open.request('/x', { method: 'OPTIONS' })
      expect(res.headers.get('access-control-allow-headers')).toBe('Content-Type, Authorization, X-Queen-Tenant')
    } finally {
      await open.close()
    }
  })
})

describe('tenancy off', () => {
  it('never reads the header and uses tenant ""', async () => {
    const plain = await testApp({ database: app.database, deps: { routes: probeRoutes } })
    try {
      const res = await plain.json('POST', '/probe/required', { a: 1 }, { 'x-queen-tenant': 'acme' })
      expect(res.body.tenant).toBe('')
    } finally {
      await plain.close()
    }
  })
})
