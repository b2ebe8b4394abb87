// One helper registers every route together with its access record (design decision 40): method,
// path, the role SET it accepts (not a ladder, design decision 39), whether the tenant header
// applies, its body class, a one-line summary, and the zod schemas of its input. Authorization,
// body parsing, the generated route table and /openapi.json all read only this record.
//
// route() is also the one place input is validated: it runs the RouteSpec's own schema objects over the
// path parameters, the query and the body and hands the handler their typed output, so the schema
// /openapi.json describes is the schema the route enforces and the two cannot drift.
import type { Context, Handler } from 'hono'
import type { z } from 'zod'
import type { AppEnv } from './env.js'
import type { Role } from './auth.js'
import { HttpError } from '../errors.js'
import { queryObject } from './query-schema.js'
import { fieldColon, fieldSpace, validate } from './validate.js'

export type Method = 'GET' | 'POST' | 'PUT' | 'DELETE'
export type BodyClass = 'required' | 'optional' | 'none'

/** The input schemas of a route; each is optional, and a part without one is passed through untouched. */
export interface RequestSchemas {
  /** Path parameters (the names come from the path; this adds their rules). */
  params?: z.ZodType
  /** Query parameters, over queryObject() (first occurrence, empty = absent). */
  query?: z.ZodType
  /** The JSON body, after the guard has read and parsed it (http/body.ts). */
  body?: z.ZodType
  /**
   * A check of the raw body that depends on configuration, so no static schema can hold it, and
   * that must come before the schema's (push's item count: 413 before any item is looked at).
   */
  admit?: (c: Context<AppEnv>, body: Record<string, unknown>) => void
}

export interface RouteSpec {
  method: Method
  path: string
  /** One line for the API reference. */
  summary: string
  roles: readonly Role[]
  /** 'none' only for /health and the metrics routes: tenant-free is a property of the route. */
  tenant: 'required' | 'none'
  body: BodyClass
  /**
   * Operator-only: changes broker-wide state (maintenance, placement) or reads broker-wide data (the
   * placement directory, process and PostgreSQL figures). Tenant-bound tokens are refused with 403
   * tenant_forbidden, whether or not tenancy is on (docs/security.md).
   */
  brokerWide?: true
  /**
   * The code a refused input answers with, where a family has its own (the ephemeral routes answer
   * ephemeral_bad_request); invalid_request otherwise.
   */
  badRequestCode?: string
  request?: RequestSchemas
}

export interface RouteDef extends RouteSpec {
  handler: Handler<AppEnv>
}

type Out<S, Else> = [S] extends [z.ZodType] ? z.output<S> : Else

/** What a handler receives: each part validated by the RouteSpec's schema, or as it arrived without one. */
export interface RouteInput<R extends RequestSchemas> {
  params: Out<R['params'], Record<string, string>>
  query: Out<R['query'], Record<string, string>>
  body: Out<R['body'], Record<string, unknown>>
}

/** The authorization rule (design decision 39): the request's role set must meet the route's. No ladder. */
export function authorizes(spec: Pick<RouteSpec, 'roles'>, roles: ReadonlySet<Role>): boolean {
  return spec.roles.some((role) => roles.has(role))
}

/**
 * Validates in the order path → query → body, the order in which a reader of the URL meets them.
 * The body was read by the guard; a route with body class 'none' has none ({}).
 */
export function routeInput<R extends RequestSchemas>(request: R | undefined, c: Context<AppEnv>): RouteInput<R> {
  const rawParams: Record<string, string> = c.req.param()
  const rawQuery = queryObject(c.req.url)
  const rawBody = c.get('body') ?? {}
  const params = request?.params ? validate(request.params, rawParams, fieldSpace) : rawParams
  const query = request?.query ? validate(request.query, rawQuery, fieldSpace) : rawQuery
  request?.admit?.(c, rawBody)
  const body = request?.body ? validate(request.body, rawBody, fieldColon) : rawBody
  return { params, query, body } as RouteInput<R>
}

export function route<R extends RequestSchemas = RequestSchemas>(
  spec: RouteSpec & { request?: R },
  handler: (c: Context<AppEnv>, input: RouteInput<R>) => ReturnType<Handler<AppEnv>>,
): RouteDef {
  const code = spec.badRequestCode
  if (code === undefined) return { ...spec, handler: (c) => handler(c, routeInput(spec.request, c)) }
  return {
    ...spec,
    handler: (c) => {
      let input: RouteInput<R>
      try {
        input = routeInput(spec.request, c)
      } catch (error) {
        if (error instanceof HttpError && error.status === 400 && error.code === 'invalid_request') throw new HttpError(400, code, error.message)
        throw error
      }
      return handler(c, input)
    },
  }
}

/** Role sets by name, as docs/routes.md writes them (W write-only, R read-only, RW read-write, A admin). */
export const ROLE_SETS = {
  R_RW_A: ['read-only', 'read-write', 'admin'],
  W_RW_A: ['write-only', 'read-write', 'admin'],
  RW_A: ['read-write', 'admin'],
  A: ['admin'],
} as const satisfies Record<string, readonly Role[]>
