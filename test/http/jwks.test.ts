// JWT_JWKS_URL against a real JWKS endpoint (a node:http server in this test): kid lookup, one
// refetch when a new kid appears, the 30 s cooldown, the 10 min cache, and what an unreachable
// endpoint answers. Time is the authenticator's injected clock, never a sleep.
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { JWK } from 'jose'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { loadConfig } from '../../src/config.js'
import { jwtAuthenticator } from '../../src/http/jwt.js'
import { JWKS_CACHE_MS, JWKS_COOLDOWN_MS } from '../../src/http/jwks.js'
import { testApp, type TestApp } from '../helpers/app.js'
import { freshDatabase, type TestDatabase } from '../helpers/database.js'
import { probeRoutes } from '../helpers/probe-routes.js'
import { bearer, keyPair, token, type KeyPair } from '../helpers/tokens.js'

let server: Server
let url: string
let served: JWK[] = []
let status = 200
let fetches = 0
let database: TestDatabase
let clock = Date.now()
const apps: TestApp[] = []

beforeAll(async () => {
  server = createServer((_req, res) => {
    fetches += 1
    res.writeHead(status, { 'content-type': 'application/json' })
    res.end(JSON.stringify({ keys: served }))
  })
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done))
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/.well-known/jwks.json`
  database = await freshDatabase()
})
afterAll(async () => {
  await Promise.all(apps.map((a) => a.close()))
  await database.drop()
  await new Promise((done) => server.close(done))
})
beforeEach(() => {
  served = []
  status = 200
  fetches = 0
})

async function broker(env: Record<string, string>): Promise<TestApp> {
  const full = { JWT_ENABLED: 'true', JWT_JWKS_URL: url, LOG_LEVEL: 'silent', ...env }
  const authenticate = jwtAuthenticator(loadConfig(full, 'node'), { now: () => clock })
  const app = await testApp({ database, env: full, deps: { routes: probeRoutes, authenticate } })
  apps.push(app)
  return app
}

const call = async (app: TestApp, jwt: string) => app.json('GET', '/probe/principal', undefined, bearer(jwt))

describe('JWKS', () => {
  let rsaOld: KeyPair
  let rsaNew: KeyPair
  let ed: KeyPair
  beforeAll(async () => {
    ;[rsaOld, rsaNew, ed] = await Promise.all([keyPair('RS256'), keyPair('RS256'), keyPair('EdDSA')])
  })

  it('verifies by kid; a rotated-in kid costs exactly one refetch; a kid still unknown after it is 401', async () => {
    const app = await broker({ JWT_ALGORITHM: 'RS256' })
    served = [await rsaOld.jwk('k1')]
    const first = await call(app, await token({ sub: 'a', role: 'read-only' }, { alg: 'RS256', key: rsaOld.privateKey, kid: 'k1' }))
    expect(first.status).toBe(200)
    expect(fetches).toBe(1)
    expect((await call(app, await token({ role: 'read-only' }, { alg: 'RS256', key: rsaOld.privateKey, kid: 'k1' }))).status).toBe(200)
    expect(fetches).toBe(1)

    // The issuer rotates: k2 appears at the endpoint, and a token signed with it arrives.
    served = [await rsaOld.jwk('k1'), await rsaNew.jwk('k2')]
    clock += 1000
    expect((await call(app, await token({ role: 'read-only' }, { alg: 'RS256', key: rsaNew.privateKey, kid: 'k2' }))).status).toBe(200)
    expect(fetches).toBe(2)

    // A kid nobody serves: within the cooldown no refetch at all, just the refusal.
    const stranger = await token({ role: 'admin' }, { alg: 'RS256', key: rsaNew.privateKey, kid: 'k9' })
    const refused = await call(app, stranger)
    expect(refused.status).toBe(401)
    expect(refused.body).toMatchObject({ error: 'Unknown key ID: k9', code: 'invalid_token' })
    expect(fetches).toBe(2)

    // After the cooldown the unknown kid forces one refetch, and is still refused.
    clock += JWKS_COOLDOWN_MS
    expect((await call(app, stranger)).body.error).toBe('Unknown key ID: k9')
    expect(fetches).toBe(3)
    expect((await call(app, stranger)).body.error).toBe('Unknown key ID: k9')
    expect(fetches).toBe(3)
  })

  it('refuses a token signed by a key other than the one its kid names', async () => {
    const app = await broker({ JWT_ALGORITHM: 'RS256' })
    served = [await rsaOld.jwk('k1')]
    const res = await call(app, await token({ role: 'admin' }, { alg: 'RS256', key: rsaNew.privateKey, kid: 'k1' }))
    expect(res.body).toMatchObject({ error: 'Invalid token signature', code: 'invalid_token' })
  })

  it('verifies a token without kid against every key of its type (a set mid-rotation)', async () => {
    const app = await broker({ JWT_ALGORITHM: 'RS256' })
    served = [await rsaOld.jwk('k1'), await rsaNew.jwk('k2')]
    expect((await call(app, await token({ role: 'admin' }, { alg: 'RS256', key: rsaNew.privateKey }))).status).toBe(200)
    const other = await keyPair('RS256')
    expect((await call(app, await token({ role: 'admin' }, { alg: 'RS256', key: other.privateKey }))).body.error).toBe('Invalid token signature')
  })

  it('serves EdDSA and RS256 keys from one set under auto', async () => {
    const app = await broker({ JWT_ALGORITHM: 'auto' })
    served = [await rsaOld.jwk('r1'), await ed.jwk('e1')]
    expect((await call(app, await token({ role: 'admin' }, { alg: 'EdDSA', key: ed.privateKey, kid: 'e1' }))).status).toBe(200)
    expect((await call(app, await token({ role: 'admin' }, { alg: 'RS256', key: rsaOld.privateKey, kid: 'r1' }))).status).toBe(200)
    // auto with only a JWKS has no HS256 secret, so an HS256 token has no verifier.
    expect((await call(app, await token({ role: 'admin' }))).body.error).toBe('Unsupported algorithm: HS256')
  })

  it('refetches after 10 minutes, and keeps verifying with cached keys when that refetch fails', async () => {
    const app = await broker({ JWT_ALGORITHM: 'EdDSA' })
    served = [await ed.jwk('e1')]
    const jwt = await token({ role: 'admin' }, { alg: 'EdDSA', key: ed.privateKey, kid: 'e1', expiresIn: 3 * 3600 })
    expect((await call(app, jwt)).status).toBe(200)
    expect(fetches).toBe(1)
    clock += JWKS_CACHE_MS
    status = 500
    expect((await call(app, jwt)).status).toBe(200)
    expect(fetches).toBe(2)
    status = 200
    clock += 1000
    expect((await call(app, jwt)).status).toBe(200)
    expect(fetches).toBe(3)
  })

  it('stops trusting cached keys JWT_JWKS_MAX_STALE_SECONDS past their freshness while refetching fails', async () => {
    const app = await broker({ JWT_ALGORITHM: 'EdDSA', JWT_JWKS_MAX_STALE_SECONDS: '60' })
    served = [await ed.jwk('e1')]
    const jwt = await token({ role: 'admin' }, { alg: 'EdDSA', key: ed.privateKey, kid: 'e1', expiresIn: 3 * 3600 })
    expect((await call(app, jwt)).status).toBe(200)
    status = 500
    clock += JWKS_CACHE_MS + 59_000
    expect((await call(app, jwt)).status).toBe(200)
    clock += 1000
    const stale = await call(app, jwt)
    expect(stale.status).toBe(503)
    expect(stale.body).toMatchObject({ error: 'Failed to fetch JWKS', code: 'jwks_unavailable' })
    status = 200
    expect((await call(app, jwt)).status).toBe(200)
  })

  it('answers 503 jwks_unavailable when the endpoint fails and no key is cached', async () => {
    const app = await broker({ JWT_ALGORITHM: 'RS256' })
    status = 500
    const res = await call(app, await token({ role: 'admin' }, { alg: 'RS256', key: rsaOld.privateKey, kid: 'k1' }))
    expect(res.status).toBe(503)
    expect(res.body).toMatchObject({ error: 'Failed to fetch JWKS', code: 'jwks_unavailable' })
  })

  it('answers 503 jwks_unavailable when the endpoint is unreachable', async () => {
    const closed = createServer()
    await new Promise<void>((done) => closed.listen(0, '127.0.0.1', done))
    const port = (closed.address() as AddressInfo).port
    await new Promise((done) => closed.close(done))
    const env = { JWT_ENABLED: 'true', JWT_ALGORITHM: 'RS256', JWT_JWKS_URL: `http://127.0.0.1:${port}/jwks`, LOG_LEVEL: 'silent' }
    const app = await testApp({ database, env, deps: { routes: probeRoutes } })
    apps.push(app)
    const res = await call(app, await token({ role: 'admin' }, { alg: 'RS256', key: rsaOld.privateKey, kid: 'k1' }))
    expect(res.status).toBe(503)
    expect(res.body.code).toBe('jwks_unavailable')
  })
})
