// Node entry (what `npm start` runs): configuration from process.env, PostgreSQL from
// DATABASE_URL or an embedded server, migrations at boot, the lane timers, and a graceful stop.
// No business logic lives here: it wires a database and configuration into createApp.
import { serve } from '@hono/node-server'
import { resolve } from 'node:path'
import { createApp } from './app.js'
import { nodeDeflater } from './node-deflater.js'
import { ConfigError, loadConfig, type Config } from './config.js'
import { startEmbeddedPostgres, type EmbeddedServer } from './db/embedded.js'
import { checkStatementTimeout } from './db/migrate.js'
import { DEFAULT_DATABASE } from './db/placement/database-set.js'
import { migrateAll, nodeDatabaseSet, nodeDatabaseUrls } from './db/placement/node-databases.js'
import { createPlacementCache } from './db/placement/placement-cache.js'
import { createPlacementRouter, createReadiness } from './db/placement/router.js'
import { loadStaticKeys } from './http/jwt-keys.js'
import { createLogger, describeError } from './log.js'
import { createPopWaker } from './pop-waker.js'
import { startLaneTimers } from '../cron/node-timers.js'
import type { Server } from 'node:http'
import { answerClientErrors } from './node-client-errors.js'

async function main(): Promise<void> {
  let config: Config
  try {
    config = loadConfig(process.env, 'node')
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error
    console.error(error.message)
    process.exit(1)
  }
  const log = createLogger(config.LOG_LEVEL)
  // A PEM can only be parsed asynchronously, so loadConfig cannot; a bad key stops the start here,
  // naming the variable, before any request can meet it (design decision 36).
  if (config.JWT_ENABLED) {
    try {
      await loadStaticKeys(config)
    } catch (error) {
      if (!(error instanceof ConfigError)) throw error
      console.error(error.message)
      process.exit(1)
    }
  }

  let embedded: EmbeddedServer | undefined
  let url = config.DATABASE_URL
  if (url === undefined) {
    embedded = await startEmbeddedPostgres({ dataDir: config.QUEEN_DATA_DIR })
    url = embedded.url
  }

  // Migrate every database first, each on a connection of its own: the serving pools must be
  // opened after ALTER ROLE so their connections carry the statement timeout checked below (design decision 34).
  let urls: Map<string, string>
  try {
    urls = nodeDatabaseUrls(config, url)
  } catch (error) {
    console.error(`invalid configuration: ${(error as Error).message}`)
    process.exit(1)
  }
  const migrated = await migrateAll(urls, config.STATEMENT_TIMEOUT_MS)
  const applied = migrated.find((m) => m.name === DEFAULT_DATABASE)?.result?.applied ?? []
  for (const m of migrated) {
    if (!m.error) continue
    // The default holds the placement directory: without it nothing can be routed.
    if (m.name === DEFAULT_DATABASE) throw m.error
    log.error('database not migrated; its tenants get 503 until it is', { database: m.name, ...describeError(m.error) })
  }

  // Fusion (design decision 45): concurrent small pushes, and small acks, share one procedure call and one
  // commit; each database's Database fuses its own calls.
  const databases = nodeDatabaseSet(urls, { poolSize: config.DB_POOL_SIZE })
  await checkStatementTimeout(databases.get(DEFAULT_DATABASE).pool!)
  const router = createPlacementRouter(databases, createPlacementCache({ ttlMs: config.PLACEMENT_CACHE_TTL_MS }), createReadiness({ skip: [DEFAULT_DATABASE] }))
  const popWaker = createPopWaker()
  const app = createApp({ config, log, placement: () => router, popWaker, deflater: nodeDeflater })
  // Lanes run per database: each database's maintenance leases are its own.
  const lanes = databases.names.map((name) => startLaneTimers(databases.get(name).db, config, log, name, popWaker))

  const server = serve({ fetch: app.fetch, port: config.PORT, hostname: config.HOST }, (info) => {
    const where = `http://${config.HOST}:${info.port}`
    console.log(`Queen Edge listening on ${where}`)
    if (embedded) {
      console.log(`Embedded PostgreSQL ${embedded.url.replace(/:[^:@/]+@/, ':***@')}, data in ${resolve(embedded.dataDir)}`)
      console.log('To use another database: DATABASE_URL=postgres://user:pass@host:5432/db npm start')
    } else {
      console.log('Using the database at DATABASE_URL')
    }
    if (applied.length) console.log(`Applied migrations: ${applied.join(', ')}`)
  })

  answerClientErrors(server as Server)

  let stopping = false
  const stopAll = async () => {
    await Promise.all(lanes.map((l) => l.stop()))
    await databases.close()
    await embedded?.stop()
  }
  const shutdown = async (signal: string) => {
    if (stopping) return
    stopping = true
    log.info('shutting down', { signal })
    // Parked long-polls answer 204 now rather than at their deadline, so a shutdown does not wait
    // out MAX_POP_WAIT_MS for them; close() then stops accepting and resolves once in-flight requests have answered.
    popWaker.close()
    await new Promise<void>((done) => server.close(() => done()))
    await stopAll()
    process.exit(0)
  }
  // A port that cannot be bound is a configuration mistake: one line naming PORT (and HOST), no
  // stack trace, the embedded PostgreSQL stopped, and a non-zero exit for the supervisor.
  server.once('error', (error: NodeJS.ErrnoException) => {
    if (stopping) return
    stopping = true
    console.error(listenFailure(error, config.HOST, config.PORT))
    void stopAll().finally(() => process.exit(1))
  })
  process.on('SIGINT', () => void shutdown('SIGINT'))
  process.on('SIGTERM', () => void shutdown('SIGTERM'))
  process.on('unhandledRejection', (error) => log.error('unhandled rejection', describeError(error)))
}

function listenFailure(error: NodeJS.ErrnoException, host: string, port: number): string {
  const where = `${host}:${port}`
  if (error.code === 'EADDRINUSE') return `Queen Edge cannot listen on ${where}: PORT ${port} is already in use; set PORT to a free port`
  if (error.code === 'EACCES') return `Queen Edge cannot listen on ${where}: PORT ${port} needs privileges this process lacks; set PORT above 1023`
  if (error.code === 'EADDRNOTAVAIL') return `Queen Edge cannot listen on ${where}: HOST ${host} is not an address of this machine`
  return `Queen Edge cannot listen on ${where} (PORT, HOST): ${error.message}`
}

main().catch((error) => {
  console.error(`Queen Edge failed to start: ${error instanceof Error ? error.message : String(error)}`)
  process.exit(1)
})
