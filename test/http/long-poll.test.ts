import { serve } from '@hono/node-server'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createApp } from '../../src/app.js'
import { createProcessMetrics } from '../../src/metrics.js'
import { testApp, type TestApp } from '../helpers/app.js'
import { configureQueue, push } from '../helpers/engine.js'

let app: TestApp
let other: TestApp
beforeAll(async () => {
  app = await testApp()
  // A second broker over the same database: its pushes reach parked pops only by re-checks.
  other = await testApp({ database: app.database })
})
afterAll(async () => {
  await other.close()
  await app.close()
})

const later = (ms: number, fn: () => Promise<unknown>) => new Promise((r) => setTimeout(r, ms)).then(fn)

describe('long poll', () => {
  it('is answered by a push made through another broker instance', async () => {
    const [res] = await Promise.all([
      app.json('GET', '/api/v1/pop/queue/lp-remote?wait=true&timeout=20000'),
      later(400, () => push(other, [{ queue: 'lp-remote', payload: 'hello' }])),
    ])
    expect(res.status).toBe(200)
    expect(res.body.messages.map((m: { data: unknown }) => m.data)).toEqual(['hello'])
  })

  it('is woken by a push on the same process', async () => {
    const [res] = await Promise.all([
      app.json('GET', '/api/v1/pop/queue/lp-local?wait=true&timeout=20000'),
      later(300, () => push(app, [{ queue: 'lp-local', payload: 'near' }])),
    ])
    expect(res.status).toBe(200)
    expect(res.body.messages[0].data).toBe('near')
  })

  it('answers 204 at its deadline when nothing arrives', async () => {
    const res = await app.request('/api/v1/pop/queue/lp-empty?wait=true&timeout=250')
    expect(res.status).toBe(204)
    expect(await res.text()).toBe('')
  })

  it('clamps a long client timeout to MAX_POP_WAIT_MS instead of refusing it', async () => {
    const capped = await testApp({ database: app.database, env: { MAX_POP_WAIT_MS: '300' } })
    try {
      expect((await capped.request('/api/v1/pop/queue/lp-capped?wait=true&timeout=600000')).status).toBe(204)
    } finally {
      await capped.close()
    }
  })

  it('stops waiting when the client goes away', async () => {
    const abort = new AbortController()
    setTimeout(() => abort.abort(), 200)
    const res = await app.request('/api/v1/pop/queue/lp-abort?wait=true&timeout=25000', { signal: abort.signal })
    expect(res.status).toBe(204)
  })

  it('stops waiting when a client on a real socket goes away (Node serving, as src/node.ts does)', async () => {
    // app.request() hands the app a fetch Request; a socket goes through @hono/node-server's own
    // request object and its AbortSignal, and the disconnect must end the wait, not the 25 s timeout.
    const metrics = createProcessMetrics('node')
    const served = createApp({ config: app.config, log: { debug() {}, info() {}, warn() {}, error() {} }, database: () => app.db, metrics })
    const server = await new Promise<ReturnType<typeof serve>>((ready) => {
      const s = serve({ fetch: served.fetch, port: 0, hostname: '127.0.0.1' }, () => ready(s))
    })
    try {
      const { port } = server.address() as AddressInfo
      const req = http.get({ host: '127.0.0.1', port, path: '/api/v1/pop/queue/lp-socket?wait=true&timeout=25000', agent: false })
      req.on('error', () => {})
      const deadline = Date.now() + 5000
      while (metrics.longPollsWaiting === 0 && Date.now() < deadline) await later(20, async () => {})
      expect(metrics.longPollsWaiting).toBe(1)
      req.destroy()
      while (metrics.longPollsWaiting > 0 && Date.now() < deadline) await later(20, async () => {})
      expect(metrics.longPollsWaiting).toBe(0)
    } finally {
      await new Promise<void>((done) => server.close(() => done()))
    }
  })

  it('holds an empty answer for minPopWaitTime, re-checking once when a local push arrives', async () => {
    await configureQueue(app, 'lp-floor', { min_pop_wait_time: 20000 })
    const [res] = await Promise.all([
      app.json('GET', '/api/v1/pop/queue/lp-floor'),
      later(300, () => push(app, [{ queue: 'lp-floor', payload: 'during hold' }])),
    ])
    expect(res.status).toBe(200)
    expect(res.body.messages[0].data).toBe('during hold')
  })
})
