// JWT verification through the whole request chain (API §3.2, §3.5): which tokens pass, and the
// exact 401 each refusal answers. Keys are generated and tokens signed inside the test.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ConfigError, loadConfig } from '../../src/config.js'
import { loadStaticKeys } from '../../src/http/jwt-keys.js'
import { createLogger } from '../../src/log.js'
import { allRoutes } from '../../src/routes/index.js'
import { VERSION } from '../../src/version.js'
import { testApp, type TestApp, type TestAppOptions } from '../helpers/app.js'
import { freshDatabase, type TestDatabase } from '../helpers/database.js'
import { probeRoutes } from '../helpers/probe-routes.js'
import { SECRET, bearer, keyPair, nowSeconds, token, unsigned, type KeyPair } from '../helpers/tokens.js'

let database: TestDatabase
const apps: TestApp[] = []
const routes = [...allRoutes(VERSION), ...probeRoutes]

async function broker(env: Record<string, string>, deps: TestAppOptions['deps'] = {}): Promise<TestApp> {
  const app = await testApp({ database, env: { JWT_ENABLED: 'true', ...env }, deps: { routes, ...deps } })
  apps.push(app)
  return app
}

let hs: TestApp
let rsa: KeyPair
let ed: KeyPair
beforeAll(async () => {
  database = await freshDatabase()
  hs = await broker({ JWT_SECRET: SECRET })
  ;[rsa, ed] = await Promise.all([keyPair('RS256'), keyPair('EdDSA')])
})
afterAll(async () => {
  await Promise.all(apps.map((a) => a.close()))
  await database.drop()
})

const whoami = (app: TestApp, headers: Record<string, string> = {}) => app.json('GET', '/probe/principal', undefined, headers)

async function refused(app: TestApp, jwt: string, error: string | RegExp) {
  const res = await whoami(app, bearer(jwt))
  expect(res.status).toBe(401)
  expect(res.body.code).toBe('invalid_token')
  if (typeof error === 'string') expect(res.body.error).toBe(error)
  else expect(res.body.error).toMatch(error)
  expect(JSON.stringify(res.body)).not.toContain(jwt)
}

describe('HS256', () => {
  it('accepts a valid token and hands its subject and roles to the handler', async () => {
    const res = await whoami(hs, bearer(await token({ sub: 'svc-a', role: 'read-write' })))
    expect(res.status).toBe(200)
    expect(res.body).toEqual({ sub: 'svc-a', roles: ['read-write'], boundTenant: null, tenant: '' })
  })

  it('answers 401 unauthenticated with WWW-Authenticate: Bearer when no token is sent', async () => {
    for (const headers of [{}, { authorization: '' }, { authorization: 'Bearer' }, { authorization: 'Bearer   ' }] as Record<string, string>[]) {
      const res = await whoami(hs, headers)
      expect(res.status).toBe(401)
      expect(res.body).toMatchObject({ error: 'Authentication required', code: 'unauthenticated' })
      expect(res.headers.get('www-authenticate')).toBe('Bearer')
    }
  })

  it('takes the Bearer prefix in any case, and a bare token', async () => {
    const jwt = await token({ sub: 's', role: 'admin' })
    for (const authorization of [`Bearer ${jwt}`, `bearer ${jwt}`, `BEARER  ${jwt}`, jwt]) {
      expect((await whoami(hs, { authorization })).status, authorization.slice(0, 7)).toBe(200)
    }
    await refused(hs, `Basic ${jwt}`, 'Token decode error: Authorization is not a Bearer token')
  })

  it('never accepts alg none', async () => {
    await refused(hs, unsigned({ sub: 's', role: 'admin' }), 'Token uses none, expected HS256')
  })

  it('refuses another algorithm than the configured one', async () => {
    await refused(hs, await token({ role: 'admin' }, { alg: 'RS256', key: rsa.privateKey }), 'Token uses RS256, expected HS256')
    await refused(hs, await token({ role: 'admin' }, { alg: 'HS512', key: new TextEncoder().encode(SECRET) }), 'Token uses HS512, expected HS256')
  })

  it('refuses a bad signature', async () => {
    await refused(hs, await token({ role: 'admin' }, { key: new TextEncoder().encode('another-secret-another-secret-another!!') }), 'Invalid token signature')
    const jwt = await token({ role: 'admin' })
    const [h, , s] = jwt.split('.')
    const forged = Buffer.from(JSON.stringify({ role: 'admin', sub: 'mallory', exp: nowSeconds() + 60 })).toString('base64url')
    await refused(hs, `${h}.${forged}.${s}`, 'Invalid token signature')
  })

  it('refuses what does not decode', async () => {
    await refused(hs, 'abc', /^Token decode error: /)
    await refused(hs, 'a.b.c', /^Token decode error: /)
  })

  it('never writes the token to the log', async () => {
    const lines: string[] = []
    const logged = await broker({ JWT_SECRET: SECRET, LOG_LEVEL: 'debug' }, { log: createLogger('debug', (l) => lines.push(l)) })
    const good = await token({ sub: 's', role: 'admin' })
    const bad = await token({ role: 'admin' }, { key: new TextEncoder().encode('x'.repeat(40)) })
    await whoami(logged, bearer(good))
    await whoami(logged, bearer(bad))
    expect(lines.length).toBeGreaterThan(0)
    for (const part of [...good.split('.'), ...bad.split('.')]) expect(lines.join('\n')).not.toContain(part)
  })
})

