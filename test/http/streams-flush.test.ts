// The flush fence of POST /streams/v1/cycle (issue #34, docs/streams.md): an ack-less cycle whose
// state ops only delete (a window runtime's idle flush) applies only when no cycle of the shard
// applied since the latest state read made between batches, every key it deletes is there, and no
// batch of the source partition is leased; otherwise it applies nothing and answers success with
// `deferred: true`. A read of a leased batch vouches for no flush. A flush identical to an older
// one applies again only over the very rows that one deleted.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { testApp, type TestApp } from '../helpers/app.js'
import { pop, push } from '../helpers/engine.js'
import { batchAck, byPartition, cycle, queryId, runnerPop, stateGet, stateOf } from '../helpers/streams.js'

let app: TestApp
beforeAll(async () => {
  app = await testApp()
})
afterAll(() => app.close())

const upsert = (key: string, value: unknown) => ({ type: 'upsert', key, value })
const del = (key: string) => ({ type: 'delete', key })
const W = 'tumb:1000\u001f2026-01-01T00:00:00.000Z\u001fk'
/** Window W's state row after folding to `acc`: ripe once the flush's instant passes its end. */
const win = (acc: number) => ({ acc, windowStart: Date.parse('2026-01-01T00:00:00Z'), windowEnd: Date.parse('2026-01-01T00:00:01Z') })
const sinkData = async (queue: string) => (await pop(app, queue, { batch: 1000, consumerGroup: 'check', wait: false, subscriptionMode: 'all' })).messages.map((m) => m.data)
const expireLeases = (partitionId: string) =>
  app.database.sql(`update queen.log_consumers set lease_expires_at = now() - interval '1 second' where partition_id = $1`, [partitionId])

/** A query over `name`.src with one message folded into window W by the runner's cycle. */
async function shard(name: string, acc: number) {
  await push(app, [{ queue: `${name}.src`, partition: 'p', payload: { n: acc } }])
  const q = await queryId(app, name, `${name}.src`, `${name}.sink`)
  const [g] = byPartition((await runnerPop(app, `${name}.src`, name)).messages)
  const res = await cycle(app, { query_id: q, partition_id: g!.partitionId, consumer_group: `streams.${name}`, state_ops: [upsert(W, win(acc))], ack: batchAck(g!.messages) })
  expect(res.body.success).toBe(true)
  const pid = g!.partitionId
  return {
    q,
    pid,
    /** The idle flush's read: ripe windows by prefix and instant, made between batches. */
    read: () => stateGet(app, { query_id: q, partition_id: pid, key_prefix: 'tumb:1000\u001f', ripe_at_or_before: Date.parse('2026-01-02') }),
    flush: (payload: unknown) => cycle(app, { query_id: q, partition_id: pid, consumer_group: `streams.${name}`, state_ops: [del(W)], push_items: [{ queue: `${name}.sink`, partition: 'p', payload }] }),
    /** The runner's next batch: one more message, popped (leased) and folded into W. */
    async batch(acc: number, commit = true) {
      await push(app, [{ queue: `${name}.src`, partition: 'p', payload: { n: acc } }])
      const [b] = byPartition((await runnerPop(app, `${name}.src`, name)).messages)
      if (commit) {
        expect((await cycle(app, { query_id: q, partition_id: pid, consumer_group: `streams.${name}`, state_ops: [upsert(W, win(acc))], ack: batchAck(b!.messages) })).body.success).toBe(true)
      }
      return b!
    },
  }
}

const deferred = { success: true, state_ops_applied: 0, push_results: [], ack_result: null, deferred: true }

