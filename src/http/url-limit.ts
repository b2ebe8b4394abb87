// A request URL longer than MAX_URL_LENGTH is refused with 414 and the error envelope before any
// routing: no route needs one that long (names are at most 256 characters), and both runtimes
// answer alike. Node refuses a request line beyond its header limit earlier still, with 431
// (src/node-client-errors.ts); docs/limits.md lists both.
import type { MiddlewareHandler } from 'hono'
import { HttpError } from '../errors.js'
import type { AppEnv } from './env.js'

export const MAX_URL_LENGTH = 8192

export const urlLimit: MiddlewareHandler<AppEnv> = async (c, next) => {
  const url = c.req.url
  // The origin part is the runtime's, not the client's: count from the path on.
  const length = url.length - new URL(url).origin.length
  if (length > MAX_URL_LENGTH) throw new HttpError(414, 'uri_too_long', `Request URL too long (limit ${MAX_URL_LENGTH} characters)`)
  await next()
}
