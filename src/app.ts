// createApp(deps) builds the whole broker as one Hono app. It knows no runtime: src/node.ts and
// src/worker.ts hand it configuration and a way to reach the database, nothing else.
import { Hono } from 'hono'
import type { Context, MiddlewareHandler } from 'hono'
import type { Config } from './config.js'
import type { Database } from './db/database.js'
import { toHttpError } from './errors.js'
import { authenticationOff, type Authenticator } from './http/auth.js'
import { cors } from './http/cors.js'
import type { Deflater } from './http/gzip-splice.js'
import type { AppEnv } from './http/env.js'
import { routeGuard } from './http/guard.js'
import { jwtAuthenticator } from './http/jwt.js'
import { requestLog } from './http/request-log.js'
import { allowedMethods } from './http/allowed-methods.js'
import { urlLimit } from './http/url-limit.js'
import type { PageDef } from './http/page.js'
import type { RouteDef } from './http/route.js'
import { describeError, type Logger } from './log.js'
import { createEncryptionFlags, type EncryptionFlags } from './messages/encryption-flags.js'
import { createProcessMetrics, type ProcessMetrics } from './metrics.js'
import { createPopWaker, type PopWaker } from './pop-waker.js'
import { allPages } from './pages/index.js'
import { mountAwsEndpoint } from './aws/mount.js'
import { awsServices } from './aws/services.js'
import { createQueueListingCache, type QueueListingCache } from './queues/listing-cache.js'
import { allRoutes } from './routes/index.js'
import { VERSION } from './version.js'
import { createPlacementCache } from './db/placement/placement-cache.js'
import { createPlacementRouter, createReadiness, type PlacementRouter } from './db/placement/router.js'
import { singleDatabaseSet } from './db/placement/database-set.js'
import { placementService } from './db/placement/service.js'
import { tenantDatabase } from './db/tenant-database.js'
import { createTenantCallLimiter } from './tenant-share/call-limiter.js'
import { createParkedPolls } from './tenant-share/parked-polls.js'

export interface AppDeps {
  config: Config
  log: Logger
  /**
   * The databases and the placement map (docs/placement.md): Node hands one router for the process,
   * the Worker one per request. Each request's database is its tenant's, resolved after the guard.
   */
  placement?(c: Context<AppEnv>): PlacementRouter
  /** A single database for every request (tests); used when no placement router is given. */
  database?(c: Context<AppEnv>): Database
  authenticate?: Authenticator
  /** Defaults to every route of the broker; tests may mount a subset. */
  routes?: RouteDef[]
  /** Defaults to every page (console, API reference); tests may mount a subset. */
  pages?: PageDef[]
  /** Long-poll wake-ups; defaults to one per app on Node and none on Workers (design decision 35). */
  popWaker?: PopWaker | null
  /** Process counters; one per app by default, so each app (process, isolate) reports its own. */
  metrics?: ProcessMetrics
  /** A compressor for large cached answers (src/http/gzip-splice.ts): Node hands one, Workers none. */
  deflater?: Deflater
  /** Which queues are encrypted, as the database last said; one map per app by default. */
  encryptionFlags?: EncryptionFlags
  /** The pre-rendered `?stats=cached` listings (src/queues/listing-cache.ts); one per app by default. */
  listingCache?: QueueListingCache
}

