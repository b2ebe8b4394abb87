// The pop requests Queen's 1.x JS client (client-v2) builds, against this broker, written from its
// source: utils/autopilot.js (which of batch/partitions/autopilot travel), utils/defaults.js (the
// autopilot-off fallbacks) and the wire tests test-v2/{autopilot-unit,conflation-unit,pop-unit}, which
// pin the query strings byte for byte. The client itself is not installable here, so each request
// is sent as it crosses the socket, and the test reads back exactly the fields the client reads:
// `messages`, the `autopilot` echo ({partitions, batch, waitMs} numbers, parsed leniently) and the
// conflation keys it checks on every answer of a conflating consumer.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { testApp, type TestApp } from './helpers/app.js'

let app: TestApp
beforeAll(async () => {
  app = await testApp()
})
afterAll(() => app.close())

const QUEUE = 'sdk1x'
const GROUP = 'g'
// The shared spine of the client's pop query: wait, the default 30 s timeout, then the group.
const TAIL = `wait=false&timeout=30000&consumerGroup=${GROUP}`

/** The client's reading of the echo: numbers only, anything else is absent (0). */
function autopilotDecision(body: unknown) {
  const raw = body && typeof body === 'object' ? (body as { autopilot?: unknown }).autopilot : null
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) return null
  const num = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? v : 0)
  const r = raw as Record<string, unknown>
  return { partitions: num(r.partitions), batch: num(r.batch), waitMillis: num(r.waitMs) }
}

/**
 * The client's check on every answer of a consumer that sent conflation=true: a bodiless 204 or an
 * answer with neither key means the broker ignored the flag, and the consume loop stops.
 */
function conflationVerdict(status: number, body: any): 'applied' | 'conflict' | 'unsupported' {
  if (status === 204 || body === null) return 'unsupported'
  if (body.conflation === true) return 'applied'
  if (body.conflationConflict === true) return 'conflict'
  return 'unsupported'
}

const pop = (query: string) => app.json('GET', `/api/v1/pop/queue/${QUEUE}?${query}`)
const ack = (messages: any[], group = GROUP) =>
  app.json('POST', '/api/v1/ack/batch', {
    acknowledgments: messages.map((m) => ({ transactionId: m.transactionId, partitionId: m.partitionId, status: 'completed', error: null, leaseId: m.leaseId })),
    consumerGroup: group,
  })

describe("the pop requests Queen's 1.x JS client builds", () => {
  it('a default consumer (autopilot on, nothing set) subscribes at the tail, then gets broker-sized batches with the echo', async () => {
    // No subscriptionMode travels (CONSUME_DEFAULTS.subscriptionMode is null): the first pop, before
    // any push, seeds the group at the tail.
    expect((await pop(`autopilot=true&${TAIL}`)).status).toBe(204)
    const items = ['p0', 'p1', 'p2'].flatMap((partition) => Array.from({ length: 40 }, (_, i) => ({ queue: QUEUE, partition, payload: { i }, transactionId: `${partition}-${i}` })))
    expect((await app.json('POST', '/api/v1/push', { items })).status).toBe(201)

    const res = await pop(`autopilot=true&${TAIL}`)
    expect(res.status).toBe(200)
    expect(autopilotDecision(res.body)).toEqual({ partitions: 3, batch: 120, waitMillis: 0 })
    expect(res.body.messages).toHaveLength(120)
    expect((await ack(res.body.messages)).body.every((r: { success: boolean }) => r.success)).toBe(true)
  })

  it.each([
    // [case from the client's wire test, query it sends, messages, echo]
    ['partitions only', `autopilot=true&${TAIL}&partitions=2`, 20, { partitions: 2, batch: 20, waitMillis: 0 }],
    ['partitions pinned to one', `autopilot=true&${TAIL}&partitions=1`, 10, { partitions: 1, batch: 10, waitMillis: 0 }],
    ['batch only', `autopilot=true&batch=5&${TAIL}`, 5, { partitions: 3, batch: 5, waitMillis: 0 }],
    ['both set', `batch=5&${TAIL}&partitions=2`, 5, null],
    ['autopilot off, nothing set', `batch=1&${TAIL}`, 1, null],
  ] as const)('%s: %s', async (_name, query, count, echo) => {
    const group = `case-${count}-${echo ? echo.partitions : 'none'}`
    const q = query.replace(`consumerGroup=${GROUP}`, `consumerGroup=${group}`)
    // A fresh group on a queue already holding 10 messages in each of 3 partitions.
    const queue = `sdk1x-${group}`
    expect((await app.json('GET', `/api/v1/pop/queue/${queue}?${q}`)).status).toBe(204)
    const items = ['p0', 'p1', 'p2'].flatMap((partition) => Array.from({ length: 10 }, (_, i) => ({ queue, partition, payload: { i } })))
    expect((await app.json('POST', '/api/v1/push', { items })).status).toBe(201)
    const res = await app.json('GET', `/api/v1/pop/queue/${queue}?${q}`)
    expect(res.status).toBe(200)
    expect(res.body.messages).toHaveLength(count)
    expect(autopilotDecision(res.body)).toEqual(echo)
  })

  it('a conflating consumer: the flag travels with the group, every answer carries the echo, an idle one included', async () => {
    const queue = 'sdk1x-conflate'
    const q = `conflation=true&wait=false&timeout=30000&consumerGroup=workers`
    const idle = await app.json('GET', `/api/v1/pop/queue/${queue}?${q}`)
    expect(conflationVerdict(idle.status, idle.body)).toBe('applied')
    const items = Array.from({ length: 30 }, (_, i) => ({ queue, partition: `k${i % 3}`, payload: { i } }))
    expect((await app.json('POST', '/api/v1/push', { items })).status).toBe(201)
    const res = await app.json('GET', `/api/v1/pop/queue/${queue}?${q}`)
    expect(conflationVerdict(res.status, res.body)).toBe('applied')
    expect(res.body.messages.map((m: any) => m.data.i).sort((a: number, b: number) => a - b)).toEqual([27, 28, 29])
    expect((await ack(res.body.messages, 'workers')).status).toBe(200)
    // A long-polling consumer that times out on an idle conflating group still gets its echo.
    const parked = await app.json('GET', `/api/v1/pop/queue/${queue}?conflation=true&wait=true&timeout=50&consumerGroup=workers`)
    expect(conflationVerdict(parked.status, parked.body)).toBe('applied')
  })

  it('a conflating consumer of a group registered without conflation is told of the conflict and keeps its messages', async () => {
    const queue = 'sdk1x-conflict'
    expect((await app.json('GET', `/api/v1/pop/queue/${queue}?${TAIL}&batch=1`)).status).toBe(204)
    expect((await app.json('POST', '/api/v1/push', { items: [1, 2, 3].map((i) => ({ queue, payload: { i } })) })).status).toBe(201)
    const res = await app.json('GET', `/api/v1/pop/queue/${queue}?conflation=true&wait=false&timeout=30000&consumerGroup=${GROUP}`)
    expect(conflationVerdict(res.status, res.body)).toBe('conflict')
    // The stored policy (read everything) wins; the SDK's default batch under conflation is the broker's.
    expect(res.body.messages.map((m: any) => m.data.i)).toEqual([1, 2, 3])
  })
})
