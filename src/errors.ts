// Every error a client can see, and the one table that turns a database failure into a status.
// The envelope is flat, {"error", "code"} (design decision 37), because Queen's clients read
// body.error as a string; "invalid" is added only by the sink-hold refusals of configure.
import { DbError } from './db/errors.js'

export type ErrorStatus = 400 | 401 | 403 | 404 | 405 | 409 | 413 | 414 | 429 | 431 | 500 | 503

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

// SQLSTATEs that mean "try again shortly": nothing was committed by the failed call, so a client's
// retry is safe (design decision 37).
export function isTransient(sqlstate: string): boolean {
  return (
    sqlstate.startsWith('08') ||
    ['53300', '57P01', '57P02', '57P03', '57014', '40001', '40P01'].includes(sqlstate)
  )
}

/** What a client sees for one SQLSTATE. */
interface Answer {
  status: ErrorStatus
  code: string
  /** The client's text; without it, the procedure's own MESSAGE (engine codes' messages are ours and safe to show). */
  message?: string
  headers?: Record<string, string>
  /** Keys of the raise's JSON DETAIL the body carries beside error and code. */
  detail?: readonly string[]
  /** Answered so only where configure passes its procedure's verdicts through; a bare 500 elsewhere. */
  configureOnly?: true
}

const retryAfter = (seconds: number) => ({ 'Retry-After': String(seconds) })

/**
 * The SQLSTATE → HTTP map, the only one: the procedures raise these (class QM, unused by
 * PostgreSQL; docs/design.md decisions 6 and 37) and every route answers them the same way. A
 * not-found is raised by the procedure that looked, never decided by a route. Anything not listed
 * is a bare 500: driver text can name hosts, tables or values and never reaches a client.
 */
const SQLSTATES: Record<string, Answer> = {
  QM400: { status: 400, code: 'invalid_request' },
  // Configure's sink-hold refusals name the option refused.
  QMHLD: { status: 400, code: 'invalid_request', detail: ['invalid'] },
  QM404: { status: 404, code: 'queue_not_found', message: 'Queue not found' },
  QMNFP: { status: 404, code: 'partition_not_found', message: 'Partition not found' },
  QMNFM: { status: 404, code: 'message_not_found', message: 'Message not found' },
  QMNFK: { status: 404, code: 'key_not_found', message: 'Key not found' },
  QMNFG: { status: 404, code: 'consumer_group_not_found', message: 'Consumer group not found on this queue' },
  // The message delete found no dead-letter row: the address and Queen's sentence ride along, so a
  // caller that ignores the status still reads success: false.
  QMNDL: { status: 404, code: 'message_not_found', message: 'Message not found', detail: ['success', 'partitionId', 'transactionId', 'message'] },
  // plpgsql's no_data_found, which no procedure of the broker raises: a configure verdict raised so
  // (by a trigger on the queue row, say) is 404 with its own text (docs/design.md decision 29).
  P0002: { status: 404, code: 'not_found', configureOnly: true },
  QMNID: { status: 409, code: 'not_in_dlq', message: 'Message is not in DLQ, cannot retry' },
  QMIND: { status: 409, code: 'already_in_dlq', message: 'Message already in DLQ for this consumer group' },
  QMAMT: {
    status: 409,
    code: 'ambiguous_transaction',
    message: 'The transaction id names messages in several partitions; name the partition',
    detail: ['partitions'],
  },
  QMAMG: {
    status: 409,
    code: 'ambiguous_consumer_group',
    message: 'Several consumer groups dead-lettered this message; name one with consumerGroup',
    detail: ['consumerGroups'],
  },
  QM409: { status: 409, code: 'placement_conflict' },
  QMMNT: { status: 503, code: 'maintenance', message: 'Push maintenance is on; retry later', headers: retryAfter(5) },
  QMMOV: { status: 503, code: 'tenant_moving', message: 'Tenant is being moved to another database; retry shortly', headers: retryAfter(2) },
  QMBHD: { status: 503, code: 'database_behind', message: "The tenant's database is not migrated to this version; retry later", headers: retryAfter(5) },
  QMNDB: { status: 503, code: 'database_unconfigured', message: "The tenant's database is not configured on this broker; retry later", headers: retryAfter(5) },
  QMENC: { status: 503, code: 'encryption_changed', message: 'Queue encryption changed during the push; retry', headers: retryAfter(1) },
  // Ephemeral queues (docs/ephemeral.md): Queen's own codes for that family.
  QMEBR: { status: 400, code: 'ephemeral_bad_request' },
  QMENF: { status: 404, code: 'ephemeral_queue_not_found' },
  // Backpressure: a consumer draining the ring lets the same push in on a later try.
  QMEFL: { status: 429, code: 'queue_full', headers: retryAfter(1) },
  QMEOF: { status: 503, code: 'ephemeral_disabled', message: 'Ephemeral queues are paused by an operator; retry later', headers: retryAfter(5) },
  // The key/value store and timers (docs/kv.md, docs/timers.md): a paused surface is 503 on its own
  // routes (come back later) and 403 inside a transaction, where retrying would spin with messages
  // in hand.
  QMKV4: { status: 400, code: 'kv_bad_request' },
  QMKVL: { status: 413, code: 'payload_too_large' },
  QMKVD: { status: 503, code: 'kv_disabled', message: 'The key/value store is switched off by an operator; retry later', headers: retryAfter(5) },
  QMKVX: { status: 403, code: 'kv_disabled', message: 'The key/value store is switched off by an operator' },
  QMTHZ: { status: 403, code: 'timer_horizon_exceeded' },
  QMTDS: { status: 503, code: 'timers_disabled', message: 'Timer scheduling is switched off by an operator; retry later', headers: retryAfter(5) },
  QMTDX: { status: 403, code: 'timers_disabled', message: 'Timer scheduling is switched off by an operator' },
}

