// POST /streams/v1/cycle (docs/streams.md): one transaction of state ops, sink pushes through
// the engine's push, and the source ack through the engine's ack — a contiguous commit of the
// batch through its last message. A failing ack rolls back all three and answers 200
// success:false; release_lease:false keeps the lease for a gate's partial ack; failed/dlq
// dead-letter the acked message; replays apply nothing twice; two runners never both commit one
// batch; bad input is 400/413 and writes nothing.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { testApp, type TestApp } from '../helpers/app.js'
import { pop, push, writtenRows, type Popped } from '../helpers/engine.js'
import { batchAck, byPartition, cycle, queryId, runnerPop, stateOf } from '../helpers/streams.js'

let app: TestApp
beforeAll(async () => {
  app = await testApp({ env: { MAX_PUSH_ITEMS: '50', MAX_FRAME_BYTES: '4096' } })
})
afterAll(() => app.close())

const upsert = (key: string, value: unknown) => ({ type: 'upsert', key, value })
const pushN = (queue: string, n: number, partition = 'p') =>
  push(app, Array.from({ length: n }, (_, i) => ({ queue, partition, payload: { n: i }, transactionId: `${queue}-${i}` })))
const sinkData = async (queue: string) => (await pop(app, queue, { batch: 1000, consumerGroup: 'check', wait: false, subscriptionMode: 'all' })).messages.map((m) => m.data)
const cursor = async (partitionId: string, group: string) =>
  (
    await app.database.sql<{ committed_offset: number; lease_id: string | null; total_consumed: number }>(
      `select committed_offset::int, lease_id::text, total_consumed::int from queen.log_consumers where partition_id = $1 and consumer_group = $2`,
      [partitionId, group],
    )
  )[0]
const expireLeases = (partitionId: string) =>
  app.database.sql(`update queen.log_consumers set lease_expires_at = now() - interval '1 second' where partition_id = $1`, [partitionId])

/** Tests that need a prefix of a batch take it by offset, whatever order the SDK's sort gives. */
const byOffset = (messages: Popped[]) => [...messages].sort((a, b) => a.offset - b.offset)

/** Pops one partition's batch the way the runner does and returns it grouped. */
async function batchOf(queue: string, name: string, size = 200) {
  const popped = await runnerPop(app, queue, name, size)
  const [group] = byPartition(popped.messages)
  if (!group) throw new Error(`nothing popped from ${queue}`)
  return group
}

