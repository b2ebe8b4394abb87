// The one seam between the broker and a driver. node-postgres' Pool, Neon's serverless Pool and a
// Hyperdrive-backed pg Pool all satisfy it, which is why the rest of src/db is written once.

export interface QueryResultLike {
  rows: Record<string, unknown>[]
}

export interface Queryable {
  query(text: string, params?: unknown[]): Promise<QueryResultLike>
}

/** A pool: queries, plus the session a migration needs (BEGIN … COMMIT on one connection). */
export interface PoolLike extends Queryable {
  connect(): Promise<Queryable & { release(error?: Error | boolean): void }>
  end(): Promise<void>
  on?(event: 'error', listener: (error: Error) => void): unknown
  readonly totalCount?: number
  readonly idleCount?: number
  readonly waitingCount?: number
}
