// Ephemeral queues under concurrency (docs/ephemeral.md): 8 producers push while 4 consumer groups
// of 3 competing consumers each long-poll and ack. Every message must reach every group exactly
// once, each ack answers 'acked', and no delivery is a redelivery (no lease expires on the way).
import { afterAll, beforeAll, expect, it } from 'vitest'
import { testApp, type TestApp } from '../helpers/app.js'

let app: TestApp
beforeAll(async () => {
  app = await testApp()
})
afterAll(() => app.close())

const PRODUCERS = 8
const PUSHES = 10
const PER_PUSH = 5
const GROUPS = ['g1', 'g2', 'g3', 'g4']
const CONSUMERS_PER_GROUP = 3
const TOTAL = PRODUCERS * PUSHES * PER_PUSH

it('delivers every message once to every group while 8 producers and 4 groups x 3 consumers run at once', { timeout: 120_000 }, async () => {
  const queue = 'parallel'
  const received = new Map<string, string[]>(GROUPS.map((g) => [g, []]))
  const outcomes: string[] = []
  const attempts: number[] = []

  const producer = async (p: number) => {
    for (let i = 0; i < PUSHES; i++) {
      const messages = Array.from({ length: PER_PUSH }, (_, k) => ({ payload: { key: `${p}.${i}.${k}` } }))
      // Partitions spread over the producers, so the ring is shared and FIFO is per partition.
      const res = await app.json('POST', '/api/v1/ephemeral/push', { queue, partition: `p${p % 3}`, messages })
      expect(res.status).toBe(201)
    }
  }

  const consumer = async (group: string) => {
    const mine = received.get(group)!
    while (mine.length < TOTAL) {
      const res = await app.json('GET', `/api/v1/ephemeral/pop?queue=${queue}&group=${group}&batch=7&wait=true&timeout=500`)
      expect(res.status).toBe(200)
      const messages = res.body.messages as { id: string; attempts: number; payload: { key: string } }[]
      if (messages.length === 0) continue
      for (const m of messages) {
        mine.push(m.payload.key)
        attempts.push(m.attempts)
      }
      const acked = await app.json('POST', '/api/v1/ephemeral/ack', { queue, group, acks: messages.map((m) => ({ id: m.id })) })
      expect(acked.status).toBe(200)
      outcomes.push(...acked.body.results.map((r: { outcome: string }) => r.outcome))
    }
  }

  await Promise.all([
    ...Array.from({ length: PRODUCERS }, (_, p) => producer(p)),
    ...GROUPS.flatMap((g) => Array.from({ length: CONSUMERS_PER_GROUP }, () => consumer(g))),
  ])

  const expected = Array.from({ length: PRODUCERS }, (_, p) =>
    Array.from({ length: PUSHES }, (_, i) => Array.from({ length: PER_PUSH }, (_, k) => `${p}.${i}.${k}`)),
  )
    .flat(2)
    .sort()
  for (const group of GROUPS) expect([...received.get(group)!].sort(), group).toEqual(expected)
  expect(outcomes.length).toBe(TOTAL * GROUPS.length)
  expect(new Set(outcomes)).toEqual(new Set(['acked']))
  expect(Math.max(...attempts)).toBe(0)
  // Every group consumed everything, so the next push trims what is left of those partitions.
  const depth = await app.json('GET', `/api/v1/ephemeral/queues/${queue}/depth`)
  expect(depth.body.groups).toEqual(GROUPS.map((group) => ({ group, pending: 0, skipped: 0 })))
})
