// A cap on parked long polls (docs/security.md). A parked poll costs a re-check at least once a
// second and a socket, so a tenant opening thousands of them could crowd out the others' polls and
// the process itself. Past the cap (per tenant with tenancy on, and per process or isolate) a poll
// that would park is answered 429 with Retry-After instead: Queen's clients wait Retry-After and
// poll again, where an immediate 204 would make their consume loop poll again at once.
import { HttpError } from '../errors.js'

export interface ParkedPolls {
  /** Takes a parking place for `tenant`; returns its release, or throws 429 past either cap. */
  enter(tenant: string): () => void
  /** Polls parked now, for `tenant` or (without one) in all. */
  count(tenant?: string): number
}

export interface ParkingOptions {
  /** Parked polls of one tenant; with tenancy off this is set to `total`. */
  perTenant: number
  /** Parked polls of the whole process or isolate. */
  total: number
}

export const tooManyParked = (scope: 'tenant' | 'broker') =>
  new HttpError(
    429,
    'too_many_polls',
    scope === 'tenant' ? 'Too many long polls parked for this tenant; retry shortly' : 'Too many long polls parked on this broker; retry shortly',
    {},
    { 'Retry-After': '1' },
  )

export function createParkedPolls(options: ParkingOptions): ParkedPolls {
  const byTenant = new Map<string, number>()
  let total = 0
  return {
    enter(tenant) {
      const mine = byTenant.get(tenant) ?? 0
      if (mine >= options.perTenant) throw tooManyParked('tenant')
      if (total >= options.total) throw tooManyParked('broker')
      byTenant.set(tenant, mine + 1)
      total++
      let left = false
      return () => {
        if (left) return
        left = true
        total--
        const now = (byTenant.get(tenant) ?? 1) - 1
        if (now === 0) byTenant.delete(tenant)
        else byTenant.set(tenant, now)
      }
    },
    count(tenant) {
      return tenant === undefined ? total : (byTenant.get(tenant) ?? 0)
    },
  }
}
