// No partition starves: with every partition of a queue holding messages (saturated), concurrent
// consumers that pop one partition at a time must reach each partition within about one rotation.
// Delay is counted in claims, not milliseconds, so the bound holds on any machine: between two
// claims of one partition (and before its first) about N − 1 other partitions are served, plus a
// few for concurrent pops that read the rotation before another's claim committed (N + 3 at most
// in runs here; the bound allows N + 6). A walk from a random pivot over random partition ids
// served a partition in proportion to the id gap before it, and left the partition behind the
// smallest gap waiting hundreds of claims.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { testApp, type TestApp } from '../helpers/app.js'
import { ack, acksOf, pop, push } from '../helpers/engine.js'

let app: TestApp
beforeAll(async () => {
  app = await testApp()
})
afterAll(() => app.close())

const CONSUMERS = 3

async function saturate(queue: string, partitions: number, perPartition: number) {
  for (let p = 0; p < partitions; p++) {
    await push(app, Array.from({ length: perPartition }, (_, i) => ({ queue, partition: `p${p}`, payload: { i } })))
  }
}

/** Runs CONSUMERS pop-then-ack loops until `claims` pops claimed something; returns the partitions in claim order. */
async function consume(queue: string, claims: number, params: Record<string, string | number>, group?: string) {
  const order: string[] = []
  const consumer = async () => {
    while (order.length < claims) {
      const { messages } = await pop(app, queue, { batch: 1, ...(params.consumerGroup !== undefined ? { subscriptionMode: 'all' } : {}), ...params })
      if (messages.length === 0) continue
      order.push(messages[0]!.partition)
      await ack(app, acksOf(messages), group)
    }
  }
  await Promise.all(Array.from({ length: CONSUMERS }, consumer))
  return order
}

/** The most claims of other partitions any partition waited through (before its first claim, between claims, after its last). */
function worstWait(order: string[], partitions: string[]) {
  let worst = 0
  for (const name of partitions) {
    let last = -1
    for (let i = 0; i < order.length; i++) {
      if (order[i] !== name) continue
      worst = Math.max(worst, i - last - 1)
      last = i
    }
    worst = Math.max(worst, order.length - last - 1)
  }
  return worst
}

describe('pop fairness under saturation', () => {
  it.each([
    { partitions: 8, rounds: 10, perPartition: 60, group: undefined },
    { partitions: 64, rounds: 8, perPartition: 80, group: 'billing' },
  ])('serves each of $partitions saturated partitions within a rotation (group $group)', async ({ partitions, rounds, perPartition, group }) => {
    const queue = `fair-${partitions}`
    await saturate(queue, partitions, perPartition)
    const order = await consume(queue, partitions * rounds, group ? { consumerGroup: group } : {}, group)

    const names = Array.from({ length: partitions }, (_, p) => `p${p}`)
    const served = new Map(names.map((n) => [n, order.filter((o) => o === n).length]))
    // Saturation held throughout: no partition ran dry, so every partition was always a candidate.
    expect(Math.max(...served.values())).toBeLessThan(perPartition)
    expect(worstWait(order, names)).toBeLessThanOrEqual(partitions + 2 * CONSUMERS)
  })
})
