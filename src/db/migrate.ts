// The migration runner. Small and paranoid:
// - the whole run is ONE transaction, serialised by a self-conflicting lock on the ledger table,
//   so two brokers starting at once never both apply a migration (no advisory locks: Hyperdrive
//   and PgBouncer in transaction mode do not support them);
// - an applied migration whose file changed, or one the code does not know (the database is
//   newer than the code), stops the run before anything is written; the one exception is a
//   checksum sql/migrations/superseded-checksums.txt lists for that migration (an edit of its
//   comments only, checked at build time), which is accepted and replaced by the current one;
// - procedures are re-applied on every run, then schema `queen` must hold exactly the functions
//   the files declare (a stray overload would otherwise keep answering old callers).
import { declaredFunctions, migrations, procedureFiles, supersededChecksums, type SqlFile } from './sql-bundle.generated.js'
import { toDbError } from './errors.js'
import type { PoolLike, Queryable } from './queryable.js'

export class MigrationError extends Error {
  override name = 'MigrationError'
}

export interface MigrateOptions {
  /** Written to the role (ALTER ROLE CURRENT_USER SET statement_timeout), design decision 34. */
  statementTimeoutMs: number
  /** Defaults to the generated bundle; tests pass their own sets. */
  files?: MigrationFiles
}

export interface MigrationFiles {
  migrations: SqlFile[]
  procedures: SqlFile[]
  functions: string[]
  /** Older checksums of migrations whose comments were edited since; none when left out. */
  superseded?: { name: string; checksum: string }[]
}

export interface MigrateResult {
  applied: string[]
}

// Races between first runs (two CREATE SCHEMA IF NOT EXISTS at once) surface as these; the loser
// simply runs again and then finds the ledger.
const RETRYABLE = new Set(['23505', '42P07', '42710', '40P01', '40001'])
// The ledger's lock is per database, but the role ALTER ROLE writes is the cluster's: two databases
// of one cluster migrated at once (brokers placing tenants on both) can collide on its settings row,
// which PostgreSQL reports as an internal error with this text. Running again is all it needs.
const isConcurrentCatalogUpdate = (error: unknown) =>
  (error as { code?: string }).code === 'XX000' && (error as Error).message === 'tuple concurrently updated'

export async function migrate(pool: PoolLike, options: MigrateOptions): Promise<MigrateResult> {
  const files = options.files ?? { migrations, procedures: procedureFiles, functions: declaredFunctions, superseded: supersededChecksums }
  for (let attempt = 1; ; attempt++) {
    const client = await pool.connect().catch((error: unknown) => {
      throw toDbError(error)
    })
    try {
      await client.query('begin')
      const result = await migrateInTransaction(client, files, options.statementTimeoutMs)
      await client.query('commit')
      return result
    } catch (error) {
      await client.query('rollback').catch(() => {})
      const code = (error as { code?: string }).code
      if (attempt < 5 && ((code !== undefined && RETRYABLE.has(code)) || isConcurrentCatalogUpdate(error))) continue
      throw error instanceof MigrationError ? error : toDbError(error)
    } finally {
      client.release()
    }
  }
}