describe('an idle flush', () => {
  it('applies against the state read between batches, and its replay gets the stored answer', async () => {
    const s = await shard('fa', 1)
    expect((await s.read()).body.rows).toEqual([{ key: W, value: win(1), updated_at: expect.any(String) }])
    const first = await s.flush({ acc: 1 })
    expect(first.body).toMatchObject({ success: true, state_ops_applied: 1, push_results: [{ status: 'queued' }] })
    expect(first.body.deferred).toBeUndefined()
    expect(await s.flush({ acc: 1 })).toMatchObject({ status: 200, body: { ...first.body, replayed: true } })
    expect(await stateOf(app, s.q, s.pid)).toEqual({})
    expect(await sinkData('fa.sink')).toEqual([{ acc: 1 }])
  })

  it('is deferred while a batch of the partition is leased, and applies once that batch is committed and the shard read again', async () => {
    const s = await shard('fb', 1)
    await s.read()
    const leased = await s.batch(2, false)
    expect((await s.flush({ acc: 1 })).body).toMatchObject(deferred)
    // The runner commits its batch; the flush computed before it still does not apply.
    const committed = await cycle(app, { query_id: s.q, partition_id: s.pid, consumer_group: 'streams.fb', state_ops: [upsert(W, win(3))], ack: batchAck(leased.messages) })
    expect(committed.body.success).toBe(true)
    expect((await s.flush({ acc: 1 })).body).toMatchObject(deferred)
    expect(await stateOf(app, s.q, s.pid)).toEqual({ [W]: win(3) })
    // Read again, flushed again: the window closes with both batches in it.
    await s.read()
    expect((await s.flush({ acc: 3 })).body).toMatchObject({ success: true, state_ops_applied: 1 })
    expect(await stateOf(app, s.q, s.pid)).toEqual({})
    expect(await sinkData('fb.sink')).toEqual([{ acc: 3 }])
  })

  it('computed before another cycle applied is deferred, though the keys it deletes are still there', async () => {
    const s = await shard('fc', 1)
    await s.read()
    // A late message grows the window between the flush's read and its commit.
    await s.batch(5)
    expect((await s.flush({ acc: 1 })).body).toMatchObject(deferred)
    expect(await stateOf(app, s.q, s.pid)).toEqual({ [W]: win(5) })
    expect(await sinkData('fc.sink')).toEqual([])
  })

  it('is deferred when a key it deletes is gone, so a window is never emitted twice', async () => {
    const s = await shard('fd', 1)
    await s.read()
    expect((await s.flush({ acc: 1 })).body.success).toBe(true)
    // Another flush computed from the same read (a second runner's): W is gone.
    expect((await s.flush({ acc: 1, by: 'other' })).body).toMatchObject(deferred)
    expect(await sinkData('fd.sink')).toEqual([{ acc: 1 }])
  })

  it('does not take a read of a leased batch for a read between batches, even once that lease has expired', async () => {
    const s = await shard('fe', 1)
    await s.read()
    await s.batch(2)
    const leased = await s.batch(3, false)
    // The runner reads its batch under the lease, then the lease expires before any cycle.
    expect((await stateGet(app, { query_id: s.q, partition_id: s.pid })).body.rows).toHaveLength(1)
    await expireLeases(leased.partitionId)
    expect((await s.flush({ acc: 1 })).body).toMatchObject(deferred)
    expect(await stateOf(app, s.q, s.pid)).toEqual({ [W]: win(2) })
  })

  it('identical to an older flush applies again over the same rows, and is a replay over other rows', async () => {
    const s = await shard('ff', 1)
    await s.read()
    const first = (await s.flush({ acc: 1 })).body
    expect(first.success).toBe(true)
    // The window is folded again to exactly what the first flush deleted: the same flush is new work.
    await s.batch(1)
    await s.read()
    const again = (await s.flush({ acc: 1 })).body
    expect(again).toMatchObject({ success: true, state_ops_applied: 1 })
    expect(again.replayed).toBeUndefined()
    expect(again.push_results[0].transaction_id).not.toBe(first.push_results[0].transaction_id)
    // Folded to something else, the first flush's body is only a late replay: nothing applies.
    await s.batch(7)
    await s.read()
    expect((await s.flush({ acc: 1 })).body).toMatchObject({ success: true, state_ops_applied: 0, push_results: [], replayed: true })
    expect(await stateOf(app, s.q, s.pid)).toEqual({ [W]: win(7) })
    expect(await sinkData('ff.sink')).toEqual([{ acc: 1 }, { acc: 1 }])
  })

  it('is only an ack-less cycle that deletes alone: one that also upserts is a blind write and applies without a read', async () => {
    const s = await shard('fg', 1)
    const res = await cycle(app, { query_id: s.q, partition_id: s.pid, state_ops: [del(W), upsert('other', 1)] })
    expect(res.body).toMatchObject({ success: true, state_ops_applied: 2 })
    expect(res.body.deferred).toBeUndefined()
    expect(await stateOf(app, s.q, s.pid)).toEqual({ other: 1 })
  })
})
