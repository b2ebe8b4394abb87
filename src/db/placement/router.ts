// Resolves the database of a request's tenant before its one round trip (docs/placement.md):
// from the cached map, without a query in the common case; with one directory read once per TTL.
// With no QUEEN_DATABASES there is nothing to resolve and the default database is returned as is,
// so tenant-less and single-database deployments run exactly the code they ran before.
//
// A placed tenant's Database is wrapped so every call re-checks the map first (a cache read): a
// long-poll that started before its tenant began to move stops at its next re-check instead of
// touching the source database while the move copies it.
import type { Database } from '../database.js'
import { DbError } from '../errors.js'
import { checkSchemaCurrent, checkStatementTimeout, MigrationError } from '../migrate.js'
import type { PlacementCache } from './placement-cache.js'
import { DEFAULT_DATABASE, type DatabaseHandle, type DatabaseSet } from './database-set.js'

export interface PlacementRouter {
  /** The database the tenant's request must use; rejects with a DbError the error map turns into 503. */
  forTenant(tenant: string): Promise<Database>
  readonly set: DatabaseSet
  readonly cache: PlacementCache
}

/** Which databases passed the serving checks in this process or isolate (kept across requests). */
export interface Readiness {
  ensure(handle: DatabaseHandle): Promise<void>
}

// A database found behind is re-checked at most this often, so its tenants' 503s do not each cost a query.
const RECHECK_MS = 1000

export const moving = () => new DbError('sqlstate', 'QMMOV', 'tenant is being moved to another database; retry shortly')

export function createReadiness(options: { skip?: readonly string[] } = {}): Readiness {
  const ready = new Set<string>(options.skip ?? [])
  const failed = new Map<string, { at: number; error: DbError }>()
  const checking = new Map<string, Promise<void>>()
  return {
    async ensure(handle) {
      if (ready.has(handle.name)) return
      const last = failed.get(handle.name)
      if (last && Date.now() - last.at < RECHECK_MS) throw last.error
      let check = checking.get(handle.name)
      if (!check) {
        check = (async () => {
          try {
            // A bare Database (a test app's) was checked by whoever built it.
            if (handle.pool) {
              await checkStatementTimeout(handle.pool)
              await checkSchemaCurrent(handle.pool)
            }
            ready.add(handle.name)
            failed.delete(handle.name)
          } catch (error) {
            // Down: the usual 503 db_unavailable. Reachable but behind (or a wrong role timeout): its
            // own 503, so an operator sees why only these tenants are refused.
            const refused =
              error instanceof MigrationError ? new DbError('sqlstate', 'QMBHD', error.message) : error instanceof DbError ? error : new DbError('unavailable', '08000', 'database unavailable')
            failed.set(handle.name, { at: Date.now(), error: refused })
            throw refused
          } finally {
            checking.delete(handle.name)
          }
        })()
        checking.set(handle.name, check)
      }
      await check
    },
  }
}

export function createPlacementRouter(set: DatabaseSet, cache: PlacementCache, readiness: Readiness): PlacementRouter {
  const single = set.names.length === 1
  const directory = () => set.get(DEFAULT_DATABASE).db

  const placedDatabase = (tenant: string, name: string, db: Database): Database => ({
    ...db,
    async call(procedureName, args, gate) {
      const entry = await cache.lookup(tenant, directory())
      if (entry.moving || entry.database !== name) throw moving()
      return db.call(procedureName, args, gate)
    },
  })

  return {
    set,
    cache,
    async forTenant(tenant) {
      if (single) return directory()
      const entry = await cache.lookup(tenant, directory())
      if (entry.moving) throw moving()
      if (!set.has(entry.database)) {
        // The directory names a database this broker was not configured with (a rolling change of
        // QUEEN_DATABASES): refuse, another replica may know it.
        throw new DbError('sqlstate', 'QMNDB', `database ${entry.database} is not configured on this broker`)
      }
      const handle = set.get(entry.database)
      await readiness.ensure(handle)
      if (tenant === '') return handle.db
      return placedDatabase(tenant, entry.database, handle.db)
    },
  }
}
