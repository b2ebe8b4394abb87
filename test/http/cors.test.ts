// CORS is off unless CORS_ORIGINS is set (docs/security.md): with authentication off by default, a
// blanket `*` let any web page a developer visits push, pop and delete on a local broker.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ConfigError, loadConfig } from '../../src/config.js'
import { testApp, type TestApp } from '../helpers/app.js'

let plain: TestApp
let listed: TestApp
let star: TestApp
beforeAll(async () => {
  plain = await testApp()
  listed = await testApp({ database: plain.database, env: { CORS_ORIGINS: 'https://app.example, https://ops.example:8443' } })
  star = await testApp({ database: plain.database, env: { CORS_ORIGINS: '*' } })
})
afterAll(async () => {
  await star.close()
  await listed.close()
  await plain.close()
})

function corsHeaders(res: Response): string[] {
  const names: string[] = []
  res.headers.forEach((_, name) => name.startsWith('access-control-') && names.push(name))
  return names
}
const EVIL = { origin: 'https://evil.example' }

describe('CORS by default (CORS_ORIGINS unset)', () => {
  it('sends no Access-Control-* header on a preflight, an answer or an error', async () => {
    const preflight = await plain.request('/api/v1/push', { method: 'OPTIONS', headers: { ...EVIL, 'access-control-request-method': 'POST' } })
    expect(preflight.status).toBe(204)
    expect(corsHeaders(preflight)).toEqual([])
    for (const res of [await plain.request('/health', { headers: EVIL }), await plain.request('/nope', { headers: EVIL })]) {
      expect(corsHeaders(res)).toEqual([])
    }
  })

  it('gives a cross-origin text/plain POST (no preflight) no header a browser would let the page read by', async () => {
    const res = await plain.request('/api/v1/configure', { method: 'POST', headers: { ...EVIL, 'content-type': 'text/plain' }, body: '{"queue":"cors.probe"}' })
    expect(res.headers.get('access-control-allow-origin')).toBeNull()
  })

  it('still serves same-origin callers (the console) as before', async () => {
    const res = await plain.json('GET', '/api/v1/resources/queues')
    expect(res.status).toBe(200)
  })
})

describe('CORS_ORIGINS', () => {
  it('as a list answers a listed origin with itself and Vary: Origin, any other with nothing', async () => {
    const ok = await listed.request('/api/v1/push', { method: 'OPTIONS', headers: { origin: 'https://app.example' } })
    expect(ok.headers.get('access-control-allow-origin')).toBe('https://app.example')
    expect(ok.headers.get('access-control-allow-methods')).toBe('GET, POST, PUT, DELETE, OPTIONS')
    expect(ok.headers.get('access-control-max-age')).toBe('86400')
    expect(ok.headers.get('vary')).toContain('Origin')
    const port = await listed.request('/health', { headers: { origin: 'https://ops.example:8443' } })
    expect(port.headers.get('access-control-allow-origin')).toBe('https://ops.example:8443')
    const other = await listed.request('/health', { headers: EVIL })
    expect(corsHeaders(other)).toEqual([])
    expect(other.headers.get('vary')).toContain('Origin')
  })

  it('as * answers every origin with *', async () => {
    const res = await star.request('/nope', { headers: EVIL })
    expect(res.headers.get('access-control-allow-origin')).toBe('*')
    expect(res.headers.get('access-control-expose-headers')).toBe('Retry-After, X-Request-Id')
  })

  it('refuses at boot a * mixed with origins, a path, or a non-http scheme, naming the variable', () => {
    for (const value of ['*,https://a.example', 'https://a.example/app', 'ftp://a.example', 'app.example']) {
      expect(() => loadConfig({ CORS_ORIGINS: value }, 'node'), value).toThrow(ConfigError)
      expect(() => loadConfig({ CORS_ORIGINS: value }, 'node'), value).toThrow(/CORS_ORIGINS/)
    }
  })
})
