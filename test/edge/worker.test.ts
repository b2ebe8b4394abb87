// The real worker bundle in workerd (miniflare), over the same PostgreSQL through the WebSocket
// bridge (or a Hyperdrive binding): the requests a client sends answer the same as through Node,
// scheduled() runs the lanes, and a worker that must not serve answers 500 internal.
import { rmSync } from 'node:fs'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { dirname } from 'node:path'
import type { Readable } from 'node:stream'
import { Miniflare, type MiniflareOptions } from 'miniflare'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startWsBridge, type WsBridge } from '../../scripts/ws-bridge.js'
import { freePort } from '../../src/db/embedded.js'
import { ASSET_BASE } from '../../src/console/assets.js'
import { VERSION } from '../../src/version.js'
import { nodeApp } from '../helpers/app.js'
import { freshDatabase, type TestDatabase } from '../helpers/database.js'
import { SECRET, bearer, keyPair, token, unsigned } from '../helpers/tokens.js'
import { buildWorker, type WorkerBundle } from './build-worker.js'

interface Edge {
  fetch(path: string, init?: RequestInit): Promise<Answer>
  scheduled(): Promise<void>
  /** Waits for a log line of the worker that contains `text`, and returns it. */
  logLine(text: string): Promise<string>
  logs(): string
  dispose(): Promise<void>
}

let bundle: WorkerBundle
let database: TestDatabase
let bridge: WsBridge
let node: Awaited<ReturnType<typeof nodeApp>>
let edge: Edge
const spares: Edge[] = []

async function startEdge(bindings: Record<string, string>, extra: Partial<MiniflareOptions> = {}): Promise<Edge> {
  let output = ''
  const mf = new Miniflare({
    modules: true,
    scriptPath: bundle.scriptPath,
    // Module names are relative to this root; the bundle lives in a scratch directory.
    modulesRoot: dirname(bundle.scriptPath),
    compatibilityDate: bundle.compatibilityDate,
    compatibilityFlags: bundle.compatibilityFlags,
    bindings: { LOG_LEVEL: 'warn', ...bindings },
    handleRuntimeStdio(stdout: Readable, stderr: Readable) {
      stdout.on('data', (chunk: Buffer) => (output += String(chunk)))
      stderr.on('data', (chunk: Buffer) => (output += String(chunk)))
    },
    ...extra,
  } as MiniflareOptions)
  await mf.ready
  const started: Edge = {
    fetch: async (path, init) => answer(await mf.dispatchFetch(`http://edge.test${path}`, init as never)),
    scheduled: async () => {
      await (await mf.getWorker()).scheduled({ cron: '* * * * *' })
    },
    async logLine(text) {
      // workerd's stdout reaches this process asynchronously, after the response.
      const deadline = Date.now() + 5000
      while (Date.now() < deadline) {
        const line = output.split('\n').find((l) => l.includes(text))
        if (line) return line
        await new Promise((r) => setTimeout(r, 25))
      }
      throw new Error(`no log line containing ${JSON.stringify(text)}; the worker logged:\n${output}`)
    },
    logs: () => output,
    dispose: () => mf.dispose(),
  }
  return started
}

async function spareEdge(bindings: Record<string, string>, extra?: Partial<MiniflareOptions>): Promise<Edge> {
  const started = await startEdge(bindings, extra)
  spares.push(started)
  return started
}

interface Answer {
  status: number
  body: unknown
  headers: Record<string, string>
}

/** Status, JSON body and the headers a client relies on; X-Request-Id only as present/absent. */
async function answer(res: {
  status: number
  headers: { forEach(each: (value: string, name: string) => void): void }
  text(): Promise<string>
}): Promise<Answer> {
  const text = await res.text()
  const headers: Record<string, string> = {}
  res.headers.forEach((value, name) => {
    const key = name.toLowerCase()
    if (key.startsWith('access-control-') || ['content-type', 'retry-after', 'allow', 'www-authenticate'].includes(key)) headers[key] = value
    if (key === 'x-request-id') headers[key] = 'present'
  })
  // The Prometheus exposition is text; every other body is JSON.
  const json = (headers['content-type'] ?? '').includes('application/json')
  return { status: res.status, body: text === '' ? null : json ? JSON.parse(text) : text, headers }
}

