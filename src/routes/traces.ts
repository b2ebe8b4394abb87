// Message traces (docs/traces.md): a consumer records events against a message and reads them back by
// message key or by trace name. Entries are snake_case on the wire (Queen's format). Traces
// outlive their queue and the message's retention, so the reads never require either to exist.
import { z } from 'zod'
import { qInt } from '../http/query-schema.js'
import { ROLE_SETS, route } from '../http/route.js'
import { pathText, sentence, worded } from '../http/validate.js'
import { isUuid } from '../ids.js'
import { NAME_MAX, QUEUE_MODE } from '../names.js'
import { reveal } from '../reveal.js'

const EVENT_TYPE_MAX = 64
const TRACE_NAMES_MAX = 20
// Paging: limit is clamped to [1, LIMIT_MAX] (documented in docs/traces.md); offset is any integer
// ≥ 0, clamped to a safe integer. Anything not base-10 digits is a 400.
const LIMIT_MAX = 1000

const missing = (v: unknown) => v === undefined || v === null || v === ''

/** An optional name: absent or null takes the fallback; otherwise a string of 1 to max characters. */
const optionalName = (field: string, fallback: string, max: number) =>
  z
    .string({ error: `${field} must be a string` })
    .min(1, `${field} must be 1 to ${max} characters`)
    .max(max, `${field} must be 1 to ${max} characters`)
    .nullish()
    .transform((v) => v ?? fallback)

/** traceNames: one string, an array of strings, or null; duplicates removed, first occurrence kept. */
const traceNames = z
  .preprocess(
    (v) => (v === null ? undefined : typeof v === 'string' ? [v] : v),
    z
      .array(
        z
          .string({ error: (iss) => `${pathText(iss.path)} must be a string` })
          .min(1, { error: (iss) => `${pathText(iss.path)} must be 1 to ${NAME_MAX} characters` })
          .max(NAME_MAX, { error: (iss) => `${pathText(iss.path)} must be 1 to ${NAME_MAX} characters` }),
        { error: 'traceNames must be a string, an array of strings or null' },
      )
      .optional(),
  )
  .transform((list, ctx) => {
    const names = [...new Set(list ?? [])]
    if (names.length > TRACE_NAMES_MAX) {
      ctx.addIssue({ code: 'custom', message: `traceNames must hold at most ${TRACE_NAMES_MAX} distinct names` })
      return z.NEVER
    }
    return names
  })
  .meta({ description: 'one name, an array of names, or null' })

/**
 * Queen reads the two ids first: both present, then their types, then transactionId's length; the
 * gate keeps that order (the schema's fields alone would report transactionId's length before
 * partitionId's type). The schema below states the same rules.
 */
function idsFault(o: Record<string, unknown>): string | null {
  if (missing(o.transactionId) || missing(o.partitionId)) return 'transactionId and partitionId are required'
  if (typeof o.transactionId !== 'string') return 'transactionId must be a string'
  if (typeof o.partitionId !== 'string') return 'partitionId must be a string'
  if (o.transactionId.length > NAME_MAX) return `transactionId must be at most ${NAME_MAX} characters`
  return null
}

export const traceBody = worded(
  z.preprocess(
    (body, ctx) => {
      const fault = idsFault(body as Record<string, unknown>)
      if (fault !== null) ctx.addIssue({ code: 'custom', message: fault })
      return body
    },
    z.object({
      transactionId: z.string({ error: 'transactionId must be a string' }).max(NAME_MAX, `transactionId must be at most ${NAME_MAX} characters`),
      partitionId: z.string({ error: 'partitionId must be a string' }),
      data: z.unknown().refine((v) => v !== undefined && v !== null, 'data is required'),
      consumerGroup: optionalName('consumerGroup', QUEUE_MODE, NAME_MAX),
      eventType: optionalName('eventType', 'info', EVENT_TYPE_MAX),
      traceNames,
      // A client's workerId is not read: Queen stamps its own, and this broker keeps none.
    }),
  ),
  sentence,
)

const pageQuery = (defaultLimit: number) => z.object({ limit: qInt(defaultLimit, 0, LIMIT_MAX, 1), offset: qInt(0, 0, Number.MAX_SAFE_INTEGER) })
const longName = `must be at most ${NAME_MAX} characters`
const byNameParams = z.object({ name: z.string().max(NAME_MAX, longName) })
const keyParams = z.object({ partitionId: z.string(), transactionId: z.string().max(NAME_MAX, longName) })

export const traceRoutes = [
  route(
    { method: 'POST', path: '/api/v1/traces', summary: 'Record a trace event against a message', roles: ROLE_SETS.RW_A, tenant: 'required', body: 'required', request: { body: traceBody } },
    async (c, { body }) => {
      // No such message, a malformed partition id included, is the procedure's 404 message_not_found.
      const created = await c.get('db').call('trace_create_v1', body)
      return c.json({ success: true, traceId: created.traceId }, 201)
    },
  ),
  // Literal paths before /:partitionId/:transactionId, which would otherwise match them.
  route(
    { method: 'GET', path: '/api/v1/traces/names', summary: 'Trace names in use, paged', roles: ROLE_SETS.R_RW_A, tenant: 'required', body: 'none', request: { query: pageQuery(50) } },
    async (c, { query }) => {
      const { limit, offset } = query
      const result = await c.get('db').call('trace_names_v1', { limit, offset })
      return c.json({ trace_names: result.trace_names, total: result.total, pagination: { limit, offset } })
    },
  ),
  route(
    {
      method: 'GET',
      path: '/api/v1/traces/by-name/:name',
      summary: 'Trace events carrying a trace name, with their message payloads',
      roles: ROLE_SETS.R_RW_A,
      tenant: 'required',
      body: 'none',
      request: { params: byNameParams, query: pageQuery(100) },
    },
    async (c, { params, query }) => {
      const { limit, offset } = query
      const result = await c.get('db').call('trace_by_name_v1', { name: params.name, limit, offset })
      const payloads = await reveal(
        c.get('config'),
        result.traces.map((t) => ({ enc: t.enc, data: t.message_payload, queue: t.queue_name, partition: t.partition_name })),
        (t) => ({ tenant: c.get('db').tenant, queue: t.queue, partition: t.partition }),
      )
      // A payload that fails authentication reads as null, like one no longer retained: a trace
      // listing is a diagnostic view and must not fail for one bad frame.
      const traces = result.traces.map(({ enc: _enc, ...t }, i) => ({ ...t, message_payload: payloads[i]!.data ?? null }))
      return c.json({ traces, total: result.total, pagination: { limit, offset } })
    },
  ),
  route(
    {
      method: 'GET',
      path: '/api/v1/traces/:partitionId/:transactionId',
      summary: 'Trace events of one message',
      roles: ROLE_SETS.R_RW_A,
      tenant: 'required',
      body: 'none',
      request: { params: keyParams },
    },
    async (c, { params }) => {
      // A malformed id can have no traces: the empty list an unknown key gets, without a SQL cast.
      if (!isUuid(params.partitionId)) return c.json({ traces: [] })
      return c.json(await c.get('db').call('trace_list_v1', params))
    },
  ),
]
