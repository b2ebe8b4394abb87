// A fast-check model test of one (partition, group): random pops, acks in random order and
// statuses across requests, and clock jumps past the lease, against a small reference model of
// ENGINE 6.2. After every step: the cursor never regresses (13.7); it never passes a frame the
// model has not settled (13.3); a pop delivers exactly from the model's cursor, skipping frames
// already settled above it; DLQ rows are
// exactly the frames whose budget ran out or that were acked dlq (13.6); a frame is redelivered
// only after an expiry or a failed/retry ack (13.5); every redelivered message carries its own
// attempt count, and an ack retried with a lease its own round's acks ended answers success with
// alreadyAcked where its verdict already stands (issue #20). QUEEN_MODEL_RUNS raises the run count.
import fc from 'fast-check'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { testApp, type TestApp } from '../helpers/app.js'

let app: TestApp
beforeAll(async () => {
  app = await testApp()
})
afterAll(() => app.close())

const FRAMES = 6
const LEASE = 10
type Status = 'completed' | 'failed' | 'dlq' | 'retry'
type Op = { kind: 'pop'; batch: number } | { kind: 'ack'; picks: number[]; statuses: Status[] } | { kind: 'expire' }

const opArb: fc.Arbitrary<Op> = fc.oneof(
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('pop' as const), batch: fc.integer({ min: 1, max: 4 }) }) },
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant('ack' as const),
      picks: fc.array(fc.integer({ min: 0, max: 3 }), { minLength: 1, maxLength: 3 }),
      statuses: fc.array(fc.constantFrom<Status>('completed', 'completed', 'failed', 'dlq', 'retry'), { minLength: 3, maxLength: 3 }),
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('expire' as const) }) },
)

let run = 0

