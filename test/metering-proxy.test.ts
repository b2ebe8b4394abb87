// docs/examples/metering-proxy.ts, the recipe of docs/metering-proxy.md, served on a real port in
// front of a real broker (tenancy on) and called over HTTP: the tenant is the proxy's to choose,
// and every answer is metered as the page says (2xx success, 4xx client error, 503 transient with
// its Retry-After, 500 server error, no upstream at all transient).
import { serve, type ServerType } from '@hono/node-server'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { classify, meteringProxy, pollUsage, type MeterEvent } from '../docs/examples/metering-proxy.js'
import { createApp } from '../src/app.js'
import { loadConfig } from '../src/config.js'
import { createDatabase, type Database } from '../src/db/database.js'
import { freePort } from '../src/db/embedded.js'
import { createNodePool } from '../src/db/node-pool.js'
import { createLogger } from '../src/log.js'
import { freshDatabase, type TestDatabase } from './helpers/database.js'

const TENANT_HEADER = 'X-Queen-Tenant'
const KEYS: Record<string, string> = { 'key-acme': 'acme', 'key-globex': 'globex' }

let database: TestDatabase
let db: Database
const servers: ServerType[] = []
let broker: string
let proxy: string
let events: MeterEvent[] = []
let slept: number[] = []

const listen = (fetch: (request: Request) => Response | Promise<Response>) =>
  new Promise<string>((done) => {
    const s = serve({ fetch, port: 0, hostname: '127.0.0.1' }, () => done(`http://127.0.0.1:${(s.address() as AddressInfo).port}`))
    servers.push(s)
  })

beforeAll(async () => {
  database = await freshDatabase()
  const config = loadConfig({ LOG_LEVEL: 'silent', QUEEN_TENANCY_HEADER: TENANT_HEADER }, 'node')
  db = createDatabase(createNodePool({ connectionString: database.appUrl, max: 5 }), { longLived: true })
  broker = await listen(createApp({ config, log: createLogger('silent'), database: () => db }).fetch)
  proxy = await listen(
    meteringProxy({
      upstream: broker,
      tenantOf: (request) => KEYS[request.headers.get('x-api-key') ?? ''] ?? null,
      record: (event) => events.push(event),
      tenantHeader: TENANT_HEADER,
      retries503: 1,
      sleep: async (ms) => void slept.push(ms),
    }),
  )
})

afterAll(async () => {
  for (const s of servers) await new Promise<void>((done) => s.close(() => done()))
  await db?.close()
  await database?.drop()
})

async function call(method: string, path: string, body?: string, key = 'key-acme', extra: Record<string, string> = {}) {
  events = []
  slept = []
  const res = await fetch(proxy + path, { method, body, headers: { 'x-api-key': key, ...extra } })
  const text = await res.text()
  return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : null, event: events[0] }
}

