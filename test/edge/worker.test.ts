// The real worker bundle in workerd (miniflare), over the same PostgreSQL through the WebSocket
// bridge: the requests a client sends answer the same as through Node, and scheduled() runs lanes.
import { dirname } from 'node:path'
import { Miniflare } from 'miniflare'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startWsBridge, type WsBridge } from '../../scripts/ws-bridge.js'
import { freePort } from '../../src/db/embedded.js'
import { VERSION } from '../../src/version.js'
import { nodeApp } from '../helpers/app.js'
import { freshDatabase, type TestDatabase } from '../helpers/database.js'
import { buildWorker } from './build-worker.js'

let database: TestDatabase
let bridge: WsBridge
let scriptPath: string
let mf: Miniflare
let node: Awaited<ReturnType<typeof nodeApp>>

const worker = (bindings: Record<string, string>) =>
  new Miniflare({
    modules: true,
    scriptPath,
    // Module names are relative to this root; the bundle lives in a scratch directory.
    modulesRoot: dirname(scriptPath),
    compatibilityDate: '2026-04-01',
    compatibilityFlags: ['nodejs_compat'],
    bindings: { LOG_LEVEL: 'silent', ...bindings },
  })

beforeAll(async () => {
  scriptPath = buildWorker()
  database = await freshDatabase()
  bridge = await startWsBridge()
  mf = worker({ DATABASE_URL: database.url, NEON_WS_PROXY: bridge.address })
  node = await nodeApp(database.url)
}, 120_000)

afterAll(async () => {
  await mf?.dispose()
  await node?.close()
  await bridge?.close()
  await database?.drop()
})

async function answer(res: { status: number; headers: { get(name: string): string | null }; text(): Promise<string> }) {
  const text = await res.text()
  return {
    status: res.status,
    body: text ? JSON.parse(text) : null,
    cors: res.headers.get('access-control-allow-origin'),
    requestId: res.headers.get('x-request-id') !== null,
  }
}

describe('the worker in workerd', () => {
  it('answers the same requests the same as the Node runtime', async () => {
    const requests: [string, RequestInit?][] = [
      ['/health'],
      ['/api/v1/does-not-exist'],
      ['/health', { method: 'DELETE' }],
      ['/anything', { method: 'OPTIONS' }],
    ]
    for (const [path, init] of requests) {
      const viaWorker = await answer(await mf.dispatchFetch(`http://edge.test${path}`, init as never))
      const viaNode = await answer(await node.request(path, init))
      expect(viaWorker, `${init?.method ?? 'GET'} ${path}`).toEqual(viaNode)
    }
    const health = await answer(await mf.dispatchFetch('http://edge.test/health'))
    expect(health).toMatchObject({ status: 200, body: { status: 'healthy', database: 'connected', version: VERSION } })
    const missing = await answer(await mf.dispatchFetch('http://edge.test/nope'))
    expect(missing).toMatchObject({ status: 404, body: { error: 'Not found', code: 'not_found' }, cors: '*' })
  })

  it('runs the maintenance lanes from scheduled()', async () => {
    const w = await mf.getWorker()
    await w.scheduled({ cron: '* * * * *' })
    // scheduled() hands the lanes to waitUntil; poll the lease row it writes.
    const deadline = Date.now() + 10_000
    let row: { runs: number; finished: boolean } | undefined
    while (Date.now() < deadline) {
      ;[row] = await database.sql<{ runs: number; finished: boolean }>(
        `select runs::int as runs, last_finished_at is not null as finished from queen.maintenance_leases where name = 'dedup_purge'`,
      )
      if (row?.finished) break
      await new Promise((r) => setTimeout(r, 100))
    }
    expect(row).toEqual({ runs: 1, finished: true })
  })

  it('reports unhealthy with 503 when the database is unreachable', async () => {
    const closed = await freePort()
    const down = worker({ DATABASE_URL: `postgres://postgres:x@127.0.0.1:${closed}/postgres`, NEON_WS_PROXY: bridge.address })
    try {
      const res = await answer(await down.dispatchFetch('http://edge.test/health'))
      expect(res).toMatchObject({ status: 503, body: { status: 'unhealthy', database: 'disconnected', version: VERSION } })
    } finally {
      await down.dispose()
    }
  })

  it('answers 500 internal on every request when its configuration is invalid', async () => {
    const broken = worker({ DATABASE_URL: database.url, NEON_WS_PROXY: bridge.address, STATEMENT_TIMEOUT_MS: 'soon' })
    try {
      const res = await answer(await broken.dispatchFetch('http://edge.test/health'))
      expect(res).toMatchObject({ status: 500, body: { error: 'Internal error', code: 'internal' } })
    } finally {
      await broken.dispose()
    }
  })
})
