// The oracle judged on made-up records: a checker that always reports zero would pass every
// scenario, so each failure it claims to detect is shown detected here (and its excuse honoured).
import { describe, expect, it } from 'vitest'
import { failures, Ledger } from './ledger.js'

const G = '__QUEUE_MODE__'
const frames = (from: number, to: number, id = (o: number) => `t${o}`) => Array.from({ length: to - from + 1 }, (_, i) => ({ transactionId: id(from + i), offset: from + i }))

function pushed(ledger: Ledger, n: number, partition = 'p') {
  for (let o = 0; o < n; o++) ledger.pushed({ producer: 'w', seq: o, partition, transactionId: `t${o}` }, { status: 'queued', offset: o })
}

function cleanRound(ledger: Ledger, from: number, to: number, at: number) {
  const r = ledger.popped('p', G, `L${at}`, frames(from, to), at)
  r.ackAt = at + 1
  r.completed.push(...frames(from, to).map((f) => f.offset))
  return r
}

describe('ledger oracle', () => {
  it('passes a clean run', () => {
    const l = new Ledger()
    pushed(l, 6)
    cleanRound(l, 0, 2, 10)
    cleanRound(l, 3, 5, 20)
    expect(failures(l.check())).toEqual({})
  })

  it('reports an acknowledged push never delivered, unless dead-lettered', () => {
    const l = new Ledger()
    pushed(l, 4)
    cleanRound(l, 0, 2, 10)
    expect(failures(l.check())).toEqual({ lost: 1 })
    expect(l.check({ dlq: [{ partition: 'p', offset: 3 }], retryLimit: 0 }).lost).toBe(0)
  })

  it('reports one transactionId at two offsets, and a delivery under the wrong id', () => {
    const l = new Ledger()
    pushed(l, 2)
    l.pushed({ producer: 'w', seq: 2, partition: 'p', transactionId: 't0' }, { status: 'queued', offset: 2 })
    const r = l.popped('p', G, 'L', [...frames(0, 1), { transactionId: 'other', offset: 2 }], 10)
    r.ackAt = 11
    const report = l.check()
    expect(report.duplicateMessages).toBe(1)
    expect(report.mismatched).toBe(1)
  })

  it('reports a gap, a non-contiguous round and a producer out of sequence', () => {
    const l = new Ledger()
    pushed(l, 6)
    l.pushed({ producer: 'w', seq: 6, partition: 'p', transactionId: 't6' }, { status: 'queued', offset: 1 })
    cleanRound(l, 0, 0, 10)
    cleanRound(l, 2, 3, 20) // offset 1 skipped
    const r = l.popped('p', G, 'L', [frames(4, 4)[0]!, frames(1, 1)[0]!, frames(5, 5)[0]!], 30)
    r.ackAt = 31
    const report = l.check()
    expect(report.outOfOrder).toBeGreaterThanOrEqual(2)
    expect(report.producerOrder).toBe(1)
  })

  it('accepts a round that skips frames its group already settled, and reports one that skips an unsettled frame', () => {
    const settledSkip = new Ledger()
    pushed(settledSkip, 4)
    // Round one: 0 fails, 1 and 2 complete (3 is not acked); round two holds 0 and 3 only.
    const first = settledSkip.popped('p', G, 'L1', frames(0, 3), 10)
    first.ackAt = 11
    first.failedAt = 0
    first.failedOffsets.push(0)
    first.completed.push(1, 2)
    const second = settledSkip.popped('p', G, 'L2', [frames(0, 0)[0]!, frames(3, 3)[0]!], 20)
    second.ackAt = 21
    second.completed.push(0, 3)
    expect(settledSkip.check().outOfOrder).toBe(0)

    const unsettledSkip = new Ledger()
    pushed(unsettledSkip, 4)
    const crashed = unsettledSkip.popped('p', G, 'L1', frames(0, 3), 10)
    crashed.crashed = true
    const skipping = unsettledSkip.popped('p', G, 'L2', [frames(0, 0)[0]!, frames(3, 3)[0]!], 20)
    skipping.ackAt = 21
    skipping.completed.push(0, 3)
    expect(unsettledSkip.check().outOfOrder).toBe(1)
  })

  it('reports a redelivery after a clean ack, and accepts one after an expiry, a failure or a lost ack answer', () => {
    const l = new Ledger()
    pushed(l, 2)
    cleanRound(l, 0, 1, 10)
    cleanRound(l, 0, 1, 20)
    expect(l.check().unexplainedDuplicates).toBe(2)

    for (const excuse of ['crashed', 'leaseLost', 'ackUnknown', 'failedAt'] as const) {
      const e = new Ledger()
      pushed(e, 2)
      const first = e.popped('p', G, 'L1', frames(0, 1), 10)
      if (excuse === 'failedAt') (first.failedAt = 0), (first.ackAt = 11)
      else if (excuse === 'crashed') first.crashed = true
      else (first[excuse] = true), (first.ackAt = 11)
      cleanRound(e, 0, 1, 20)
      expect(failures(e.check()), excuse).toEqual({})
    }
  })

  it('reports a round that began before the previous honest ack was sent', () => {
    const l = new Ledger()
    pushed(l, 4)
    const a = cleanRound(l, 0, 1, 10)
    a.ackAt = 30
    cleanRound(l, 2, 3, 20)
    expect(l.check().overlappingLeases).toBe(1)
  })

  it('reports a dead letter whose completion was confirmed or whose budget was not spent', () => {
    const l = new Ledger()
    pushed(l, 2)
    cleanRound(l, 0, 1, 10)
    expect(l.check({ dlq: [{ partition: 'p', offset: 1 }], retryLimit: 3 }).unexplainedDlq).toBe(1)

    const spent = new Ledger()
    pushed(spent, 1)
    for (let k = 0; k < 4; k++) {
      const r = spent.popped('p', G, `L${k}`, frames(0, 0), 10 * k)
      r.failedAt = 0
      r.failedOffsets.push(0)
      r.ackAt = 10 * k + 1
    }
    expect(failures(spent.check({ dlq: [{ partition: 'p', offset: 0 }], retryLimit: 3 }))).toEqual({})
    expect(spent.check({ dlq: [{ partition: 'p', offset: 0 }], retryLimit: 4 }).unexplainedDlq).toBe(1)
  })
})
