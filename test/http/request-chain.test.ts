import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { allRoutes } from '../../src/routes/index.js'
import { VERSION } from '../../src/version.js'
import { testApp, type TestApp } from '../helpers/app.js'
import { probeRoutes } from '../helpers/probe-routes.js'

let app: TestApp
// CORS is off by default (test/http/cors.test.ts); these checks are of a broker that allows `*`.
let anyOrigin: TestApp
beforeAll(async () => {
  app = await testApp({ env: { MAX_BODY_BYTES: '2048' }, deps: { routes: [...allRoutes(VERSION), ...probeRoutes] } })
  anyOrigin = await testApp({ database: app.database, env: { CORS_ORIGINS: '*' } })
})
afterAll(async () => {
  await anyOrigin.close()
  await app.close()
})

describe('routing and the envelope', () => {
  it('answers an unknown route 404 with the flat envelope', async () => {
    const res = await app.json('GET', '/api/v1/nope')
    expect(res.status).toBe(404)
    expect(res.body).toEqual({ error: 'Not found', code: 'not_found' })
    expect(res.headers.get('content-type')).toMatch(/^application\/json/)
  })

  // Issue #37 changed this from 404: the path exists, so the client is told which methods it takes.
  it('answers a registered path with a method it does not serve 405 with Allow', async () => {
    const res = await app.json('DELETE', '/health')
    expect(res.status).toBe(405)
    expect(res.headers.get('allow')).toBe('GET, HEAD')
    expect(res.body.code).toBe('method_not_allowed')
  })

  it('answers OPTIONS on any path 204 with CORS and no body, before any check', async () => {
    const res = await anyOrigin.request('/anything/at/all', { method: 'OPTIONS' })
    expect(res.status).toBe(204)
    expect(await res.text()).toBe('')
    expect(res.headers.get('access-control-allow-origin')).toBe('*')
    expect(res.headers.get('access-control-allow-methods')).toBe('GET, POST, PUT, DELETE, OPTIONS')
    expect(res.headers.get('access-control-max-age')).toBe('86400')
    expect(res.headers.get('content-type')).toBeNull()
  })

  it('puts CORS headers on errors too', async () => {
    const res = await anyOrigin.request('/nope')
    expect(res.headers.get('access-control-allow-origin')).toBe('*')
    expect(res.headers.get('access-control-expose-headers')).toBe('Retry-After, X-Request-Id')
  })

  it('echoes a printable X-Request-Id and mints a UUIDv7 otherwise', async () => {
    const echoed = await app.request('/health', { headers: { 'x-request-id': 'abc-123' } })
    expect(echoed.headers.get('x-request-id')).toBe('abc-123')
    const minted = await app.request('/health', { headers: { 'x-request-id': 'x'.repeat(129) } })
    expect(minted.headers.get('x-request-id')).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
    const none = await app.request('/nope')
    expect(none.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/)
  })
})

describe('GET /health', () => {
  it('is healthy after a real round trip, with the package version', async () => {
    const res = await app.json('GET', '/health')
    expect(res.status).toBe(200)
    expect(res.body).toEqual({ status: 'healthy', database: 'connected', version: VERSION })
  })
})