describe('a committed cycle', () => {
  it('applies state ops, pushes sink items with derived transaction ids, and commits the whole batch', async () => {
    await pushN('c1.src', 5)
    const q = await queryId(app, 'c1', 'c1.src', 'c1.sink')
    const g = await batchOf('c1.src', 'c1')
    expect(g.messages).toHaveLength(5)
    const res = await cycle(app, {
      query_id: q,
      partition_id: g.partitionId,
      consumer_group: 'streams.c1',
      state_ops: [upsert('w\u001f1', { count: 5 }), upsert('gone', 1), { type: 'delete', key: 'gone' }],
      push_items: [{ queue: 'c1.sink', partition: g.partition, payload: { window: 1, count: 5 } }, { queue: 'c1.sink', partition: g.partition, payload: { window: 2 } }],
      ack: batchAck(g.messages),
    })
    expect(res.status).toBe(200)
    expect(res.body).toMatchObject({
      success: true,
      query_id: q,
      partition_id: g.partitionId,
      queueName: 'c1.src',
      state_ops_applied: 3,
      ack_result: { success: true, count: 5, lease_released: true, dlq: false },
    })
    expect(res.body.push_results).toEqual([
      { index: 0, transaction_id: expect.stringMatching(/^[0-9a-f-]{36}$/), status: 'queued', message_id: expect.any(String), partition_id: expect.any(String), trace_id: null, queueName: 'c1.sink', offset: 0 },
      { index: 1, transaction_id: expect.stringMatching(/^[0-9a-f-]{36}$/), status: 'queued', message_id: expect.any(String), partition_id: expect.any(String), trace_id: null, queueName: 'c1.sink', offset: 1 },
    ])
    // Derived ids are not the minted message ids, and differ per item.
    expect(res.body.push_results[0].transaction_id).not.toBe(res.body.push_results[0].message_id)
    expect(res.body.push_results[0].transaction_id).not.toBe(res.body.push_results[1].transaction_id)
    expect(await stateOf(app, q, g.partitionId)).toEqual({ 'w\u001f1': { count: 5 } })
    expect(await sinkData('c1.sink')).toEqual([{ window: 1, count: 5 }, { window: 2 }])
    expect(await cursor(g.partitionId, 'streams.c1')).toMatchObject({ committed_offset: 5, lease_id: null, total_consumed: 5 })
    expect((await runnerPop(app, 'c1.src', 'c1')).status).toBe(204)
  })

  it('keeps a client transactionId on a sink item, so the push dedups it as usual', async () => {
    const q = await queryId(app, 'c2', 'c2.src')
    const pid = '01890a5d-ac96-774b-bcce-b302099a8057'
    const item = { queue: 'c2.sink', payload: 1, transactionId: 'mine' }
    expect((await cycle(app, { query_id: q, partition_id: pid, push_items: [item] })).body.push_results[0]).toMatchObject({ transaction_id: 'mine', status: 'queued' })
    const second = await cycle(app, { query_id: q, partition_id: pid, push_items: [item], state_ops: [upsert('x', 1)] })
    expect(second.body.push_results[0]).toMatchObject({ transaction_id: 'mine', status: 'duplicate' })
  })

  it('commits a batch whose frames share one transaction id (dedup off) by offset, every frame once', async () => {
    await app.json('POST', '/api/v1/configure', { queue: 'dup.src', options: { dedupWindowSeconds: 0 } })
    await push(app, [1, 2, 3].map((n) => ({ queue: 'dup.src', payload: n, transactionId: 'same' })))
    const q = await queryId(app, 'dup', 'dup.src')
    const g = await batchOf('dup.src', 'dup')
    expect(g.messages).toHaveLength(3)
    const res = await cycle(app, { query_id: q, partition_id: g.partitionId, consumer_group: 'streams.dup', ack: batchAck(g.messages) })
    expect(res.body).toMatchObject({ success: true, ack_result: { success: true, count: 3, lease_released: true } })
    expect(await cursor(g.partitionId, 'streams.dup')).toMatchObject({ committed_offset: 3, lease_id: null, total_consumed: 3 })
  })
})