async function migrateInTransaction(
  client: Queryable,
  files: MigrationFiles,
  statementTimeoutMs: number,
): Promise<MigrateResult> {
  // A migration may take longer than the role's serving timeout; SET LOCAL only lasts this transaction.
  await client.query(`set local statement_timeout = '10min'`)
  await client.query('create schema if not exists queen')
  await client.query(`create table if not exists queen.schema_migrations (
    name text primary key,
    checksum text not null,
    applied_at timestamptz not null default now()
  )`)
  await client.query('lock table queen.schema_migrations in share row exclusive mode')

  const { rows } = await client.query('select name, checksum from queen.schema_migrations order by name')
  const known = new Map(files.migrations.map((m) => [m.name, m.checksum]))
  const superseded = new Set((files.superseded ?? []).map((s) => `${s.name} ${s.checksum}`))
  const outdated: { name: string; checksum: string }[] = []
  for (const row of rows as { name: string; checksum: string }[]) {
    const checksum = known.get(row.name)
    if (checksum === undefined) {
      throw new MigrationError(`database has migration ${row.name}, which this code does not know: the database is newer than the code`)
    }
    if (checksum === row.checksum) continue
    if (!superseded.has(`${row.name} ${row.checksum}`)) {
      throw new MigrationError(`migration ${row.name} was changed after it was applied; add a new migration instead`)
    }
    outdated.push({ name: row.name, checksum })
  }
  // Only comments changed since these were applied: the ledger takes the current checksum, so the
  // next run compares against the file as it is now.
  for (const { name, checksum } of outdated) {
    await client.query('update queen.schema_migrations set checksum = $2 where name = $1', [name, checksum])
  }

  const done = new Set(rows.map((r) => r.name as string))
  const applied: string[] = []
  for (const migration of files.migrations) {
    if (done.has(migration.name)) continue
    await client.query(migration.sql)
    await client.query('insert into queen.schema_migrations (name, checksum) values ($1, $2)', [migration.name, migration.checksum])
    applied.push(migration.name)
  }

  for (const file of files.procedures) await client.query(file.sql)
  await checkFunctions(client, files.functions)

  // The serving timeout lives on the role because it survives every pooler (design decision 34); a
  // literal, since ALTER ROLE takes no parameters. The value was validated as an integer by the
  // config schema.
  await client.query(`alter role current_user set statement_timeout = ${Math.trunc(statementTimeoutMs)}`)
  return { applied }
}

async function checkFunctions(client: Queryable, declared: string[]): Promise<void> {
  const { rows } = await client.query(
    `select p.proname as name, count(*)::int as overloads
       from pg_proc p join pg_namespace n on n.oid = p.pronamespace
      where n.nspname = 'queen' group by p.proname order by p.proname`,
  )
  const present = new Map(rows.map((r) => [r.name as string, r.overloads as number]))
  const stray = [...present.keys()].filter((name) => !declared.includes(name))
  const overloaded = [...present].filter(([, n]) => n > 1).map(([name]) => name)
  const missing = declared.filter((name) => !present.has(name))
  if (stray.length || overloaded.length || missing.length) {
    throw new MigrationError(
      `schema queen does not match sql/procedures: stray ${JSON.stringify(stray)}, overloaded ${JSON.stringify(overloaded)}, missing ${JSON.stringify(missing)}`,
    )
  }
}

/** The role's serving timeout must be set, and inside Hyperdrive's 60 s ceiling (design decision 34). */
export async function checkStatementTimeout(db: Queryable): Promise<void> {
  let ms: number
  try {
    const { rows } = await db.query(
      `select extract(epoch from current_setting('statement_timeout')::interval) * 1000 as ms`,
    )
    ms = Number(rows[0]?.ms)
  } catch (error) {
    throw toDbError(error)
  }
  if (!(ms > 0 && ms <= 60000)) {
    throw new MigrationError(
      `statement_timeout is ${ms} ms on this role; run \`npm run db:migrate\` (it sets STATEMENT_TIMEOUT_MS on the role) — the broker needs a value in (0, 60000]`,
    )
  }
}

/**
 * The database carries exactly the migrations this code knows, the newest included: a database
 * that is behind (a new database not yet migrated, or one that was down when the others were)
 * must not be served, since its procedures are not the ones the routes expect (docs/placement.md).
 */
export async function checkSchemaCurrent(db: Queryable, known: readonly SqlFile[] = migrations): Promise<void> {
  let newest: string | null
  try {
    // Two statements: a query naming a missing table fails at parse time, whatever guards it.
    const { rows: exists } = await db.query(`select to_regclass('queen.schema_migrations') is not null as present`)
    if (exists[0]?.present !== true) newest = null
    else newest = ((await db.query('select max(name) as newest from queen.schema_migrations')).rows[0]?.newest as string | null) ?? null
  } catch (error) {
    throw toDbError(error)
  }
  const expected = known.at(-1)?.name ?? null
  if (newest !== expected) {
    throw new MigrationError(`database schema is at ${newest ?? 'nothing'}, this code needs ${expected}: run \`npm run db:migrate\``)
  }
}
