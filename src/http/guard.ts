// The per-route chain, in the order design decision 40 fixes: body size → authentication → role set
// → tenant header → tenant binding → body parse. Every step reads the route's own record.
import type { MiddlewareHandler } from 'hono'
import type { Config } from '../config.js'
import { HttpError, badRequest } from '../errors.js'
import type { Authenticator } from './auth.js'
import { readJsonBody, tooLarge } from './body.js'
import type { AppEnv } from './env.js'
import { authorizes, type RouteSpec } from './route.js'

const TENANT_VALUE = /^[A-Za-z0-9._-]{1,128}$/

const GUARDS = new WeakSet<MiddlewareHandler<AppEnv>>()

/** True for the handlers routeGuard made: the declaration test finds undeclared routes by their absence. */
export const isRouteGuard = (handler: unknown): boolean => GUARDS.has(handler as MiddlewareHandler<AppEnv>)

/**
 * PostgreSQL text cannot hold U+0000, so a path segment or query value carrying it (`%00`) would
 * fail inside the procedure as a 500; like the body's (http/body.ts), it is refused first
 * (design decision 37).
 */
function refuseNul(params: Record<string, string>, query: URLSearchParams): void {
  for (const [name, value] of Object.entries(params)) {
    if (value.includes('\u0000')) throw badRequest(`${name} must not contain U+0000`)
  }
  for (const [name, value] of query) {
    if (name.includes('\u0000') || value.includes('\u0000')) throw badRequest(`query parameter ${JSON.stringify(name)} must not contain U+0000`)
  }
}

export function routeGuard(spec: RouteSpec, config: Config, authenticate: Authenticator): MiddlewareHandler<AppEnv> {
  const tenancyHeader = spec.tenant === 'required' ? config.QUEEN_TENANCY_HEADER : undefined
  const guard: MiddlewareHandler<AppEnv> = async (c, next) => {
    c.set('routePattern', spec.path)
    if (spec.body !== 'none' && Number(c.req.header('content-length')) > config.MAX_BODY_BYTES) {
      throw tooLarge(config.MAX_BODY_BYTES)
    }

    const principal = await authenticate(c, config)
    if (!authorizes(spec, principal.roles)) {
      throw new HttpError(403, 'forbidden', 'Insufficient permissions')
    }
    c.set('principal', principal)

    c.set('tenant', '')
    if (tenancyHeader !== undefined) {
      const tenant = c.req.header(tenancyHeader)
      if (tenant === undefined || tenant === '') throw badRequest(`missing tenant header ${tenancyHeader}`, 'tenant_required')
      if (!TENANT_VALUE.test(tenant)) {
        throw badRequest(`tenant header ${tenancyHeader} must be 1-128 characters of A-Z a-z 0-9 . _ -`, 'invalid_tenant')
      }
      if (principal.tenant !== null && principal.tenant !== tenant) {
        throw new HttpError(403, 'tenant_forbidden', `Token is bound to tenant ${principal.tenant}`)
      }
      c.set('tenant', tenant)
    }
    if (spec.brokerWide && principal.tenant !== null) {
      const what = spec.method === 'GET' ? 'read broker-wide data' : 'change broker-wide settings'
      throw new HttpError(403, 'tenant_forbidden', `Tenant-bound tokens cannot ${what}`)
    }
    // Without tenancy every request is tenant '': a token an issuer bound to one tenant would act on
    // everything. That is a misconfiguration (tokens are tenant-bound, the broker is not), so it
    // fails closed on every tenant-scoped route (docs/security.md).
    if (spec.tenant === 'required' && config.QUEEN_TENANCY_HEADER === undefined && principal.tenant !== null) {
      throw new HttpError(403, 'tenant_forbidden', `Token is bound to tenant ${principal.tenant}, but this broker has no tenancy (QUEEN_TENANCY_HEADER is unset)`)
    }

    // Only a percent-escape brings U+0000 into a path or query (the HTTP parser refuses a raw one).
    if (c.req.url.includes('%00')) refuseNul(c.req.param() as Record<string, string>, new URL(c.req.url).searchParams)
    if (spec.body !== 'none') c.set('body', await readJsonBody(c.req.raw, spec.body, config.MAX_BODY_BYTES))
    await next()
  }
  GUARDS.add(guard)
  return guard
}
