// X-Request-Id on every response (the client's own when it is 1-128 printable ASCII characters,
// else a fresh UUIDv7), and one JSON log line per request: id, method, route pattern, status, ms.
// Never the query string, headers or body: they can carry tokens and payloads. The same
// observation feeds the process metrics (the Prometheus request series: by method, route pattern, status).
import type { MiddlewareHandler } from 'hono'
import { uuidv7 } from '../ids.js'
import type { Logger } from '../log.js'
import type { ProcessMetrics } from '../metrics.js'
import type { AppEnv } from './env.js'

const PRINTABLE = /^[\x21-\x7e]{1,128}$/

export function requestLog(log: Logger, metrics?: ProcessMetrics): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const started = performance.now()
    const given = c.req.header('x-request-id')
    const requestId = given !== undefined && PRINTABLE.test(given) ? given : uuidv7()
    c.set('requestId', requestId)
    c.set('routePattern', 'unmatched')
    await next()
    c.res.headers.set('X-Request-Id', requestId)
    const ms = performance.now() - started
    // The registered pattern, never the raw path: a label per queue name would be unbounded.
    metrics?.request(c.req.method, c.get('routePattern'), c.res.status, ms / 1000)
    log.info('request', {
      requestId,
      method: c.req.method,
      route: c.get('routePattern'),
      status: c.res.status,
      ms: Math.round(ms * 10) / 10,
    })
  }
}
