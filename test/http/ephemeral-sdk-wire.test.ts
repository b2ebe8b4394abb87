// The requests Queen's 1.x JS client sends for `queen.ephemeral` (client-v2 ephemeral/Ephemeral.js,
// as its ephemeralWire tests pin them), replayed byte for byte, and the fields that client reads
// back: push `.pushed`, pop `.queue` and `.messages` (an array, never null; each {id, partition,
// attempts, payload}), ack `.results[].outcome`, reset `.dropped`, delete, queues, depth, and the
// one 404 it must tell apart from "broker too old": `ephemeral_queue_not_found` from the depth read.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { testApp, type TestApp } from '../helpers/app.js'

let app: TestApp
beforeAll(async () => {
  app = await testApp()
})
afterAll(() => app.close())

// The client's HTTP layer sends JSON with this content type on every verb.
const send = (method: string, path: string, body?: unknown) => app.json(method, path, body)
const QUEUE = 'test-ephemeral'

describe('the JS client ephemeral wire, against this broker', () => {
  it('configure: {queue, options} with the seven options in the client order, answered 201', async () => {
    const body = {
      queue: QUEUE,
      options: { maxBytes: 1048576, maxLength: 1000, policy: 'dropOldest', ttlSeconds: 30, leaseSeconds: 15, retryLimit: 2, windowBuffer: { ms: 20, count: 50 } },
    }
    const res = await send('POST', '/api/v1/ephemeral/configure', body)
    expect(res.status).toBe(201)
    expect(res.body).toEqual(body)
    // A bare configure(queue) sends empty options: the queue exists with the defaults.
    expect((await send('POST', '/api/v1/ephemeral/configure', { queue: 'bare', options: {} })).status).toBe(201)
  })

  it('push: the flat envelope, partition only when named, {payload} items; the client reads pushed', async () => {
    const plain = await send('POST', '/api/v1/ephemeral/push', { queue: QUEUE, messages: [{ payload: { a: 1 } }, { payload: { a: 2 } }] })
    expect(plain.status).toBe(201)
    expect(plain.body).toEqual({ pushed: 2 })
    // The durable sugar ({data}, bare values) is unwrapped by the client before it sends.
    const sugared = await send('POST', '/api/v1/ephemeral/push', {
      queue: QUEUE,
      partition: 'room-7',
      messages: [{ payload: { a: 3 } }, { payload: 'plain' }, { payload: null }],
    })
    expect(sugared.body.pushed).toBe(3)
  })

  it('pop: only the asked-for parameters, in the client order; answers {queue, messages}', async () => {
    const first = await send('GET', `/api/v1/ephemeral/pop?queue=${QUEUE}`)
    expect(first.status).toBe(200)
    expect(first.body.queue).toBe(QUEUE)
    expect(Array.isArray(first.body.messages)).toBe(true)
    expect(first.body.messages).toHaveLength(1)
    const [m] = first.body.messages
    expect(Object.keys(m)).toEqual(['id', 'partition', 'attempts', 'payload'])
    expect(m).toMatchObject({ partition: 'Default', attempts: 0, payload: { a: 1 } })

    const all = await send('GET', `/api/v1/ephemeral/pop?queue=${QUEUE}&partition=room-7&batch=10&wait=true&timeout=2000&group=workers&autoAck=true`)
    expect(all.status).toBe(200)
    expect(all.body.messages.map((x: { payload: unknown }) => x.payload)).toEqual([{ a: 3 }, 'plain', null])

    // wait:true always carries its timeout; an empty long poll is 200 with an empty array.
    const empty = await send('GET', `/api/v1/ephemeral/pop?queue=${QUEUE}&partition=room-7&wait=true&timeout=10&group=workers`)
    expect(empty.status).toBe(200)
    expect(empty.body).toEqual({ queue: QUEUE, messages: [] })
    // Queue mode has its own cursor: what the group took is still there for it.
    const rest = await send('GET', `/api/v1/ephemeral/pop?queue=${QUEUE}&batch=5`)
    expect(rest.body.messages.map((x: { payload: unknown }) => x.payload)).toEqual([{ a: 2 }, { a: 3 }, 'plain', null])
  })

  it('ack: {queue, group?, acks:[{id, status?, error?}]}; the client reads results[].outcome', async () => {
    await send('POST', '/api/v1/ephemeral/push', { queue: 'acks', messages: [{ payload: 1 }, { payload: 2 }, { payload: 3 }] })
    const popped = (await send('GET', `/api/v1/ephemeral/pop?queue=acks&batch=10&group=workers`)).body.messages as { id: string }[]
    const res = await send('POST', '/api/v1/ephemeral/ack', {
      queue: 'acks',
      group: 'workers',
      acks: [{ id: popped[0]!.id }, { id: popped[1]!.id, status: 'completed' }, { id: popped[2]!.id, status: 'failed', error: 'handler threw' }],
    })
    expect(res.status).toBe(200)
    expect(res.body.results).toEqual([
      { id: popped[0]!.id, outcome: 'acked' },
      { id: popped[1]!.id, outcome: 'acked' },
      { id: popped[2]!.id, outcome: 'redelivered' },
    ])
    // Queue mode: no group key at all. An id from another broker is not an error.
    const queueMode = await send('POST', '/api/v1/ephemeral/ack', { queue: 'acks', acks: [{ id: 'e:beef:Default:9' }] })
    expect(queueMode.status).toBe(200)
    expect(queueMode.body.results).toEqual([{ id: 'e:beef:Default:9', outcome: 'stale' }])
  })

  it('reset, delete (percent-encoded), queues and depth (percent-encoded)', async () => {
    await send('POST', '/api/v1/ephemeral/push', { queue: 'inbox/7', messages: [{ payload: 1 }] })
    const depth = await send('GET', '/api/v1/ephemeral/queues/inbox%2F7/depth')
    expect(depth.status).toBe(200)
    expect(depth.body).toMatchObject({ queue: 'inbox/7', pending: 1 })
    const queues = await send('GET', '/api/v1/ephemeral/queues')
    expect(queues.status).toBe(200)
    expect(queues.body.queues.map((q: { queue: string }) => q.queue)).toContain('inbox/7')
    expect((await send('POST', '/api/v1/ephemeral/reset', { queue: 'inbox/7' })).body.dropped).toBe(1)
    const deleted = await send('DELETE', '/api/v1/ephemeral/queue/inbox%2F7')
    expect(deleted.status).toBe(200)
    expect(deleted.body).toEqual({ queue: 'inbox/7', deleted: true, declared: false })
  })

  it('answers a missing queue on the depth read 404 ephemeral_queue_not_found, which the client keeps apart from an old broker', async () => {
    const res = await send('GET', '/api/v1/ephemeral/queues/never-made/depth')
    expect(res.status).toBe(404)
    expect(res.body.code).toBe('ephemeral_queue_not_found')
    expect(res.body.error).toMatch(/does not exist/)
  })
})