export function createApp(deps: AppDeps): Hono<AppEnv> {
  const { config, log } = deps
  // Both runtimes get verification from here, so neither entry can forget it.
  const authenticate = deps.authenticate ?? (config.JWT_ENABLED ? jwtAuthenticator(config, { log }) : authenticationOff)
  const app = new Hono<AppEnv>()
  const popWaker = deps.popWaker !== undefined ? deps.popWaker : config.runtime === 'node' ? createPopWaker() : null

  const metrics = deps.metrics ?? createProcessMetrics(config.runtime)
  const deflater = deps.deflater ?? null
  // Per app, so per process on Node and per isolate on Workers (each entry builds one app).
  const encryptionFlags = deps.encryptionFlags ?? createEncryptionFlags()
  const listingCache = deps.listingCache ?? createQueueListingCache()
  // Each tenant's share (docs/security.md), per app like the rest: with tenancy off there is one
  // tenant, so no share to keep and the process-wide parking cap is its cap.
  const tenancy = config.QUEEN_TENANCY_HEADER !== undefined
  const parkedPolls = createParkedPolls({ perTenant: tenancy ? config.MAX_PARKED_POLLS_PER_TENANT : config.MAX_PARKED_POLLS, total: config.MAX_PARKED_POLLS })
  const callLimiter = tenancy
    ? createTenantCallLimiter({
        concurrency: Math.min(config.TENANT_DB_CONCURRENCY, config.DB_POOL_SIZE),
        shared: config.TENANT_DB_CONCURRENCY_SHARED,
        heavy: config.TENANT_DB_CONCURRENCY_HEAVY,
        heavyShare: config.TENANT_DB_HEAVY_PERCENT / 100,
        queue: config.TENANT_DB_QUEUE,
        heavyDuty: config.TENANT_DB_HEAVY_DUTY_PERCENT / 100,
      })
    : undefined

  app.use(requestLog(log, metrics))
  app.use(cors(config.QUEEN_TENANCY_HEADER, config.CORS_ORIGINS))
  app.use(urlLimit)
  app.use(async (c, next) => {
    c.set('config', config)
    c.set('log', log)
    c.set('popWaker', popWaker)
    c.set('metrics', metrics)
    c.set('deflater', deflater)
    c.set('encryptionFlags', encryptionFlags)
    c.set('listingCache', listingCache)
    c.set('parkedPolls', parkedPolls)
    await next()
  })

  const routerOf = placementRouters(deps, config.PLACEMENT_CACHE_TTL_MS)
  // After the guard, which settles the tenant: the request's database is its tenant's (one cache
  // read; a directory read once per TTL), chosen before the handler's one round trip.
  const placeRequest: MiddlewareHandler<AppEnv> = async (c, next) => {
    const router = routerOf(c)
    c.set('placement', placementService(router, log))
    const tenant = c.get('tenant')
    c.set('db', tenantDatabase(await router.forTenant(tenant), tenant, callLimiter))
    await next()
  }
  // The SQS facade (docs/sqs.md), only with keys configured; before the pages, so a presigned
  // `GET /?Action=…` reaches it while a plain `GET /` stays the console.
  if (config.AWS_ACCESS_KEYS !== undefined) {
    mountAwsEndpoint(app, { config, keys: config.AWS_ACCESS_KEYS, log, services: awsServices(), place: placeRequest })
  }
  const pages = deps.pages ?? allPages()
  for (const def of pages) app.get(def.path, def.handler)
  const routes = deps.routes ?? allRoutes(VERSION)
  for (const def of routes) {
    app.on(def.method, def.path, routeGuard(def, config, authenticate), placeRequest, def.handler)
  }

  // Hono reaches notFound for a path no route has and for a real path asked with another method.
  const allowed = allowedMethods([...routes, ...pages.map((p) => ({ method: 'GET' as const, path: p.path }))])
  app.notFound((c) => {
    const methods = allowed(c.req.path)
    if (methods.length === 0) return c.json({ error: 'Not found', code: 'not_found' }, 404)
    return c.json({ error: `Method ${c.req.method} not allowed; use ${methods.join(', ')}`, code: 'method_not_allowed' }, 405, { Allow: methods.join(', ') })
  })

  app.onError((error, c) => {
    const http = toHttpError(error)
    if (http.status >= 500) {
      log.error('request failed', { requestId: c.get('requestId'), route: c.get('routePattern'), status: http.status, ...describeError(error) })
    }
    return c.json(http.body(), http.status, http.headers)
  })

  return app
}

// Apps built around one bare Database (tests) get a router of one, made once per Database.
function placementRouters(deps: AppDeps, ttlMs: number): (c: Context<AppEnv>) => PlacementRouter {
  if (deps.placement) return deps.placement
  const database = deps.database
  if (!database) throw new Error('createApp needs placement or database')
  const routers = new WeakMap<Database, PlacementRouter>()
  return (c) => {
    const db = database(c)
    let router = routers.get(db)
    if (!router) routers.set(db, (router = createPlacementRouter(singleDatabaseSet(db), createPlacementCache({ ttlMs }), createReadiness())))
    return router
  }
}
