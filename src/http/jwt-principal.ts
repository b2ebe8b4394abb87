// From verified claims to the principal (docs/auth.md): the role SET is the role claim ∪ the
// role-array claim, each string mapped through the four JWT_ROLE_* names; strings that name no
// role are ignored (a token may carry roles of other systems). `sub` and the tenant claim ride
// along for producerSub (design decision 42) and tenant binding (design decision 41).
import type { JWTPayload } from 'jose'
import type { Config } from '../config.js'
import type { Principal, Role } from './auth.js'

export class ClaimError extends Error {}

export function roleNames(config: Config): ReadonlyMap<string, Role[]> {
  const names = new Map<string, Role[]>()
  const add = (name: string, role: Role) => names.set(name, [...(names.get(name) ?? []), role])
  add(config.JWT_ROLE_ADMIN, 'admin')
  add(config.JWT_ROLE_READ_WRITE, 'read-write')
  add(config.JWT_ROLE_READ_ONLY, 'read-only')
  add(config.JWT_ROLE_WRITE_ONLY, 'write-only')
  return names
}

// Either claim may hold a string or an array of strings: issuers differ, and the union is the same.
const strings = (value: unknown): string[] =>
  typeof value === 'string' ? [value] : Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : []

export function principalFromClaims(claims: JWTPayload, config: Config, names: ReadonlyMap<string, Role[]>): Principal {
  const roles = new Set<Role>()
  for (const name of [...strings(claims[config.JWT_ROLES_CLAIM]), ...strings(claims[config.JWT_ROLES_ARRAY_CLAIM])]) {
    for (const role of names.get(name) ?? []) roles.add(role)
  }
  const sub = typeof claims.sub === 'string' && claims.sub !== '' ? claims.sub : null
  return { roles, sub, tenant: tenantClaim(claims[config.JWT_TENANT_CLAIM], config.JWT_TENANT_CLAIM) }
}

// Fail closed: a tenant claim that is present but not a string must not read as "unbound" (an
// operator's token). An empty string stays a binding, to a tenant no header can name (''), so
// such a token is refused on every tenant-scoped route rather than let through.
function tenantClaim(value: unknown, name: string): string | null {
  if (value === undefined || value === null) return null
  if (typeof value !== 'string') throw new ClaimError(`claim ${name} must be a string`)
  return value
}
