// Message ids rise with offsets (issue #34): Queen's clients restore a partition's FIFO order by
// sorting a batch on (createdAt, id), and the frames of one push share their segment's createdAt,
// as do pushes within one millisecond. The id is a UUIDv7 whose bits after the millisecond follow
// the offset, so that sort is offset order, on the fast path (no transaction ids) and the dedup path.
import { afterAll, beforeAll, expect, it } from 'vitest'
import { testApp, type TestApp } from '../helpers/app.js'
import { pop, push } from '../helpers/engine.js'

let app: TestApp
beforeAll(async () => {
  app = await testApp()
})
afterAll(() => app.close())

/** The SDK's comparator (Runner.js): createdAt to the millisecond, then the id as text. */
const sdkOrder = (a: { createdAt: string; id: string }, b: { createdAt: string; id: string }) =>
  Date.parse(a.createdAt) - Date.parse(b.createdAt) || a.id.localeCompare(b.id)

it('a batch sorted by (createdAt, id) is in offset order, within pushes and across pushes of one millisecond', async () => {
  // Pushes of 1 to 40 items into two partitions, some naming transaction ids (the dedup path) and
  // one a duplicate, with no pause: many frames share a millisecond with frames of other pushes.
  let n = 0
  for (let round = 0; round < 12; round++) {
    const size = 1 + ((round * 7) % 40)
    const items = Array.from({ length: size }, (_, i) => ({
      queue: 'ids.order',
      partition: i % 3 === 0 ? 'b' : 'a',
      payload: { n: n++ },
      ...(round % 2 === 1 ? { transactionId: `t-${round}-${i}` } : {}),
    }))
    if (round === 3) items.push({ queue: 'ids.order', partition: 'a', payload: { n: -1 }, transactionId: 't-1-0' })
    await push(app, items)
  }
  const popped = await pop(app, 'ids.order', { batch: 1000, partitions: 2, wait: false })
  const byPartition = new Map<string, typeof popped.messages>()
  for (const m of popped.messages) byPartition.set(m.partition, [...(byPartition.get(m.partition) ?? []), m])
  expect([...byPartition.keys()].sort()).toEqual(['a', 'b'])
  for (const [partition, messages] of byPartition) {
    const byOffset = [...messages].sort((a, b) => a.offset - b.offset)
    expect(byOffset.length, partition).toBeGreaterThan(50)
    // Many frames share a millisecond, so the ids decide the order.
    expect(new Set(messages.map((m) => Date.parse(m.createdAt))).size).toBeLessThan(messages.length / 2)
    expect([...messages].sort(sdkOrder).map((m) => m.offset), partition).toEqual(byOffset.map((m) => m.offset))
  }
  // Still UUIDv7, still distinct; the millisecond in the id is the frame's createdAt.
  const ids = popped.messages.map((m) => m.id)
  expect(new Set(ids).size).toBe(ids.length)
  for (const m of popped.messages) {
    expect(m.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
    expect(parseInt(m.id.replaceAll('-', '').slice(0, 12), 16)).toBe(Date.parse(m.createdAt))
  }
})

it('an item naming no transaction id still gets its message id as transaction id on the dedup path', async () => {
  const res = await push(app, [
    { queue: 'ids.txn', payload: 1, transactionId: 'given' },
    { queue: 'ids.txn', payload: 2 },
  ])
  expect(res[0]!.transaction_id).toBe('given')
  expect(res[1]!.transaction_id).toBe(res[1]!.message_id)
  expect(res[1]!.message_id > res[0]!.message_id).toBe(true)
})

it('_uuid_v7_at orders ids of one millisecond by offset, across the bits the offset is split over', async () => {
  const offsets = [0, 1, 4095, 1048575, 1048576, 1048577, 2 ** 31, 2 ** 32 - 1]
  const rows = await app.database.sql<{ o: string; u: string }>(
    `select o::text, queen._uuid_v7_at('2026-12-03T07:55:00.123456Z', o)::text as u from unnest($1::bigint[]) o`,
    [offsets],
  )
  const ids = rows.map((r) => r.u)
  expect([...ids].sort()).toEqual(ids)
  for (const u of ids) {
    expect(u).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
    expect(parseInt(u.replaceAll('-', '').slice(0, 12), 16)).toBe(Date.parse('2026-12-03T07:55:00.123Z'))
  }
})
