// Workers entry: the same Hono app as Node, a database pool per request (never module-level: an
// isolate cannot keep sockets across requests), and the cron lanes in scheduled(). Configuration
// is validated once per isolate at the first event; if it is invalid every request answers
// 500 internal and the log names the variable (D22).
import type { ExecutionContext, ExportedHandler, ScheduledController } from '@cloudflare/workers-types'
import type { Hono } from 'hono'
import { runDueLanes } from '../cron/scheduled.js'
import { createApp } from './app.js'
import { loadConfig, type Config } from './config.js'
import { createDatabase, type Database } from './db/database.js'
import { createEdgePool } from './db/edge-pool.js'
import { checkStatementTimeout } from './db/migrate.js'
import { createNodePool } from './db/node-pool.js'
import type { PoolLike } from './db/queryable.js'
import type { AppEnv } from './http/env.js'
import { createLogger, describeError, type Logger } from './log.js'

export interface Env {
  DATABASE_URL?: string
  /** host:port of scripts/ws-bridge.ts for local runs; unset in production. */
  NEON_WS_PROXY?: string
  HYPERDRIVE?: { connectionString: string }
  [variable: string]: unknown
}

interface Isolate {
  config: Config
  log: Logger
  app: Hono<AppEnv>
  /** Set once the statement-timeout check (D3) has passed on this isolate. */
  checked: boolean
}

let isolate: Isolate | { error: string } | undefined
const REQUEST_DB = Symbol('request database')

function boot(env: Env): Isolate | { error: string } {
  if (isolate) return isolate
  try {
    const config = loadConfig(env, 'workers')
    if (config.DATABASE_URL === undefined && env.HYPERDRIVE === undefined) throw new Error('invalid configuration: DATABASE_URL is required on Workers (wrangler secret put DATABASE_URL)')
    if (config.JWT_ENABLED) throw new Error('invalid configuration: JWT_ENABLED=true, but JWT verification is not built yet (issue #8)')
    const log = createLogger(config.LOG_LEVEL)
    const app = createApp({ config, log, database: (c) => (c.env as Record<symbol, Database>)[REQUEST_DB]! })
    isolate = { config, log, app, checked: false }
  } catch (error) {
    isolate = { error: (error as Error).message }
  }
  return isolate
}

function requestPool(env: Env, config: Config): PoolLike {
  if (env.HYPERDRIVE) return createNodePool({ connectionString: env.HYPERDRIVE.connectionString, max: 1 })
  return createEdgePool({ connectionString: config.DATABASE_URL!, wsProxy: env.NEON_WS_PROXY })
}

const internalError = () =>
  new Response(JSON.stringify({ error: 'Internal error', code: 'internal' }), {
    status: 500,
    headers: { 'content-type': 'application/json; charset=utf-8', 'access-control-allow-origin': '*' },
  })

// workers-types' Request/Response are nominally different from the DOM types Hono is typed
// against, though they are the same objects at runtime; the `as never` casts bridge only that.
export default {
  async fetch(request, env, ctx) {
    const state = boot(env)
    if ('error' in state) {
      console.log(JSON.stringify({ level: 'error', msg: state.error }))
      return internalError() as never
    }
    const pool = requestPool(env, state.config)
    try {
      if (!state.checked) {
        try {
          await checkStatementTimeout(pool)
          state.checked = true
        } catch (error) {
          // An unreachable database is the app's business (503 / unhealthy); a wrong timeout is not.
          if ((error as { kind?: string }).kind !== 'unavailable') {
            state.log.error('refusing to serve', describeError(error))
            return internalError() as never
          }
        }
      }
      const db = createDatabase(pool, { longLived: false })
      return (await state.app.fetch(request as unknown as Request, { ...env, [REQUEST_DB]: db }, ctx)) as never
    } finally {
      ctx.waitUntil(pool.end().catch(() => {}))
    }
  },

  async scheduled(_controller: ScheduledController, env: Env, ctx: ExecutionContext) {
    const state = boot(env)
    if ('error' in state) {
      console.log(JSON.stringify({ level: 'error', msg: state.error }))
      return
    }
    const pool = requestPool(env, state.config)
    ctx.waitUntil(
      runDueLanes(createDatabase(pool, { longLived: false }), state.config, state.log)
        .catch((error) => state.log.error('scheduled failed', describeError(error)))
        .finally(() => pool.end().catch(() => {})),
    )
  },
} satisfies ExportedHandler<Env>
