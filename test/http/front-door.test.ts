// Client mistakes at the front door (issue #37): each answered 500, an empty 431 or a 404 before.
// Now a 400/405/414/431 with the error envelope, and nothing is written. docs/limits.md lists the
// limits these tests hold the broker to.
import { serve } from '@hono/node-server'
import { connect, type AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createApp } from '../../src/app.js'
import { loadConfig } from '../../src/config.js'
import { createDatabase } from '../../src/db/database.js'
import { createNodePool } from '../../src/db/node-pool.js'
import { MAX_JSON_DEPTH } from '../../src/http/storable-json.js'
import { MAX_URL_LENGTH } from '../../src/http/url-limit.js'
import { createLogger } from '../../src/log.js'
import { answerClientErrors } from '../../src/node-client-errors.js'
import { testApp, type TestApp } from '../helpers/app.js'
import { engineSnapshot, snapshotDiff } from '../helpers/engine-snapshot.js'
import { acksOf, pop, push } from '../helpers/engine.js'

let app: TestApp
beforeAll(async () => {
  app = await testApp({ env: { MAX_ACK_ITEMS: '5' } })
})
afterAll(() => app.close())

const LONE = '\ud800'
const PID = '01890a5d-ac96-774b-bcce-b302099a8057'

/** Sends a JSON text whose strings hold `\ud800` escapes as JSON.stringify writes them. */
const send = (method: string, path: string, body: unknown) => app.json(method, path, JSON.stringify(body))

describe('a lone UTF-16 surrogate in a JSON body', () => {
  it('is refused with 400 and the envelope on every route that stores text, writing nothing', async () => {
    await push(app, [{ queue: 'fd-existing', partition: 'p', payload: 1 }])
    const popped = await pop(app, 'fd-existing')
    const before = await engineSnapshot(app.database)
    const cases: [string, string, unknown, string][] = [
      ['POST', '/api/v1/push', { items: [{ queue: 'fd-q', payload: { note: `a${LONE}b` } }] }, 'items[0].payload.note'],
      ['POST', '/api/v1/push', { items: [{ queue: `fd${LONE}`, payload: 1 }] }, 'items[0].queue'],
      ['POST', '/api/v1/push', { items: [{ queue: 'fd-q', partition: `\udc00x`, payload: 1 }] }, 'items[0].partition'],
      ['POST', '/api/v1/push', { items: [{ queue: 'fd-q', payload: { [`k${LONE}`]: 1 } }] }, `items[0].payload.k${LONE}`],
      ['PUT', '/api/v1/kv/fd-ns/fd-key', { value: { text: LONE }, forever: true }, 'value.text'],
      ['POST', '/api/v1/ack', { ...acksOf(popped.messages, 'failed')[0], error: `boom ${LONE}` }, 'error'],
      ['POST', '/api/v1/traces', { partitionId: PID, transactionId: 't', traceNames: [LONE], eventType: 'info', data: { text: 'x' } }, 'traceNames[0]'],
      ['POST', '/api/v1/configure', { queue: 'fd-conf', namespace: `ns${LONE}` }, 'namespace'],
      ['POST', '/streams/v1/queries', { name: `s${LONE}`, source_queue: 'a', sink_queue: 'b', config_hash: 'h' }, 'name'],
    ]
    for (const [method, path, body, field] of cases) {
      const res = await send(method, path, body)
      expect(res.status, `${path} ${field}`).toBe(400)
      expect(res.body, `${path} ${field}`).toEqual({ error: `${field} must not contain a lone UTF-16 surrogate`, code: 'invalid_request' })
    }
    expect(snapshotDiff(before, await engineSnapshot(app.database))).toEqual([])
  })

  it('still accepts a surrogate pair and an escaped backslash before "ud800"', async () => {
    const res = await send('POST', '/api/v1/push', { items: [{ queue: 'fd-pair', payload: { emoji: '😀', text: '\\ud800' } }] })
    expect(res.status, JSON.stringify(res.body)).toBe(201)
    const { messages } = await pop(app, 'fd-pair')
    expect(messages[0]!.data).toEqual({ emoji: '😀', text: '\\ud800' })
  })
})

describe('deeply nested bodies', () => {
  const nested = (depth: number) => '{"items":[{"queue":"fd-deep","payload":' + '['.repeat(depth) + ']'.repeat(depth) + '}]}'

  it(`refuses a body nesting deeper than ${MAX_JSON_DEPTH} levels with 400, and accepts exactly ${MAX_JSON_DEPTH}`, async () => {
    const before = await engineSnapshot(app.database)
    for (const depth of [MAX_JSON_DEPTH, 5_000, 100_000]) {
      const res = await app.json('POST', '/api/v1/push', nested(depth))
      expect(res.status, String(depth)).toBe(400)
      expect(res.body).toEqual({ error: `Request body nests deeper than ${MAX_JSON_DEPTH} arrays and objects`, code: 'invalid_request' })
    }
    expect(snapshotDiff(before, await engineSnapshot(app.database))).toEqual([])
    // The body object and the items array and the item are three levels: the payload may use the rest.
    const res = await app.json('POST', '/api/v1/push', nested(MAX_JSON_DEPTH - 3))
    expect(res.status, JSON.stringify(res.body)).toBe(201)
  })

  it('does not count brackets inside strings', async () => {
    const res = await send('POST', '/api/v1/push', { items: [{ queue: 'fd-brackets', payload: '['.repeat(1000) + '{'.repeat(1000) }] })
    expect(res.status, JSON.stringify(res.body)).toBe(201)
  })
})

