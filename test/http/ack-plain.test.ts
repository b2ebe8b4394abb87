// The common ack (_log_ack_plain, 005_log_ack_plain.sql) against the general per-item path it shortcuts.
// From one cursor state, a generated plain batch (completions by transaction id of one lease, in any
// order, with repeats, the lease id given or not) is acked twice inside one transaction, rolled back
// in between: once as sent, which takes the plain path, and once with an extra item naming an
// unknown partition, which sends the whole batch down the general path. The answers for the real
// items and the cursor row written must be identical. Each run checks which path it took, so a
// plain path that silently declined would fail the test rather than compare the general path with
// itself. The same comparison covers a batch of several leases (a fused call, _log_ack_leases),
// settled row by row with the rows it cannot settle handed to the general path: the unknown
// partition's all-zero id sorts before every real one, so it is the first row in lock order and
// sends that batch down the general path too. QUEEN_MODEL_RUNS raises the run count.
import fc from 'fast-check'
import pg from 'pg'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { testApp, type TestApp } from '../helpers/app.js'

let app: TestApp
let client: pg.Client
beforeAll(async () => {
  app = await testApp()
  client = new pg.Client({ connectionString: app.database.url })
  await client.connect()
})
afterAll(async () => {
  await client.end()
  await app.close()
})

const FRAMES = 12
const UNKNOWN_PARTITION = '00000000-0000-4000-8000-000000000000'
const ackSql = `select queen.log_ack_v1(p_tenant => '', p_acks => $1::jsonb, p_now => $2::timestamptz) as r`
const cursorSql = `select committed_offset, acked_set, lease_id, lease_expires_at, lease_from, lease_to, retry_offset,
                          retry_count, total_consumed, batches_consumed, last_consumed_at
                     from queen.log_consumers where partition_id = $1 and consumer_group = $2`

const scenario = fc.record({
  group: fc.constantFrom('', 'g1'),
  // A failed earlier round leaves retry state on the cursor the plain ack must clear or keep.
  priorFailure: fc.boolean(),
  batch: fc.integer({ min: 1, max: FRAMES }),
  // Completions already recorded inside the lease before the plain batch (positions in the lease).
  before: fc.array(fc.integer({ min: 0, max: FRAMES - 1 }), { maxLength: 6 }),
  // The plain batch: positions in the lease, in the order sent; repeats allowed.
  picks: fc.array(fc.integer({ min: 0, max: FRAMES - 1 }), { minLength: 1, maxLength: 16 }),
  leaseGiven: fc.constantFrom('all', 'none', 'some'),
  status: fc.constantFrom('completed', 'success', undefined),
})

let run = 0

it('answers and writes exactly what the general path does', { timeout: 120_000 }, async () => {
  let plainRuns = 0
  await fc.assert(
    fc.asyncProperty(scenario, async (s) => {
      const queue = `plain-${run++}`
      let clock = new Date('2032-01-01T00:00:00Z').getTime()
      const now = () => new Date(clock)
      await app.database.sql(`insert into queen.queues (tenant_id, name, lease_time, retry_limit) values ('', $1, 60, 5)`, [queue])
      const pushed = await app.db.call('log_push_v1', {
        tenant: '', now: now(),
        items: Array.from({ length: FRAMES }, (_, i) => ({ index: i, queue, partition: 'Default', transactionId: `t${i}`, traceId: null, producerSub: null, enc: false, data: i })),
      })
      const pid = pushed.items[0]!.partitionId
      const popRequest = { queue, partition: 'Default', group: s.group, batch: s.batch, partitions: 1, autoAck: false, subscriptionMode: 'all' as const, maxBytes: 8 * 1024 * 1024 }
      const general = (items: object[]) => [...items, { index: 999, partitionId: UNKNOWN_PARTITION, transactionId: 'x', status: 'completed', consumerGroup: s.group || null }]

      if (s.priorFailure) {
        const first = await app.db.call('log_pop_v1', { tenant: '', now: now(), request: popRequest })
        const m = first.messages[0]!
        await app.db.call('log_ack_v1', { tenant: '', now: now(), acks: [{ index: 0, partitionId: pid, transactionId: m.transactionId, offset: null, leaseId: m.leaseId, status: 'failed', error: null, consumerGroup: s.group || null }] })
        clock += 1000
      }
      const popped = await app.db.call('log_pop_v1', { tenant: '', now: now(), request: popRequest })
      const lease = popped.messages.map((m) => m)
      const lease0 = lease[0]!
      const inLease = (k: number) => lease[k % lease.length]!
      clock += 1000
      if (s.before.length > 0) {
        await client.query(ackSql, [JSON.stringify(general(s.before.map((k, index) => ({ index, partitionId: pid, transactionId: inLease(k).transactionId, status: 'completed', consumerGroup: s.group || null })))), now()])
      }
      clock += 1000

      const items = s.picks.map((k, index) => ({
        index,
        partitionId: pid,
        transactionId: inLease(k).transactionId,
        ...(s.status ? { status: s.status } : {}),
        ...(s.leaseGiven === 'all' || (s.leaseGiven === 'some' && index % 2 === 0) ? { leaseId: lease0.leaseId.toUpperCase() } : {}),
        consumerGroup: s.group || null,
      }))
      await client.query('begin')
      try {
        await client.query('savepoint before_ack')
        const plain = (await client.query(ackSql, [JSON.stringify(items), now()])).rows[0].r
        const plainRow = (await client.query(cursorSql, [pid, s.group || '__QUEUE_MODE__'])).rows[0]
        await client.query('rollback to savepoint before_ack')
        const viaGeneral = (await client.query(ackSql, [JSON.stringify(general(items)), now()])).rows[0].r
        const generalRow = (await client.query(cursorSql, [pid, s.group || '__QUEUE_MODE__'])).rows[0]

        // The general path answers an array; the plain path its compact object, expanded as the route sees it.
        expect(Array.isArray(viaGeneral)).toBe(true)
        const expected = (viaGeneral as { index: number }[]).filter((r) => r.index !== 999)
        if (plain.plain) {
          plainRuns++
          const p = plain.plain
          const expanded = p.index.map((index: number, i: number) => ({
            index, transactionId: p.transactionId[i], offset: p.offset[i], success: true, error: null, code: null,
            queueName: p.queueName, partitionName: p.partitionName, leaseReleased: index === p.releasedIndex,
            dlq: false, dropped: false, evicted: false, ...(p.alreadyAcked?.includes(index) ? { alreadyAcked: true } : {}),
          }))
          expect(expanded).toEqual(expected)
        } else {
          // Declined (an id outside the lease cannot happen here, so only an ended round can): then
          // both calls ran the general path.
          expect(plain).toEqual(expected)
        }
        expect(plainRow).toEqual(generalRow)
      } finally {
        await client.query('rollback')
      }
    }),
    { numRuns: Number(process.env.QUEEN_MODEL_RUNS ?? 60) },
  )
  // Most generated batches are plain (an earlier ack may already have ended the round).
  expect(plainRuns).toBeGreaterThan(20)
})

