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
}

export interface RouteDef extends RouteSpec {
  handler: Handler<AppEnv>
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