describe('atomicity', () => {
  it('a refused ack rolls back the state ops and the sink pushes and answers 200 success:false', async () => {
    await pushN('a1.src', 3)
    const q = await queryId(app, 'a1', 'a1.src', 'a1.sink')
    await cycle(app, { query_id: q, partition_id: '01890a5d-ac96-774b-bcce-b302099a8057', state_ops: [upsert('seed', 1)] })
    const g = await batchOf('a1.src', 'a1')
    await cycle(app, { query_id: q, partition_id: g.partitionId, state_ops: [upsert('before', 0)] })
    const before = await writtenRows(app)
    const body = {
      query_id: q,
      partition_id: g.partitionId,
      consumer_group: 'streams.a1',
      state_ops: [upsert('before', 1), upsert('new', 1), { type: 'delete', key: 'seed' }],
      push_items: [{ queue: 'a1.sink', payload: 'must not exist' }, { queue: 'a1.other', payload: 'nor this' }],
    }
    const wrongLease = await cycle(app, { ...body, ack: { ...batchAck(g.messages), leaseId: '01890a5d-ac96-774b-bcce-b302099a8099' } })
    expect(wrongLease.status).toBe(200)
    expect(wrongLease.body).toMatchObject({ success: false, error: 'Invalid or expired lease', state_ops_applied: 3, ack_result: null })
    expect(wrongLease.body.push_results).toHaveLength(2)
    const missing = await cycle(app, { ...body, ack: { ...batchAck(g.messages), transactionId: 'no-such-message' } })
    expect(missing.body).toMatchObject({ success: false, error: 'Message not found' })

    expect(await writtenRows(app)).toEqual(before)
    expect(await stateOf(app, q, g.partitionId)).toEqual({ before: 0 })
    expect(await sinkData('a1.sink')).toEqual([])
    expect(await cursor(g.partitionId, 'streams.a1')).toMatchObject({ committed_offset: 0, lease_id: g.leaseId })
    // The same cycle with the right ack then commits.
    expect((await cycle(app, { ...body, ack: batchAck(g.messages) })).body.success).toBe(true)
    expect(await sinkData('a1.sink')).toEqual(['must not exist'])
  })

  it('a cycle racing a delete of its source queue answers cleanly: committed, or 200 success:false', async () => {
    await pushN('race.src', 4)
    const q = await queryId(app, 'race', 'race.src', 'race.sink')
    const g = await batchOf('race.src', 'race')
    const [c, d] = await Promise.all([
      cycle(app, { query_id: q, partition_id: g.partitionId, consumer_group: 'streams.race', state_ops: [upsert('k', 1)], ack: batchAck(g.messages) }),
      app.json('DELETE', '/api/v1/resources/queues/race.src'),
    ])
    expect(d.status).toBe(200)
    expect(c.status).toBe(200)
    if (!c.body.success) expect(c.body.error).toBe('Message not found')
    // After the delete, a cycle acking the gone batch fails cleanly and writes no state.
    const late = await cycle(app, { query_id: q, partition_id: g.partitionId, state_ops: [upsert('late', 1)], ack: batchAck(g.messages) })
    expect(late.status).toBe(200)
    expect(late.body).toMatchObject({ success: false, error: 'Message not found', queueName: null })
    expect(Object.keys(await stateOf(app, q, g.partitionId))).not.toContain('late')
  })
})

describe('leases and verdicts', () => {
  it('release_lease:false commits the allowed prefix and keeps the lease; the tail comes back at expiry, in order', async () => {
    await pushN('gate.src', 10)
    const q = await queryId(app, 'gate', 'gate.src')
    const g = await batchOf('gate.src', 'gate')
    // The gate's allowed prefix, in offset order (see byOffset).
    const allowed = byOffset(g.messages).slice(0, 4)
    const res = await cycle(app, { query_id: q, partition_id: g.partitionId, consumer_group: 'streams.gate', release_lease: false, ack: batchAck(allowed) })
    expect(res.body).toMatchObject({ success: true, ack_result: { success: true, count: 4, lease_released: false } })
    expect(await cursor(g.partitionId, 'streams.gate')).toMatchObject({ committed_offset: 4, lease_id: g.leaseId })
    expect((await runnerPop(app, 'gate.src', 'gate')).status).toBe(204)
    await expireLeases(g.partitionId)
    const tail = await batchOf('gate.src', 'gate')
    expect(byOffset(tail.messages).map((m) => (m.data as { n: number }).n)).toEqual([4, 5, 6, 7, 8, 9])
  })

  it('release_lease:true (the default) on a partial ack releases the lease at once', async () => {
    await pushN('part.src', 6)
    const q = await queryId(app, 'part', 'part.src')
    const g = await batchOf('part.src', 'part')
    const res = await cycle(app, { query_id: q, partition_id: g.partitionId, consumer_group: 'streams.part', ack: batchAck(byOffset(g.messages).slice(0, 2)) })
    expect(res.body.ack_result).toEqual({ success: true, count: 2, lease_released: true, dlq: false })
    expect(byOffset((await batchOf('part.src', 'part')).messages).map((m) => (m.data as { n: number }).n)).toEqual([2, 3, 4, 5])
  })

  it('status dlq and failed dead-letter the acked message, complete the ones before it and release the lease', async () => {
    for (const status of ['dlq', 'failed']) {
      const queue = `dead-${status}.src`
      await pushN(queue, 3)
      const q = await queryId(app, `dead-${status}`, queue)
      const g = await batchOf(queue, `dead-${status}`)
      const res = await cycle(app, {
        query_id: q,
        partition_id: g.partitionId,
        consumer_group: `streams.dead-${status}`,
        state_ops: [upsert('s', 1)],
        ack: { ...batchAck(g.messages, status), error: 'operator threw' },
      })
      expect(res.body, status).toMatchObject({ success: true, ack_result: { success: true, count: 2, lease_released: true, dlq: true } })
      const dlq = await app.json('GET', `/api/v1/dlq?queue=${queue}`)
      expect(dlq.body.messages.map((m: { transactionId: string; errorMessage?: string }) => m.transactionId), status).toEqual([batchAck(g.messages).transactionId])
      expect(await cursor(g.partitionId, `streams.dead-${status}`)).toMatchObject({ committed_offset: 3, lease_id: null })
      expect(await stateOf(app, q, g.partitionId)).toEqual({ s: 1 })
    }
  })
})