describe('the metering proxy recipe', () => {
  it('meters a push as success for the key’s tenant, whatever tenant header the caller sends', async () => {
    const push = await call('POST', '/api/v1/push', JSON.stringify({ items: [{ queue: 'orders', payload: { n: 1 } }] }), 'key-acme', { [TENANT_HEADER]: 'globex' })
    expect(push.status).toBe(201)
    expect(push.event).toMatchObject({ tenant: 'acme', outcome: 'success', code: null, status: 201, path: '/api/v1/push', attempts: 1 })
    expect(push.event!.requestBytes).toBeGreaterThan(0)
    expect(push.headers.get('x-request-id')).toBeTruthy()
    // The message is acme's: globex's key sees an empty queue.
    expect((await call('GET', '/api/v1/pop/queue/orders?autoAck=true', undefined, 'key-globex')).status).toBe(204)
    const popped = await call('GET', '/api/v1/pop/queue/orders?autoAck=true')
    expect(popped.body.messages[0].data).toEqual({ n: 1 })
  })

  it('an unknown key is refused by the proxy and never reaches the broker', async () => {
    const res = await call('GET', '/api/v1/resources/queues', undefined, 'nope')
    expect(res.status).toBe(401)
    expect(res.event).toBeUndefined()
  })

  it('a 4xx is a client error with the envelope code, recorded once and not retried', async () => {
    const bad = await call('POST', '/api/v1/push', '{"items":')
    expect(bad.status).toBe(400)
    expect(bad.event).toMatchObject({ outcome: 'client_error', code: 'invalid_json', attempts: 1 })
    const missing = await call('GET', '/api/v1/resources/queues/nope')
    expect(missing.event).toMatchObject({ status: 404, outcome: 'client_error', code: 'queue_not_found' })
    expect(slept).toEqual([])
  })

  it('a 503 is transient: retried after its Retry-After, then passed on with it', async () => {
    expect((await call('POST', '/api/v1/system/maintenance', '{"enabled":true}')).status).toBe(200)
    try {
      const res = await call('POST', '/api/v1/push', JSON.stringify({ items: [{ queue: 'orders', payload: {} }] }))
      expect(res.status).toBe(503)
      expect(res.headers.get('retry-after')).toBe('5')
      expect(res.event).toMatchObject({ outcome: 'transient', code: 'maintenance', retryAfterMs: 5000, attempts: 2 })
      expect(slept).toEqual([5000])
    } finally {
      await call('POST', '/api/v1/system/maintenance', '{"enabled":false}')
    }
  })

  it('a 500 is a server error: here an encrypted queue on a broker without a key', async () => {
    await call('POST', '/api/v1/configure', JSON.stringify({ queue: 'secret', encryptionEnabled: true }))
    const res = await call('POST', '/api/v1/push', JSON.stringify({ items: [{ queue: 'secret', payload: 1 }] }))
    expect(res.status).toBe(500)
    expect(res.event).toMatchObject({ outcome: 'server_error', code: 'encryption_key_missing', attempts: 1 })
  })

  it('no upstream at all is answered 503 upstream_unavailable and metered transient', async () => {
    const closed = `http://127.0.0.1:${await freePort()}`
    const recorded: MeterEvent[] = []
    const handler = meteringProxy({ upstream: closed, tenantOf: () => 'acme', record: (e) => recorded.push(e) })
    const res = await handler(new Request('http://proxy/api/v1/resources/queues'))
    expect(res.status).toBe(503)
    expect(res.headers.get('retry-after')).toBe('1')
    expect(await res.json()).toEqual({ error: 'Upstream unreachable', code: 'upstream_unavailable' })
    expect(recorded[0]).toMatchObject({ outcome: 'transient', code: 'upstream_unavailable' })
  })

  it('classify keys on the status first: a 503 without an envelope (/health) is still transient', () => {
    expect(classify(503, { status: 'unhealthy', database: 'disconnected', version: '0.1.0' }, null)).toEqual({ outcome: 'transient', code: null, retryAfterMs: 1000 })
    expect(classify(200, { success: false, code: 'lease_invalid' }, null).outcome).toBe('success')
    expect(classify(413, { error: 'Request body too large', code: 'payload_too_large' }, null)).toMatchObject({ outcome: 'client_error', code: 'payload_too_large' })
  })

  it('pollUsage reads the cached stats: fresh after a refresh, per queue, for one tenant', async () => {
    const headers = { [TENANT_HEADER]: 'acme' }
    const before = await pollUsage(broker, { headers })
    expect(before.statsAge).toBe(-1) // the stats lane has not run here
    expect(before.fresh).toBe(false)
    expect((await fetch(`${broker}/api/v1/stats/refresh`, { method: 'POST', headers })).status).toBe(200)
    const after = await pollUsage(broker, { headers })
    expect(after.fresh).toBe(true)
    expect(after.queues.find((q) => q.queue === 'orders')).toMatchObject({ partitions: 1, messages: 1, pending: 0, processing: 0 })
    // globex's empty pop created its own `orders` row (a queue-scoped pop does); it owns nothing in it.
    const globex = await pollUsage(broker, { headers: { [TENANT_HEADER]: 'globex' } })
    expect(globex.queues.map((q) => [q.queue, q.messages])).toEqual([['orders', 0]])
  })
})
