// Defects the fuzzer (test/chaos/fuzz.test.ts) found, pinned: each was a 500 for a request whose
// problem is deterministic or a race a client cannot avoid (API §2.2: such answers are 4xx or 2xx).
import pg from 'pg'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { testApp, type TestApp } from '../helpers/app.js'
import { push, writtenRows } from '../helpers/engine.js'

let app: TestApp
beforeAll(async () => {
  app = await testApp()
})
afterAll(() => app.close())

it('refuses U+0000 in a path segment or a query value with 400, writing nothing', async () => {
  const before = await writtenRows(app)
  for (const path of [
    '/api/v1/pop/queue/a%00b',
    '/api/v1/pop/queue/q/partition/%00',
    '/api/v1/resources/queues/%00',
    '/api/v1/traces/by-name/%00',
    '/api/v1/kv/ns/k%00',
    '/api/v1/messages?queue=%00',
    '/api/v1/pop/queue/q?consumerGroup=g%00',
  ]) {
    const res = await app.json(path.startsWith('/api/v1/resources/queues/') ? 'DELETE' : 'GET', path)
    expect(res.status, path).toBe(400)
    expect(res.body.code, path).toBe('invalid_request')
    expect(res.body.error, path).toContain('U+0000')
  }
  expect(await writtenRows(app)).toEqual(before)
})

it('clamps a paging offset beyond PostgreSQL integer instead of failing', async () => {
  for (const path of ['/api/v1/dlq?offset=99999999999999999999999', '/api/v1/messages?offset=9007199254740991', '/api/v1/messages?offset=2147483647&limit=1000']) {
    const res = await app.json('GET', path)
    expect(res.status, path).toBe(200)
  }
})

it('answers POST /stats/refresh 200 when a queue it is refreshing is deleted meanwhile', async () => {
  await push(app, [{ queue: 'refresh-race', payload: 1 }, { queue: 'refresh-stays', payload: 2 }])
  // A delete holds the queue row while the refresh scans it, then commits under it.
  const deleter = new pg.Client({ connectionString: app.database.url })
  await deleter.connect()
  try {
    await deleter.query('begin')
    await deleter.query(`delete from queen.queues where name = 'refresh-race'`)
    const refresh = app.json('POST', '/api/v1/stats/refresh', {})
    await new Promise((r) => setTimeout(r, 300))
    await deleter.query('commit')
    const res = await refresh
    expect(res.status, JSON.stringify(res.body)).toBe(200)
    expect(res.body.queues).toBe(1)
  } finally {
    await deleter.end()
  }
})

// Found by test/openapi-fuzz.test.ts on the main of 2026-12-06: a lone UTF-16 surrogate in a JSON
// key deep inside a kv value or a trace's data reached PostgreSQL's jsonb parser (22P02) as a 500.
it('refuses a lone surrogate in a key inside a kv value or trace data with 400, writing nothing', async () => {
  const before = await writtenRows(app)
  const [kvBefore] = await app.database.sql<{ n: number }>(`select count(*)::int as n from queen.kv_entries`)
  const cases: [string, string, string, string][] = [
    ['PUT', '/api/v1/kv/fz/lone', '{"value":{"\\ud800":1,"id":2},"forever":true}', 'value.\ud800'],
    ['POST', '/api/v1/traces', '{"partitionId":"0190b7a5-0000-7000-8000-000000000000","transactionId":"t","traceNames":["a"],"data":{"\\udfff":"x"}}', 'data.\udfff'],
  ]
  for (const [method, path, body, field] of cases) {
    const res = await app.json(method, path, body)
    expect(res.status, path).toBe(400)
    expect(res.body, path).toEqual({ error: `${field} must not contain a lone UTF-16 surrogate`, code: 'invalid_request' })
  }
  expect(await writtenRows(app)).toEqual(before)
  expect((await app.database.sql<{ n: number }>(`select count(*)::int as n from queen.kv_entries`))[0]).toEqual(kvBefore)
})

// Issue #37: a payload nested 5 000 deep overflowed the stack of JSON.stringify in the push route.
it('refuses a push payload nested 5 000 levels deep with 400, writing nothing', async () => {
  const before = await writtenRows(app)
  const res = await app.json('POST', '/api/v1/push', `{"items":[{"queue":"fz-deep","payload":${'['.repeat(5000)}${']'.repeat(5000)}}]}`)
  expect(res.status).toBe(400)
  expect(res.body.code).toBe('invalid_request')
  expect(await writtenRows(app)).toEqual(before)
})
