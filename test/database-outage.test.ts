// A stopped PostgreSQL: /health says so with 503, routes answer 503 db_unavailable with
// Retry-After (never a hang or a stack trace), and both recover by themselves once it is back.
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { createApp } from '../src/app.js'
import { loadConfig } from '../src/config.js'
import { createDatabase } from '../src/db/database.js'
import { startEmbeddedPostgres } from '../src/db/embedded.js'
import { migrate } from '../src/db/migrate.js'
import { createNodePool } from '../src/db/node-pool.js'
import { createLogger } from '../src/log.js'
import { allRoutes } from '../src/routes/index.js'
import { VERSION } from '../src/version.js'
import { probeRoutes } from './helpers/probe-routes.js'

const dataDir = mkdtempSync(join(tmpdir(), 'queen-outage-'))
afterAll(() => rmSync(dataDir, { recursive: true, force: true }))

describe('database outage', () => {
  it('answers 503 while PostgreSQL is down and recovers when it returns', async () => {
    let server = await startEmbeddedPostgres({ dataDir })
    const port = server.port
    const migration = createNodePool({ connectionString: server.url, max: 1 })
    await migrate(migration, { statementTimeoutMs: 25_000 })
    await migration.end()

    const config = loadConfig({ LOG_LEVEL: 'silent' }, 'node')
    const db = createDatabase(createNodePool({ connectionString: server.url, max: 3, connectionTimeoutMillis: 1000 }), { longLived: true })
    const app = createApp({ config, log: createLogger('silent'), database: () => db, routes: [...allRoutes(VERSION), ...probeRoutes] })
    try {
      expect((await app.request('/health')).status).toBe(200)
      await server.stop()

      const started = Date.now()
      const health = await app.request('/health')
      expect(health.status).toBe(503)
      expect(await health.json()).toEqual({ status: 'unhealthy', database: 'disconnected', version: VERSION })
      const call = await app.request('/probe/db')
      expect(call.status).toBe(503)
      expect(call.headers.get('retry-after')).toBe('1')
      expect(await call.json()).toEqual({ error: 'Database unavailable', code: 'db_unavailable' })
      expect(Date.now() - started).toBeLessThan(10_000)

      server = await startEmbeddedPostgres({ dataDir, port })
      expect((await app.request('/health')).status).toBe(200)
      expect((await app.request('/probe/db')).status).toBe(200)
    } finally {
      await db.close()
      await server.stop()
    }
  }, 60_000)
})