beforeAll(async () => {
  bundle = buildWorker()
  ;[database, bridge] = await Promise.all([freshDatabase(), startWsBridge()])
  edge = await startEdge({ DATABASE_URL: database.url, NEON_WS_PROXY: bridge.url })
  node = await nodeApp(database.url)
}, 120_000)

afterAll(async () => {
  await Promise.all(spares.map((s) => s.dispose()))
  await edge?.dispose()
  await node?.close()
  await bridge?.close()
  await database?.drop()
  if (bundle) rmSync(bundle.outdir, { recursive: true, force: true })
})

const SAME_REQUESTS: [string, RequestInit?][] = [
  ['/health'],
  ['/health', { method: 'HEAD' }],
  ['/health', { headers: { origin: 'https://app.example' } }],
  ['/api/v1/does-not-exist'],
  ['/health', { method: 'DELETE' }],
  ['/anything', { method: 'OPTIONS', headers: { origin: 'https://app.example', 'access-control-request-method': 'POST' } }],
  // The API reference pages are built in the isolate from the same registry: byte-equal documents.
  ['/openapi.json'],
  ['/docs'],
]

describe('the worker in workerd', () => {
  it('answers the same requests the same as the Node runtime', async () => {
    for (const [path, init] of SAME_REQUESTS) {
      const viaWorker = await edge.fetch(path, init)
      const viaNode = await answer(await node.request(path, init))
      expect(viaWorker, `${init?.method ?? 'GET'} ${path}`).toEqual(viaNode)
    }
  })

  it('reports healthy, answers unknown routes 404 and preflights 204 with CORS headers', async () => {
    expect(await edge.fetch('/health')).toMatchObject({
      status: 200,
      body: { status: 'healthy', database: 'connected', version: VERSION },
      headers: { 'x-request-id': 'present' },
    })
    // CORS is off unless CORS_ORIGINS is set (docs/security.md): no Access-Control-* header at all.
    const closed = await edge.fetch('/nope', { headers: { origin: 'https://app.example' } })
    expect(closed).toMatchObject({ status: 404, body: { error: 'Not found', code: 'not_found' } })
    expect(Object.keys(closed.headers).filter((h) => h.startsWith('access-control-'))).toEqual([])
    const closedPreflight = await edge.fetch('/api/v1/push', { method: 'OPTIONS', headers: { origin: 'https://app.example' } })
    expect(closedPreflight.status).toBe(204)
    expect(Object.keys(closedPreflight.headers).filter((h) => h.startsWith('access-control-'))).toEqual([])

    const open = await spareEdge({ DATABASE_URL: database.url, NEON_WS_PROXY: bridge.url, CORS_ORIGINS: '*' })
    expect(await open.fetch('/nope')).toMatchObject({
      status: 404,
      body: { error: 'Not found', code: 'not_found' },
      headers: { 'access-control-allow-origin': '*' },
    })
    const preflight = await open.fetch('/api/v1/push', { method: 'OPTIONS', headers: { origin: 'https://app.example' } })
    expect(preflight.status).toBe(204)
    expect(preflight.body).toBeNull()
    expect(preflight.headers).toMatchObject({ 'access-control-allow-origin': '*' })
    expect(preflight.headers['access-control-allow-methods']).toContain('POST')
  })

  it('configures a queue and refuses bad bodies exactly as Node does', async () => {
    const post = (body: string): RequestInit => ({ method: 'POST', headers: { 'content-type': 'application/json' }, body })
    for (const body of ['{"queue":', '{"leaseTime":5}', '{"queue":"q","mode":"upsert"}', '{"queue":"q","retentionSinkHold":"a:b"}']) {
      expect(await edge.fetch('/api/v1/configure', post(body)), body).toEqual(await answer(await node.request('/api/v1/configure', post(body))))
    }
    const created = await edge.fetch('/api/v1/configure', post('{"queue":"edge.smoke","options":{"leaseTime":42}}'))
    expect(created).toMatchObject({ status: 200, body: { configured: true, namespace: 'edge', task: 'smoke', options: { leaseTime: 42, retryLimit: 3 } } })
    const edited = await edge.fetch('/api/v1/configure', post('{"queue":"edge.smoke","retryLimit":9}'))
    expect(edited.body).toMatchObject({ queueId: (created.body as { queueId: string }).queueId, options: { leaseTime: 42, retryLimit: 9 } })
  })

  it('answers 400 to invalid JSON on a route with a required body, as Node does', async () => {
    for (const body of ['{"items": [', '', '[1]', '{"items": 3}']) {
      const init = { method: 'POST', body, headers: { 'content-type': 'application/json' } }
      const viaWorker = await edge.fetch('/api/v1/push', init)
      expect(viaWorker.status, JSON.stringify(body)).toBe(400)
      expect(viaWorker, JSON.stringify(body)).toEqual(await answer(await node.request('/api/v1/push', init)))
    }
  })

  it('refuses the front door\'s client mistakes (lone surrogates, deep nesting, long URLs, wrong methods) as Node does', async () => {
    const post = (body: string): RequestInit => ({ method: 'POST', body, headers: { 'content-type': 'application/json' } })
    const cases: [string, RequestInit | undefined, number][] = [
      ['/api/v1/push', post('{"items":[{"queue":"edge-fd","payload":{"note":"\\ud800"}}]}'), 400],
      ['/api/v1/push', post(`{"items":[{"queue":"edge-fd","payload":${'['.repeat(5000)}${']'.repeat(5000)}}]}`), 400],
      [`/api/v1/messages?queue=${'x'.repeat(9000)}`, undefined, 414],
      ['/api/v1/push', { method: 'GET' }, 405],
      ['/api/v1/kv/ns/some-key', { method: 'PATCH' }, 405],
    ]
    for (const [path, init, status] of cases) {
      const viaWorker = await edge.fetch(path, init)
      expect(viaWorker.status, `${init?.method ?? 'GET'} ${path.slice(0, 60)}`).toBe(status)
      expect(viaWorker, `${init?.method ?? 'GET'} ${path.slice(0, 60)}`).toEqual(await answer(await node.request(path, init)))
    }
  })

  it('pushes, pops and acks through the worker bundle', async () => {
    const post = (path: string, body: unknown) => edge.fetch(path, { method: 'POST', body: JSON.stringify(body), headers: { 'content-type': 'application/json' } })
    const pushed = await post('/api/v1/push', { items: [{ queue: 'edge-smoke', payload: { n: 1 }, transactionId: 'e1' }, { queue: 'edge-smoke', payload: null }] })
    expect(pushed).toMatchObject({ status: 201, body: [{ status: 'queued', offset: 0 }, { status: 'queued', offset: 1 }] })
    expect((await post('/api/v1/push', { items: [{ queue: 'edge-smoke', transactionId: 'e1' }] })).body).toMatchObject([{ status: 'duplicate', offset: 0 }])
    const popped = await edge.fetch('/api/v1/pop/queue/edge-smoke?batch=10')
    expect(popped.status).toBe(200)
    const body = popped.body as { leaseId: string; messages: { transactionId: string; partitionId: string; leaseId: string; data: unknown }[] }
    expect(body.messages.map((m) => m.data)).toEqual([{ n: 1 }, null])
    const acked = await post('/api/v1/ack/batch', { acknowledgments: body.messages.map((m) => ({ transactionId: m.transactionId, partitionId: m.partitionId, leaseId: m.leaseId, status: 'completed' })) })
    expect(acked).toMatchObject({ status: 200, body: [{ success: true }, { success: true, leaseReleased: true }] })
    const empty = await edge.fetch('/api/v1/pop/queue/edge-smoke?wait=true&timeout=300')
    expect(empty).toMatchObject({ status: 204, body: null })
  })

  it('honours the fields Queen clients send (a partition seek by timestamp, a status listing by queue) and refuses a fetch wait, as Node does', async () => {
    const post = (path: string, body: unknown) => edge.fetch(path, { method: 'POST', body: JSON.stringify(body), headers: { 'content-type': 'application/json' } })
    await post('/api/v1/push', { items: [1, 2, 3].map((n) => ({ queue: 'edge-fields', partition: 'x', payload: n })) })
    const sought = await post('/api/v1/consumer-groups/g/queues/edge-fields/partitions/x/seek', { timestamp: '2000-01-01T00:00:00Z' })
    expect(sought).toMatchObject({ status: 200, body: { seekToEnd: false, targetTimestamp: '2000-01-01T00:00:00.000Z', committedOffset: 0 } })
    const popped = await edge.fetch('/api/v1/pop/queue/edge-fields?consumerGroup=g&batch=10')
    expect((popped.body as { messages: { data: unknown }[] }).messages.map((m) => m.data)).toEqual([1, 2, 3])
    const listed = await edge.fetch('/api/v1/status/queues?queue=edge-fields')
    expect((listed.body as { queues: { name: string }[] }).queues.map((q) => q.name)).toEqual(['edge-fields'])
    const wait = { method: 'POST', body: JSON.stringify({ entries: [{ queue: 'edge-fields', partition: 'x', fromOffset: 0 }], maxWaitMs: 500 }), headers: { 'content-type': 'application/json' } }
    const refused = await edge.fetch('/api/v1/fetch', wait)
    expect(refused).toMatchObject({ status: 400, body: { code: 'invalid_request', error: 'maxWaitMs: is not supported: this fetch never parks; poll again instead' } })
    expect(refused.body).toEqual((await answer(await node.request('/api/v1/fetch', wait))).body)
  })

  it('streams the pre-rendered ?stats=cached listing, plain even to a gzip client, as Node lists it', async () => {
    const path = '/api/v1/resources/queues?stats=cached'
    const viaWorker = await edge.fetch(path, { headers: { 'accept-encoding': 'gzip' } })
    expect(viaWorker.status).toBe(200)
    expect(viaWorker.headers['content-type']).toContain('application/json')
    const viaNode = await answer(await node.request(path))
    const names = (listing: Answer) => (listing.body as { queues: { name: string }[] }).queues.map((q) => q.name)
    expect(names(viaWorker)).toContain('edge-smoke')
    expect((viaWorker.body as { queues: unknown[] }).queues).toEqual((viaNode.body as { queues: unknown[] }).queues)
  })

  it('shows a queue created after the cached listing rendered at once, patched in rather than rendered again', async () => {
    const path = '/api/v1/resources/queues?stats=cached'
    expect((await edge.fetch(path)).status).toBe(200)
    const renderedAt = async () => (await database.sql<{ at: string }>(`select rendered_at::text as at from queen.stats_listings where tenant_id = ''`))[0]!.at
    const rendered = await renderedAt()
    const post = { method: 'POST', body: JSON.stringify({ items: [{ queue: 'edge-listing-new', payload: 1 }] }), headers: { 'content-type': 'application/json' } }
    expect((await edge.fetch('/api/v1/push', post)).status).toBe(201)
    const viaWorker = await edge.fetch(path)
    expect(viaWorker.status).toBe(200)
    expect((viaWorker.body as { queues: { name: string }[] }).queues.map((q) => q.name)).toContain('edge-listing-new')
    expect(await renderedAt()).toBe(rendered)
    const viaNode = await answer(await node.request(path))
    expect((viaWorker.body as { queues: unknown[] }).queues).toEqual((viaNode.body as { queues: unknown[] }).queues)
  })

  it("reports this isolate's counters on /metrics, with what workerd cannot measure as null", async () => {
    const post = { method: 'POST', body: JSON.stringify({ items: [{ queue: 'edge-metrics', payload: 1 }] }), headers: { 'content-type': 'application/json' } }
    expect((await edge.fetch('/api/v1/push', post)).status).toBe(201)
    const metrics = await edge.fetch('/metrics')
    expect(metrics.status).toBe(200)
    const body = metrics.body as Record<string, Record<string, unknown>>
    expect(body.memory).toEqual({ rss: null, heapTotal: null, heapUsed: null, external: null, arrayBuffers: null })
    expect(body.cpu).toEqual({ user: null, system: null })
    expect(body.database).toEqual({ poolSize: null, idleConnections: null, waitingRequests: null })
    expect(body.counters!.pushedMessages).toBeGreaterThanOrEqual(1)
    const prom = await edge.fetch('/metrics/prometheus')
    expect(prom.status).toBe(200)
    expect(prom.headers['content-type']).toBe('text/plain; version=0.0.4; charset=utf-8')
    expect(prom.body).toContain('\nqueen_database_up 1\n')
    expect(prom.body).toContain('queen_queue_partitions{tenant="",queue="edge-metrics"} 1')
    expect(prom.body).not.toContain('queen_db_pool_connections')
  })

  it('encrypts with WebCrypto in workerd, readable by the Node runtime with the same key', async () => {
    const key = 'c'.repeat(64)
    const sealed = await spareEdge({ DATABASE_URL: database.url, NEON_WS_PROXY: bridge.url, QUEEN_ENCRYPTION_KEY: key })
    await database.sql(`insert into queen.queues (tenant_id, name, encryption_enabled) values ('', 'edge-sealed', true)`)
    const pushed = await sealed.fetch('/api/v1/push', { method: 'POST', body: JSON.stringify({ items: [{ queue: 'edge-sealed', payload: { pin: 1234 } }] }) })
    expect(pushed.status).toBe(201)
    const [row] = await database.sql<{ enc: boolean; data: string }>(`
      select (s.frames[1]->>'enc')::boolean as enc, s.frames[1]->>'data' as data from queen.log_segments s
        join queen.log_partitions p on p.id = s.partition_id join queen.queues q on q.id = p.queue_id where q.name = 'edge-sealed'`)
    expect(row!.enc).toBe(true)
    expect(row!.data).not.toContain('1234')
    const reader = await nodeApp(database.url, { QUEEN_ENCRYPTION_KEY: key })
    try {
      const res = await reader.request('/api/v1/pop/queue/edge-sealed')
      expect((await res.json()).messages[0].data).toEqual({ pin: 1234 })
    } finally {
      await reader.close()
    }
  })

  it('serves concurrent requests, each with its own pool', async () => {
    // A pool shared across requests fails in workerd ("Cannot perform I/O on behalf of a
    // different request"); twenty at once would expose one.
    const answers = await Promise.all(Array.from({ length: 20 }, () => edge.fetch('/health')))
    for (const a of answers) expect(a).toMatchObject({ status: 200, body: { database: 'connected' } })
    expect(edge.logs()).not.toMatch(/different request/)
  })

  it('refuses a client write of the sink pointer, reads it, and no longer serves the one-segment routes, as Node does', async () => {
    const put = (body: string): RequestInit => ({ method: 'PUT', headers: { 'content-type': 'application/json' }, body })
    const post = (body: unknown): RequestInit => ({ method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })
    const key = '/api/v1/kv/queen.sink/s3:lake:edge.smoke:committed'
    const refused = await edge.fetch(key, put('{"value":{"windowEnd":"2030-01-01T00:00:00Z"},"forever":true}'))
    expect(refused).toMatchObject({ status: 400, body: { code: 'kv_reserved_namespace', error: expect.stringContaining('queen.sink') } })
    expect(refused).toEqual(await answer(await node.request(key, put('{"value":{"windowEnd":"2030-01-01T00:00:00Z"},"forever":true}'))))
    const batch = { operations: [{ op: 'get', ns: 'queen.sink', key: 'k' }, { op: 'incr', ns: 'queen.sqs', key: 'n', delta: 1, forever: true }] }
    expect(await edge.fetch('/api/v1/kv', post(batch))).toMatchObject({ status: 400, body: { error: expect.stringMatching(/^operations\[1\]: namespace queen\.sqs is reserved/) } })
    expect(await edge.fetch(key)).toMatchObject({ status: 200, body: { found: false } })
    expect(await edge.fetch(key)).toEqual(await answer(await node.request(key)))
    const old = '/api/v1/kv/s3%3Alake%3Aedge.smoke%3Acommitted'
    expect(await edge.fetch(old, put('{"value":1}'))).toMatchObject({ status: 404 })
    expect(await edge.fetch(old)).toEqual(await answer(await node.request(old)))
  })

  it('registers a stream query, commits a cycle and replays it through the worker bundle', async () => {
    const post = (path: string, body: unknown) => edge.fetch(path, { method: 'POST', body: JSON.stringify(body), headers: { 'content-type': 'application/json' } })
    await post('/api/v1/push', { items: [1, 2, 3].map((n) => ({ queue: 'edge-stream.src', payload: { n } })) })
    const reg = await post('/streams/v1/queries', { name: 'edge-counts', source_queue: 'edge-stream.src', sink_queue: 'edge-stream.sink', config_hash: 'h' })
    expect(reg).toMatchObject({ status: 200, body: { success: true, fresh: true } })
    const queryId = (reg.body as { query_id: string }).query_id
    const popped = await edge.fetch('/api/v1/pop/queue/edge-stream.src?batch=10&consumerGroup=streams.edge-counts&subscriptionMode=all&partitions=4')
    const messages = (popped.body as { messages: { transactionId: string; partitionId: string; leaseId: string; offset: number }[] }).messages
    const last = messages.reduce((a, b) => (b.offset > a.offset ? b : a))
    const body = {
      query_id: queryId,
      partition_id: last.partitionId,
      consumer_group: 'streams.edge-counts',
      state_ops: [{ type: 'upsert', key: 'count', value: { n: 3 } }],
      push_items: [{ queue: 'edge-stream.sink', payload: { total: 3 } }],
      ack: { transactionId: last.transactionId, leaseId: last.leaseId, status: 'completed', count: messages.length },
    }
    const committed = await post('/streams/v1/cycle', body)
    expect(committed).toMatchObject({ status: 200, body: { success: true, state_ops_applied: 1, ack_result: { success: true, count: 3, lease_released: true } } })
    // A replay (the SHA-256 digest is WebCrypto's in workerd) applies nothing again.
    expect(await post('/streams/v1/cycle', body)).toMatchObject({ status: 200, body: { success: true, replayed: true } })
    const state = await post('/streams/v1/state/get', { query_id: queryId, partition_id: last.partitionId, keys: [] })
    expect(state).toMatchObject({ status: 200, body: { success: true, rows: [{ key: 'count', value: { n: 3 } }] } })
    const sink = await edge.fetch('/api/v1/pop/queue/edge-stream.sink?batch=10')
    expect((sink.body as { messages: { data: unknown }[] }).messages.map((m) => m.data)).toEqual([{ total: 3 }])
  })

  it('runs the maintenance lanes from scheduled()', async () => {
    await edge.scheduled()
    // scheduled() hands the lanes to waitUntil; poll the lease rows the lanes write.
    const lanes = ['retained_bytes', 'retention', 'eviction', 'dedup_purge']
    const deadline = Date.now() + 10_000
    let rows: { name: string; runs: number; finished: boolean; error: boolean }[] = []
    while (Date.now() < deadline) {
      rows = await database.sql<{ name: string; runs: number; finished: boolean; error: boolean }>(
        `select name, runs::int as runs, last_finished_at is not null as finished, last_result ? 'error' as error
           from queen.maintenance_leases where name = any ($1) order by name`,
        [lanes],
      )
      if (rows.length === lanes.length && rows.every((r) => r.finished)) break
      await new Promise((r) => setTimeout(r, 100))
    }
    for (const row of rows) expect(row, row.name).toMatchObject({ finished: true, error: false })
    expect(rows.map((r) => r.name).sort()).toEqual([...lanes].sort())
    // The retained_bytes lane wrote the stats row of the queue configured above.
    const [stats] = await database.sql<{ computed: boolean }>(
      `select s.bytes_computed_at is not null as computed from queen.stats s join queen.queues q on q.id = s.queue_id where q.name = 'edge.smoke'`,
    )
    expect(stats?.computed).toBe(true)
  })

  it('reports unhealthy with 503 when the database is unreachable', async () => {
    const closed = await freePort()
    const down = await spareEdge({ DATABASE_URL: `postgres://postgres:x@127.0.0.1:${closed}/postgres`, NEON_WS_PROXY: bridge.url })
    expect(await down.fetch('/health')).toMatchObject({ status: 503, body: { status: 'unhealthy', database: 'disconnected', version: VERSION } })
    // Not a configuration fault: the next request tries the database again and still answers.
    expect(await down.fetch('/health')).toMatchObject({ status: 503 })
    // The console's pages never touch the database, so an operator still gets the console.
    expect(await down.fetch('/')).toMatchObject({ status: 200, headers: { 'content-type': 'text/html; charset=utf-8' } })
  })

  it.each([
    ['STATEMENT_TIMEOUT_MS', 'is not a number', { STATEMENT_TIMEOUT_MS: 'soon' }],
    ['DATABASE_URL', 'is missing', { DATABASE_URL: '' }],
    ['JWT_PUBLIC_KEY', 'is missing under RS256', { JWT_ENABLED: 'true', JWT_ALGORITHM: 'RS256', JWT_SECRET: 'not-logged-secret' }],
    ['JWT_SECRET', 'is shorter than 32 bytes', { JWT_ENABLED: 'true', JWT_SECRET: 'short-not-logged' }],
    // Caught only when the isolate imports the key at its first event (WebCrypto is asynchronous).
    ['JWT_PUBLIC_KEY', 'is not a parsable PEM', { JWT_ENABLED: 'true', JWT_ALGORITHM: 'RS256', JWT_PUBLIC_KEY: '-----BEGIN PUBLIC KEY-----\\nAAAA\\n-----END PUBLIC KEY-----' }],
  ])('answers 500 internal on every request and logs the variable when %s %s', async (variable, _why, bad) => {
    const broken = await spareEdge({ DATABASE_URL: database.url, NEON_WS_PROXY: bridge.url, ...bad })
    for (const path of ['/health', '/nope']) {
      const res = await broken.fetch(path)
      expect(res).toMatchObject({ status: 500, body: { error: 'Internal error', code: 'internal' } })
      // CORS_ORIGINS is unknown without a configuration; the default is no CORS header.
      expect(Object.keys(res.headers).filter((h) => h.startsWith('access-control-'))).toEqual([])
    }
    const line = JSON.parse(await broken.logLine('refusing to serve'))
    expect(line).toMatchObject({ level: 'error', variable })
    // Neither the connection string nor a secret reaches the log.
    expect(broken.logs()).not.toContain(new URL(database.url).password)
    expect(broken.logs()).not.toContain('not-logged-secret')
  })

  it('verifies JWTs in workerd: HS256, EdDSA by PEM and RS256 from a JWKS endpoint', async () => {
    const [ed, rsa] = await Promise.all([keyPair('EdDSA'), keyPair('RS256')])
    const jwks = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' })
      void rsa.jwk('edge-1').then((k) => res.end(JSON.stringify({ keys: [k] })))
    })
    await new Promise<void>((done) => jwks.listen(0, '127.0.0.1', done))
    try {
      const jwksUrl = `http://127.0.0.1:${(jwks.address() as AddressInfo).port}/jwks`
      // JWT_SKIP_PATHS=/ leaves /health authenticated, so the one route that exists shows the check.
      const common = { DATABASE_URL: database.url, NEON_WS_PROXY: bridge.url, JWT_ENABLED: 'true', JWT_SKIP_PATHS: '/' }
      const hs = await spareEdge({ ...common, JWT_SECRET: SECRET })
      const missing = await hs.fetch('/health')
      expect(missing).toMatchObject({ status: 401, body: { error: 'Authentication required', code: 'unauthenticated' }, headers: { 'www-authenticate': 'Bearer' } })
      expect(await hs.fetch('/health', { headers: bearer(await token({ role: 'read-only' })) })).toMatchObject({ status: 200, body: { status: 'healthy' } })
      expect(await hs.fetch('/health', { headers: bearer(await token({ role: 'write-only' })) })).toMatchObject({ status: 403, body: { code: 'forbidden' } })
      expect(await hs.fetch('/health', { headers: bearer(unsigned({ role: 'admin' })) })).toMatchObject({ status: 401, body: { code: 'invalid_token' } })

      const edEdge = await spareEdge({ ...common, JWT_ALGORITHM: 'EdDSA', JWT_PUBLIC_KEY: ed.pem })
      expect(await edEdge.fetch('/health', { headers: bearer(await token({ role: 'admin' }, { alg: 'EdDSA', key: ed.privateKey })) })).toMatchObject({ status: 200 })

      const jwksEdge = await spareEdge({ ...common, JWT_ALGORITHM: 'RS256', JWT_JWKS_URL: jwksUrl })
      const signed = await token({ role: 'admin' }, { alg: 'RS256', key: rsa.privateKey, kid: 'edge-1' })
      // Twice: the second request verifies with keys cached by the first request's fetch.
      for (let i = 0; i < 2; i++) expect(await jwksEdge.fetch('/health', { headers: bearer(signed) })).toMatchObject({ status: 200 })
      const stranger = await token({ role: 'admin' }, { alg: 'RS256', key: rsa.privateKey, kid: 'edge-9' })
      expect(await jwksEdge.fetch('/health', { headers: bearer(stranger) })).toMatchObject({ status: 401, body: { error: 'Unknown key ID: edge-9' } })
    } finally {
      await new Promise((done) => jwks.close(done))
    }
  })

  it('refuses to serve when the role has no statement timeout', async () => {
    const untimed = await freshDatabase()
    try {
      // Role-in-database settings beat the role-wide one db:migrate wrote, for this database only.
      await untimed.sql(`alter role current_user in database ${untimed.name} set statement_timeout = 0`)
      const refusing = await spareEdge({ DATABASE_URL: untimed.url, NEON_WS_PROXY: bridge.url })
      for (const path of ['/health', '/health']) {
        expect(await refusing.fetch(path)).toMatchObject({ status: 500, body: { error: 'Internal error', code: 'internal' } })
      }
      expect(await refusing.logLine('statement_timeout')).toContain('refusing to serve')
    } finally {
      await untimed.drop()
    }
  })

  it('serves the same answers over a Hyperdrive binding (node-postgres in workerd)', async () => {
    const hyperdrive = await spareEdge({}, { hyperdrives: { HYPERDRIVE: database.url } })
    for (const [path, init] of SAME_REQUESTS) {
      expect(await hyperdrive.fetch(path, init), `${init?.method ?? 'GET'} ${path}`).toEqual(await answer(await node.request(path, init)))
    }
  })

  it('routes each tenant to its database by name (a URL over Neon\'s driver, a Hyperdrive binding) and runs lanes in every one', async () => {
    const [east, west] = await Promise.all([freshDatabase(), freshDatabase()])
    try {
      const placed = await spareEdge(
        {
          DATABASE_URL: database.url,
          NEON_WS_PROXY: bridge.url,
          QUEEN_TENANCY_HEADER: 'X-Tenant',
          PLACEMENT_CACHE_TTL_MS: '100',
          QUEEN_DATABASES: JSON.stringify({ east: east.url, west: 'binding:HD_WEST' }),
        },
        { hyperdrives: { HD_WEST: west.url } },
      )
      const as = (tenant: string, init: RequestInit = {}) => ({ ...init, headers: { 'content-type': 'application/json', 'X-Tenant': tenant } })
      for (const [tenant, name] of [['edge-a', 'east'], ['edge-b', 'west']]) {
        const put = await placed.fetch(`/api/v1/system/placements/${tenant}`, as('ops', { method: 'PUT', body: JSON.stringify({ database: name }) }))
        expect(put.status).toBe(200)
      }
      const unknown = await placed.fetch('/api/v1/system/placements/edge-c', as('ops', { method: 'PUT', body: JSON.stringify({ database: 'mars' }) }))
      expect(unknown.status).toBe(400)
      for (const tenant of ['edge-a', 'edge-b', 'edge-c']) {
        const pushed = await placed.fetch('/api/v1/push', as(tenant, { method: 'POST', body: JSON.stringify({ items: [{ queue: 'placed', payload: tenant }] }) }))
        expect(pushed.status, tenant).toBe(201)
      }
      const tenantsIn = async (db: TestDatabase) => (await db.sql<{ t: string }>(`select tenant_id as t from queen.queues where name = 'placed'`)).map((r) => r.t)
      expect(await tenantsIn(east)).toEqual(['edge-a'])
      expect(await tenantsIn(west)).toEqual(['edge-b'])
      expect(await tenantsIn(database)).toEqual(['edge-c'])
      const popped = await placed.fetch('/api/v1/pop/queue/placed?wait=false', as('edge-b'))
      expect((popped.body as { messages: { data: unknown }[] }).messages.map((m) => m.data)).toEqual(['edge-b'])

      await placed.scheduled()
      const deadline = Date.now() + 10_000
      const ran = async (db: TestDatabase) => (await db.sql<{ n: number }>(`select count(*)::int as n from queen.maintenance_leases where name = 'stats_refresh' and last_finished_at is not null`))[0]!.n
      while (Date.now() < deadline && ((await ran(east)) === 0 || (await ran(west)) === 0)) await new Promise((r) => setTimeout(r, 100))
      expect(await ran(east)).toBe(1)
      expect(await ran(west)).toBe(1)
    } finally {
      await Promise.all([east.drop(), west.drop()])
    }
  })

  it('serves the console from the bundle: the shell and the assets byte for byte as Node does', async () => {
    for (const path of ['/', '/console/queues/orders', `${ASSET_BASE}/main.js`, `${ASSET_BASE}/console.css`]) {
      const served = await edge.fetch(path)
      expect(served.status, path).toBe(200)
      expect(served, path).toEqual(await answer(await node.request(path)))
    }
    expect(await edge.fetch('/console/config.json')).toMatchObject({ status: 200, body: { runtime: 'workers', staleAfterSeconds: 180, authEnabled: false } })
  })
})
