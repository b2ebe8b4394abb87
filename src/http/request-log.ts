// X-Request-Id on every response (the client's own when it is 1-128 printable ASCII characters,
// else a fresh UUIDv7), and one JSON log line per request: id, method, route pattern, status, ms.
// Never the query string, headers or body: they can carry tokens and payloads.
import type { MiddlewareHandler } from 'hono'
import { uuidv7 } from '../ids.js'
import type { Logger } from '../log.js'
import type { AppEnv } from './env.js'

const PRINTABLE = /^[\x21-\x7e]{1,128}$/

export function requestLog(log: Logger): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const started = performance.now()
    const given = c.req.header('x-request-id')
    const requestId = given !== undefined && PRINTABLE.test(given) ? given : uuidv7()
    c.set('requestId', requestId)
    c.set('routePattern', 'unmatched')
    await next()
    c.res.headers.set('X-Request-Id', requestId)
    log.info('request', {
      requestId,
      method: c.req.method,
      route: c.get('routePattern'),
      status: c.res.status,
      ms: Math.round((performance.now() - started) * 10) / 10,
    })
  }
}