describe('replays', () => {
  it('a replayed cycle, flush or ack, writes no sink item and applies no state op twice', async () => {
    await pushN('rp.src', 4)
    const q = await queryId(app, 'rp', 'rp.src', 'rp.sink')
    const g = await batchOf('rp.src', 'rp')
    const acked = { query_id: q, partition_id: g.partitionId, consumer_group: 'streams.rp', release_lease: false, state_ops: [upsert('n', 4)], push_items: [{ queue: 'rp.sink', payload: 'a' }], ack: batchAck(byOffset(g.messages).slice(0, 2)) }
    const first = await cycle(app, acked)
    const again = await cycle(app, acked)
    expect(again.body).toEqual({ ...first.body, replayed: true })
    const flush = { query_id: q, partition_id: g.partitionId, consumer_group: 'streams.rp', state_ops: [{ type: 'delete', key: 'n' }, upsert('flushed', true)], push_items: [{ queue: 'rp.sink', payload: 'f' }] }
    expect((await cycle(app, flush)).body.success).toBe(true)
    // Between the flush and its replay the main loop commits the rest of the batch.
    expect((await cycle(app, { query_id: q, partition_id: g.partitionId, consumer_group: 'streams.rp', state_ops: [upsert('n', 9)], ack: batchAck(g.messages) })).body.success).toBe(true)
    const replayedFlush = await cycle(app, flush)
    expect(replayedFlush.body).toMatchObject({ success: true, replayed: true, state_ops_applied: 0, push_results: [] })
    expect(await stateOf(app, q, g.partitionId)).toEqual({ flushed: true, n: 9 })
    expect(await sinkData('rp.sink')).toEqual(['a', 'f'])
  })

  it('the same flush content on another shard version is a new cycle, with new derived ids', async () => {
    const q = await queryId(app, 'rp2', 'rp2.src', 'rp2.sink')
    const pid = '01890a5d-ac96-774b-bcce-b302099a8057'
    const a = await cycle(app, { query_id: q, partition_id: pid, state_ops: [upsert('x', 1)], push_items: [{ queue: 'rp2.sink', payload: 'w' }] })
    const b = await cycle(app, { query_id: q, partition_id: pid, state_ops: [upsert('x', 2)], push_items: [{ queue: 'rp2.sink', payload: 'w' }] })
    expect(b.body.push_results[0].transaction_id).not.toBe(a.body.push_results[0].transaction_id)
    expect(await sinkData('rp2.sink')).toEqual(['w', 'w'])
  })
})

describe('two runners on one query and partition', () => {
  it('never both commit one batch: the cycle holding a stale lease rolls back whole', async () => {
    await pushN('two.src', 5)
    const q = await queryId(app, 'two', 'two.src', 'two.sink')
    const first: Popped[] = (await batchOf('two.src', 'two')).messages
    const pid = first[0]!.partitionId
    await expireLeases(pid)
    const second: Popped[] = (await batchOf('two.src', 'two')).messages
    expect(second.map((m) => m.transactionId)).toEqual(first.map((m) => m.transactionId))
    const commit = (batch: Popped[], who: string) =>
      cycle(app, { query_id: q, partition_id: pid, consumer_group: 'streams.two', state_ops: [upsert('by', who)], push_items: [{ queue: 'two.sink', payload: who }], ack: batchAck(batch) })
    const [a, b] = await Promise.all([commit(first, 'A'), commit(second, 'B')])
    expect([a.body.success, b.body.success]).toEqual([false, true])
    expect(a.body.error).toBe('Invalid or expired lease')
    expect(await stateOf(app, q, pid)).toEqual({ by: 'B' })
    expect(await sinkData('two.sink')).toEqual(['B'])
  })
})

