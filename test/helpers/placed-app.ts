// The broker over several databases (docs/placement.md), as src/node.ts wires it: one fresh
// database per name (`default` first, then d1, d2, …), a pool and fusion per database, the
// placement router with a short cache TTL, tenancy on. `pooled` names databases the broker reaches
// through PgBouncer (when the run has one).
import { inject } from 'vitest'
import { createApp } from '../../src/app.js'
import { loadConfig, type Config } from '../../src/config.js'
import type { DatabaseSet } from '../../src/db/placement/database-set.js'
import { nodeDatabaseSet } from '../../src/db/placement/node-databases.js'
import { createPlacementCache } from '../../src/db/placement/placement-cache.js'
import { createPlacementRouter, createReadiness, type PlacementRouter } from '../../src/db/placement/router.js'
import { createLogger } from '../../src/log.js'
import { freshDatabase, type TestDatabase } from './database.js'

export const TENANT_HEADER = 'X-Tenant'

export interface PlacedApp {
  /** JSON helper; `tenant` becomes the X-Tenant header. */
  json(method: string, path: string, tenant: string, body?: unknown): Promise<{ status: number; body: any; headers: Headers }>
  /** By name: `default`, `d1`, `d2`, … */
  databases: Record<string, TestDatabase>
  /** The URL the broker uses for each name (through PgBouncer for pooled names). */
  urls: Map<string, string>
  set: DatabaseSet
  router: PlacementRouter
  /** The Hono app itself, for a test that serves it on a socket (a browser). */
  app: ReturnType<typeof createApp>
  config: Config
  close(): Promise<void>
}

export async function placedApp(options: { count: number; env?: Record<string, string>; pooled?: string[]; urls?: Record<string, string> }): Promise<PlacedApp> {
  const names = ['default', ...Array.from({ length: options.count - 1 }, (_, i) => `d${i + 1}`)]
  const databases: Record<string, TestDatabase> = {}
  for (const name of names) databases[name] = await freshDatabase()
  const urls = new Map<string, string>()
  const pooler = inject('poolerAddress')
  for (const name of names) {
    let url = options.urls?.[name] ?? databases[name]!.url
    if (options.pooled?.includes(name) && pooler) {
      const u = new URL(url)
      u.host = pooler
      url = u.toString()
    }
    urls.set(name, url)
  }
  const others = Object.fromEntries(names.slice(1).map((n) => [n, urls.get(n)!]))
  const config = loadConfig(
    { LOG_LEVEL: 'silent', QUEEN_TENANCY_HEADER: TENANT_HEADER, PLACEMENT_CACHE_TTL_MS: '100', QUEEN_DATABASES: JSON.stringify(others), ...options.env },
    'node',
  )
  const set = nodeDatabaseSet(urls, { poolSize: 4 })
  const router = createPlacementRouter(set, createPlacementCache({ ttlMs: config.PLACEMENT_CACHE_TTL_MS }), createReadiness({ skip: ['default'] }))
  const app = createApp({ config, log: createLogger(config.LOG_LEVEL), placement: () => router })
  return {
    async json(method, path, tenant, body) {
      const res = await app.request(path, {
        method,
        headers: { 'content-type': 'application/json', ...(tenant ? { [TENANT_HEADER]: tenant } : {}) },
        body: body === undefined ? undefined : JSON.stringify(body),
      })
      const text = await res.text()
      return { status: res.status, headers: res.headers, body: text === '' ? null : (res.headers.get('content-type') ?? '').includes('json') ? JSON.parse(text) : text }
    },
    databases,
    urls,
    set,
    router,
    app,
    config,
    async close() {
      await set.close()
      for (const db of Object.values(databases)) await db.drop()
    },
  }
}
