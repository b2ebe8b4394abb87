// The route × role matrix, generated from the route table (allRoutes): for every registered route
// and every role, a valid token of that role gets through authorization exactly when the route
// declares the role, and gets 403 otherwise; no token is 401 on every non-public route; public
// routes stay public. Routes added later are covered without touching this file.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ROLES, type Role } from '../../src/http/auth.js'
import type { RouteDef } from '../../src/http/route.js'
import { allRoutes } from '../../src/routes/index.js'
import { VERSION } from '../../src/version.js'
import { testApp, type TestApp } from '../helpers/app.js'
import { freshDatabase, type TestDatabase } from '../helpers/database.js'
import { SECRET, bearer, token } from '../helpers/tokens.js'

/** API §3.4 and §3.6: public by the default skip list. An oracle of its own, not the matcher. */
const PUBLIC_BY_DEFAULT = new Set(['/health', '/metrics', '/metrics/prometheus'])

const routes = allRoutes(VERSION)

/** A concrete path for a pattern: ids as UUIDs, other parameters as plain names. */
const concrete = (path: string) =>
  path.replace(/:([A-Za-z]+)/g, (_, name: string) => (name.endsWith('Id') ? '01890a5d-ac96-774b-bcce-b302099a8057' : `matrix-${name}`))

// Required bodies are sent empty: authorization comes first (API §3.5), so an accepted caller
// meets 400 invalid_json rather than a handler, and a refused one still gets 401/403.
const send = (app: TestApp, r: RouteDef, headers: Record<string, string>) => app.json(r.method, concrete(r.path), undefined, headers)

let database: TestDatabase
let everything: TestApp
let defaults: TestApp
const tokens = {} as Record<Role | 'none', string>
beforeAll(async () => {
  database = await freshDatabase()
  // JWT_SKIP_PATHS=/ matches only the root path, so every route is authenticated here.
  everything = await testApp({ database, env: { JWT_ENABLED: 'true', JWT_SECRET: SECRET, JWT_SKIP_PATHS: '/' } })
  defaults = await testApp({ database, env: { JWT_ENABLED: 'true', JWT_SECRET: SECRET } })
  for (const role of ROLES) tokens[role] = await token({ sub: `matrix-${role}`, role })
  tokens.none = await token({ sub: 'matrix-none', roles: ['superuser'] })
})
afterAll(async () => {
  await everything.close()
  await defaults.close()
  await database.drop()
})

describe('route × role matrix', () => {
  it('covers every registered route', () => {
    expect(routes.length).toBeGreaterThan(0)
  })

  for (const r of routes) {
    const name = `${r.method} ${r.path}`

    it(`${name}: each role passes exactly when declared (${r.roles.join(', ')}), else 403`, async () => {
      for (const role of ROLES) {
        const res = await send(everything, r, bearer(tokens[role]))
        if (r.roles.includes(role)) {
          expect([401, 403], `${name} as ${role}: ${JSON.stringify(res.body)}`).not.toContain(res.status)
        } else {
          expect(res.status, `${name} as ${role}`).toBe(403)
          expect(res.body, `${name} as ${role}`).toMatchObject({ error: 'Insufficient permissions', code: 'forbidden' })
        }
      }
    })

    it(`${name}: a token with no recognised role is 403, no token is 401`, async () => {
      const none = await send(everything, r, bearer(tokens.none))
      expect(none.body, name).toMatchObject({ code: 'forbidden' })
      const anonymous = await send(everything, r, {})
      expect(anonymous.status, name).toBe(401)
      expect(anonymous.body, name).toMatchObject({ code: 'unauthenticated' })
    })

    it(`${name}: under the default skip list it is ${PUBLIC_BY_DEFAULT.has(r.path) ? 'public' : 'authenticated'}`, async () => {
      if (PUBLIC_BY_DEFAULT.has(r.path)) {
        for (const headers of [{}, bearer('not-a-token'), bearer(tokens.none)]) {
          expect([401, 403], name).not.toContain((await send(defaults, r, headers)).status)
        }
      } else {
        expect((await send(defaults, r, {})).body, name).toMatchObject({ code: 'unauthenticated' })
        expect((await send(defaults, r, bearer('not-a-token'))).body, name).toMatchObject({ code: 'invalid_token' })
      }
    })
  }

  it('gives a token with several roles their union: W+R passes wherever W or R is accepted', async () => {
    const both = await token({ roles: ['write-only', 'read-only'] })
    for (const r of routes) {
      const res = await send(everything, r, bearer(both))
      const accepted = r.roles.includes('write-only') || r.roles.includes('read-only')
      expect(res.status === 403, `${r.method} ${r.path}`).toBe(!accepted)
    }
  })
})
