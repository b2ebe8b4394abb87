// Node entry (what `npm start` runs): configuration from process.env, PostgreSQL from
// DATABASE_URL or an embedded server, migrations at boot, the lane timers, and a graceful stop.
// No business logic lives here: it wires a database and configuration into createApp.
import { serve } from '@hono/node-server'
import { resolve } from 'node:path'
import { createApp } from './app.js'
import { ConfigError, loadConfig, type Config } from './config.js'
import { createDatabase } from './db/database.js'
import { NODE_FUSION } from './db/fusion.js'
import { startEmbeddedPostgres, type EmbeddedServer } from './db/embedded.js'
import { checkStatementTimeout, migrate } from './db/migrate.js'
import { createNodePool } from './db/node-pool.js'
import { loadStaticKeys } from './http/jwt-keys.js'
import { createLogger, describeError } from './log.js'
import { createPopWaker } from './pop-waker.js'
import { startLaneTimers } from '../cron/node-timers.js'

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
  // naming the variable, before any request can meet it (API §3.1).
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

  // Migrate on a connection of its own: the serving pool must be opened after ALTER ROLE so its
  // connections carry the statement timeout that checkStatementTimeout then verifies (D3).
  const migrationPool = createNodePool({ connectionString: url, max: 1 })
  const { applied } = await migrate(migrationPool, { statementTimeoutMs: config.STATEMENT_TIMEOUT_MS })
  await migrationPool.end()

  const pool = createNodePool({ connectionString: url, max: config.DB_POOL_SIZE })
  await checkStatementTimeout(pool)
  // Fusion (ENGINE 12.1): concurrent small pushes, and small acks, share one procedure call and one commit.
  const db = createDatabase(pool, { longLived: true, fusion: NODE_FUSION })
  const popWaker = createPopWaker()
  const app = createApp({ config, log, database: () => db, popWaker })
  const lanes = startLaneTimers(db, config, log)

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

  let stopping = false
  const shutdown = async (signal: string) => {
    if (stopping) return
    stopping = true
    log.info('shutting down', { signal })
    // Parked long-polls answer 204 now rather than at their deadline (RUNTIME §2); close() then
    // stops accepting and resolves once in-flight requests have answered.
    popWaker.close()
    await new Promise<void>((done) => server.close(() => done()))
    await lanes.stop()
    await db.close()
    await embedded?.stop()
    process.exit(0)
  }
  process.on('SIGINT', () => void shutdown('SIGINT'))
  process.on('SIGTERM', () => void shutdown('SIGTERM'))
  process.on('unhandledRejection', (error) => log.error('unhandled rejection', describeError(error)))
}

main().catch((error) => {
  console.error(`Queen Edge failed to start: ${error instanceof Error ? error.message : String(error)}`)
  process.exit(1)
})
