// CORS on every response, errors included, and OPTIONS on any path answered 204 before routing,
// authentication or the tenant check (design decision 40).
import type { MiddlewareHandler } from 'hono'
import type { AppEnv } from './env.js'

export function cors(tenancyHeader: string | undefined): MiddlewareHandler<AppEnv> {
  const allowHeaders = ['Content-Type', 'Authorization', ...(tenancyHeader ? [tenancyHeader] : [])].join(', ')
  const apply = (headers: Headers) => {
    headers.set('Access-Control-Allow-Origin', '*')
    headers.set('Access-Control-Allow-Methods', 'GET, POST, PUT, DELETE, OPTIONS')
    headers.set('Access-Control-Allow-Headers', allowHeaders)
    headers.set('Access-Control-Expose-Headers', 'Retry-After, X-Request-Id')
  }
  return async (c, next) => {
    if (c.req.method === 'OPTIONS') {
      const headers = new Headers({ 'Access-Control-Max-Age': '86400', 'X-Request-Id': c.get('requestId') })
      apply(headers)
      return new Response(null, { status: 204, headers })
    }
    await next()
    apply(c.res.headers)
  }
}
