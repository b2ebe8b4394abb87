// ENGINE §13.15 / RUNTIME §4: the procedures keep the pooler happy by construction. No session
// state (LISTEN, advisory locks, PREPARE, temporary tables, statement-level SET), and every API
// function VOLATILE so a caching pooler never answers it from cache.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { procedureFiles } from '../src/db/sql-bundle.generated.js'
import { freshDatabase, type TestDatabase } from './helpers/database.js'

let database: TestDatabase
beforeAll(async () => {
  database = await freshDatabase()
})
afterAll(() => database.drop())

// Comments may name the forbidden things (to say why they are absent); code may not.
const code = (sql: string) => sql.replace(/--[^\n]*/g, '')

describe('procedure files', () => {
  it.each(procedureFiles.map((f) => [f.name, f.sql]))('%s uses no session state', (_name, sql) => {
    const body = code(sql)
    expect(body).not.toMatch(/\blisten\b|\bnotify\b|pg_notify/i)
    expect(body).not.toMatch(/pg_advisory|pg_try_advisory/i)
    expect(body).not.toMatch(/\bprepare\b/i)
    expect(body).not.toMatch(/create\s+(global\s+|local\s+)?temp(orary)?\b/i)
    expect(body).not.toMatch(/with\s+hold/i)
    // A statement-level SET (not SET LOCAL, not UPDATE … SET, not a function's SET clause).
    expect(body).not.toMatch(/(;|\bbegin|\bthen|\bloop|\belse)\s*set\s+(?!local\b)/i)
  })

  it('declares every API function VOLATILE', async () => {
    const rows = await database.sql<{ name: string; volatility: string }>(`
      select p.proname as name, p.provolatile as volatility from pg_proc p join pg_namespace n on n.oid = p.pronamespace
       where n.nspname = 'queen' and p.proname !~ '^_'`)
    expect(rows.length).toBeGreaterThan(5)
    for (const r of rows) expect(r, r.name).toMatchObject({ volatility: 'v' })
  })
})
