// Namespaces starting "queen." belong to the broker (the sink's pointers in queen.sink, the SQS and
// SNS facades' registries): every client route refuses a write into one 400 naming it, before
// anything is written, and lets reads through, as it reads any key of the tenant.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { pointerKey } from '../../src/sink/source.js'
import { testApp, type TestApp } from '../helpers/app.js'
import { writtenRows } from '../helpers/engine.js'
import { pointerPath, putPointerValue } from '../helpers/sink.js'

let app: TestApp
beforeAll(async () => {
  app = await testApp()
  await putPointerValue(app, pointerKey('lake', 'orders'), { windowEnd: '2026-01-01T00:00:00.000Z' })
})
afterAll(() => app.close())

const KEY = pointerKey('lake', 'orders')
const reserved = (where: string, ns: string) => ({
  status: 400,
  body: { code: 'kv_reserved_namespace', error: `${where}: namespace ${ns} is reserved to the broker (namespaces starting "queen." are read-only to clients)` },
})

describe('reserved namespaces', () => {
  it('refuses every write operation of a batch into queen.*, naming the operation and the namespace, writing nothing', async () => {
    const before = await writtenRows(app)
    const writes = [
      { op: 'put', ns: 'queen.sink', key: KEY, value: { windowEnd: '2030-01-01T00:00:00Z' }, forever: true },
      { op: 'putIfAbsent', ns: 'queen.sqs', key: 'q', value: 1, forever: true },
      { op: 'delete', ns: 'queen.sink', key: KEY },
      { op: 'incr', ns: 'queen.sns', key: 'n', delta: 1, forever: true },
    ]
    for (const write of writes) {
      // A legal write first: the refusal covers the whole batch, so it is not applied either.
      const res = await app.json('POST', '/api/v1/kv', { operations: [{ op: 'put', ns: 'mine', key: 'k', value: 1, forever: true }, write] })
      expect(res, write.op).toMatchObject(reserved('operations[1]', write.ns))
    }
    expect(await writtenRows(app)).toEqual(before)
    expect((await app.json('GET', pointerPath('lake', 'orders'))).body).toMatchObject({ found: true, value: { windowEnd: '2026-01-01T00:00:00.000Z' } })
  })

  it('refuses the single-key PUT and DELETE and answers the GET', async () => {
    const path = pointerPath('lake', 'orders')
    expect(await app.json('PUT', path, { value: { windowEnd: '2030-01-01T00:00:00Z' }, forever: true })).toMatchObject(reserved('ns', 'queen.sink'))
    expect(await app.json('DELETE', path)).toMatchObject(reserved('ns', 'queen.sink'))
    const got = await app.json('GET', path)
    expect(got.body).toMatchObject({ found: true, key: KEY, value: { windowEnd: '2026-01-01T00:00:00.000Z' }, expiresAt: null })
    expect(got.headers.get('etag')).toBe(`"${got.body.version}"`)
  })

  it('answers get, getMany and getPrefix in a broker namespace', async () => {
    const res = await app.json('POST', '/api/v1/kv', {
      operations: [
        { op: 'get', ns: 'queen.sink', key: KEY },
        { op: 'getMany', ns: 'queen.sink', keys: [KEY, 'none'] },
        { op: 'getPrefix', ns: 'queen.sink', prefix: 's3:lake:' },
      ],
    })
    expect(res.status).toBe(200)
    expect(res.body.results).toMatchObject([
      { found: true, value: { windowEnd: '2026-01-01T00:00:00.000Z' } },
      { rows: [{ key: KEY }], missing: ['none'] },
      { rows: [{ key: KEY }] },
    ])
  })

  it('refuses a transaction whose kv rider writes into queen.*, committing neither the push nor the rider', async () => {
    const before = await writtenRows(app)
    const res = await app.json('POST', '/api/v1/transaction', {
      operations: [{ type: 'push', items: [{ queue: 'kv-reserved', payload: { n: 1 } }] }],
      kv: [
        { op: 'get', ns: 'queen.sink', key: KEY },
        { op: 'put', ns: 'queen.sink', key: KEY, value: { windowEnd: '2030-01-01T00:00:00Z' }, forever: true, required: true },
      ],
    })
    expect(res).toMatchObject(reserved('kv[1]', 'queen.sink'))
    expect(await writtenRows(app)).toEqual(before)
    // A rider that only reads the broker's namespace commits with its push.
    const reading = await app.json('POST', '/api/v1/transaction', {
      operations: [{ type: 'push', items: [{ queue: 'kv-reserved', payload: { n: 2 } }] }],
      kv: [{ op: 'get', ns: 'queen.sink', key: KEY }],
    })
    expect(reading.body).toMatchObject({ success: true })
  })

  it('reserves the "queen." prefix only: queen, queenly and Queen.sink stay ordinary namespaces', async () => {
    for (const ns of ['queen', 'queenly', 'Queen.sink', 'my.queen.sink']) {
      const res = await app.json('PUT', `/api/v1/kv/${ns}/k`, { value: ns, forever: true })
      expect(res.status, ns).toBe(200)
    }
  })

  it("lists the broker's namespaces in the console's reads", async () => {
    const namespaces = await app.json('GET', '/api/v1/resources/kv/namespaces')
    expect(namespaces.body.namespaces).toContainEqual({ namespace: 'queen.sink', keys: 1 })
    const page = await app.json('POST', '/api/v1/resources/kv/list', { namespace: 'queen.sink' })
    expect(page.body.rows).toMatchObject([{ key: KEY, value: { windowEnd: '2026-01-01T00:00:00.000Z' } }])
  })
})
