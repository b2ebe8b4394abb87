// The placement map as one process or isolate sees it: the directory (queen.placements in the
// default database) cached for PLACEMENT_CACHE_TTL_MS. After the TTL the next lookup asks the
// directory for its version only (placements_directory_v1 with the known version answers no rows
// when nothing changed), so a busy broker pays one small query per TTL, never one per request.
//
// Staleness is bounded, and a move depends on the bound (placement-move.ts): a broker that cannot
// reach the directory keeps its map for one more TTL and then refuses placed tenants (503) rather
// than route them on a map that may be out of date. So no broker acts on a map older than 2 × TTL.
import type { Database } from '../database.js'
import { DbError } from '../errors.js'
import { DEFAULT_DATABASE } from './database-set.js'

export interface PlacementEntry {
  database: string
  /** Set while a move copies the tenant: its requests are refused until the move ends. */
  moving: boolean
}

export interface PlacementCache {
  /** Where the tenant lives, refreshing the map from the directory when it is older than the TTL. */
  lookup(tenant: string, directory: Database): Promise<PlacementEntry>
  /** Forget the map, so the next lookup reads the directory (after this process changed it). */
  invalidate(): void
  readonly ttlMs: number
}

const UNPLACED: PlacementEntry = { database: DEFAULT_DATABASE, moving: false }

export function createPlacementCache(options: { ttlMs: number; now?: () => number }): PlacementCache {
  const now = options.now ?? Date.now
  const ttl = options.ttlMs
  let map = new Map<string, PlacementEntry>()
  let version: number | undefined
  let checkedAt = -Infinity
  let refreshing: Promise<void> | undefined

  const refresh = (directory: Database) =>
    (refreshing ??= directory
      .call('placements_directory_v1', { known: version })
      .then((answer) => {
        if (answer.placements !== null) {
          map = new Map(answer.placements.map((p) => [p.tenant, { database: p.database, moving: p.state === 'moving' }]))
        }
        version = answer.version
        checkedAt = now()
      })
      .finally(() => {
        refreshing = undefined
      }))

  return {
    ttlMs: ttl,
    async lookup(tenant, directory) {
      // Tenant '' (tenancy off, or the tenant-free routes) is never placed: no lookup at all.
      if (tenant === '') return UNPLACED
      const age = now() - checkedAt
      if (age >= ttl) {
        try {
          await refresh(directory)
        } catch (error) {
          // The directory is unreachable: one more TTL on the old map, then refuse (see above).
          if (!(age < 2 * ttl && version !== undefined)) throw error instanceof DbError ? error : new DbError('unavailable', '08000', 'placement directory unavailable')
        }
      }
      return map.get(tenant) ?? UNPLACED
    },
    invalidate() {
      checkedAt = -Infinity
    },
  }
}
