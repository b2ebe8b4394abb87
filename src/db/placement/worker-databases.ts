// The Workers runtime's databases: pools opened per request (workerd ties a socket to the request
// that opened it) and ended with it. Which driver serves a database is chosen here (docs/placement.md):
// `default` is the HYPERDRIVE binding (node-postgres over TCP to Hyperdrive's pooler) when there is
// one, else Neon's driver on DATABASE_URL; a QUEEN_DATABASES name is either `binding:<NAME>`, the
// Hyperdrive binding of that name, or a connection string (Neon's driver).
import type { Config } from '../../config.js'
import { createDatabase } from '../database.js'
import { createEdgePool } from '../edge-pool.js'
import { DbError } from '../errors.js'
import { createNodePool } from '../node-pool.js'
import type { PoolLike } from '../queryable.js'
import { createDatabaseSet, databaseNames, DEFAULT_DATABASE, type DatabaseSet } from './database-set.js'

/** The Worker's bindings that choose a driver. */
export interface DatabaseBindings {
  /** host:port of scripts/ws-bridge.ts for local runs; unset in production. */
  NEON_WS_PROXY?: string
  /** A Hyperdrive binding: node-postgres over TCP to Hyperdrive's pooler instead of Neon's driver. */
  HYPERDRIVE?: { connectionString: string }
  /** The Hyperdrive bindings QUEEN_DATABASES names as `binding:<NAME>`. */
  [variable: string]: unknown
}

export function openWorkerPool(env: DatabaseBindings, config: Config, name = DEFAULT_DATABASE): PoolLike {
  if (name === DEFAULT_DATABASE) {
    if (env.HYPERDRIVE) return createNodePool({ connectionString: env.HYPERDRIVE.connectionString, max: 1 })
    return createEdgePool({ connectionString: config.DATABASE_URL!, wsProxy: env.NEON_WS_PROXY })
  }
  const target = config.QUEEN_DATABASES![name]!
  if (target.startsWith('binding:')) {
    const binding = env[target.slice('binding:'.length)] as { connectionString?: string } | undefined
    if (typeof binding?.connectionString !== 'string') throw new DbError('sqlstate', 'QMNDB', `no Hyperdrive binding for database ${name}`)
    return createNodePool({ connectionString: binding.connectionString, max: 1 })
  }
  return createEdgePool({ connectionString: target, wsProxy: env.NEON_WS_PROXY })
}

/** This request's databases: the default on `defaultPool`, the others opened on first use. */
export function workerDatabaseSet(env: DatabaseBindings, config: Config, defaultPool: PoolLike): DatabaseSet {
  return createDatabaseSet(databaseNames(config.QUEEN_DATABASES), (name) => {
    const pool = name === DEFAULT_DATABASE ? defaultPool : openWorkerPool(env, config, name)
    return { name, pool, db: createDatabase(pool, { longLived: false }) }
  })
}
