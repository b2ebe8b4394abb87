// `npm run db:migrate`: applies sql/ to DATABASE_URL (a deploy step for Workers + Neon, where
// migrations never run inside a request), or to the embedded database when it is unset. Also sets
// the role's statement_timeout to STATEMENT_TIMEOUT_MS (D3).
import { loadConfig } from '../src/config.js'
import { startEmbeddedPostgres } from '../src/db/embedded.js'
import { migrate } from '../src/db/migrate.js'
import { createNodePool } from '../src/db/node-pool.js'

const config = loadConfig(process.env, 'node')
const embedded = config.DATABASE_URL ? undefined : await startEmbeddedPostgres({ dataDir: config.QUEEN_DATA_DIR })
const pool = createNodePool({ connectionString: config.DATABASE_URL ?? embedded!.url, max: 1 })
try {
  const { applied } = await migrate(pool, { statementTimeoutMs: config.STATEMENT_TIMEOUT_MS })
  console.log(applied.length ? `applied: ${applied.join(', ')}` : 'schema is up to date')
  console.log(`procedures re-applied; role statement_timeout = ${config.STATEMENT_TIMEOUT_MS} ms`)
} catch (error) {
  console.error(`migration failed: ${(error as Error).message}`)
  process.exitCode = 1
} finally {
  await pool.end()
  await embedded?.stop()
}
