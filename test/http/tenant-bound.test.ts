// Tenant-bound tokens (API §4.3, §4.4) and what a handler learns of the caller (§3.8): a token
// carrying JWT_TENANT_CLAIM acts only for that tenant; an unbound token may name any tenant.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { allRoutes } from '../../src/routes/index.js'
import { VERSION } from '../../src/version.js'
import { testApp, type TestApp } from '../helpers/app.js'
import { freshDatabase, type TestDatabase } from '../helpers/database.js'
import { probeRoutes } from '../helpers/probe-routes.js'
import { SECRET, bearer, token } from '../helpers/tokens.js'

let database: TestDatabase
let tenancy: TestApp
let single: TestApp
const routes = [...allRoutes(VERSION), ...probeRoutes]
beforeAll(async () => {
  database = await freshDatabase()
  const env = { JWT_ENABLED: 'true', JWT_SECRET: SECRET }
  tenancy = await testApp({ database, env: { ...env, QUEEN_TENANCY_HEADER: 'X-Queen-Tenant' }, deps: { routes } })
  single = await testApp({ database, env, deps: { routes } })
})
afterAll(async () => {
  await tenancy.close()
  await single.close()
  await database.drop()
})

const as = async (claims: Record<string, unknown>, tenant?: string) => ({
  ...bearer(await token(claims)),
  ...(tenant === undefined ? {} : { 'x-queen-tenant': tenant }),
})

describe('tenant-bound tokens', () => {
  it('pass when the header names the token tenant', async () => {
    const res = await tenancy.json('GET', '/probe/principal', undefined, await as({ sub: 'u', role: 'read-only', tenant: 'acme' }, 'acme'))
    expect(res.status).toBe(200)
    expect(res.body).toEqual({ sub: 'u', roles: ['read-only'], boundTenant: 'acme', tenant: 'acme' })
  })

  it('answer 403 tenant_forbidden when the header names another tenant', async () => {
    const res = await tenancy.json('GET', '/probe/principal', undefined, await as({ role: 'admin', tenant: 'acme' }, 'globex'))
    expect(res.status).toBe(403)
    expect(res.body).toMatchObject({ error: 'Token is bound to tenant acme', code: 'tenant_forbidden' })
  })

  it('still need the header: a binding does not stand in for it', async () => {
    const res = await tenancy.json('GET', '/probe/principal', undefined, await as({ role: 'admin', tenant: 'acme' }))
    expect(res.body.code).toBe('tenant_required')
  })

  it('are checked after the role set, so a W-only bound token on a route refusing W is 403 forbidden', async () => {
    const res = await tenancy.json('POST', '/probe/required', { a: 1 }, await as({ role: 'write-only', tenant: 'acme' }, 'globex'))
    expect(res.body.code).toBe('forbidden')
  })

  it('bind through JWT_TENANT_CLAIM, fail closed on a non-string claim, and bind to "" (refused everywhere)', async () => {
    const custom = await testApp({
      database,
      env: { JWT_ENABLED: 'true', JWT_SECRET: SECRET, QUEEN_TENANCY_HEADER: 'X-Queen-Tenant', JWT_TENANT_CLAIM: 'org' },
      deps: { routes },
    })
    try {
      expect((await custom.json('GET', '/probe/principal', undefined, await as({ role: 'admin', org: 'acme' }, 'globex'))).body.code).toBe('tenant_forbidden')
      // The default claim name means nothing once another is configured.
      expect((await custom.json('GET', '/probe/principal', undefined, await as({ role: 'admin', tenant: 'acme' }, 'globex'))).status).toBe(200)
      const numeric = await custom.json('GET', '/probe/principal', undefined, await as({ role: 'admin', org: 42 }, 'globex'))
      expect(numeric).toMatchObject({ status: 401, body: { code: 'invalid_token', error: 'Token decode error: claim org must be a string' } })
      expect((await custom.json('GET', '/probe/principal', undefined, await as({ role: 'admin', org: '' }, 'globex'))).body.code).toBe('tenant_forbidden')
    } finally {
      await custom.close()
    }
  })
})

describe('unbound tokens', () => {
  it('may name any tenant', async () => {
    for (const tenant of ['acme', 'globex']) {
      const res = await tenancy.json('GET', '/probe/principal', undefined, await as({ role: 'admin' }, tenant))
      expect(res.body).toMatchObject({ boundTenant: null, tenant })
    }
  })
})

