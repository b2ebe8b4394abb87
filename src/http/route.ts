// One helper registers every route together with its access record (API §3.7): method, path, the
// role SET it accepts (not a ladder, §3.3), whether the tenant header applies, and its body class.
// Authorization, body parsing and the generated route table all read only this record.
import type { Handler } from 'hono'
import type { AppEnv } from './env.js'
import type { Role } from './auth.js'

export type Method = 'GET' | 'POST' | 'PUT' | 'DELETE'
export type BodyClass = 'required' | 'optional' | 'none'

export interface RouteSpec {
  method: Method
  path: string
  roles: readonly Role[]
  /** 'none' only for /health and the metrics routes: tenant-free is a property of the route. */
  tenant: 'required' | 'none'
  body: BodyClass
  /**
   * Changes broker-wide state (push and pop maintenance, API §4.4): tenant-bound tokens are
   * refused with 403 tenant_forbidden, whether or not tenancy is on.
   */
  brokerWide?: true
}

export interface RouteDef extends RouteSpec {
  handler: Handler<AppEnv>
}

/** The one authorization rule (API §3.3): the request's role set must meet the route's. No ladder. */
export function authorizes(spec: Pick<RouteSpec, 'roles'>, roles: ReadonlySet<Role>): boolean {
  return spec.roles.some((role) => roles.has(role))
}

export function route(spec: RouteSpec, handler: Handler<AppEnv>): RouteDef {
  return { ...spec, handler }
}

/** Role sets by name, as API §3.6 writes them. */
export const ROLE_SETS = {
  R_RW_A: ['read-only', 'read-write', 'admin'],
  W_RW_A: ['write-only', 'read-write', 'admin'],
  RW_A: ['read-write', 'admin'],
  A: ['admin'],
} as const satisfies Record<string, readonly Role[]>