describe('order of checks', () => {
  let tenancy: TestApp
  beforeAll(async () => {
    tenancy = await broker({ JWT_SECRET: SECRET, QUEEN_TENANCY_HEADER: 'X-Queen-Tenant', MAX_BODY_BYTES: '1024' })
  })

  it('answers OPTIONS 204 and unknown routes 404 without asking for a token', async () => {
    expect((await tenancy.request('/probe/principal', { method: 'OPTIONS' })).status).toBe(204)
    expect(await tenancy.json('GET', '/api/v1/nope')).toMatchObject({ status: 404, body: { error: 'Not found' } })
  })

  it('refuses an oversized body (413) before authentication, and authentication (401) before the tenant header', async () => {
    const body = JSON.stringify({ pad: 'x'.repeat(2048) })
    // app.request() sends no Content-Length by itself; a client over a socket does.
    const big = await tenancy.json('POST', '/probe/required', body, { 'content-length': String(body.length) })
    expect(big.status).toBe(413)
    expect((await tenancy.json('POST', '/probe/required', { a: 1 })).body.code).toBe('unauthenticated')
  })

  it('checks the role set (403) before the tenant header (400), and the header before the body', async () => {
    const w = bearer(await token({ role: 'write-only' }))
    expect((await tenancy.json('POST', '/probe/required', '{broken', w)).body.code).toBe('forbidden')
    const rw = bearer(await token({ role: 'read-write' }))
    expect((await tenancy.json('POST', '/probe/required', '{broken', rw)).body.code).toBe('tenant_required')
    expect((await tenancy.json('POST', '/probe/required', '{broken', { ...rw, 'x-queen-tenant': 'acme' })).body.code).toBe('invalid_json')
  })
})

describe('time claims', () => {
  let strict: TestApp
  beforeAll(async () => {
    strict = await broker({ JWT_SECRET: SECRET, JWT_CLOCK_SKEW: '0' })
  })

  it('refuses an expired token, within the clock skew only when JWT_CLOCK_SKEW allows', async () => {
    await refused(hs, await token({ role: 'admin', exp: nowSeconds() - 120 }), 'Token has expired')
    const justExpired = await token({ role: 'admin', exp: nowSeconds() - 10 })
    expect((await whoami(hs, bearer(justExpired))).status).toBe(200)
    await refused(strict, justExpired, 'Token has expired')
  })

  it('refuses a token not yet valid (nbf, or iat in the future), within the skew only when allowed', async () => {
    await refused(hs, await token({ role: 'admin', nbf: nowSeconds() + 120 }), 'Token not yet valid')
    await refused(hs, await token({ role: 'admin', iat: nowSeconds() + 120 }), 'Token not yet valid')
    const soon = await token({ role: 'admin', nbf: nowSeconds() + 10 })
    expect((await whoami(hs, bearer(soon))).status).toBe(200)
    await refused(strict, soon, 'Token not yet valid')
    await refused(strict, await token({ role: 'admin', iat: nowSeconds() + 10 }), 'Token not yet valid')
  })

  it('accepts a token without exp (exp is checked when present)', async () => {
    expect((await whoami(hs, bearer(await token({ role: 'admin' }, { expiresIn: null })))).status).toBe(200)
  })

  it('refuses a token without exp under JWT_REQUIRE_EXP, and still accepts one with it', async () => {
    const strict = await broker({ JWT_SECRET: SECRET, JWT_REQUIRE_EXP: 'true' })
    await refused(strict, await token({ role: 'admin' }, { expiresIn: null }), 'Token has no expiry (exp), which this broker requires')
    expect((await whoami(strict, bearer(await token({ role: 'admin' })))).status).toBe(200)
  })
})

