// A database of the test file's own, cloned from the migrated template (RUNTIME §6). `url` goes
// straight to PostgreSQL; `appUrl` is what the broker under test should use: the same database
// through PgBouncer in the pooler project, direct otherwise.
import { inject } from 'vitest'
import pg from 'pg'
import { withDatabase } from '../global-setup.js'

export interface TestDatabase {
  name: string
  /** Direct connection string (assertions, admin work). */
  url: string
  /** The connection string the broker under test uses. */
  appUrl: string
  /** Runs one statement directly against the database (for assertions and fixtures). */
  sql<T extends Record<string, unknown> = Record<string, unknown>>(text: string, params?: unknown[]): Promise<T[]>
  drop(): Promise<void>
}

export const throughPooler = () => process.env.QUEEN_TEST_POOLER === '1'

export async function freshDatabase(): Promise<TestDatabase> {
  const adminUrl = inject('adminUrl')
  const name = `test_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 8)}`
  const admin = new pg.Client({ connectionString: adminUrl })
  await admin.connect()
  try {
    await admin.query(`create database ${name} template ${inject('templateDatabase')}`)
  } finally {
    await admin.end()
  }
  const url = withDatabase(adminUrl, name)
  const pooler = inject('poolerAddress')
  let appUrl = url
  if (throughPooler()) {
    if (!pooler) throw new Error('pooler project without a PgBouncer')
    const u = new URL(url)
    u.host = pooler
    appUrl = u.toString()
  }
  const direct = new pg.Pool({ connectionString: url, max: 2 })
  direct.on('error', () => {})
  return {
    name,
    url,
    appUrl,
    async sql(text, params) {
      return (await direct.query(text, params)).rows
    },
    async drop() {
      await direct.end()
      const cleanup = new pg.Client({ connectionString: adminUrl })
      await cleanup.connect()
      await cleanup.query(`drop database if exists ${name} with (force)`)
      await cleanup.end()
    },
  }
}
