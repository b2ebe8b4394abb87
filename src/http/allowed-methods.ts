// The methods each registered path answers, read from the route table and the pages, so a request
// with the wrong method on a real path is told 405 and which methods would do (the Allow header)
// rather than 404, and the list can never drift from the routes themselves.
import type { Method } from './route.js'

type Matcher = { pattern: RegExp; methods: Set<string> }

/** A Hono path (`/api/v1/timers/:queue`, `/console/*`) as a regular expression over a request path. */
function patternOf(path: string): RegExp {
  const escaped = path
    .split('/')
    .map((segment) =>
      segment.startsWith(':') ? '[^/]+' : segment === '*' ? '.*' : segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'),
    )
    .join('/')
  return new RegExp(`^${escaped}/?$`)
}

/**
 * Given every (method, path) the app registers, a lookup from a request path to the methods it
 * accepts, HEAD included wherever GET is (Hono answers HEAD with the GET handler); empty when no
 * route has that path, which stays a 404.
 */
export function allowedMethods(routes: readonly { method: Method | 'GET'; path: string }[]): (path: string) => string[] {
  const byPath = new Map<string, Matcher>()
  for (const { method, path } of routes) {
    const matcher = byPath.get(path) ?? { pattern: patternOf(path), methods: new Set<string>() }
    matcher.methods.add(method)
    if (method === 'GET') matcher.methods.add('HEAD')
    byPath.set(path, matcher)
  }
  const matchers = [...byPath.values()]
  return (path) => {
    const methods = new Set<string>()
    for (const m of matchers) if (m.pattern.test(path)) for (const method of m.methods) methods.add(method)
    return [...methods].sort()
  }
}
