// The console's pages over plain HTTP: the shell at / and every /console/... path, its settings and
// its assets, each with its content type and cache rule, with JWT and tenancy on and no token, no
// tenant, and a database that fails on any use (pages must never touch it).
import { execFileSync } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { createApp } from '../../src/app.js'
import { loadConfig } from '../../src/config.js'
import { ASSETS, ASSET_BASE } from '../../src/console/assets.js'
import type { Database } from '../../src/db/database.js'
import { createLogger } from '../../src/log.js'
import { SECRET } from '../helpers/tokens.js'

const untouchable = new Proxy({} as Database, {
  get(_, key) {
    throw new Error(`a page used the database (${String(key)})`)
  },
})
const config = loadConfig({ LOG_LEVEL: 'silent', JWT_ENABLED: 'true', JWT_SECRET: SECRET, QUEEN_TENANCY_HEADER: 'x-tenant' }, 'node')
const app = createApp({ config, log: createLogger('silent'), database: () => untouchable })

describe('console pages', () => {
  it('serves the shell at / and at every /console path, uncached, without a token or tenant', async () => {
    for (const path of ['/', '/console', '/console/', '/console/queues', '/console/queues/orders', '/console/queues/a%2Fb/edit', '/console/dlq?queue=x', '/console/workload?groupBy=task', '/console/groups/g', '/console/kv?namespace=n', '/console/timers?queue=q']) {
      const res = await app.request(path)
      expect(res.status, path).toBe(200)
      expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8')
      expect(res.headers.get('cache-control')).toBe('no-cache')
      expect(res.headers.get('content-security-policy')).toContain("frame-ancestors 'none'")
      expect(res.headers.get('referrer-policy')).toBe('no-referrer')
      const html = await res.text()
      expect(html).toContain(`<script type="module" src="${ASSET_BASE}/main.js"></script>`)
      expect(html).toContain(`<link rel="stylesheet" href="${ASSET_BASE}/console.css">`)
    }
  })

  it('tells the browser the tenancy header name and the stale threshold, and nothing secret', async () => {
    const res = await app.request('/console/config.json')
    expect(res.status).toBe(200)
    expect(res.headers.get('cache-control')).toBe('no-cache')
    const body = await res.json()
    expect(body).toEqual({ authEnabled: true, tenancyHeader: 'x-tenant', staleAfterSeconds: 30, runtime: 'node' })
    expect(JSON.stringify(body)).not.toContain(SECRET)
  })

  it('stretches the stale threshold on Workers, whose stats lane runs from a once-a-minute cron', async () => {
    const { consoleSettings } = await import('../../src/console/settings.js')
    expect(consoleSettings(loadConfig({}, 'workers')).staleAfterSeconds).toBe(180)
    expect(consoleSettings(loadConfig({ STATS_INTERVAL_MS: '120000' }, 'node')).staleAfterSeconds).toBe(360)
    expect(consoleSettings(loadConfig({}, 'node'))).toMatchObject({ authEnabled: false, tenancyHeader: null })
  })

  it('serves every asset under its hash with its type, immutable, and each script parses as a module', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'console-assets-'))
    try {
      for (const [name, asset] of Object.entries(ASSETS)) {
        const res = await app.request(`${ASSET_BASE}/${name}`)
        expect(res.status, name).toBe(200)
        expect(res.headers.get('content-type')).toBe(asset.contentType)
        expect(res.headers.get('cache-control')).toBe('public, max-age=31536000, immutable')
        const body = await res.text()
        expect(body).toBe(asset.body)
        if (name.endsWith('.js')) {
          const file = join(dir, name.replace(/\.js$/, '.mjs'))
          writeFileSync(file, body)
          execFileSync(process.execPath, ['--check', file], { stdio: 'pipe' })
        }
      }
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })

  it('answers 404 for a stale hash or an unknown asset and 405 with Allow for a non-GET of a page, never 5xx', async () => {
    const misses = ['/console/assets/00000000/main.js', `${ASSET_BASE}/nope.js`, `${ASSET_BASE}/..%2F..%2Fpackage.json`]
    for (const path of misses) {
      const res = await app.request(path)
      expect(res.status, path).toBe(404)
      expect(await res.json()).toMatchObject({ code: 'not_found' })
    }
    const wrongMethods: [string, RequestInit][] = [
      ['/', { method: 'POST', body: '{}' }],
      ['/console/queues', { method: 'DELETE' }],
    ]
    for (const [path, init] of wrongMethods) {
      const res = await app.request(path, init)
      expect(res.status, path).toBe(405)
      expect(res.headers.get('allow'), path).toContain('GET')
      expect(await res.json()).toMatchObject({ code: 'method_not_allowed' })
    }
  })

  it('keeps an API route guarded: the console pages open no path around authentication', async () => {
    const res = await app.request('/api/v1/resources/queues', { headers: { 'x-tenant': 'acme' } })
    expect(res.status).toBe(401)
  })
})
