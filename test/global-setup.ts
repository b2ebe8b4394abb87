// One PostgreSQL for the whole run (embedded, or TEST_DATABASE_URL), one migrated template
// database, and, when a pgbouncer binary exists, one PgBouncer in transaction mode in front of it.
// Each test file clones its own database from the template (helpers/database.ts), so files run
// in parallel and never see each other's rows. Vitest calls this once per project; the servers
// are shared through globalThis so the run starts them once.
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { TestProject } from 'vitest/node'
import { startEmbeddedPostgres } from '../src/db/embedded.js'
import { migrate } from '../src/db/migrate.js'
import { createNodePool } from '../src/db/node-pool.js'
import { pgbouncerBinary, whyMissing } from './helpers/optional.js'
import { startPgBouncer, findPgBouncer, type PgBouncer } from './helpers/pgbouncer.js'

declare module 'vitest' {
  export interface ProvidedContext {
    adminUrl: string
    templateDatabase: string
    /** host:port of PgBouncer (transaction mode) in front of the same server, or null without one. */
    poolerAddress: string | null
  }
}

export const TEST_STATEMENT_TIMEOUT_MS = 25_000

interface Shared {
  users: number
  adminUrl: string
  templateDatabase: string
  poolerAddress: string | null
  stop(): Promise<void>
}

const KEY = Symbol.for('queen-edge.test-servers')
const registry = globalThis as unknown as { [KEY]?: Promise<Shared> }

async function startServers(): Promise<Shared> {
  let stopPostgres = async () => {}
  let adminUrl = process.env.TEST_DATABASE_URL
  let scratch: string | undefined
  if (!adminUrl) {
    scratch = mkdtempSync(join(tmpdir(), 'queen-test-'))
    const server = await startEmbeddedPostgres({ dataDir: scratch })
    adminUrl = server.url
    stopPostgres = () => server.stop()
  }

  const templateDatabase = `queen_template_${process.pid}`
  const admin = createNodePool({ connectionString: adminUrl, max: 1 })
  await admin.query(`drop database if exists ${templateDatabase}`)
  await admin.query(`create database ${templateDatabase}`)
  await admin.end()
  const template = createNodePool({ connectionString: withDatabase(adminUrl, templateDatabase), max: 1 })
  await migrate(template, { statementTimeoutMs: TEST_STATEMENT_TIMEOUT_MS })
  // Clones need the template to have no open sessions.
  await template.end()

  let pooler: PgBouncer | undefined
  // Without one, vitest.config.ts has printed the notice and left the pooler project out.
  const binary = whyMissing(pgbouncerBinary) === null ? findPgBouncer() : null
  if (binary) pooler = await startPgBouncer(binary, adminUrl)

  return {
    users: 0,
    adminUrl,
    templateDatabase,
    poolerAddress: pooler?.address ?? null,
    async stop() {
      await pooler?.stop()
      await stopPostgres()
      if (scratch) rmSync(scratch, { recursive: true, force: true })
    },
  }
}

export function withDatabase(url: string, database: string): string {
  const u = new URL(url)
  u.pathname = `/${database}`
  return u.toString()
}

export default async function setup(project: TestProject) {
  registry[KEY] ??= startServers()
  const shared = await registry[KEY]
  shared.users++
  project.provide('adminUrl', shared.adminUrl)
  project.provide('templateDatabase', shared.templateDatabase)
  project.provide('poolerAddress', shared.poolerAddress)
  return async () => {
    if (--shared.users > 0) return
    delete registry[KEY]
    await shared.stop()
  }
}
