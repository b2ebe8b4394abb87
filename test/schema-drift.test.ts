// The drizzle definitions (src/db/schema.ts) against the real migrated schema: same tables, same
// columns, same types, nullability and defaults. sql/ stays the source of truth.
import { getTableConfig } from 'drizzle-orm/pg-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { drizzle } from 'drizzle-orm/node-postgres'
import { eq } from 'drizzle-orm'
import pg from 'pg'
import { maintenanceLeases, tables } from '../src/db/schema.js'
import { freshDatabase, type TestDatabase } from './helpers/database.js'

let database: TestDatabase
beforeAll(async () => {
  database = await freshDatabase()
})
afterAll(() => database.drop())

// drizzle's SQL type names → information_schema.udt_name
const UDT: Record<string, string> = {
  uuid: 'uuid',
  text: 'text',
  integer: 'int4',
  bigint: 'int8',
  boolean: 'bool',
  jsonb: 'jsonb',
  'timestamp with time zone': 'timestamptz',
  'double precision': 'float8',
}
const udt = (sqlType: string) => (sqlType.endsWith('[]') ? `_${UDT[sqlType.slice(0, -2)]}` : UDT[sqlType])

describe('drizzle schema', () => {
  it('matches information_schema table by table, column by column', async () => {
    const rows = await database.sql<{ table_name: string; column_name: string; udt_name: string; is_nullable: string; has_default: boolean }>(
      `select table_name, column_name, udt_name, is_nullable, column_default is not null as has_default
         from information_schema.columns where table_schema = 'queen' and table_name <> 'schema_migrations'
        order by table_name, ordinal_position`,
    )
    const actual = rows.map((r) => `${r.table_name}.${r.column_name} ${r.udt_name} ${r.is_nullable === 'NO' ? 'not null' : 'null'}${r.has_default ? ' default' : ''}`)
    const declared = Object.values(tables).flatMap((table) => {
      const config = getTableConfig(table)
      expect(config.schema).toBe('queen')
      return config.columns.map((c) => `${config.name}.${c.name} ${udt(c.getSQLType())} ${c.notNull ? 'not null' : 'null'}${c.hasDefault ? ' default' : ''}`)
    })
    expect(declared.sort()).toEqual(actual.sort())
  })

  it('reads real rows with the right types', async () => {
    const client = new pg.Client({ connectionString: database.url })
    await client.connect()
    try {
      const db = drizzle(client)
      const [lane] = await db.select().from(maintenanceLeases).where(eq(maintenanceLeases.name, 'dedup_purge'))
      expect(lane).toMatchObject({ name: 'dedup_purge', holder: null, runs: 0 })
    } finally {
      await client.end()
    }
  })
})
