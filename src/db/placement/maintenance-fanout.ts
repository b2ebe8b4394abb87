// Maintenance is broker-wide, and with several databases (QUEEN_DATABASES, docs/placement.md) each
// database holds its own flags: a switch goes to every configured database and the answer reports
// each. One database keeps the single-database answer exactly (no `databases` field).
import type { Context } from 'hono'
import type { BrokerDatabase } from '../tenant-database.js'
import type { ResultOf } from '../procedures.js'
import { HttpError } from '../../errors.js'
import type { AppEnv } from '../../http/env.js'

export type MaintenanceFlags = ResultOf<'system_maintenance_v1'>

export interface DatabaseFlags extends MaintenanceFlags {
  database: string
}

export interface Fanned {
  /** Each database's flags, `default` first; present only when several databases are configured. */
  databases?: DatabaseFlags[]
  /** A flag is reported on when it is on in any database: some tenant's pushes or pops are held. */
  flags: MaintenanceFlags
}

/**
 * Calls `each` on every configured database at once. When any fails, the request answers 503
 * `maintenance_partial` with Retry-After, naming which databases hold which flags and which could
 * not be reached, so an operator retries until every database agrees.
 */
export async function onEveryDatabase(c: Context<AppEnv>, each: (db: BrokerDatabase) => Promise<MaintenanceFlags>): Promise<Fanned> {
  const placement = c.get('placement')
  const names = placement.databases
  if (names.length <= 1) return { flags: await each(c.get('db').brokerWide) }
  const settled = await Promise.allSettled(names.map((name) => each(placement.database(name))))
  const databases = settled.map((s, i) => (s.status === 'fulfilled' ? { database: names[i]!, ...s.value } : { database: names[i]!, error: 'unavailable' }))
  const failed = databases.filter((d) => 'error' in d).map((d) => d.database)
  if (failed.length > 0) {
    c.get('log').warn('maintenance call failed on some databases', { requestId: c.get('requestId'), failed })
    throw new HttpError(503, 'maintenance_partial', `Database${failed.length > 1 ? 's' : ''} ${failed.join(', ')} could not be reached; retry`, { databases }, { 'Retry-After': '1' })
  }
  const ok = databases as DatabaseFlags[]
  return {
    databases: ok,
    flags: { maintenanceMode: ok.some((d) => d.maintenanceMode), popMaintenanceMode: ok.some((d) => d.popMaintenanceMode) },
  }
}