it('declines what is not the common shape, so the general path answers it', async () => {
  const queue = 'plain-decline'
  await app.database.sql(`insert into queen.queues (tenant_id, name, lease_time) values ('', $1, 60)`, [queue])
  const pushed = await app.db.call('log_push_v1', {
    tenant: '',
    items: Array.from({ length: 4 }, (_, i) => ({ index: i, queue, partition: 'Default', transactionId: `d${i}`, traceId: null, producerSub: null, enc: false, data: i })),
  })
  const pid = pushed.items[0]!.partitionId
  const popped = await app.db.call('log_pop_v1', { tenant: '', request: { queue, group: '', batch: 4, partitions: 1, autoAck: false, subscriptionMode: 'all', maxBytes: 8 * 1024 * 1024 } })
  const base = { partitionId: pid, leaseId: popped.leaseId, consumerGroup: null }
  const shapes: Record<string, object[]> = {
    'a failed item': [{ index: 0, ...base, transactionId: 'd0', status: 'failed' }],
    'an offset': [{ index: 0, ...base, transactionId: 'd0', offset: 0 }],
    'another lease id': [{ index: 0, ...base, transactionId: 'd0', leaseId: '00000000-0000-7000-8000-000000000000' }],
    'an id outside the lease': [{ index: 0, ...base, transactionId: 'nope' }],
    'two groups, neither holding a lease': [{ index: 0, ...base, transactionId: 'd0', consumerGroup: 'g8' }, { index: 1, ...base, transactionId: 'd1', consumerGroup: 'g9' }],
  }
  for (const [name, acks] of Object.entries(shapes)) {
    await client.query('begin')
    try {
      const r = (await client.query(`select queen.log_ack_v1(p_tenant => '', p_acks => $1::jsonb) as r`, [JSON.stringify(acks)])).rows[0].r
      expect(Array.isArray(r), name).toBe(true)
    } finally {
      await client.query('rollback')
    }
  }
})

const expand = (r: any): { index: number }[] => {
  if (Array.isArray(r)) return r
  const plains = r.plain ? [r.plain] : r.leases
  return [
    ...plains.flatMap((p: any) =>
      p.index.map((index: number, i: number) => ({
        index, transactionId: p.transactionId[i], offset: p.offset[i], success: true, error: null, code: null,
        queueName: p.queueName, partitionName: p.partitionName, leaseReleased: index === p.releasedIndex,
        dlq: false, dropped: false, evicted: false, ...(p.alreadyAcked?.includes(index) ? { alreadyAcked: true } : {}),
      })),
    ),
    ...(r.rest ?? []),
  ].sort((a, b) => a.index - b.index)
}

