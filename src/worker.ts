// Workers entry: the same Hono app as Node, a database pool per request and the cron lanes in
// scheduled(). The pool is never module-level: workerd ties a socket to the request that opened
// it, so a pool shared across requests fails on the second one. Configuration is validated once
// per isolate at the first event; if it is invalid every request answers 500 internal and the log
// names the variable (design decision 36).
import type { ExecutionContext, ExportedHandler, ScheduledController } from '@cloudflare/workers-types'
import type { Hono } from 'hono'
import { runDueLanes } from '../cron/scheduled.js'
import { runSinkCron } from '../cron/sink.js'
import { createApp } from './app.js'
import { ConfigError, loadConfig, type Config } from './config.js'
import { DEFAULT_DATABASE, type DatabaseSet } from './db/placement/database-set.js'
import { createPlacementCache, type PlacementCache } from './db/placement/placement-cache.js'
import { createPlacementRouter, createReadiness, type PlacementRouter } from './db/placement/router.js'
import { openWorkerPool, workerDatabaseSet, type DatabaseBindings } from './db/placement/worker-databases.js'
import { DbError } from './db/errors.js'
import { checkStatementTimeout } from './db/migrate.js'
import type { AppEnv } from './http/env.js'
import { loadStaticKeys } from './http/jwt-keys.js'
import { createLogger, describeError, type Logger } from './log.js'

/** The Worker's variables and bindings; the database ones choose a driver (src/db/placement/worker-databases.ts). */
export interface Env extends DatabaseBindings {
  /** A secret (`wrangler secret put DATABASE_URL`): Neon's pooled endpoint. */
  DATABASE_URL?: string
  /** An R2 bucket binding the archive sink writes to when SINK_QUEUES is set (docs/sink.md). */
  SINK_BUCKET?: unknown
  [variable: string]: unknown
}

interface Ready {
  config: Config
  log: Logger
  app: Hono<AppEnv>
  /** Set once the statement-timeout check (design decision 34) has passed on this isolate. */
  checked: boolean
  /** Set once JWT_PUBLIC_KEY has been imported (asynchronous, so not in boot()), or when auth is off. */
  keysLoaded: boolean
}

interface Broken {
  variable: string
  reason: string
}

let isolate: Ready | Broken | undefined
// The per-request placement router (its pools are the request's) rides on the env object Hono hands
// to the app's placement factory.
const REQUEST_ROUTER = Symbol('request placement router')
// Data only, never sockets, so both may live as long as the isolate (docs/placement.md).
let placementCache: PlacementCache | undefined
const readiness = createReadiness({ skip: [DEFAULT_DATABASE] })

function boot(env: Env): Ready | Broken {
  if (isolate) return isolate
  try {
    const config = loadConfig(env, 'workers')
    if (config.DATABASE_URL === undefined && env.HYPERDRIVE === undefined) {
      throw new ConfigError('DATABASE_URL', 'is required on Workers (wrangler secret put DATABASE_URL) unless a HYPERDRIVE binding exists')
    }
    const log = createLogger(config.LOG_LEVEL)
    const app = createApp({ config, log, placement: (c) => (c.env as Record<symbol, PlacementRouter>)[REQUEST_ROUTER]! })
    placementCache = createPlacementCache({ ttlMs: config.PLACEMENT_CACHE_TTL_MS })
    isolate = { config, log, app, checked: false, keysLoaded: !config.JWT_ENABLED }
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error
    isolate = { variable: error.variable, reason: error.message }
  }
  return isolate
}

// The key material is part of the configuration: an unparsable PEM makes the isolate refuse every
// request, exactly like an invalid variable (design decision 36), instead of failing each request on its own.
async function bootKeys(state: Ready | Broken): Promise<Ready | Broken> {
  if (!('app' in state) || state.keysLoaded) return state
  try {
    await loadStaticKeys(state.config)
    state.keysLoaded = true
    return state
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error
    isolate = { variable: error.variable, reason: error.message }
    return isolate
  }
}

// Logged on every refused event, not once: an isolate can live for hours, and each 500 should
// be explainable from the log lines around it. LOG_LEVEL itself may be the broken variable, so
// this line bypasses the logger. The message names the variable, never its value.
function logBroken(state: Broken): void {
  console.log(JSON.stringify({ level: 'error', time: new Date().toISOString(), msg: 'refusing to serve', variable: state.variable, error: state.reason }))
}

const internalError = () =>
  new Response(JSON.stringify({ error: 'Internal error', code: 'internal' }), {
    status: 500,
    // No CORS header: without a configuration CORS_ORIGINS is unknown, and the default is none.
    headers: { 'content-type': 'application/json' },
  })

// workers-types' Request/Response are nominally different from the DOM types Hono is typed
// against, though they are the same objects at runtime; the `as never` casts bridge only that.
export default {
  async fetch(request, env, ctx) {
    const state = await bootKeys(boot(env))
    if (!('app' in state)) {
      logBroken(state)
      return internalError() as never
    }
    const pool = openWorkerPool(env, state.config)
    let databases: DatabaseSet | undefined
    try {
      if (!state.checked) {
        try {
          await checkStatementTimeout(pool)
          state.checked = true
        } catch (error) {
          // A check that could not be made (database down, starting up, out of connections) is
          // retried on the next request, and this one gets whatever the routes answer (503,
          // /health unhealthy). Only a timeout read and found wrong is refused (design decision 34).
          if (!(error instanceof DbError)) {
            state.log.error('refusing to serve', describeError(error))
            return internalError() as never
          }
        }
      }
      databases = workerDatabaseSet(env, state.config, pool)
      const router = createPlacementRouter(databases, placementCache!, readiness)
      return (await state.app.fetch(request as unknown as Request, { ...env, [REQUEST_ROUTER]: router }, ctx)) as never
    } finally {
      // Every route produces its whole body before returning (no streaming), so the pools can go.
      ctx.waitUntil((databases ? databases.close() : pool.end()).catch(() => {}))
    }
  },

  async scheduled(_controller: ScheduledController, env: Env, ctx: ExecutionContext) {
    const state = boot(env)
    if (!('app' in state)) {
      logBroken(state)
      return
    }
    const databases = workerDatabaseSet(env, state.config, openWorkerPool(env, state.config))
    const router = createPlacementRouter(databases, placementCache!, readiness)
    const { config, log } = state
    // Lanes run per database, side by side, each keeping to its own budget (about 45 s for all its
    // lanes) under its own leases; the archive sink (SINK_QUEUES, an R2 binding SINK_BUCKET) runs
    // beside them on SINK_TENANT's database with a budget of its own.
    const perDatabase = databases.names.map(async (name) => {
      try {
        await runDueLanes(databases.get(name).db, config, log, name)
      } catch (error) {
        log.error('scheduled failed', { database: name, ...describeError(error) })
      }
    })
    const sink = router
      .forTenant(config.SINK_TENANT)
      .then((db) => runSinkCron(db, config, env.SINK_BUCKET, log))
      .catch((error) => log.error('sink cron failed', describeError(error)))
    ctx.waitUntil(Promise.all([...perDatabase, sink]).finally(() => databases.close().catch(() => {})))
  },
} satisfies ExportedHandler<Env>
