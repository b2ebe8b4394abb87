// Request bodies as the Node runtime reads them off a real socket (src/node.ts serves the app with
// @hono/node-server): a body with a Content-Length within MAX_BODY_BYTES is read whole, one
// without (chunked) is read as a stream under the cap. Both must answer exactly alike.
import { serve } from '@hono/node-server'
import http from 'node:http'
import { connect, type AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createApp } from '../../src/app.js'
import { loadConfig } from '../../src/config.js'
import { createDatabase } from '../../src/db/database.js'
import { createNodePool } from '../../src/db/node-pool.js'
import { createLogger } from '../../src/log.js'
import { freshDatabase, type TestDatabase } from '../helpers/database.js'
import { probeRoutes } from '../helpers/probe-routes.js'

let database: TestDatabase
let server: ReturnType<typeof serve>
let port: number
let closeDb: () => Promise<void>

beforeAll(async () => {
  database = await freshDatabase()
  const config = loadConfig({ LOG_LEVEL: 'silent', MAX_BODY_BYTES: '2048' }, 'node')
  const db = createDatabase(createNodePool({ connectionString: database.appUrl, max: 2 }), { longLived: true })
  closeDb = () => db.close()
  const app = createApp({ config, log: createLogger(config.LOG_LEVEL), database: () => db, routes: probeRoutes })
  server = await new Promise((ready) => {
    const s = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, () => ready(s))
  })
  port = (server.address() as AddressInfo).port
})

afterAll(async () => {
  await new Promise<void>((done) => server.close(() => done()))
  await closeDb()
  await database.drop()
})

/** POST over node:http; chunked sends the body without a Content-Length. */
function post(path: string, body: string, { chunked = false } = {}): Promise<{ status: number; body: any }> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string | number> = { 'content-type': 'application/json' }
    if (!chunked) headers['content-length'] = Buffer.byteLength(body)
    const req = http.request({ host: '127.0.0.1', port, path, method: 'POST', headers, agent: false }, (res) => {
      const chunks: Buffer[] = []
      res.on('data', (c: Buffer) => chunks.push(c))
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8')
        resolve({ status: res.statusCode ?? 0, body: text ? JSON.parse(text) : null })
      })
    })
    req.on('error', reject)
    if (chunked) {
      // Two writes force chunked transfer encoding.
      req.write(body.slice(0, 1))
      req.end(body.slice(1))
    } else req.end(body)
  })
}

describe('request bodies off a socket', () => {
  it('parses a declared and a chunked body alike, multi-byte text included', async () => {
    const text = JSON.stringify({ note: 'grüße ✓ 𝄞', n: [1, 2, { deep: null }] })
    const declared = await post('/probe/required', text)
    const chunked = await post('/probe/required', text, { chunked: true })
    expect(declared).toEqual({ status: 200, body: { body: JSON.parse(text), tenant: '' } })
    expect(chunked).toEqual(declared)
  })

  it('refuses a body over MAX_BODY_BYTES with 413, declared or chunked', async () => {
    const big = JSON.stringify({ pad: 'x'.repeat(4096) })
    const expected = { status: 413, body: { error: 'Request body too large (limit 2048 bytes)', code: 'payload_too_large' } }
    expect(await post('/probe/required', big)).toEqual(expected)
    expect(await post('/probe/required', big, { chunked: true })).toEqual(expected)
  })

  it('reads no more than the declared length, whatever follows it on the socket', async () => {
    // A body read whole is bounded by Content-Length (HTTP framing), never by what the client sends.
    const answer = await new Promise<string>((resolve, reject) => {
      const socket = connect(port, '127.0.0.1', () => {
        // 2 bytes declared, then 4 KiB more: the excess is the next pipelined request, not body.
        const next = `POST /probe/required HTTP/1.1\r\nHost: x\r\nContent-Length: 4100\r\nConnection: close\r\n\r\n{"p":"${'x'.repeat(4092)}"}`
        socket.end(`POST /probe/required HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}${next}`)
      })
      let out = ''
      socket.on('data', (d: Buffer) => (out += d.toString()))
      socket.on('close', () => resolve(out))
      socket.on('error', reject)
    })
    expect(answer.split('\r\n')[0]).toBe('HTTP/1.1 200 OK')
    expect(answer).toContain('{"body":{},"tenant":""}')
    expect(answer).toContain('HTTP/1.1 413 Payload Too Large')
  })

  it('refuses U+0000 in a value or a key, declared or chunked, and accepts an escaped backslash before u0000', async () => {
    for (const chunked of [false, true]) {
      const inValue = await post('/probe/required', JSON.stringify({ items: [{ data: { note: 'a\u0000b' } }] }), { chunked })
      expect(inValue).toEqual({ status: 400, body: { error: 'items[0].data.note must not contain U+0000', code: 'invalid_request' } })
      const inKey = await post('/probe/required', JSON.stringify({ outer: { 'k\u0000': 1 } }), { chunked })
      expect(inKey.status).toBe(400)
      expect(inKey.body.error).toBe('outer.k\u0000 must not contain U+0000')
      // A raw NUL is not JSON at all, so only the escape can bring one in (body.ts skips the walk without it).
      const raw = await post('/probe/required', '{"note":"a\u0000b"}', { chunked })
      expect(raw.status).toBe(400)
      expect(raw.body.code).toBe('invalid_json')
      // The six characters \u0000 after an escaped backslash are text, not a NUL.
      const text = '{"note":"a\\\\u0000b"}'
      expect(await post('/probe/required', text, { chunked })).toEqual({ status: 200, body: { body: { note: 'a\\u0000b' }, tenant: '' } })
    }
  })
})