describe('request bodies', () => {
  it('refuses an empty required body with invalid_json', async () => {
    const res = await app.json('POST', '/probe/required', '')
    expect(res.status).toBe(400)
    expect(res.body).toMatchObject({ error: 'Empty request body', code: 'invalid_json' })
  })

  it('refuses broken JSON with the parser message', async () => {
    const res = await app.json('POST', '/probe/required', '{"queue":')
    expect(res.status).toBe(400)
    expect(res.body.code).toBe('invalid_json')
    expect(res.body.error).toMatch(/^Invalid JSON: /)
  })

  it('parses JSON whatever the Content-Type says', async () => {
    const res = await app.request('/probe/required', { method: 'POST', body: '{"a":1}', headers: { 'content-type': 'text/plain' } })
    expect(res.status).toBe(200)
    expect((await res.json()).body).toEqual({ a: 1 })
  })

  it('refuses valid JSON that is not an object', async () => {
    for (const body of ['[1,2]', '"text"', '42', 'null']) {
      const res = await app.json('POST', '/probe/required', body)
      expect(res.status, body).toBe(400)
      expect(res.body).toMatchObject({ error: 'Request body must be a JSON object', code: 'invalid_request' })
    }
  })

  it('treats an empty optional body as {} but still refuses broken JSON', async () => {
    expect((await app.json('POST', '/probe/optional', '')).body.body).toEqual({})
    expect((await app.json('POST', '/probe/optional', '{oops')).status).toBe(400)
  })

  it('refuses U+0000 anywhere in the document, naming the field', async () => {
    const res = await app.json('POST', '/probe/required', { items: [{ data: { note: 'a\u0000b' } }] })
    expect(res.status).toBe(400)
    expect(res.body.code).toBe('invalid_request')
    expect(res.body.error).toContain('items[0].data.note')
  })

  it('refuses U+0000 in a path parameter or a query value, percent-escaped or raw', async () => {
    const inPath = await app.json('GET', '/api/v1/pop/queue/a%00b')
    expect(inPath.status).toBe(400)
    expect(inPath.body).toEqual({ error: 'queue must not contain U+0000', code: 'invalid_request' })
    for (const query of ['consumerGroup=g%00h', 'consumerGroup=g\u0000h']) {
      const res = await app.json('GET', `/api/v1/pop/queue/q?${query}`)
      expect(res.status, query).toBe(400)
      expect(res.body, query).toEqual({ error: 'query parameter "consumerGroup" must not contain U+0000', code: 'invalid_request' })
    }
  })

  it('refuses a body over MAX_BODY_BYTES with 413, declared or streamed', async () => {
    const big = JSON.stringify({ pad: 'x'.repeat(4096) })
    const declared = await app.json('POST', '/probe/required', big)
    expect(declared.status).toBe(413)
    expect(declared.body).toEqual({ error: 'Request body too large (limit 2048 bytes)', code: 'payload_too_large' })

    const stream = new ReadableStream({
      start(controller) {
        controller.enqueue(new TextEncoder().encode(big))
        controller.close()
      },
    })
    const streamed = await app.request('/probe/required', { method: 'POST', body: stream, duplex: 'half' } as RequestInit)
    expect(streamed.status).toBe(413)
  })

  it('validation failures name the field', async () => {
    const res = await app.json('POST', '/probe/validated', { queue: 7 })
    expect(res.status).toBe(400)
    expect(res.body.code).toBe('invalid_request')
    expect(res.body.error).toMatch(/^queue: /)
  })
})

describe('errors never leak internals', () => {
  it('answers an unexpected failure 500 internal without its message', async () => {
    const res = await app.json('GET', '/probe/crash')
    expect(res.status).toBe(500)
    expect(res.body).toEqual({ error: 'Internal error', code: 'internal' })
    expect(JSON.stringify(res.body)).not.toContain('hunter2')
  })

  it('maps SQLSTATEs through one table', async () => {
    const cases: [string, number, string][] = [
      ['57014', 503, 'db_unavailable'],
      ['40001', 503, 'db_unavailable'],
      ['40P01', 503, 'db_unavailable'],
      ['08006', 503, 'db_unavailable'],
      ['53300', 503, 'db_unavailable'],
      ['QM404', 404, 'queue_not_found'],
      ['QMNFP', 404, 'partition_not_found'],
      ['QMNFM', 404, 'message_not_found'],
      ['QMNFK', 404, 'key_not_found'],
      ['QMNFG', 404, 'consumer_group_not_found'],
      ['QMNID', 409, 'not_in_dlq'],
      ['QMIND', 409, 'already_in_dlq'],
      ['QMAMT', 409, 'ambiguous_transaction'],
      ['QMAMG', 409, 'ambiguous_consumer_group'],
      // Configure's pass-through of a no_data_found verdict only; anywhere else a bare 500.
      ['P0002', 500, 'internal'],
      ['QMMNT', 503, 'maintenance'],
      ['22P02', 500, 'internal'],
      ['42P01', 500, 'internal'],
    ]
    for (const [sqlstate, status, code] of cases) {
      const res = await app.json('GET', `/probe/raise/${sqlstate}`)
      expect(res.status, sqlstate).toBe(status)
      expect(res.body.code, sqlstate).toBe(code)
      expect(JSON.stringify(res.body), sqlstate).not.toContain('db.internal')
      if (status === 503) expect(res.headers.get('retry-after'), sqlstate).not.toBeNull()
    }
    expect((await app.json('GET', '/probe/raise/QM404')).body.error).toBe('Queue not found')
  })
})
