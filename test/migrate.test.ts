// The migration runner: idempotent, serialised under concurrency, checksum-checked (accepting only
// the checksums a comment-only edit superseded), refusing a database newer than the code, and leaving
// schema `queen` with exactly the declared functions.
import { afterEach, describe, expect, it } from 'vitest'
import pg from 'pg'
import { inject } from 'vitest'
import { MigrationError, migrate } from '../src/db/migrate.js'
import { createNodePool } from '../src/db/node-pool.js'
import { declaredFunctions, migrations, procedureFiles, supersededChecksums } from '../src/db/sql-bundle.generated.js'
import { parseSupersededChecksums, statementsChecksum } from '../scripts/superseded-checksums.js'
import { withDatabase } from './global-setup.js'

const created: string[] = []

/** An empty database (not cloned from the template), so the runner starts from nothing. */
async function emptyDatabase(): Promise<string> {
  const name = `migr_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 7)}`
  const admin = new pg.Client({ connectionString: inject('adminUrl') })
  await admin.connect()
  await admin.query(`create database ${name}`)
  await admin.end()
  created.push(name)
  return withDatabase(inject('adminUrl'), name)
}

async function query(url: string, text: string) {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    return (await client.query(text)).rows
  } finally {
    await client.end()
  }
}

const run = async (url: string, files?: Parameters<typeof migrate>[1]['files']) => {
  const pool = createNodePool({ connectionString: url, max: 1 })
  try {
    return await migrate(pool, { statementTimeoutMs: 25_000, files })
  } finally {
    await pool.end()
  }
}

afterEach(async () => {
  const admin = new pg.Client({ connectionString: inject('adminUrl') })
  await admin.connect()
  for (const name of created.splice(0)) await admin.query(`drop database if exists ${name} with (force)`)
  await admin.end()
})

