// The databases one process (Node) or one request (Workers) can reach, by name: `default` (the
// DATABASE_URL one, home of the placement directory) and every name in QUEEN_DATABASES. Handles
// open lazily, so a request touches only the databases it uses and a database that is down costs
// nothing until one of its tenants calls.
import type { Database } from '../database.js'
import type { PoolLike } from '../queryable.js'

export const DEFAULT_DATABASE = 'default'

export interface DatabaseHandle {
  name: string
  /** The raw pool, for sessions (a move's copy, the readiness check); routes never see it. Null
   *  for a handle wrapped around a bare Database (a test app's), which only a single set holds. */
  pool: PoolLike | null
  db: Database
}

export interface DatabaseSet {
  /** `default` first, then QUEEN_DATABASES' names in their order. */
  readonly names: readonly string[]
  has(name: string): boolean
  get(name: string): DatabaseHandle
  /** The handles opened so far (lanes, metrics and close walk these, not every name). */
  opened(): DatabaseHandle[]
  close(): Promise<void>
}

export function createDatabaseSet(names: readonly string[], open: (name: string) => DatabaseHandle): DatabaseSet {
  const handles = new Map<string, DatabaseHandle>()
  const known = new Set(names)
  return {
    names,
    has: (name) => known.has(name),
    get(name) {
      if (!known.has(name)) throw new Error(`unknown database ${name}`)
      let handle = handles.get(name)
      if (!handle) handles.set(name, (handle = open(name)))
      return handle
    },
    opened: () => [...handles.values()],
    async close() {
      await Promise.allSettled([...handles.values()].map((h) => h.db.close()))
    },
  }
}

/** The names a configuration reaches: `default` and QUEEN_DATABASES' keys. */
export function databaseNames(databases: Record<string, string> | undefined): string[] {
  return [DEFAULT_DATABASE, ...Object.keys(databases ?? {})]
}

/** A set of one: the default database given as a bare Database (tests, and apps built without a set). */
export function singleDatabaseSet(db: Database): DatabaseSet {
  return createDatabaseSet([DEFAULT_DATABASE], (name) => ({ name, pool: null, db }))
}
