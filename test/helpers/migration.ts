// A scratch database for a migration's own test: migrated to just before the migration under test,
// seeded by the test with rows of that older shape, then migrated the rest of the way (with this
// code's procedures) to see what the migration made of them.
import pg from 'pg'
import { expect, inject } from 'vitest'
import { migrate } from '../../src/db/migrate.js'
import { createNodePool } from '../../src/db/node-pool.js'
import { declaredFunctions, migrations, procedureFiles, supersededChecksums } from '../../src/db/sql-bundle.generated.js'
import { withDatabase } from '../global-setup.js'

/** One statement on its own connection; the rows it returns. */
export async function query<T = Record<string, unknown>>(url: string, text: string, values: unknown[] = []): Promise<T[]> {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    return (await client.query(text, values)).rows as T[]
  } finally {
    await client.end()
  }
}

async function run(url: string, files: Parameters<typeof migrate>[1]['files']) {
  const pool = createNodePool({ connectionString: url, max: 1 })
  try {
    return await migrate(pool, { statementTimeoutMs: 25_000, files })
  } finally {
    await pool.end()
  }
}

export interface DatabaseBeforeMigration {
  url: string
  /** Applies every migration and this code's procedures, as a broker does at boot; what `migrate` reports. */
  migrateRest(): ReturnType<typeof migrate>
  drop(): Promise<void>
}

/**
 * A new database `name` with the schema as it was before migration `number` (e.g. '0027'): its
 * tables only, since this code's procedures may need the migration.
 */
export async function databaseBefore(number: string, name: string): Promise<DatabaseBeforeMigration> {
  await query(inject('adminUrl'), `create database ${name}`)
  const url = withDatabase(inject('adminUrl'), name)
  const before = migrations.filter((m) => m.name < number)
  expect(before.length).toBe(migrations.findIndex((m) => m.name.startsWith(`${number}_`)))
  await run(url, { migrations: before, procedures: [], functions: [], superseded: supersededChecksums })
  return {
    url,
    migrateRest: () => run(url, { migrations, procedures: procedureFiles, functions: declaredFunctions, superseded: supersededChecksums }),
    drop: async () => void (await query(inject('adminUrl'), `drop database if exists ${name} with (force)`)),
  }
}
