// CORS, off unless CORS_ORIGINS names who may call from a browser (docs/security.md). With
// authentication off by default, a blanket `*` would let any page a developer visits push, pop and
// delete on a local broker (a text/plain POST needs no preflight); so without the variable no
// response carries an Access-Control-* header and browsers keep other origins out. The console is
// served by the broker itself (same origin) and needs none.
//
// When configured: `*` answers every origin with `*` (only when named alone, on purpose); a list
// answers a listed Origin with itself (and `Vary: Origin`), any other with nothing. OPTIONS on any path
// is answered 204 before routing, authentication or the tenant check, configured or not.
import type { MiddlewareHandler } from 'hono'
import type { CorsOrigins } from './cors-origins.js'
import type { AppEnv } from './env.js'

export function cors(tenancyHeader: string | undefined, origins: CorsOrigins | undefined): MiddlewareHandler<AppEnv> {
  const allowHeaders = ['Content-Type', 'Authorization', ...(tenancyHeader ? [tenancyHeader] : [])].join(', ')
  const allowed = (origin: string | undefined): string | undefined => {
    if (origins === undefined) return undefined
    if (origins === '*') return '*'
    return origin !== undefined && origins.includes(origin.toLowerCase()) ? origin : undefined
  }
  const apply = (headers: Headers, origin: string | undefined) => {
    // A listed answer depends on the request's Origin, so caches must key on it.
    if (origins !== undefined && origins !== '*') headers.append('Vary', 'Origin')
    const allow = allowed(origin)
    if (allow === undefined) return
    headers.set('Access-Control-Allow-Origin', allow)
    headers.set('Access-Control-Allow-Methods', 'GET, POST, PUT, DELETE, OPTIONS')
    headers.set('Access-Control-Allow-Headers', allowHeaders)
    headers.set('Access-Control-Expose-Headers', 'Retry-After, X-Request-Id')
  }
  return async (c, next) => {
    const origin = c.req.header('origin')
    if (c.req.method === 'OPTIONS') {
      const headers = new Headers({ 'X-Request-Id': c.get('requestId') })
      if (allowed(origin) !== undefined) headers.set('Access-Control-Max-Age', '86400')
      apply(headers, origin)
      return new Response(null, { status: 204, headers })
    }
    await next()
    apply(c.res.headers, origin)
  }
}
