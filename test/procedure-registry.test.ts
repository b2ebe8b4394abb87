// The registry (src/db/procedures.ts) and sql/ name the same procedures: every versioned function
// sql/ creates (`queen.<name>_v<N>`) is created once and has exactly one registry entry, every
// entry names such a function, and each entry sits in the family file named as the SQL file that
// creates it (src/db/procedures/sink.ts holds sql/procedures/027_sink.sql's functions). Reads the files
// on disk; no database.
import { describe, expect, it } from 'vitest'
import { readSqlTree } from '../scripts/build-sql.js'
import { families, procedures } from '../src/db/procedures.js'

/** How many times sql/ creates each versioned function of schema queen. */
function createdInSql(): Map<string, number> {
  const { migrations, procedures: files } = readSqlTree()
  const created = new Map<string, number>()
  for (const file of [...migrations, ...files]) {
    for (const match of file.sql.matchAll(/create\s+(?:or\s+replace\s+)?function\s+queen\.([a-z][a-z0-9_]*_v\d+)\s*\(/gi)) {
      const name = match[1]!.toLowerCase()
      created.set(name, (created.get(name) ?? 0) + 1)
    }
  }
  return created
}

/** The sql/procedures file that creates each versioned function. */
function creatingFile(): Map<string, string> {
  const files = new Map<string, string>()
  for (const file of readSqlTree().procedures) {
    for (const match of file.sql.matchAll(/create\s+(?:or\s+replace\s+)?function\s+queen\.([a-z][a-z0-9_]*_v\d+)\s*\(/gi)) files.set(match[1]!.toLowerCase(), file.name)
  }
  return files
}

/** A sql/procedures file's family: its name less the number, `log_` and `.sql`, `_` read as `-` (011_log_stats.sql: stats). */
const familyOfFile = (file: string) => file.replace(/^\d{3}_/, '').replace(/\.sql$/, '').replace(/^log_/, '').replace(/_/g, '-')

/** Whether a file is the family's: its own, or one of its parts (005_log_ack_plain.sql is ack's). */
const ofFamily = (family: string, file: string) => familyOfFile(file) === family || familyOfFile(file).startsWith(`${family}-`)

/** Entries registered in a family other than the one of the SQL file that creates them. */
function misplaced(registry: Record<string, Record<string, unknown>>, files: Map<string, string>): string[] {
  return Object.entries(registry).flatMap(([family, entries]) =>
    Object.keys(entries)
      .filter((name) => !files.has(name) || !ofFamily(family, files.get(name)!))
      .map((name) => `${name}: registered in ${family}, created in ${files.get(name) ?? 'no sql/procedures file'}`),
  )
}

/** Every entry of every family, a name twice when two families register it. */
const entries = Object.values(families).flatMap((family) => Object.entries(family))
const sql = createdInSql()

describe('the procedure registry', () => {
  it('finds the versioned functions sql/ creates', () => {
    expect(sql.size).toBeGreaterThan(50)
  })

  it('creates each versioned function once in sql/', () => {
    expect([...sql].filter(([, times]) => times > 1).map(([name]) => name)).toEqual([])
  })

  it('has an entry for every versioned function sql/ creates', () => {
    const registered = new Set(entries.map(([name]) => name))
    expect([...sql.keys()].filter((name) => !registered.has(name)).sort()).toEqual([])
  })

  it('names only functions sql/ creates', () => {
    expect(entries.map(([name]) => name).filter((name) => !sql.has(name)).sort()).toEqual([])
  })

  it('registers each function in one family, once', () => {
    const names = entries.map(([name]) => name)
    expect(names.filter((name, i) => names.indexOf(name) !== i)).toEqual([])
    expect(Object.keys(procedures).sort()).toEqual([...names].sort())
  })

  it('calls each entry by the key it is registered under', () => {
    for (const [key, entry] of entries) expect(entry.name).toBe(key)
  })

  it("registers each function in the family named as the SQL file that creates it (ack spans 005_log_ack*.sql)", () => {
    const files = creatingFile()
    expect(files.get('sink_pointer_v1')).toBe('027_sink.sql')
    // The check reads the names: an entry in the wrong family file is reported.
    expect(misplaced({ sink: { consumer_group_list_v1: {} } }, files)).toEqual(['consumer_group_list_v1: registered in sink, created in 021_consumer_groups.sql'])
    expect(misplaced({ ack: { log_ack_v1: {} }, stats: { log_queue_depth_v1: {} } }, files)).toEqual([])

    expect(misplaced(families, files)).toEqual([])
  })

  it('gives every tenant-scoped procedure the tenant argument the request handle fills in', () => {
    const scoped = entries.filter(([, entry]) => entry.scope === 'tenant')
    expect(scoped.length).toBeGreaterThan(40)
    expect(scoped.filter(([, entry]) => !('tenant' in entry.params)).map(([name]) => name)).toEqual([])
  })
})
