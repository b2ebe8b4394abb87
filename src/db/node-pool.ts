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
  return new pg.Pool({
    connectionString: options.connectionString,
    max: options.max,
    connectionTimeoutMillis: options.connectionTimeoutMillis ?? 5000,
    idleTimeoutMillis: 30_000,
    application_name: 'queen-edge',
  }) as unknown as PoolLike
}
