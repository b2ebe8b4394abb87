// log_pop_v1 builds the answer of a pop whose only claim is its one partition inside the range
// statement (issue #9), and every other answer in its return: both must give the same JSON, down
// to minPopWaitMs and windowBufferActive. Calls the procedure directly, with time pinned.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { freshDatabase, type TestDatabase } from './helpers/database.js'

let database: TestDatabase
beforeAll(async () => {
  database = await freshDatabase()
})
afterAll(() => database.drop())

const NOW = '2030-01-01T00:00:00Z'

async function pushed(queue: string, partition: string, n: number) {
  const items = Array.from({ length: n }, (_, i) => ({
    index: i, queue, partition, transactionId: null, traceId: i === 0 ? 'tr-0' : null, producerSub: null, enc: false,
    data: { i, s: 'q"uote\\' },
  }))
  await database.sql(`select queen.log_push_v1(p_tenant => '', p_items => $1::jsonb)`, [JSON.stringify(items)])
}

/** One pop's answer as text, its lease and group replaced, so two groups' answers compare. */
async function answer(request: Record<string, unknown>) {
  const [row] = await database.sql<{ r: Record<string, unknown> }>(
    `select queen.log_pop_v1(p_tenant => '', p_request => $1::jsonb, p_now => $2) as r`, [JSON.stringify(request), NOW])
  const r = row!.r
  let text = JSON.stringify(r).split(`"consumerGroup":"${String(request.group)}"`).join('"consumerGroup":"<g>"')
  if (typeof r.leaseId === 'string' && r.leaseId !== '') text = text.split(r.leaseId).join('<lease>')
  return text
}

describe('a pop with one claim', () => {
  it('answers as a pop that could have claimed more partitions but found one', async () => {
    await pushed('pa', 'only', 3)
    await database.sql(`update queen.queues set min_pop_wait_time = 250 where name = 'pa'`)
    for (const autoAck of [false, true]) {
      const single = await answer({ queue: 'pa', group: `one-${autoAck}`, batch: 10, partitions: 1, autoAck })
      const general = await answer({ queue: 'pa', group: `two-${autoAck}`, batch: 10, partitions: 2, autoAck })
      const named = await answer({ queue: 'pa', partition: 'only', group: `named-${autoAck}`, batch: 10, autoAck })
      expect(JSON.parse(single)).toMatchObject({ partitionsClaimed: 1, minPopWaitMs: 250, windowBufferActive: false, partition: 'only' })
      expect(JSON.parse(single).claims[0].frames).toHaveLength(3)
      expect(single).toBe(general)
      expect(named).toBe(general)
    }
  })

  it('answers as the general assembly when the byte budget cuts the range', async () => {
    await pushed('pb', 'only', 4)
    const single = await answer({ queue: 'pb', group: 'one', batch: 10, partitions: 1, maxBytes: 1 })
    const general = await answer({ queue: 'pb', group: 'two', batch: 10, partitions: 2, maxBytes: 1 })
    expect(JSON.parse(single).claims[0].frames).toHaveLength(1)
    expect(single).toBe(general)
  })
})