describe('issuer and audience', () => {
  let checked: TestApp
  beforeAll(async () => {
    checked = await broker({ JWT_SECRET: SECRET, JWT_ISSUER: 'https://issuer.test', JWT_AUDIENCE: 'queen' })
  })

  it('accepts the configured iss and an aud that is, or contains, the configured one', async () => {
    for (const aud of ['queen', ['other', 'queen']]) {
      expect((await whoami(checked, bearer(await token({ role: 'admin', iss: 'https://issuer.test', aud })))).status).toBe(200)
    }
  })

  it('refuses a wrong or missing iss, and a wrong or missing aud', async () => {
    await refused(checked, await token({ role: 'admin', iss: 'https://evil.test', aud: 'queen' }), 'Invalid token issuer')
    await refused(checked, await token({ role: 'admin', aud: 'queen' }), 'Invalid token issuer')
    await refused(checked, await token({ role: 'admin', iss: 'https://issuer.test', aud: ['other'] }), 'Invalid token audience')
    await refused(checked, await token({ role: 'admin', iss: 'https://issuer.test' }), 'Invalid token audience')
  })

  it('checks neither when they are not configured', async () => {
    expect((await whoami(hs, bearer(await token({ role: 'admin', iss: 'anyone', aud: 'anything' })))).status).toBe(200)
  })
})

describe('roles', () => {
  it('is the union of the role claim and the role-array claim; unknown strings are ignored', async () => {
    const res = await whoami(hs, bearer(await token({ role: 'write-only', roles: ['read-only', 'superuser', 42, 'read-only'] })))
    expect(res.body.roles).toEqual(['read-only', 'write-only'])
  })

  it('answers 403 forbidden to a valid token with no recognised role', async () => {
    for (const claims of [{}, { role: 'superuser' }, { roles: ['Admin'] }, { role: 7 }]) {
      const res = await whoami(hs, bearer(await token(claims)))
      expect(res.status).toBe(403)
      expect(res.body).toMatchObject({ error: 'Insufficient permissions', code: 'forbidden' })
    }
  })

  it('maps the configured claim names and role strings', async () => {
    const custom = await broker({
      JWT_SECRET: SECRET,
      JWT_ROLES_CLAIM: 'queen_role',
      JWT_ROLES_ARRAY_CLAIM: 'groups',
      JWT_ROLE_ADMIN: 'ops',
      JWT_ROLE_WRITE_ONLY: 'producer',
    })
    const res = await whoami(custom, bearer(await token({ queen_role: 'producer', groups: ['ops'], role: 'read-only', roles: ['admin'] })))
    expect(res.body.roles).toEqual(['admin', 'write-only'])
  })

  it('gives no subject for an absent or empty sub', async () => {
    for (const claims of [{ role: 'admin' }, { role: 'admin', sub: '' }]) {
      expect((await whoami(hs, bearer(await token(claims)))).body.sub).toBeNull()
    }
  })
})

describe('skip paths', () => {
  it('skips /health by default, ignoring a bad token, while the default bare / keeps other paths authenticated', async () => {
    expect((await hs.json('GET', '/health', undefined, bearer('garbage'))).status).toBe(200)
    expect((await whoami(hs)).status).toBe(401)
  })

  it('makes an entry ending in / a prefix, and others exact', async () => {
    const skipping = await broker({ JWT_SECRET: SECRET, JWT_SKIP_PATHS: '/probe/, /health' })
    const res = await whoami(skipping, bearer('garbage'))
    expect(res.status).toBe(200)
    // Skipped means not authenticated at all: no subject, and every role, as with auth off.
    expect(res.body).toMatchObject({ sub: null, roles: ['admin', 'read-only', 'read-write', 'write-only'] })
    const exact = await broker({ JWT_SECRET: SECRET, JWT_SKIP_PATHS: '/probe' })
    expect((await whoami(exact)).status).toBe(401)
  })

  it('refuses an entry that is not a path', () => {
    expect(() => loadConfig({ JWT_SKIP_PATHS: '/health,metrics' }, 'node')).toThrow(/^invalid configuration: JWT_SKIP_PATHS /)
  })
})

