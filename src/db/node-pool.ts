// node-postgres pools: the Node runtime's driver, and on Workers the Hyperdrive binding's (which
// hands out a local connection string to its own pooler).
import pg from 'pg'
import type { PoolLike } from './queryable.js'

export interface NodePoolOptions {
  connectionString: string
  max: number
  /** How long a request may wait for a connection before it is answered 503. */
  connectionTimeoutMillis?: number
}

export function createNodePool(options: NodePoolOptions): PoolLike {
  const pool = new pg.Pool({
    connectionString: options.connectionString,
    max: options.max,
    connectionTimeoutMillis: options.connectionTimeoutMillis ?? 5000,
    idleTimeoutMillis: 30_000,
    application_name: 'queen-edge',
  })
  // An idle client whose server ended it (a restart, a failover, a dropped database, even while
  // pool.end() is still closing it) makes the pool emit 'error'; without a listener that throws
  // and kills the process. The pool has already dropped the client, and the next checkout connects
  // again, so there is nothing to do. Every pool needs this, not only the serving one: a migration
  // pool met it when a test dropped its database right after pool.end() resolved.
  pool.on('error', () => {})
  return pool as unknown as PoolLike
}
