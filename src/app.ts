// createApp(deps) builds the whole broker as one Hono app. It knows no runtime: src/node.ts and
// src/worker.ts hand it configuration and a way to reach the database, nothing else.
import { Hono } from 'hono'
import type { Context } from 'hono'
import type { Config } from './config.js'
import type { Database } from './db/database.js'
import { toHttpError } from './errors.js'
import { authenticationOff, type Authenticator } from './http/auth.js'
import { cors } from './http/cors.js'
import type { AppEnv } from './http/env.js'
import { routeGuard } from './http/guard.js'
import { jwtAuthenticator } from './http/jwt.js'
import { requestLog } from './http/request-log.js'
import type { PageDef } from './http/page.js'
import type { RouteDef } from './http/route.js'
import { describeError, type Logger } from './log.js'
import { createProcessMetrics, type ProcessMetrics } from './metrics.js'
import { createPopWaker, type PopWaker } from './pop-waker.js'
import { allPages } from './pages/index.js'
import { allRoutes } from './routes/index.js'
import { VERSION } from './version.js'

export interface AppDeps {
  config: Config
  log: Logger
  /** The database for one request: Node returns its process pool, the Worker a per-request pool. */
  database(c: Context<AppEnv>): Database
  authenticate?: Authenticator
  /** Defaults to every route of the broker; tests may mount a subset. */
  routes?: RouteDef[]
  /** Defaults to every page (console, API reference); tests may mount a subset. */
  pages?: PageDef[]
  /** Long-poll wake-ups; defaults to one per app on Node and none on Workers (D24). */
  popWaker?: PopWaker | null
  /** Process counters; one per app by default, so each app (process, isolate) reports its own. */
  metrics?: ProcessMetrics
}

export function createApp(deps: AppDeps): Hono<AppEnv> {
  const { config, log } = deps
  // Both runtimes get verification from here, so neither entry can forget it.
  const authenticate = deps.authenticate ?? (config.JWT_ENABLED ? jwtAuthenticator(config, { log }) : authenticationOff)
  const app = new Hono<AppEnv>()
  const popWaker = deps.popWaker !== undefined ? deps.popWaker : config.runtime === 'node' ? createPopWaker() : null

  const metrics = deps.metrics ?? createProcessMetrics(config.runtime)

  app.use(requestLog(log, metrics))
  app.use(cors(config.QUEEN_TENANCY_HEADER))
  app.use(async (c, next) => {
    c.set('config', config)
    c.set('log', log)
    c.set('db', deps.database(c))
    c.set('popWaker', popWaker)
    c.set('metrics', metrics)
    await next()
  })

  for (const def of deps.pages ?? allPages()) app.get(def.path, def.handler)
  for (const def of deps.routes ?? allRoutes(VERSION)) {
    app.on(def.method, def.path, routeGuard(def, config, authenticate), def.handler)
  }

  app.notFound((c) => c.json({ error: 'Not found', code: 'not_found' }, 404))

  app.onError((error, c) => {
    const http = toHttpError(error)
    if (http.status >= 500) {
      log.error('request failed', { requestId: c.get('requestId'), route: c.get('routePattern'), status: http.status, ...describeError(error) })
    }
    return c.json(http.body(), http.status, http.headers)
  })

  return app
}