function answered(error: DbError, answer: Answer): HttpError {
  const detail = (error.detail ?? {}) as Record<string, unknown>
  const extra: Record<string, unknown> = {}
  for (const key of answer.detail ?? []) if (detail[key] !== undefined) extra[key] = detail[key]
  return new HttpError(answer.status, answer.code, answer.message ?? error.message, extra, answer.headers)
}

const answerOf = (sqlstate: string): Answer | undefined => (Object.hasOwn(SQLSTATES, sqlstate) ? SQLSTATES[sqlstate] : undefined)

/** A database failure as the client sees it, by the table above; transient failures are 503 with Retry-After. */
export function fromDbError(error: DbError): HttpError {
  if (error.kind === 'unavailable' || isTransient(error.sqlstate)) return unavailable()
  const answer = answerOf(error.sqlstate)
  return answer && !answer.configureOnly ? answered(error, answer) : internal()
}

/**
 * Configure's own failure shapes (design decision 29, docs/options.md): the one route that passes
 * procedure verdicts through. The table's codes answer as everywhere (its configure-only entry
 * included); a failure of the call itself (no connection, a transient SQLSTATE) is 500 "configure
 * failed: …" rather than 503; a RAISE's verdict (P0001) is its MESSAGE verbatim at 500, any other
 * SQLSTATE a bare 500. Driver transport
 * text never gets here: DbError reduces it to "database unavailable".
 */
export function fromConfigureError(error: unknown): HttpError {
  if (!(error instanceof DbError)) return toHttpError(error)
  if (error.kind === 'unavailable' || isTransient(error.sqlstate)) {
    return new HttpError(500, 'internal', `configure failed: ${error.message}`)
  }
  const answer = answerOf(error.sqlstate)
  if (answer) return answered(error, answer)
  // Only a deliberate RAISE (plpgsql's raise_exception, P0001: a trigger's or policy's verdict) is
  // passed through. Any other class is PostgreSQL's own text, which can name tables, constraints
  // and the values that broke them: a bare 500, like every other route.
  if (error.sqlstate === 'P0001') return new HttpError(500, 'internal', error.message)
  return internal()
}

/** Any thrown value, as the HttpError a client may see. */
export function toHttpError(error: unknown): HttpError {
  if (error instanceof HttpError) return error
  if (error instanceof DbError) return fromDbError(error)
  return internal()
}
