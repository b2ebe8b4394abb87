// The Node runtime's databases: one node-postgres pool per name for the life of the process (the
// default from DATABASE_URL or the embedded server, the rest from QUEEN_DATABASES), each with its
// own push and ack fusion, and the migration runner over all of them.
import type { Config } from '../../config.js'
import { createDatabase } from '../database.js'
import { NODE_FUSION } from '../fusion.js'
import { migrate, type MigrateResult } from '../migrate.js'
import { createNodePool } from '../node-pool.js'
import { createDatabaseSet, databaseNames, DEFAULT_DATABASE, type DatabaseSet } from './database-set.js'

/** name -> connection string; refuses `binding:` targets, which only a Worker can resolve. */
export function nodeDatabaseUrls(config: Config, defaultUrl: string): Map<string, string> {
  const urls = new Map<string, string>([[DEFAULT_DATABASE, defaultUrl]])
  for (const [name, target] of Object.entries(config.QUEEN_DATABASES ?? {})) {
    if (target.startsWith('binding:')) throw new Error(`QUEEN_DATABASES.${name}: binding: targets exist on Workers only; give a connection string`)
    urls.set(name, target)
  }
  return urls
}

export function nodeDatabaseSet(urls: Map<string, string>, options: { poolSize: number; fusion?: boolean }): DatabaseSet {
  return createDatabaseSet([...urls.keys()], (name) => {
    const pool = createNodePool({ connectionString: urls.get(name)!, max: options.poolSize })
    return { name, pool, db: createDatabase(pool, { longLived: true, fusion: options.fusion === false ? undefined : NODE_FUSION }) }
  })
}

export interface MigrateAllResult {
  name: string
  result?: MigrateResult
  error?: Error
}

/**
 * Migrates every database, each on a connection of its own (the serving pools must be opened after
 * ALTER ROLE, design decision 34). One database failing does not stop the others: the caller
 * decides (Node refuses to start only when the default fails; the others' tenants get 503 until
 * they are migrated).
 */
export async function migrateAll(urls: Map<string, string>, statementTimeoutMs: number): Promise<MigrateAllResult[]> {
  // One after the other: databases of one cluster share the role that every run's ALTER ROLE
  // writes, and concurrent runs collide on it ("tuple concurrently updated" at start-up).
  const results: MigrateAllResult[] = []
  for (const [name, url] of urls) {
    const pool = createNodePool({ connectionString: url, max: 1, connectionTimeoutMillis: 10_000 })
    try {
      results.push({ name, result: await migrate(pool, { statementTimeoutMs }) })
    } catch (error) {
      results.push({ name, error: error as Error })
    } finally {
      await pool.end().catch(() => {})
    }
  }
  return results
}

export { databaseNames }
