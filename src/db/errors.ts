// Driver errors, normalised. Nothing above src/db sees a pg or Neon error object: every failure of
// a database call becomes a DbError carrying the SQLSTATE (or 'unavailable' when no connection
// could be had), so one table in src/errors.ts can decide the HTTP status.

export type DbFailure = 'sqlstate' | 'unavailable'

export class DbError extends Error {
  constructor(
    readonly kind: DbFailure,
    /** PostgreSQL SQLSTATE, e.g. '57014'; '08000' for connection failures without one. */
    readonly sqlstate: string,
    /** The server's MESSAGE (never shown to clients except by configure's documented pass-through). */
    message: string,
    /** The server's DETAIL, parsed as JSON when the engine raised it as a JSON object. */
    readonly detail: unknown = undefined,
    options?: { cause?: unknown },
  ) {
    super(message, options)
    this.name = 'DbError'
  }
}

export function toDbError(error: unknown): DbError {
  if (error instanceof DbError) return error
  const e = (error ?? {}) as { code?: unknown; message?: unknown; detail?: unknown; severity?: unknown }
  const message = typeof e.message === 'string' ? e.message : String(error)
  const code = typeof e.code === 'string' ? e.code : undefined
  // Only a server's ErrorResponse carries a severity; Node socket errors have codes too (EPIPE…).
  if (code !== undefined && typeof e.severity === 'string') {
    return new DbError('sqlstate', code, message, parseDetail(e.detail), { cause: error })
  }
  // A driver error without a SQLSTATE is a transport failure (socket, pool acquire, WebSocket),
  // which is answered 503 + Retry-After: nothing was written, so a retry is safe (design decision 37).
  return new DbError('unavailable', '08000', 'database unavailable', undefined, { cause: error })
}

function parseDetail(detail: unknown): unknown {
  if (typeof detail !== 'string') return undefined
  try {
    return JSON.parse(detail)
  } catch {
    return detail
  }
}
