// Fan-out (issue #5 item 1, 6): every group receives every message, consumers inside one group
// compete, and queue-level pending follows the worst cursor, so a lagging group holds it up.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { testApp, type TestApp } from '../helpers/app.js'
import { ack, acksOf, pop, push, type Popped } from '../helpers/engine.js'

let app: TestApp
beforeAll(async () => {
  app = await testApp()
})
afterAll(() => app.close())

const MESSAGES = 1000
const PARTITIONS = ['p0', 'p1', 'p2', 'p3']
const GROUPS = ['billing', 'search', 'audit']

const depth = async (group?: string) =>
  (await app.json('GET', `/api/v1/resources/queues/events/depth${group ? `?group=${group}` : ''}`)).body as { pending: number; processing: number }

/** One consumer: pops and acks until the group has seen everything and the queue answers 204. */
async function consume(group: string, seen: Map<string, { consumer: number; m: Popped }[]>, consumer: number, sequence: Popped[]) {
  for (let empty = 0; empty < 3; ) {
    const res = await pop(app, 'events', { consumerGroup: group, batch: 37, partitions: 2, subscriptionMode: 'all' })
    if (res.status === 204) {
      empty += (seen.get(group)?.length ?? 0) >= MESSAGES ? 1 : 0
      continue
    }
    for (const m of res.messages) {
      seen.set(group, [...(seen.get(group) ?? []), { consumer, m }])
      sequence.push(m)
    }
    const results = await ack(app, acksOf(res.messages), group)
    expect(results.every((r) => r.success)).toBe(true)
  }
}

describe('consumer groups fan out', () => {
  it('delivers all of 1 000 messages exactly once, in order, to each of three groups of two competing consumers; a lagging group holds queue pending up', async () => {
    const items = Array.from({ length: MESSAGES }, (_, i) => ({ queue: 'events', partition: PARTITIONS[i % PARTITIONS.length], payload: { i }, transactionId: `e-${i}` }))
    await push(app, items.slice(0, 500))
    await push(app, items.slice(500))

    const seen = new Map<string, { consumer: number; m: Popped }[]>()
    const sequences = new Map(GROUPS.map((g) => [g, [] as Popped[]]))
    await Promise.all(GROUPS.flatMap((g) => [0, 1].map((k) => consume(g, seen, k, sequences.get(g)!))))

    for (const group of GROUPS) {
      const deliveries = seen.get(group)!
      expect(deliveries, group).toHaveLength(MESSAGES)
      expect(new Set(deliveries.map((d) => d.m.transactionId)).size, group).toBe(MESSAGES)
      // Both consumers of the group took part: they compete, they do not each get a copy.
      expect(new Set(deliveries.map((d) => d.consumer)).size, group).toBe(2)
      // Strict order per partition, in the order the group received them.
      for (const p of PARTITIONS) {
        const offsets = sequences.get(group)!.filter((m) => m.partition === p).map((m) => m.offset)
        expect(offsets, `${group}/${p}`).toEqual(Array.from({ length: MESSAGES / PARTITIONS.length }, (_, i) => i))
      }
      expect(await depth(group)).toMatchObject({ pending: 0, processing: 0 })
    }
    expect(await depth()).toMatchObject({ pending: 0 })

    // A fourth group that takes one message and stops: queue-level pending is its backlog.
    const slow = await pop(app, 'events', { consumerGroup: 'slow', batch: 1, subscriptionMode: 'all' })
    expect(slow.messages).toHaveLength(1)
    expect(await depth()).toMatchObject({ pending: MESSAGES, processing: 1 })
    expect(await depth('billing')).toMatchObject({ pending: 0 })
    expect(await depth('slow')).toMatchObject({ pending: MESSAGES, processing: 1 })
    // Detail and the group listing agree with depth (one shared helper).
    const detail = (await app.json('GET', '/api/v1/resources/queues/events')).body
    expect(detail.totals).toMatchObject({ pending: MESSAGES, processing: 1 })
    const list = (await app.json('GET', '/api/v1/consumer-groups')).body as { name: string; totalLag: number; members: number }[]
    expect(list.map((g) => [g.name, g.totalLag, g.members])).toEqual([
      ['audit', 0, 0], ['billing', 0, 0], ['search', 0, 0], ['slow', MESSAGES, 1],
    ])
  })
})