describe('ack batches', () => {
  it('refuses a batch over MAX_ACK_ITEMS with 413 before looking at any item', async () => {
    const acknowledgments = Array.from({ length: 6 }, () => ({ transactionId: 't', partitionId: PID }))
    const res = await app.json('POST', '/api/v1/ack/batch', { acknowledgments })
    expect(res.status).toBe(413)
    expect(res.body).toEqual({ error: 'Too many acknowledgments: 6 (limit 5 per batch)', code: 'payload_too_large' })
  })

  it('counts unknown statuses as invalid in the metrics, so client text cannot add series', async () => {
    await push(app, [{ queue: 'fd-ack-metrics', payload: 1 }])
    const { messages } = await pop(app, 'fd-ack-metrics')
    for (let i = 0; i < 3; i++) {
      const res = await app.json('POST', '/api/v1/ack/batch', { acknowledgments: acksOf(messages, `made-up-${i}`) })
      expect(res.status).toBe(200)
      expect(res.body[0]).toMatchObject({ success: false, code: 'invalid_status' })
    }
    const scrape = (await app.json('GET', '/metrics/prometheus')).body as string
    expect(scrape).not.toContain('made-up')
    expect(scrape).toContain('queen_acks_total{status="invalid",outcome="error"} 3')
  })
})

describe('the URL and the method', () => {
  it(`answers a URL over ${MAX_URL_LENGTH} characters 414 with the envelope`, async () => {
    const res = await app.json('GET', `/api/v1/messages?queue=${'x'.repeat(100_000)}`)
    expect(res.status).toBe(414)
    expect(res.body).toEqual({ error: `Request URL too long (limit ${MAX_URL_LENGTH} characters)`, code: 'uri_too_long' })
  })

  it('answers the wrong method on a real path 405 with Allow, from the route table', async () => {
    const cases: [string, string, string][] = [
      ['GET', '/api/v1/push', 'POST'],
      ['PATCH', '/api/v1/kv/some-ns/some-key', 'DELETE, GET, HEAD, PUT'],
      ['POST', '/api/v1/resources/queues/q', 'DELETE, GET, HEAD'],
      ['DELETE', '/health', 'GET, HEAD'],
      ['POST', '/openapi.json', 'GET, HEAD'],
    ]
    for (const [method, path, allow] of cases) {
      const res = await app.json(method, path)
      expect(res.status, `${method} ${path}`).toBe(405)
      expect(res.headers.get('allow'), `${method} ${path}`).toBe(allow)
      expect(res.body, `${method} ${path}`).toEqual({ error: `Method ${method} not allowed; use ${allow}`, code: 'method_not_allowed' })
    }
    const missing = await app.json('GET', '/api/v1/no-such-route')
    expect(missing.status).toBe(404)
    expect(missing.body).toEqual({ error: 'Not found', code: 'not_found' })
  })
})

describe('on a Node socket', () => {
  it('answers a request line over the header limit 431 with the envelope, not an empty body', async () => {
    const config = loadConfig({ LOG_LEVEL: 'silent' }, 'node')
    const db = createDatabase(createNodePool({ connectionString: app.database.appUrl, max: 1 }), { longLived: true })
    const served = createApp({ config, log: createLogger('silent'), database: () => db })
    const server = await new Promise<ReturnType<typeof serve>>((ready) => {
      const s = serve({ fetch: served.fetch, port: 0, hostname: '127.0.0.1' }, () => ready(s))
    })
    answerClientErrors(server as import('node:http').Server)
    try {
      const port = (server.address() as AddressInfo).port
      const raw = await new Promise<string>((resolve, reject) => {
        const socket = connect(port, '127.0.0.1', () => socket.write(`GET /api/v1/messages?q=${'x'.repeat(100_000)} HTTP/1.1\r\nHost: x\r\n\r\n`))
        let text = ''
        socket.on('data', (d) => (text += String(d)))
        socket.on('end', () => resolve(text))
        socket.on('error', (e) => (text ? resolve(text) : reject(e)))
      })
      expect(raw.split('\r\n')[0]).toBe('HTTP/1.1 431 Request Header Fields Too Large')
      expect(JSON.parse(raw.slice(raw.indexOf('\r\n\r\n') + 4))).toEqual({ error: 'Request line and headers too large (the URL counts)', code: 'headers_too_large' })
    } finally {
      await new Promise<void>((done) => server.close(() => done()))
      await db.close()
    }
  })
})
