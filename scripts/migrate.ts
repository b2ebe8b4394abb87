// `npm run db:migrate`: applies sql/ to DATABASE_URL (a deploy step for Workers + Neon, where
// migrations never run inside a request), or to the embedded database when it is unset, and to
// every database QUEEN_DATABASES names (docs/placement.md). Also sets each role's statement_timeout
// to STATEMENT_TIMEOUT_MS (design decision 34). Fails (exit 1) when any database failed, after trying them all.
import { loadConfig } from '../src/config.js'
import { startEmbeddedPostgres } from '../src/db/embedded.js'
import { migrateAll, nodeDatabaseUrls } from '../src/db/placement/node-databases.js'

const config = loadConfig(process.env, 'node')
const embedded = config.DATABASE_URL ? undefined : await startEmbeddedPostgres({ dataDir: config.QUEEN_DATA_DIR })
try {
  const results = await migrateAll(nodeDatabaseUrls(config, config.DATABASE_URL ?? embedded!.url), config.STATEMENT_TIMEOUT_MS)
  for (const { name, result, error } of results) {
    if (error) {
      console.error(`${name}: migration failed: ${error.message}`)
      process.exitCode = 1
    } else {
      console.log(`${name}: ${result!.applied.length ? `applied: ${result!.applied.join(', ')}` : 'schema is up to date'}`)
    }
  }
  console.log(`procedures re-applied; role statement_timeout = ${config.STATEMENT_TIMEOUT_MS} ms`)
} catch (error) {
  console.error(`migration failed: ${(error as Error).message}`)
  process.exitCode = 1
} finally {
  await embedded?.stop()
}
