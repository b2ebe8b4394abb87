// What the placement admin routes can do, over one PlacementRouter: list the databases and the
// directory, place a tenant, move one. Kept in src/db so the routes stay free of drivers and SQL.
import type { Logger } from '../../log.js'
import type { BrokerDatabase } from '../tenant-database.js'
import type { Placement } from '../procedures.js'
import { DEFAULT_DATABASE } from './database-set.js'
import { moveTenant, type MoveReport } from './move.js'
import type { PlacementRouter } from './router.js'

export interface PlacementService {
  /** `default` first, then QUEEN_DATABASES' names. */
  readonly databases: readonly string[]
  /** One database by name (opened on first use), for series reported per database: broker-wide calls only. */
  database(name: string): BrokerDatabase
  list(): Promise<{ version: number; placements: Placement[] }>
  set(tenant: string, database: string, force: boolean): Promise<Placement>
  move(tenant: string, to: string): Promise<MoveReport>
}

export function placementService(router: PlacementRouter, log: Logger): PlacementService {
  const directory = () => router.set.get(DEFAULT_DATABASE).db
  return {
    databases: router.set.names,
    database: (name) => router.set.get(name).db,
    async list() {
      const { version, placements } = await directory().call('placements_directory_v1', {})
      return { version, placements: placements ?? [] }
    },
    async set(tenant, database, force) {
      const placed = await directory().call('placement_set_v1', { tenant, database, force })
      router.cache.invalidate()
      return placed
    },
    move: (tenant, to) => moveTenant(router, tenant, to, { log }),
  }
}
