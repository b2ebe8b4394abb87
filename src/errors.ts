// Every error a client can see, and the one table that turns a database failure into a status.
// The envelope is flat, {"error", "code"} (API §2.1), because Queen's clients read body.error as a
// string; "invalid" is added only by the sink-hold refusals of configure.
import { DbError } from './db/errors.js'

export type ErrorStatus = 400 | 401 | 403 | 404 | 409 | 413 | 500 | 503

export class HttpError extends Error {
  constructor(
    readonly status: ErrorStatus,
    readonly code: string,
    message: string,
    readonly extra: Record<string, unknown> = {},
    readonly headers: Record<string, string> = {},
  ) {
    super(message)
    this.name = 'HttpError'
  }

  body(): Record<string, unknown> {
    return { error: this.message, code: this.code, ...this.extra }
  }
}

export const badRequest = (message: string, code = 'invalid_request') => new HttpError(400, code, message)

const unavailable = () => new HttpError(503, 'db_unavailable', 'Database unavailable', {}, { 'Retry-After': '1' })
const internal = () => new HttpError(500, 'internal', 'Internal error')

// SQLSTATEs that mean "try again shortly": nothing was committed by the failed call (API §2.3).
export function isTransient(sqlstate: string): boolean {
  return (
    sqlstate.startsWith('08') ||
    ['53300', '57P01', '57P02', '57P03', '57014', '40001', '40P01'].includes(sqlstate)
  )
}

/**
 * The SQLSTATE → HTTP map (ENGINE §1.6 as amended by API §2 and D16/D17). Engine codes use class
 * QM; their MESSAGE is ours and safe to show. Anything unexpected is a bare 500: driver text can
 * name hosts, tables or values and never reaches a client.
 */
export function fromDbError(error: DbError): HttpError {
  if (error.kind === 'unavailable' || isTransient(error.sqlstate)) return unavailable()
  switch (error.sqlstate) {
    case 'QM400':
      return badRequest(error.message)
    case 'QM404':
      return new HttpError(404, 'queue_not_found', 'Queue not found')
    case 'QMHLD': {
      const invalid = (error.detail as { invalid?: unknown } | undefined)?.invalid
      return new HttpError(400, 'invalid_request', error.message, typeof invalid === 'string' ? { invalid } : {})
    }
    case 'QMMNT':
      return new HttpError(503, 'maintenance', 'Push maintenance is on; retry later', {}, { 'Retry-After': '5' })
    case 'QMMOV':
      return new HttpError(503, 'tenant_moving', 'Tenant is being moved to another database; retry shortly', {}, { 'Retry-After': '2' })
    case 'QMBHD':
      return new HttpError(503, 'database_behind', "The tenant's database is not migrated to this version; retry later", {}, { 'Retry-After': '5' })
    case 'QMNDB':
      return new HttpError(503, 'database_unconfigured', "The tenant's database is not configured on this broker; retry later", {}, { 'Retry-After': '5' })
    case 'QM409':
      return new HttpError(409, 'placement_conflict', error.message)
    case 'QMENC':
      return new HttpError(503, 'encryption_changed', 'Queue encryption changed during the push; retry', {}, { 'Retry-After': '1' })
    default:
      return internal()
  }
}

/**
 * Configure's own failure shapes (q&r, API §2.2 item 4, D13): the one route that passes procedure
 * verdicts through. Sink-hold refusals and other engine 400s keep the usual map; a failure of the
 * call itself (no connection, a transient SQLSTATE) is 500 "configure failed: …" rather than 503;
 * any other verdict is its MESSAGE verbatim, at 404 when it says "not found", else at 500.
 * Driver transport text never gets here: DbError reduces it to "database unavailable".
 */
export function fromConfigureError(error: unknown): HttpError {
  if (!(error instanceof DbError)) return toHttpError(error)
  if (error.kind === 'unavailable' || isTransient(error.sqlstate)) {
    return new HttpError(500, 'internal', `configure failed: ${error.message}`)
  }
  if (error.sqlstate.startsWith('QM')) return fromDbError(error)
  if (/not found/i.test(error.message)) return new HttpError(404, 'not_found', error.message)
  return new HttpError(500, 'internal', error.message)
}

/** Any thrown value, as the HttpError a client may see. */
export function toHttpError(error: unknown): HttpError {
  if (error instanceof HttpError) return error
  if (error instanceof DbError) return fromDbError(error)
  return internal()
}