describe('migrate', () => {
  it('applies every migration once when run three times in a row', async () => {
    const url = await emptyDatabase()
    expect((await run(url)).applied).toEqual(migrations.map((m) => m.name))
    expect((await run(url)).applied).toEqual([])
    expect((await run(url)).applied).toEqual([])
    const ledger = await query(url, 'select name, checksum from queen.schema_migrations order by name')
    expect(ledger).toEqual(migrations.map((m) => ({ name: m.name, checksum: m.checksum })))
  })

  it('applies each migration exactly once when five runners start at once', async () => {
    const url = await emptyDatabase()
    const results = await Promise.all(Array.from({ length: 5 }, () => run(url)))
    const applied = results.flatMap((r) => r.applied)
    expect(applied.sort()).toEqual(migrations.map((m) => m.name).sort())
    const ledger = await query(url, 'select count(*)::int as n from queen.schema_migrations')
    expect(ledger[0]!.n).toBe(migrations.length)
  })

  it('migrates several databases of one cluster at once, though their runs share the role they ALTER', async () => {
    const urls = await Promise.all(Array.from({ length: 4 }, () => emptyDatabase()))
    for (let round = 0; round < 3; round++) {
      const results = await Promise.allSettled(urls.map((url) => run(url)))
      expect(results.filter((r) => r.status === 'rejected').map((r) => String((r as PromiseRejectedResult).reason)), `round ${round}`).toEqual([])
    }
  })

  it('leaves schema queen with exactly the functions the procedure files declare', async () => {
    const url = await emptyDatabase()
    await run(url)
    const rows = await query(url, `select p.proname from pg_proc p join pg_namespace n on n.oid = p.pronamespace where n.nspname = 'queen' order by 1`)
    expect(rows.map((r) => r.proname)).toEqual([...declaredFunctions].sort())
  })

  it('refuses a migration whose file changed after it was applied', async () => {
    const url = await emptyDatabase()
    await run(url)
    const edited = migrations.map((m, i) => (i === 0 ? { ...m, checksum: 'f'.repeat(64) } : m))
    const files = { migrations: edited, procedures: procedureFiles, functions: declaredFunctions, superseded: supersededChecksums }
    await expect(run(url, files)).rejects.toThrow(
      /was changed after it was applied/,
    )
  })

  it('accepts a checksum a comment-only edit superseded, and records the current one', async () => {
    const url = await emptyDatabase()
    await run(url)
    const [first, second] = migrations
    const old = 'e'.repeat(64)
    await query(url, `update queen.schema_migrations set checksum = '${old}' where name = '${first!.name}'`)
    // Listed for another migration only: still refused, and the ledger keeps what it had.
    const elsewhere = { migrations, procedures: procedureFiles, functions: declaredFunctions, superseded: [{ name: second!.name, checksum: old }] }
    await expect(run(url, elsewhere)).rejects.toThrow(/was changed after it was applied/)
    expect(await query(url, `select checksum from queen.schema_migrations where name = '${first!.name}'`)).toEqual([{ checksum: old }])

    const listed = { ...elsewhere, superseded: [{ name: first!.name, checksum: old }] }
    expect((await run(url, listed)).applied).toEqual([])
    const ledger = await query(url, 'select name, checksum from queen.schema_migrations order by name')
    expect(ledger).toEqual(migrations.map((m) => ({ name: m.name, checksum: m.checksum })))
  })

  it('migrates a database whose ledger holds the checksums from before the committed comment edits', async () => {
    const url = await emptyDatabase()
    await run(url)
    expect(supersededChecksums.length).toBeGreaterThan(0)
    for (const { name, checksum } of supersededChecksums) {
      await query(url, `update queen.schema_migrations set checksum = '${checksum}' where name = '${name}'`)
    }
    expect((await run(url)).applied).toEqual([])
    const ledger = await query(url, 'select name, checksum from queen.schema_migrations order by name')
    expect(ledger).toEqual(migrations.map((m) => ({ name: m.name, checksum: m.checksum })))
  })

  it('refuses a database that is newer than the code, writing nothing', async () => {
    const url = await emptyDatabase()
    const future = { name: '9999_from_the_future.sql', checksum: 'a'.repeat(64), sql: 'create table queen.future (x int)' }
    await run(url, { migrations: [...migrations, future], procedures: procedureFiles, functions: declaredFunctions })
    const error = await run(url).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(MigrationError)
    expect((error as Error).message).toMatch(/newer than the code/)
  })

  it('refuses to finish when a stray function is left in schema queen, and rolls back', async () => {
    const url = await emptyDatabase()
    await run(url)
    await query(url, `create function queen.forgotten_v0() returns int language sql as 'select 1'`)
    await expect(run(url)).rejects.toThrow(/stray \["forgotten_v0"\]/)
  })

  it('sets the statement timeout on the role', async () => {
    const url = await emptyDatabase()
    await run(url)
    const rows = await query(url, `select current_setting('statement_timeout') as t`)
    expect(rows[0]!.t).toBe('25s')
  })
})

describe('comment-only edits of applied migrations', () => {
  const [first] = migrations
  const line = (sql: string) => `${first!.name} ${'e'.repeat(64)} ${statementsChecksum(sql)}`

  it('count comments and layout as no change', () => {
    const edited = `-- A new first line.\n${first!.sql.replace(/--[^\n]*/g, '-- reworded').replace(/\n/g, '\n  ')} /* and /* nested */ too */`
    expect(edited).not.toBe(first!.sql)
    expect(statementsChecksum(edited)).toBe(statementsChecksum(first!.sql))
    expect(parseSupersededChecksums(line(first!.sql), [{ ...first!, sql: edited }])).toEqual([{ name: first!.name, checksum: 'e'.repeat(64) }])
  })

  it('refuse an entry once a statement changed', () => {
    const changed = [
      first!.sql.replace('with (fillfactor = 90)', 'with (fillfactor = 80)'),
      first!.sql.replace("default ''", "default '--'"),
      first!.sql.replace('create schema', 'createschema'),
    ]
    for (const sql of changed) {
      expect(sql).not.toBe(first!.sql)
      expect(() => parseSupersededChecksums(line(first!.sql), [{ ...first!, sql }])).toThrow(/statements of 0001_schema\.sql changed/)
    }
  })

  it('refuse an entry naming no migration, or the current checksum', () => {
    expect(() => parseSupersededChecksums(`0000_nothing.sql ${'e'.repeat(64)} ${'e'.repeat(64)}`, migrations)).toThrow(/no migration is named/)
    const current = `${first!.name} ${first!.checksum} ${statementsChecksum(first!.sql)}`
    expect(() => parseSupersededChecksums(current, migrations)).toThrow(/current checksum/)
  })
})
