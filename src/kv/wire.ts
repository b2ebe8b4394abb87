// Checks shared by the key/value routes: what Queen 1.6 refuses rather than ignores (docs/kv.md).
import type { Context } from 'hono'
import { HttpError } from '../errors.js'
import type { AppEnv } from '../http/env.js'

/**
 * The path routes and the console pair refuse any query string: a key or prefix in a URL is
 * recorded by every access log on the way in, so those travel only in bodies.
 */
export function refuseQueryString(c: Context<AppEnv>): void {
  if (new URL(c.req.url).search !== '') {
    throw new HttpError(400, 'kv_no_query_string', 'This route takes no query string: send keys, prefixes and cursors in a POST body')
  }
}

/** Top-level body fields outside `allowed` are refused by name, never dropped. */
export function refuseUnknownFields(body: Record<string, unknown>, allowed: readonly string[], code = 'kv_bad_request'): void {
  const extra = Object.keys(body).filter((key) => !allowed.includes(key))
  if (extra.length > 0) throw new HttpError(400, code, `Unknown field${extra.length > 1 ? 's' : ''}: ${extra.join(', ')}`)
}