describe('RS256, EdDSA and auto with a PEM public key', () => {
  it('accepts RS256 signed by the configured key, and refuses another key or RS512', async () => {
    const app = await broker({ JWT_ALGORITHM: 'RS256', JWT_PUBLIC_KEY: rsa.pem })
    const ok = await whoami(app, bearer(await token({ sub: 'r', role: 'read-only' }, { alg: 'RS256', key: rsa.privateKey })))
    expect(ok.status).toBe(200)
    const other = await keyPair('RS256')
    await refused(app, await token({ role: 'admin' }, { alg: 'RS256', key: other.privateKey }), 'Invalid token signature')
    await refused(app, await token({ role: 'admin' }, { alg: 'RS512', key: await rsa.signingKey('RS512') }), 'Token uses RS512, expected RS256')
    await refused(app, await token({ role: 'admin' }), 'Token uses HS256, expected RS256')
  })

  it('accepts a PEM given on one line with \\n escapes', async () => {
    const app = await broker({ JWT_ALGORITHM: 'RS256', JWT_PUBLIC_KEY: rsa.pem.trim().replace(/\n/g, '\\n') })
    expect((await whoami(app, bearer(await token({ role: 'admin' }, { alg: 'RS256', key: rsa.privateKey })))).status).toBe(200)
  })

  it('accepts EdDSA (Ed25519) signed by the configured key', async () => {
    const app = await broker({ JWT_ALGORITHM: 'EdDSA', JWT_PUBLIC_KEY: ed.pem })
    expect((await whoami(app, bearer(await token({ role: 'admin' }, { alg: 'EdDSA', key: ed.privateKey })))).status).toBe(200)
    await refused(app, await token({ role: 'admin' }, { alg: 'EdDSA', key: (await keyPair('EdDSA')).privateKey }), 'Invalid token signature')
  })

  it('under auto picks the verifier by alg among configured keys, and never none', async () => {
    const app = await broker({ JWT_ALGORITHM: 'auto', JWT_SECRET: SECRET, JWT_PUBLIC_KEY: rsa.pem })
    expect((await whoami(app, bearer(await token({ role: 'admin' })))).status).toBe(200)
    for (const alg of ['RS256', 'RS384', 'RS512']) {
      expect((await whoami(app, bearer(await token({ role: 'admin' }, { alg, key: await rsa.signingKey(alg) })))).status, alg).toBe(200)
    }
    await refused(app, await token({ role: 'admin' }, { alg: 'EdDSA', key: ed.privateKey }), 'Unsupported algorithm: EdDSA')
    await refused(app, unsigned({ role: 'admin' }), 'Unsupported algorithm: none')
    await refused(app, await token({ role: 'admin' }, { alg: 'HS384', key: new TextEncoder().encode(SECRET) }), 'Unsupported algorithm: HS384')
  })

  it('refuses to start on an unparsable PEM or one of the wrong family, naming JWT_PUBLIC_KEY', async () => {
    const bad = [
      { JWT_ALGORITHM: 'RS256', JWT_PUBLIC_KEY: 'not a pem' },
      { JWT_ALGORITHM: 'RS256', JWT_PUBLIC_KEY: '-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----' },
      { JWT_ALGORITHM: 'EdDSA', JWT_PUBLIC_KEY: rsa.pem },
      { JWT_ALGORITHM: 'RS384', JWT_PUBLIC_KEY: ed.pem },
    ]
    for (const env of bad) {
      const config = loadConfig({ JWT_ENABLED: 'true', ...env }, 'node')
      const error = await loadStaticKeys(config).catch((e: unknown) => e)
      expect(error).toBeInstanceOf(ConfigError)
      expect((error as ConfigError).variable).toBe('JWT_PUBLIC_KEY')
    }
  })
})
