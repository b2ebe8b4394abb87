// JWT_SKIP_PATHS (docs/auth.md): an entry matches the request path exactly, or as a prefix when it
// ends in `/` and is longer than `/`. So the default list's bare `/` matches only the root path
// (which serves nothing) and never makes every path public. Matching runs on the same path Hono
// routes on (c.req.path, query excluded), so what is skipped is exactly what was routed.

export interface SkipPaths {
  readonly exact: ReadonlySet<string>
  readonly prefixes: readonly string[]
}

export function parseSkipPaths(raw: string): SkipPaths {
  const entries = raw
    .split(',')
    .map((e) => e.trim())
    .filter((e) => e !== '')
  return {
    exact: new Set(entries.filter((e) => !isPrefix(e))),
    prefixes: entries.filter(isPrefix),
  }
}

const isPrefix = (entry: string) => entry.length > 1 && entry.endsWith('/')

export function isSkipped(path: string, skip: SkipPaths): boolean {
  return skip.exact.has(path) || skip.prefixes.some((prefix) => path.startsWith(prefix))
}
