// The database handle a request gets: its tenant's database, bound to that tenant. Routes call
// tenant-scoped procedures without a tenant argument (`db.call('kv_namespaces_v1', {})`); the handle
// adds the one the request chain settled, so a route can neither forget it nor name another.
// Broker-wide procedures (the system flags, metrics, Postgres statistics) go through
// `db.brokerWide`, which accepts only those, so each such call says what it is.
import type { CallGate, Database, PoolStats } from './database.js'
import type { ArgsOf, BrokerProcedureName, ResultOf, TenantProcedureName } from './procedures.js'
import type { TenantCallLimiter } from '../tenant-share/call-limiter.js'

/** A tenant-scoped procedure's arguments less the tenant, which the handle supplies. */
export type TenantArgsOf<N extends TenantProcedureName> = Omit<ArgsOf<N>, 'tenant'>

/** The broker-wide procedures of one database, and its pool's counts. */
export interface BrokerDatabase {
  call<N extends BrokerProcedureName>(name: N, args: ArgsOf<N>): Promise<ResultOf<N>>
  /** Connection counts of a long-lived pool; null where the pool is per request (Workers). */
  poolStats(): PoolStats | null
}

export interface TenantDatabase {
  /** The tenant every call is made for ('' when tenancy is off). */
  readonly tenant: string
  call<N extends TenantProcedureName>(name: N, args: TenantArgsOf<N>): Promise<ResultOf<N>>
  /** One real round trip; rejects with a DbError when it fails or takes longer than timeoutMs. */
  ping(timeoutMs: number): Promise<void>
  poolStats(): PoolStats | null
  /** The same database for the broker-wide procedures, for the admin and system routes. */
  readonly brokerWide: BrokerDatabase
}

/**
 * `limiter`, when given, holds the tenant to its share of the connections (docs/security.md): every
 * tenant-scoped call passes here and takes one of the tenant's request places (429 when none is
 * left), and the database runs the call, or the fused call it joins, within the tenant's share of
 * calls in flight, so a flooding tenant waits behind its own calls.
 */
export function tenantDatabase(db: Database, tenant: string, limiter?: TenantCallLimiter): TenantDatabase {
  // The tenant goes last, so it is the handle's whatever the arguments hold.
  const direct = <N extends TenantProcedureName>(name: N, args: TenantArgsOf<N>, gate?: CallGate) =>
    db.call(name, { ...args, tenant } as unknown as ArgsOf<N>, gate)
  const limited = (share: TenantCallLimiter): TenantDatabase['call'] => {
    const gate: CallGate = Object.assign(<T>(call: () => Promise<T>) => share.run(tenant, call), { heavy: () => share.heavy(tenant) })
    return async (name, args) => {
      const release = share.admit(tenant)
      try {
        return await direct(name, args, gate)
      } finally {
        release()
      }
    }
  }
  return {
    tenant,
    call: limiter ? limited(limiter) : direct,
    ping: (timeoutMs) => db.ping(timeoutMs),
    poolStats: () => db.poolStats(),
    brokerWide: db,
  }
}
