// Who is calling. Authentication is off by default (docs/auth.md): then every request holds all four
// roles and no subject. With JWT_ENABLED=true createApp uses the JWT authenticator (./jwt.ts).
import type { Context } from 'hono'
import type { Config } from '../config.js'

export const ROLES = ['admin', 'read-write', 'read-only', 'write-only'] as const
export type Role = (typeof ROLES)[number]

export interface Principal {
  roles: ReadonlySet<Role>
  /** The token's `sub`, stamped on pushed messages as producerSub; null without auth. */
  sub: string | null
  /** The tenant a token is bound to (JWT_TENANT_CLAIM), or null. */
  tenant: string | null
}

/** Auth off, or a path in JWT_SKIP_PATHS: not authenticated at all, so nothing is refused here. */
export const ANONYMOUS: Principal = { roles: new Set(ROLES), sub: null, tenant: null }

export type Authenticator = (c: Context, config: Config) => Promise<Principal>

export const authenticationOff: Authenticator = async () => ANONYMOUS
