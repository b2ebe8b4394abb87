// Pages are the documents the broker serves besides the API: the operator console and the API
// reference. They hold no tenant data (the browser fetches data from API routes, which check the
// caller as usual), so they skip the route guard: no token, no tenant header, no body, and they
// never touch the database. Registering them through page() keeps the route-declaration test able
// to tell a page from an unguarded API route.
import type { Handler } from 'hono'
import type { AppEnv } from './env.js'

export interface PageDef {
  path: string
  handler: Handler<AppEnv>
}

const PAGES = new WeakSet<Handler<AppEnv>>()

/** True for handlers made by page(): the declaration test accepts them as declared pages. */
export const isPage = (handler: unknown): boolean => PAGES.has(handler as Handler<AppEnv>)

export function page(path: string, handler: Handler<AppEnv>): PageDef {
  PAGES.add(handler)
  return { path, handler }
}
