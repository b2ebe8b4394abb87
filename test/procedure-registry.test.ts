// The registry (src/db/procedures.ts) and sql/ name the same procedures: every versioned function
// sql/ creates (`queen.<name>_v<N>`) is created once and has exactly one registry entry, and every
// entry names such a function. Reads the files on disk; no database.
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
})
