// The linger of a woken long poll (docs/long-poll.md): a parked pop that a push wakes waits
// POP_LINGER_MS before it claims, so the pushes of that window come in the same answer; a pop that
// does not wait, found messages at once, or asks for one message never lingers; and a linger the
// client cuts short claims nothing. A waker wrapper records every wait (the linger is the wait on
// no key), so the tests assert on what was waited for and answered, never on time.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { testApp, type TestApp } from '../helpers/app.js'
import { configureQueue, pop, push } from '../helpers/engine.js'
import { parkedOn, recordingWaker, waitedFor as waitedIn, type RecordedWait } from '../helpers/recording-waker.js'

let app: TestApp
let recorded: ReturnType<typeof recordingWaker>
beforeAll(async () => {
  recorded = recordingWaker()
  // The longest linger allowed, so the pushes below land inside it with a wide margin.
  app = await testApp({ env: { POP_LINGER_MS: '1000' }, deps: { popWaker: recorded.waker } })
})
afterAll(async () => {
  await app.close()
})

const lingers = (from: number) => recorded.waits.slice(from).filter((w) => w.keys.length === 0)
const waitedFor = (from: number, test: (w: RecordedWait) => boolean) => waitedIn(recorded.waits, from, test)

describe('a woken long poll lingers before it claims', () => {
  it('answers the messages pushed while it lingered in the same claim, in push order', async () => {
    const from = recorded.waits.length
    const polled = app.json('GET', '/api/v1/pop/queue/linger-gather?wait=true&timeout=20000&batch=10')
    await waitedFor(from, parkedOn('linger-gather'))
    for (const payload of ['first', 'second', 'third']) await push(app, [{ queue: 'linger-gather', payload }])
    const res = await polled
    expect(res.status).toBe(200)
    expect(res.body.messages.map((m: { data: unknown }) => m.data)).toEqual(['first', 'second', 'third'])
    expect(res.body.messages.map((m: { offset: number }) => m.offset)).toEqual([0, 1, 2])
    const linger = lingers(from)
    expect(linger).toHaveLength(1)
    expect(linger[0]!.ms).toBeGreaterThan(0)
    expect(linger[0]!.ms).toBeLessThanOrEqual(1000)
  })

  it('never lingers when the pop does not wait, found messages at once, or asks for one message', async () => {
    const from = recorded.waits.length
    // Found at the first check: answered with what is there, waiting or not.
    await push(app, [{ queue: 'linger-none', payload: 'ready' }])
    expect((await pop(app, 'linger-none', { wait: true, timeout: 20000, batch: 10, autoAck: true })).messages.map((m) => m.data)).toEqual(['ready'])
    await push(app, [{ queue: 'linger-none', payload: 'ready too' }])
    expect((await pop(app, 'linger-none', { batch: 10, autoAck: true })).messages.map((m) => m.data)).toEqual(['ready too'])
    // Not waiting and nothing there: 204 at once.
    expect((await pop(app, 'linger-none', { batch: 10 })).status).toBe(204)

    // A waiting pop of one message, woken: claimed as soon as it is woken.
    const single = app.json('GET', '/api/v1/pop/queue/linger-one?wait=true&timeout=20000&batch=1')
    await waitedFor(from, parkedOn('linger-one'))
    await push(app, [{ queue: 'linger-one', payload: 'alone' }])
    expect((await single).body.messages.map((m: { data: unknown }) => m.data)).toEqual(['alone'])

    // A pop that does not wait, holding its empty answer for minPopWaitTime, woken by a push.
    await configureQueue(app, 'linger-floor', { min_pop_wait_time: 20000 })
    const held = app.json('GET', '/api/v1/pop/queue/linger-floor?batch=10')
    await waitedFor(from, parkedOn('linger-floor'))
    await push(app, [{ queue: 'linger-floor', payload: 'during hold' }])
    expect((await held).body.messages.map((m: { data: unknown }) => m.data)).toEqual(['during hold'])

    expect(lingers(from)).toEqual([])
  })

  it('claims nothing when its client goes away during the linger: the message waits for the next pop', async () => {
    const from = recorded.waits.length
    const abort = new AbortController()
    const polled = app.request('/api/v1/pop/queue/linger-abort?wait=true&timeout=20000&batch=10', { signal: abort.signal })
    await waitedFor(from, parkedOn('linger-abort'))
    await push(app, [{ queue: 'linger-abort', payload: 'kept' }])
    await waitedFor(from, (w) => w.keys.length === 0)
    abort.abort()
    expect((await polled).status).toBe(204)
    // Never leased: delivered now as a first delivery.
    const next = await pop(app, 'linger-abort', { batch: 10 })
    expect(next.messages.map((m) => [m.data, m.retryCount])).toEqual([['kept', 0]])
  })
})