it('keeps cursor, retries and the DLQ exactly as the model says', { timeout: 120_000 }, async () => {
  await fc.assert(
    fc.asyncProperty(fc.array(opArb, { minLength: 5, maxLength: 30 }), fc.integer({ min: 0, max: 2 }), fc.boolean(), async (ops, retryLimit, dlqOn) => {
      const queue = `model-${run++}`
      await app.database.sql(
        `insert into queen.queues (tenant_id, name, lease_time, retry_limit, dead_letter_queue, dlq_after_max_retries) values ('', $1, $2, $3, $4, $4)`,
        [queue, LEASE, retryLimit, dlqOn],
      )
      let clock = new Date('2032-01-01T00:00:00Z').getTime()
      const now = () => new Date(clock)
      const pushed = await app.db.call('log_push_v1', {
        tenant: '', now: now(),
        items: Array.from({ length: FRAMES }, (_, i) => ({ index: i, queue, partition: 'Default', transactionId: `t${i}`, traceId: null, producerSub: null, enc: false, data: i })),
      })
      const pid = pushed.items[0]!.partitionId

      // The model (ENGINE 6.2).
      const m = { committed: 0, acked: new Set<number>(), retry: null as null | { o: number; n: number }, dlq: new Set<number>() }
      let lease: null | { id: string; from: number; to: number; expires: number; live: boolean; endedByAck: boolean } = null
      // Each frame's delivery attempts that ended without settling it (expiries and failed acks).
      const attempts = new Map<number, number>()
      const attempt = (o: number) => attempts.set(o, (attempts.get(o) ?? 0) + 1)
      let lastCommitted = 0
      // Why each frame may be delivered again: set when its round ended by failure, retry or expiry.
      const mayRepeat = new Set<number>()
      const delivered = new Set<number>()
      const settled = (o: number) => o < m.committed || m.acked.has(o)
      const settle = (o: number) => {
        if (o < m.committed) return
        if (o === m.committed) {
          m.committed++
          while (m.acked.has(m.committed)) m.acked.delete(m.committed++)
        } else m.acked.add(o)
        if (m.retry && m.retry.o < m.committed) m.retry = null
      }
      const countFailure = (o: number) => {
        if (!m.retry || settled(m.retry.o) || o < m.retry.o) m.retry = { o, n: 1 }
        else if (o === m.retry.o) m.retry.n++
      }
      const deadLetter = (o: number) => {
        if (dlqOn) m.dlq.add(o)
        if (m.retry?.o === o) m.retry = null
        settle(o)
      }
      const endRound = () => {
        if (lease) for (let o = lease.from; o <= lease.to; o++) mayRepeat.add(o)
      }

      for (const op of ops) {
        if (op.kind === 'expire') {
          clock += (LEASE + 1) * 1000
          continue
        }
        if (op.kind === 'pop') {
          const res = await app.db.call('log_pop_v1', {
            tenant: '', now: now(),
            request: { queue, group: '', batch: op.batch, partitions: 1, autoAck: false, subscriptionMode: 'all', maxBytes: 1 << 20 },
          })
          const liveLease = lease?.live && lease.expires > clock
          if (lease?.live && lease.expires <= clock) {
            // The reclaiming pop charges the expiry to the first unsettled frame (ENGINE 5.4).
            if (m.committed <= lease.to) {
              endRound()
              for (let o = m.committed; o <= lease.to; o++) if (!settled(o)) attempt(o)
              countFailure(m.committed)
              if (m.retry && m.retry.o === m.committed && m.retry.n > retryLimit) deadLetter(m.committed)
            }
            lease.live = false
          }
          if (liveLease || m.committed >= FRAMES) {
            expect(res.messages).toEqual([])
            continue
          }
          // The batch's range from the cursor, less the frames the group already settled above it.
          const want = Array.from({ length: Math.min(op.batch, FRAMES - m.committed) }, (_, i) => m.committed + i).filter((o) => !m.acked.has(o))
          expect(res.messages.map((x) => x.offset)).toEqual(want)
          for (const x of res.messages) {
            expect(x.retryCount).toBe(Math.max(attempts.get(x.offset) ?? 0, m.retry?.o === x.offset ? m.retry.n : 0))
            if (delivered.has(x.offset) && !m.acked.has(x.offset)) expect(mayRepeat.has(x.offset), `redelivery of ${x.offset}`).toBe(true)
            delivered.add(x.offset)
            mayRepeat.delete(x.offset)
          }
          lease = { id: res.leaseId!, from: want[0]!, to: want[want.length - 1]!, expires: clock + LEASE * 1000, live: true, endedByAck: false }
          continue
        }
        // ack: items for frames of the current (or last) lease, sent in the picked order.
        if (!lease) continue
        const span = lease.to - lease.from + 1
        const items = op.picks.map((p, i) => ({ off: lease!.from + (p % span), status: op.statuses[i % 3]! }))
        const isLive = lease.live && lease.expires > clock
        const res = await app.db.call('log_ack_v1', {
          tenant: '', now: now(),
          acks: items.map((it, index) => ({ index, partitionId: pid, transactionId: `t${it.off}`, offset: it.off, leaseId: lease!.id, consumerGroup: null, status: it.status, error: null })),
        })
        if (!isLive) {
          // A lease its own round's acks ended: an item whose verdict already stands (its frame
          // settled, or a failure or retry) is a retry of an ack whose answer was lost.
          items.forEach((it, i) => {
            const already = !lease!.live && lease!.endedByAck && (settled(it.off) || it.status === 'failed' || it.status === 'retry')
            if (already) expect(res[i]).toMatchObject({ success: true, alreadyAcked: true })
            else expect(res[i]!.code).toBe('lease_invalid')
          })
          continue
        }
        const order = items.map((it, i) => ({ ...it, i })).sort((a, b) => a.off - b.off || a.i - b.i)
        for (const it of order) {
          expect(res[it.i]!.success).toBe(true)
          expect(res[it.i]!.alreadyAcked ?? false).toBe(settled(it.off))
          if (settled(it.off)) continue
          if (it.status === 'completed') settle(it.off)
          else if (it.status === 'dlq') deadLetter(it.off)
          else if (it.status === 'retry') {
            if (lease.live) { endRound(); lease.live = false; lease.endedByAck = true }
          } else {
            countFailure(it.off)
            attempt(it.off)
            if (m.retry && m.retry.o === it.off && m.retry.n > retryLimit) deadLetter(it.off)
            else if (lease.live) { endRound(); lease.live = false; lease.endedByAck = true }
          }
          if (lease.live && m.committed > lease.to) { lease.live = false; lease.endedByAck = true }
        }
      }

      const [row] = await app.database.sql<{ c: number; acked: number[]; lease: string | null }>(`
        select committed_offset::int as c, acked_set::int[] as acked, lease_id::text as lease from queen.log_consumers where partition_id = $1`, [pid])
      const dlqRows = await app.database.sql<{ o: number }>(`select frame_offset::int as o from queen.log_dlq where partition_id = $1 order by 1`, [pid])
      if (row) {
        expect(row.c).toBeGreaterThanOrEqual(lastCommitted)
        lastCommitted = row.c
        expect(row.c).toBe(m.committed)
        expect(row.acked).toEqual([...m.acked].sort((a, b) => a - b))
      }
      expect(dlqRows.map((r) => r.o)).toEqual([...m.dlq].sort((a, b) => a - b))
    }),
    { numRuns: Number(process.env.QUEEN_MODEL_RUNS ?? 60), seed: process.env.QUEEN_MODEL_SEED ? Number(process.env.QUEEN_MODEL_SEED) : undefined },
  )
})
