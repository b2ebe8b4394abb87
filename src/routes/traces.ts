// Message traces (API §5.11): a consumer records events against a message and reads them back by
// message key or by trace name. Entries are snake_case on the wire (Queen's format). Traces
// outlive their queue and the message's retention, so the reads never require either to exist.
import { HttpError, badRequest } from '../errors.js'
import { Query } from '../http/query.js'
import { ROLE_SETS, route } from '../http/route.js'
import { isUuid } from '../ids.js'
import { reveal } from '../reveal.js'

const QUEUE_MODE = '__QUEUE_MODE__'
const NAME_MAX = 255
const EVENT_TYPE_MAX = 64
const TRACE_NAMES_MAX = 20
// Paging: limit is clamped to [1, LIMIT_MAX] (documented in docs/traces.md); offset is any integer
// ≥ 0, clamped to a safe integer. Anything not base-10 digits is a 400 (API §1.5).
const LIMIT_MAX = 1000

const messageNotFound = () => new HttpError(404, 'message_not_found', 'Message not found')

function optionalName(value: unknown, field: string, fallback: string, max: number): string {
  if (value === undefined || value === null) return fallback
  if (typeof value !== 'string') throw badRequest(`${field} must be a string`)
  if (value.length < 1 || value.length > max) throw badRequest(`${field} must be 1 to ${max} characters`)
  return value
}

/** traceNames: one string, an array of strings, or null; duplicates removed, first occurrence kept. */
function parseTraceNames(value: unknown): string[] {
  if (value === undefined || value === null) return []
  const list = typeof value === 'string' ? [value] : value
  if (!Array.isArray(list)) throw badRequest('traceNames must be a string, an array of strings or null')
  list.forEach((name, i) => {
    if (typeof name !== 'string') throw badRequest(`traceNames[${i}] must be a string`)
    if (name.length < 1 || name.length > NAME_MAX) throw badRequest(`traceNames[${i}] must be 1 to ${NAME_MAX} characters`)
  })
  const names = [...new Set(list as string[])]
  if (names.length > TRACE_NAMES_MAX) throw badRequest(`traceNames must hold at most ${TRACE_NAMES_MAX} distinct names`)
  return names
}

function page(url: string, defaultLimit: number) {
  const q = new Query(url)
  return {
    limit: Math.max(1, q.int('limit', defaultLimit, 0, LIMIT_MAX)),
    offset: q.int('offset', 0, 0, Number.MAX_SAFE_INTEGER),
  }
}

function checkTransactionId(transactionId: string) {
  if (transactionId.length > NAME_MAX) throw badRequest(`transactionId must be at most ${NAME_MAX} characters`)
}

export const traceRoutes = [
  route({ method: 'POST', path: '/api/v1/traces', roles: ROLE_SETS.RW_A, tenant: 'required', body: 'required' }, async (c) => {
    const { transactionId, partitionId, data, consumerGroup, eventType, traceNames } = c.var.body
    const missing = (v: unknown) => v === undefined || v === null || v === ''
    if (missing(transactionId) || missing(partitionId)) throw badRequest('transactionId and partitionId are required')
    if (typeof transactionId !== 'string') throw badRequest('transactionId must be a string')
    if (typeof partitionId !== 'string') throw badRequest('partitionId must be a string')
    checkTransactionId(transactionId)
    if (data === undefined || data === null) throw badRequest('data is required')
    const args = {
      tenant: c.var.tenant,
      partitionId,
      transactionId,
      data,
      consumerGroup: optionalName(consumerGroup, 'consumerGroup', QUEUE_MODE, NAME_MAX),
      eventType: optionalName(eventType, 'eventType', 'info', EVENT_TYPE_MAX),
      traceNames: parseTraceNames(traceNames),
    }
    // A malformed id names no partition: not found (API §2.2 rule 1), and never a SQL cast error.
    if (!isUuid(partitionId)) throw messageNotFound()
    const created = await c.var.db.call('trace_create_v1', args)
    if (created === null) throw messageNotFound()
    return c.json({ success: true, traceId: created.traceId }, 201)
  }),
  // Literal paths before /:partitionId/:transactionId (API §3.6).
  route({ method: 'GET', path: '/api/v1/traces/names', roles: ROLE_SETS.R_RW_A, tenant: 'required', body: 'none' }, async (c) => {
    const { limit, offset } = page(c.req.url, 50)
    const result = await c.var.db.call('trace_names_v1', { tenant: c.var.tenant, limit, offset })
    return c.json({ trace_names: result.trace_names, total: result.total, pagination: { limit, offset } })
  }),
  route({ method: 'GET', path: '/api/v1/traces/by-name/:name', roles: ROLE_SETS.R_RW_A, tenant: 'required', body: 'none' }, async (c) => {
    const name = c.req.param('name') ?? ''
    if (name.length > NAME_MAX) throw badRequest(`name must be at most ${NAME_MAX} characters`)
    const { limit, offset } = page(c.req.url, 100)
    const result = await c.var.db.call('trace_by_name_v1', { tenant: c.var.tenant, name, limit, offset })
    const payloads = await reveal(
      c.var.config,
      result.traces.map((t) => ({ enc: t.enc, data: t.message_payload })),
    )
    // A payload that fails authentication reads as null, like one no longer retained: a trace
    // listing is a diagnostic view and must not fail for one bad frame.
    const traces = result.traces.map(({ enc: _enc, ...t }, i) => ({ ...t, message_payload: payloads[i]!.data ?? null }))
    return c.json({ traces, total: result.total, pagination: { limit, offset } })
  }),
  route({ method: 'GET', path: '/api/v1/traces/:partitionId/:transactionId', roles: ROLE_SETS.R_RW_A, tenant: 'required', body: 'none' }, async (c) => {
    const partitionId = c.req.param('partitionId') ?? ''
    const transactionId = c.req.param('transactionId') ?? ''
    checkTransactionId(transactionId)
    // A malformed id can have no traces: the empty list an unknown key gets, without a SQL cast.
    if (!isUuid(partitionId)) return c.json({ traces: [] })
    return c.json(await c.var.db.call('trace_list_v1', { tenant: c.var.tenant, partitionId, transactionId }))
  }),
]
