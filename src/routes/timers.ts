// Queen 1.6's timers (docs/timers.md): schedule, reschedule and cancel in one batch; cancel on its
// own route, which no switch refuses (a tenant that cannot cancel keeps producing messages it
// cannot stop); peek, and a keyset list or exact prefix count per queue. A verdict is 200 with
// `ok` and a status from a closed set, whatever it decided.
import { z } from 'zod'
import { HttpError } from '../errors.js'
import { qString } from '../http/query-schema.js'
import { ROLE_SETS, route } from '../http/route.js'
import { refuseUnknownFields } from '../kv/wire.js'
import { checkTimerOps, TIMER_HORIZON_MS, timerPayloadLimit, withTimerEncryption } from '../timers/ops.js'

const batchBody = z.object({ operations: z.array(z.unknown()) })
const keyPath = '/api/v1/timers/:queue/:timerKey{.+}'
const PREFIX_MAX_BYTES = 128
const queueParams = z.object({ queue: z.string() })
const keyParams = z.object({ queue: z.string(), timerKey: z.string() })

// Strict: a query parameter this route would ignore may be one that mattered, so it is refused by name.
const listQuery = z.strictObject({ mode: qString(), after: qString(), limit: qString(), prefix: qString() })
const cancelQuery = z.strictObject({ txn: qString() })
const noQuery = z.strictObject({})

export const timerRoutes = [
  route(
    {
      method: 'POST',
      path: '/api/v1/timers',
      summary: 'Schedule, reschedule and cancel timers (a batch)',
      roles: ROLE_SETS.W_RW_A,
      tenant: 'required',
      body: 'required',
      request: { body: batchBody, admit: (_c, raw) => refuseUnknownFields(raw, ['operations'], 'timers_bad_request') },
    },
    async (c, { body }) => {
      const ops = checkTimerOps(body.operations, 'operations', timerPayloadLimit(c))
      return c.json(await withTimerEncryption(c, ops, (encoded) => c.get('db').call('timers_apply_v1', { ops: encoded, horizonMs: TIMER_HORIZON_MS })))
    },
  ),
  route({ method: 'GET', path: '/api/v1/timers/:queue', summary: "A keyset page of a queue's pending timers, or a prefix count", roles: ROLE_SETS.R_RW_A, tenant: 'required', body: 'none', request: { params: queueParams, query: listQuery } }, async (c, { params, query }) => {
    const mode = query.mode ?? 'list'
    if (mode === 'count') {
      if (query.after !== undefined || query.limit !== undefined) throw new HttpError(400, 'timers_count_paging', 'mode=count takes no after or limit')
      const prefix = query.prefix
      if (!prefix || new TextEncoder().encode(prefix).length > PREFIX_MAX_BYTES || prefix.includes('\u0000')) {
        throw new HttpError(400, 'timers_count_prefix', `mode=count needs a non-empty prefix of at most ${PREFIX_MAX_BYTES} bytes`)
      }
      return c.json(await c.get('db').call('timers_count_v1', { queue: params.queue, prefix }))
    }
    if (mode !== 'list') throw new HttpError(400, 'timers_read_mode_unknown', `Unknown mode: ${mode} (list or count)`)
    if (query.prefix !== undefined) throw new HttpError(400, 'timers_bad_request', 'prefix is read only with mode=count')
    const limit = query.limit === undefined ? 100 : Number(query.limit)
    if (!Number.isInteger(limit)) throw new HttpError(400, 'timers_bad_request', 'limit must be an integer')
    return c.json(await c.get('db').call('timers_list_v1', { queue: params.queue, after: query.after ?? null, limit: Math.min(Math.max(limit, 1), 1000) }))
  }),
  route({ method: 'GET', path: keyPath, summary: 'Peek at one pending timer, payload included', roles: ROLE_SETS.R_RW_A, tenant: 'required', body: 'none', request: { params: keyParams, query: noQuery } }, async (c, { params }) => {
    return c.json(await c.get('db').call('timers_get_v1', { queue: params.queue, timerKey: params.timerKey }))
  }),
  route({ method: 'DELETE', path: keyPath, summary: 'Cancel one timer (never refused by a switch)', roles: ROLE_SETS.RW_A, tenant: 'required', body: 'none', request: { params: keyParams, query: cancelQuery } }, async (c, { params, query }) =>
    c.json(await c.get('db').call('timers_cancel_v1', { queue: params.queue, timerKey: params.timerKey, txn: query.txn ?? null })),
  ),
]
