// Ephemeral queues through the real worker bundle in workerd (miniflare), over PostgreSQL through
// the WebSocket bridge: every route and verdict answers as on Node, and a waiting pop, which has no
// waker on Workers, finds a later push at its own re-check.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startEdgeStack, type EdgeStack, type EdgeWorker } from './edge-stack.js'

let stack: EdgeStack
let worker: EdgeWorker
beforeAll(async () => {
  stack = await startEdgeStack()
  worker = await stack.worker()
}, 120_000)
afterAll(() => stack?.close())

const send = (method: string, path: string, body?: unknown) => worker.call(method, path, body)
const payloads = (body: { messages: { payload: unknown }[] }) => body.messages.map((m) => m.payload)

describe('ephemeral routes on Workers', () => {
  it('pushes, pops per group, and answers every ack verdict', async () => {
    expect(await send('POST', '/api/v1/ephemeral/configure', { queue: 'w', options: { retryLimit: 2 } })).toMatchObject({ status: 201 })
    expect(await send('POST', '/api/v1/ephemeral/push', { queue: 'w', messages: [{ payload: 1 }, { payload: 2 }] })).toMatchObject({
      status: 201,
      body: { pushed: 2 },
    })
    const a = await send('GET', '/api/v1/ephemeral/pop?queue=w&group=a&batch=10')
    expect(a.status).toBe(200)
    expect(payloads(a.body)).toEqual([1, 2])
    expect(payloads((await send('GET', '/api/v1/ephemeral/pop?queue=w&group=b&batch=10&autoAck=true')).body)).toEqual([1, 2])
    const [one, two] = a.body.messages
    const acked = await send('POST', '/api/v1/ephemeral/ack', {
      queue: 'w',
      group: 'a',
      acks: [{ id: one.id }, { id: two.id, status: 'retry' }, { id: one.id }, { id: 'e:gone:Default:1' }],
    })
    expect(acked.body.results.map((r: { outcome: string }) => r.outcome)).toEqual(['acked', 'redelivered', 'unknown', 'stale'])
    const again = await send('GET', '/api/v1/ephemeral/pop?queue=w&group=a')
    expect(again.body.messages[0]).toMatchObject({ payload: 2, attempts: 1 })
  })

  it('a waiting pop finds a push made while it waits', async () => {
    const parked = send('GET', '/api/v1/ephemeral/pop?queue=lp&wait=true&timeout=10000')
    // Give the poll its first (empty) check before the push; the answer does not depend on it.
    await new Promise((r) => setTimeout(r, 300))
    expect((await send('POST', '/api/v1/ephemeral/push', { queue: 'lp', messages: [{ payload: 'late' }] })).status).toBe(201)
    const answered = await parked
    expect(answered.status).toBe(200)
    expect(payloads(answered.body)).toEqual(['late'])
  })

  it('reads queues and depth, resets and deletes, and refuses bad input 400 ephemeral_bad_request', async () => {
    await send('POST', '/api/v1/ephemeral/push', { queue: 'd', partition: 'p', messages: [{ payload: 1 }] })
    const depth = await send('GET', '/api/v1/ephemeral/queues/d/depth')
    expect(depth.body).toMatchObject({ queue: 'd', pending: 1, partitions: [{ partition: 'p', pending: 1 }] })
    expect((await send('GET', '/api/v1/ephemeral/queues')).body.queues.map((q: { queue: string }) => q.queue)).toContain('d')
    expect((await send('POST', '/api/v1/ephemeral/reset', { queue: 'd' })).body).toEqual({ queue: 'd', dropped: 1 })
    expect((await send('DELETE', '/api/v1/ephemeral/queue/d')).body).toEqual({ queue: 'd', deleted: true, declared: false })
    const missing = await send('GET', '/api/v1/ephemeral/queues/d/depth')
    expect(missing).toMatchObject({ status: 404, body: { code: 'ephemeral_queue_not_found' } })
    const bad = await send('POST', '/api/v1/ephemeral/push', { queue: 'd', messages: [{ payload: 1, transactionId: 'x' }] })
    expect(bad).toMatchObject({ status: 400, body: { code: 'ephemeral_bad_request' } })
    const full = await send('POST', '/api/v1/ephemeral/configure', { queue: 'd', options: { maxLength: 1 } })
    expect(full.status).toBe(201)
    expect((await send('POST', '/api/v1/ephemeral/push', { queue: 'd', messages: [{ payload: 1 }, { payload: 2 }] })).status).toBe(429)
  })

  it('answers 503 ephemeral_disabled while the kill switch is off', async () => {
    expect((await send('POST', '/api/v1/system/ephemeral', { enabled: false })).body.ephemeralEnabled).toBe(false)
    try {
      const off = await send('GET', '/api/v1/ephemeral/pop?queue=w')
      expect(off).toMatchObject({ status: 503, body: { code: 'ephemeral_disabled' } })
      expect(off.headers.get('retry-after')).toBe('5')
    } finally {
      expect((await send('POST', '/api/v1/system/ephemeral', { enabled: true })).body.ephemeralEnabled).toBe(true)
    }
    expect((await send('GET', '/api/v1/system/ephemeral')).body).toMatchObject({ ephemeralEnabled: true })
  })
})