describe('validation and limits', () => {
  const PID = '01890a5d-ac96-774b-bcce-b302099a8057'
  it('answers 400 for missing or malformed ids, unknown op types and bad acks, and 413 for the limits, writing nothing', async () => {
    const q = await queryId(app, 'v', 'v.src')
    const before = await writtenRows(app)
    const cases: [Record<string, unknown>, number, string][] = [
      [{ partition_id: PID }, 400, 'query_id is required'],
      [{ query_id: q }, 400, 'partition_id is required'],
      [{ query_id: 'bad', partition_id: PID }, 400, 'query_id must be a UUID'],
      [{ query_id: q, partition_id: 'also-bad' }, 400, 'partition_id must be a UUID'],
      [{ query_id: q, partition_id: PID, state_ops: [{ type: 'merge', key: 'k' }] }, 400, 'Unknown state op type: merge (state_ops[0])'],
      [{ query_id: q, partition_id: PID, state_ops: [{ type: 'upsert' }] }, 400, 'State op key must be a string (state_ops[0])'],
      [{ query_id: q, partition_id: PID, state_ops: [{ type: 'delete', key: '' }] }, 400, 'State op key must be 1 to 512 characters (state_ops[0])'],
      [{ query_id: q, partition_id: PID, state_ops: 'x' }, 400, 'state_ops must be an array'],
      [{ query_id: q, partition_id: PID, ack: { status: 'completed' } }, 400, 'ack.transactionId is required'],
      [{ query_id: q, partition_id: PID, ack: { transactionId: 't', status: 'retry' } }, 400, 'ack.status must be completed, success, failed or dlq'],
      [{ query_id: q, partition_id: PID, ack: { transactionId: 't', leaseId: 'nope' } }, 400, 'ack.leaseId must be a UUID'],
      [{ query_id: q, partition_id: PID, push_items: [{ payload: 1 }] }, 400, 'Queue must be a string (push_items[0])'],
      [{ query_id: q, partition_id: PID, push_items: [{ queue: 'v.sink', payload: 1 }, { queue: 'v.sink', payload: 2, messageId: '01890a5d-ac96-774b-bcce-b302099a8058' }] }, 400, 'push_items[1].messageId is not supported: this broker mints message ids; name the message with transactionId'],
      [{ query_id: q, partition_id: PID, state_ops: Array.from({ length: 1001 }, (_, i) => upsert(`k${i}`, i)) }, 413, 'Too many state ops: 1001 (limit 1000 per cycle)'],
      [{ query_id: q, partition_id: PID, state_ops: [upsert('big', 'x'.repeat(5000))] }, 413, 'State value too large: 5002 bytes (limit 4096) (state_ops[0])'],
      [{ query_id: q, partition_id: PID, push_items: Array.from({ length: 51 }, () => ({ queue: 'v.sink', payload: 1 })) }, 413, 'Too many items: 51 (limit 50 per push)'],
    ]
    for (const [body, status, error] of cases) {
      const res = await app.json('POST', '/streams/v1/cycle', body)
      expect(res.status, error).toBe(status)
      expect(res.body, error).toMatchObject({ error })
    }
    expect((await app.json('POST', '/streams/v1/cycle', { query_id: q, partition_id: PID, push_items: [{ queue: 'v.sink', payload: 'y'.repeat(5000) }] })).status).toBe(413)
    expect(await writtenRows(app)).toEqual(before)
    expect(await stateOf(app, q, PID)).toEqual({})
  })

  it('accepts the exact limits', async () => {
    const q = await queryId(app, 'v2', 'v2.src')
    const res = await cycle(app, { query_id: q, partition_id: PID, state_ops: Array.from({ length: 1000 }, (_, i) => upsert(`k${i}`, i)) })
    expect(res.body).toMatchObject({ success: true, state_ops_applied: 1000 })
  })
})