describe('with tenancy off', () => {
  it('does not check the claim, and everything is tenant ""', async () => {
    const res = await single.json('GET', '/probe/principal', undefined, await as({ role: 'admin' }, 'globex'))
    expect(res.status).toBe(200)
    expect(res.body).toMatchObject({ boundTenant: null, tenant: '' })
  })

  // A token bound to one tenant would otherwise act on all of tenant '' (everything): the issuer
  // binds tokens, the broker has no tenancy, and that mismatch fails closed.
  it('refuses a tenant-bound token on every tenant-scoped route, and lets it reach the tenant-free ones', async () => {
    const bound = await as({ role: 'admin', tenant: 'acme' }, 'globex')
    for (const [method, path, body] of [['GET', '/probe/principal'], ['POST', '/api/v1/push', { items: [{ queue: 'q', payload: 1 }] }], ['GET', '/api/v1/resources/queues']] as const) {
      const res = await single.json(method, path, body, bound)
      expect(res.status, path).toBe(403)
      expect(res.body, path).toEqual({ error: 'Token is bound to tenant acme, but this broker has no tenancy (QUEEN_TENANCY_HEADER is unset)', code: 'tenant_forbidden' })
    }
    expect(await database.sql(`select 1 from queen.queues where name = 'q'`)).toEqual([])
    const skipAll = await testApp({ database, env: { JWT_ENABLED: 'true', JWT_SECRET: SECRET, JWT_SKIP_PATHS: '/' } })
    try {
      expect((await skipAll.json('GET', '/health', undefined, bound)).status).toBe(200)
    } finally {
      await skipAll.close()
    }
  })
})

describe('broker-wide routes', () => {
  it('refuse tenant-bound tokens even for their own tenant, with or without tenancy', async () => {
    for (const [app, tenant] of [[tenancy, 'acme'], [single, undefined]] as const) {
      const res = await app.json('POST', '/probe/broker-wide', {}, await as({ role: 'admin', tenant: 'acme' }, tenant))
      expect(res.status).toBe(403)
      expect(res.body).toMatchObject({ error: 'Tenant-bound tokens cannot change broker-wide settings', code: 'tenant_forbidden' })
    }
  })

  it('accept an unbound admin token', async () => {
    const res = await tenancy.json('POST', '/probe/broker-wide', {}, await as({ role: 'admin' }, 'acme'))
    expect(res.status).toBe(200)
  })

  // A tenant-bound admin is a tenant's admin, not the operator: the placement directory names every
  // tenant, and the process and PostgreSQL figures are every tenant's load.
  const OPERATOR_READS = [
    '/api/v1/system/placements',
    '/api/v1/analytics/system-metrics',
    '/api/v1/analytics/worker-metrics',
    '/api/v1/analytics/queue-parked-replicas',
    '/api/v1/analytics/postgres-stats',
  ]
  it('include the broker-wide reads: a tenant-bound admin gets 403 with the envelope, an unbound one 200', async () => {
    for (const path of OPERATOR_READS) {
      for (const [app, tenant] of [[tenancy, 'acme'], [single, undefined]] as const) {
        const res = await app.json('GET', path, undefined, await as({ role: 'admin', tenant: 'acme' }, tenant))
        expect(res.status, path).toBe(403)
        expect(res.body, path).toEqual({ error: 'Tenant-bound tokens cannot read broker-wide data', code: 'tenant_forbidden' })
      }
      expect((await tenancy.json('GET', path, undefined, await as({ role: 'admin' }, 'acme'))).status, path).toBe(200)
    }
  })
})

describe('the principal a handler sees (producerSub)', () => {
  it('carries the token sub with auth on, and no sub with auth off', async () => {
    const on = await single.json('GET', '/probe/principal', undefined, await as({ sub: 'producer-7', role: 'write-only' }))
    expect(on.body).toMatchObject({ sub: 'producer-7', roles: ['write-only'] })
    const off = await testApp({ database, deps: { routes } })
    try {
      const res = await off.json('GET', '/probe/principal', undefined, await as({ sub: 'producer-7', role: 'write-only' }))
      expect(res.body).toEqual({ sub: null, roles: ['admin', 'read-only', 'read-write', 'write-only'], boundTenant: null, tenant: '' })
    } finally {
      await off.close()
    }
  })
})