// One row of a several-lease batch: its group, the lease's size, the positions acked, and how the
// row spoils the common shape, if it does (then it and every later row take the general path; an
// item naming a malformed partition id belongs to no row and always does).
const leaseRow = fc.record({
  partition: fc.integer({ min: 0, max: 2 }),
  group: fc.constantFrom('', 'g1'),
  batch: fc.integer({ min: 1, max: 6 }),
  picks: fc.array(fc.integer({ min: 0, max: 5 }), { minLength: 1, maxLength: 8 }),
  spoil: fc.oneof(
    { arbitrary: fc.constant(null), weight: 3 },
    { arbitrary: fc.constantFrom('failed', 'other lease', 'unknown id', 'malformed partition'), weight: 1 },
  ),
})

it('answers and writes a batch of several leases exactly as the general path does', { timeout: 120_000 }, async () => {
  let leasesRuns = 0
  let restRuns = 0
  await fc.assert(
    fc.asyncProperty(fc.uniqueArray(leaseRow, { minLength: 2, maxLength: 4, selector: (r) => `${r.partition}/${r.group}` }), fc.integer({ min: 0, max: 1000 }), fc.boolean(), async (rows, seed, interleave) => {
      const queue = `leases-${run++}`
      const now = new Date('2032-01-01T00:00:00Z')
      await app.database.sql(`insert into queen.queues (tenant_id, name, lease_time, retry_limit) values ('', $1, 60, 5)`, [queue])
      const pushed = await app.db.call('log_push_v1', {
        tenant: '', now,
        items: Array.from({ length: 18 }, (_, i) => ({ index: i, queue, partition: `P${i % 3}`, transactionId: `t${i}`, traceId: null, producerSub: null, enc: false, data: i })),
      })
      const pids = [0, 1, 2].map((k) => pushed.items[k]!.partitionId)
      const items: Record<string, unknown>[] = []
      const rowOf: number[] = []
      for (const [r, row] of rows.entries()) {
        const popped = await app.db.call('log_pop_v1', {
          tenant: '', now,
          request: { queue, partition: `P${row.partition}`, group: row.group, batch: row.batch, partitions: 1, autoAck: false, subscriptionMode: 'all', maxBytes: 1 << 20 },
        })
        const lease = popped.messages
        row.picks.forEach((k, i) => {
          const m = lease[k % lease.length]!
          const spoilt = i === 0 ? row.spoil : null
          rowOf.push(r)
          items.push({
            partitionId: spoilt === 'malformed partition' ? 'P' : pids[row.partition], transactionId: spoilt === 'unknown id' ? 'nope' : m.transactionId,
            leaseId: spoilt === 'other lease' ? '00000000-0000-7000-8000-000000000000' : m.leaseId,
            consumerGroup: row.group || null, ...(spoilt === 'failed' ? { status: 'failed' } : {}),
          })
        })
      }
      // Rows in the generated order, which is not lock order (as a fused call's members arrive), each
      // row's items together; or every item shuffled, which only the general path settles.
      const shuffled = (i: number) => (i * 7919 + seed) % 101
      const order = items.map((_, i) => i).sort((a, b) => (interleave ? shuffled(a) - shuffled(b) : rowOf[a]! - rowOf[b]!) || a - b)
      const batch = order.map((i, index) => ({ ...items[i], index }))
      const allCursors = `select c.* from queen.log_consumers c join queen.log_partitions p on p.id = c.partition_id
                           join queen.queues q on q.id = p.queue_id where q.name = $1 order by c.partition_id, c.consumer_group`
      await client.query('begin')
      try {
        await client.query('savepoint before_ack')
        const fused = (await client.query(ackSql, [JSON.stringify(batch), now])).rows[0].r
        const fusedRows = (await client.query(allCursors, [queue])).rows
        await client.query('rollback to savepoint before_ack')
        const general = [...batch, { index: 999, partitionId: UNKNOWN_PARTITION, transactionId: 'x', status: 'completed' }]
        const viaGeneral = (await client.query(ackSql, [JSON.stringify(general), now])).rows[0].r
        const generalRows = (await client.query(allCursors, [queue])).rows
        expect(Array.isArray(viaGeneral)).toBe(true)
        if (fused.leases) {
          leasesRuns++
          if (fused.rest.length > 0) restRuns++
        }
        expect(expand(fused)).toEqual((viaGeneral as { index: number }[]).filter((r) => r.index !== 999))
        expect(fusedRows).toEqual(generalRows)
      } finally {
        await client.query('rollback')
      }
    }),
    { numRuns: Number(process.env.QUEEN_MODEL_RUNS ?? 60) },
  )
  // About a third of the batches settle at least their first row set-based (each row's items
  // together, the first row in lock order unspoilt); some of those hand later rows on.
  expect(leasesRuns).toBeGreaterThan(8)
  expect(restRuns).toBeGreaterThan(1)
})
