// The ledger oracle (issue #10): what producers were told and what consumers saw, and a checker
// that judges the broker's promises from those records alone (ENGINE §13.1, 13.3–13.6, API §6).
// Producers record every push answer — the item's (producer, sequence, partition, transactionId)
// and the (status, offset) it was given, or that the answer never came. Consumers record every pop
// as a round (the frames, lease, retry counts and when) and how it ended (acked, failed from an
// offset, crashed, lease lost, ack answer lost). Nothing here talks to the broker or the database:
// the ledger test, the chaos scenarios and the benchmark feed it, then call check().
//
// The checker reports
// - lost: acknowledged pushes (`queued`/`duplicate`) never delivered to a group and not dead-lettered;
// - mismatched: a delivery at an acknowledged (partition, offset) carrying another transactionId;
// - duplicateMessages: one transactionId stored at two offsets (an ambiguous commit retried into a
//   second message instead of `duplicate`);
// - outOfOrder: a round that is not ascending, that skips an offset its (partition, group) had not
//   settled (a pop leaves out only frames the group already completed or dead-lettered; one whose
//   ack answer was lost may have been settled), or that first-delivers a frame before every lower
//   offset of its (partition, group) had been delivered;
// - producerOrder: one producer's acknowledged items in one partition whose offsets do not follow
//   its sequence (producers push one request at a time);
// - unexplainedDuplicates: a redelivery whose previous round ended cleanly (acked completed, no
//   failure at or below it, lease kept, answer received);
// - overlappingLeases: a round that began before an honest predecessor on its (partition, group)
//   had sent its ack;
// - unexplainedDlq: a dead-lettered frame that was confirmed completed, or whose recorded attempts
//   (plus pop answers lost in transit, which the ledger cannot attribute) stay within retryLimit.

export type Key = string
export const keyOf = (partition: string, offset: number): Key => `${partition}:${offset}`

export interface PushItemRecord {
  producer: string
  seq: number
  partition: string
  transactionId: string
}

export interface PushAnswer {
  status: string
  offset: number
}

export interface Delivered {
  transactionId: string
  offset: number
  retryCount?: number
}

export interface Round {
  partition: string
  group: string
  leaseId: string
  frames: Delivered[]
  /** Client clock when the pop answer arrived (performance.now()). */
  popAt: number
  /** When the ack was sent; null when none was (a crash). */
  ackAt: number | null
  crashed: boolean
  /** Lowest offset acked `failed` (or `retry`) in this round, or null. */
  failedAt: number | null
  /** Offsets acked `failed`, for DLQ attempt counting. */
  failedOffsets: number[]
  /** The ack was refused with lease_invalid/lease_expired: the lease expired under the consumer. */
  leaseLost: boolean
  /** The ack's answer never came (network error, 503, timeout): it may or may not have applied. */
  ackUnknown: boolean
  /** Offsets whose `completed` ack was confirmed by a per-item success. */
  completed: number[]
}

export interface CheckInput {
  /** Dead-lettered frames, as (partition, offset), from the database or `GET /dlq`. */
  dlq?: { partition: string; offset: number }[]
  retryLimit?: number
  /** Groups that must each have received every acknowledged push; defaults to every group seen (or `__QUEUE_MODE__`). */
  groups?: string[]
}

export interface Report {
  acknowledged: number
  unknownPushes: number
  duplicateAnswers: number
  rounds: number
  deliveries: number
  redeliveries: number
  explainedDuplicates: number
  lostPopAnswers: number
  dlq: number
  lost: number
  mismatched: number
  duplicateMessages: number
  outOfOrder: number
  producerOrder: number
  unexplainedDuplicates: number
  overlappingLeases: number
  unexplainedDlq: number
  /** First few problems in words, for the failure message. */
  problems: string[]
}

/** The counts that must be zero for a run to pass. */
export const FAILURES = ['lost', 'mismatched', 'duplicateMessages', 'outOfOrder', 'producerOrder', 'unexplainedDuplicates', 'overlappingLeases', 'unexplainedDlq'] as const

export class Ledger {
  /** Acknowledged pushes by (partition, offset). */
  readonly acked = new Map<Key, PushItemRecord & PushAnswer>()
  /** Every acknowledged answer, in arrival order (a transactionId may be answered twice: queued, then duplicate). */
  readonly answers: (PushItemRecord & PushAnswer)[] = []
  readonly rounds: Round[] = []
  unknownPushes = 0
  lostPopAnswers = 0

  /** A push answer for one item (status `queued` or `duplicate`). */
  pushed(item: PushItemRecord, answer: PushAnswer): void {
    const record = { ...item, ...answer }
    this.answers.push(record)
    const key = keyOf(item.partition, answer.offset)
    if (!this.acked.has(key) || answer.status === 'queued') this.acked.set(key, record)
  }

  /** A push request whose answer never came (it may or may not have been written). */
  pushUnknown(items = 1): void {
    this.unknownPushes += items
  }

  /** A pop whose answer was lost in transit: a lease (and an attempt) the ledger cannot see. */
  popUnknown(): void {
    this.lostPopAnswers++
  }

  /** A pop answer with at least one message; returns the round to mark as it ends. */
  popped(partition: string, group: string, leaseId: string, frames: Delivered[], popAt = performance.now()): Round {
    const round: Round = { partition, group, leaseId, frames, popAt, ackAt: null, crashed: false, failedAt: null, failedOffsets: [], leaseLost: false, ackUnknown: false, completed: [] }
    this.rounds.push(round)
    return round
  }

  check(input: CheckInput = {}): Report {
    const problems: string[] = []
    const note = (text: string) => void (problems.length < 20 && problems.push(text))
    const report: Report = {
      acknowledged: this.acked.size, unknownPushes: this.unknownPushes, duplicateAnswers: this.answers.filter((a) => a.status === 'duplicate').length,
      rounds: this.rounds.length, deliveries: 0, redeliveries: 0, explainedDuplicates: 0, lostPopAnswers: this.lostPopAnswers, dlq: input.dlq?.length ?? 0,
      lost: 0, mismatched: 0, duplicateMessages: 0, outOfOrder: 0, producerOrder: 0, unexplainedDuplicates: 0, overlappingLeases: 0, unexplainedDlq: 0, problems,
    }
    const dead = new Set((input.dlq ?? []).map((d) => keyOf(d.partition, d.offset)))

    // One transactionId, one offset: a second offset is a second message.
    const offsetOf = new Map<string, Key>()
    for (const a of this.answers) {
      const key = keyOf(a.partition, a.offset)
      const id = `${a.partition}\u0001${a.transactionId}`
      const seen = offsetOf.get(id)
      if (seen !== undefined && seen !== key) {
        report.duplicateMessages++
        note(`${a.transactionId} answered at ${seen} and at ${key}`)
      }
      offsetOf.set(id, key)
    }

    // Producer order: one producer's items in one partition take increasing offsets with sequence.
    const byProducer = new Map<string, (PushItemRecord & PushAnswer)[]>()
    for (const a of this.acked.values()) {
      const k = `${a.producer}\u0001${a.partition}`
      byProducer.set(k, [...(byProducer.get(k) ?? []), a])
    }
    for (const list of byProducer.values()) {
      list.sort((x, y) => x.seq - y.seq)
      for (let i = 1; i < list.length; i++) {
        if (list[i]!.offset <= list[i - 1]!.offset) {
          report.producerOrder++
          note(`${list[i]!.producer} seq ${list[i]!.seq} at offset ${list[i]!.offset} after seq ${list[i - 1]!.seq} at ${list[i - 1]!.offset} in ${list[i]!.partition}`)
        }
      }
    }

    const delivered = new Map<string, Set<Key>>()
    const attempts = new Map<Key, number>()
    const confirmed = new Set<Key>()
    const byLane = new Map<string, Round[]>()
    for (const r of this.rounds) {
      const lane = `${r.partition}\u0001${r.group}`
      byLane.set(lane, [...(byLane.get(lane) ?? []), r])
      const seen = delivered.get(r.group) ?? new Set<Key>()
      delivered.set(r.group, seen)
      for (const f of r.frames) {
        const key = keyOf(r.partition, f.offset)
        seen.add(key)
        report.deliveries++
        const expected = this.acked.get(key)
        if (expected && expected.transactionId !== f.transactionId) {
          report.mismatched++
          note(`${key} was acknowledged as ${expected.transactionId} but delivered as ${f.transactionId}`)
        }
        const ended = r.crashed || r.leaseLost || r.ackUnknown || r.failedOffsets.includes(f.offset)
        if (ended) attempts.set(key, (attempts.get(key) ?? 0) + 1)
      }
      for (const o of r.completed) confirmed.add(keyOf(r.partition, o))
    }

    const groups = input.groups ?? (delivered.size > 0 ? [...delivered.keys()] : ['__QUEUE_MODE__'])
    for (const group of groups) {
      const seen = delivered.get(group) ?? new Set<Key>()
      for (const key of this.acked.keys()) {
        if (!seen.has(key) && !dead.has(key)) {
          report.lost++
          note(`${key} (${this.acked.get(key)!.transactionId}) acknowledged but never delivered to ${group}`)
        }
      }
    }

    for (const [lane, list] of byLane) {
      const [partition, group] = lane.split('\u0001') as [string, string]
      list.sort((a, b) => a.popAt - b.popAt)
      let highestFirst = -1
      const firstSeen = new Set<number>()
      const last = new Map<number, Round>()
      // Offsets this lane may have settled by the time a round is popped: completions its rounds
      // confirmed, and every frame of a round whose ack answer was lost.
      const settledBefore = new Set<number>()
      for (const [i, r] of list.entries()) {
        const offsets = r.frames.map((f) => f.offset)
        const skipped: number[] = []
        for (let j = 1; j < offsets.length; j++) {
          for (let o = offsets[j - 1]! + 1; o < offsets[j]!; o++) skipped.push(o)
        }
        const unsettled = skipped.filter((o) => !settledBefore.has(o) && !dead.has(keyOf(partition, o)))
        if (offsets.some((o, j) => j > 0 && o <= offsets[j - 1]!) || unsettled.length > 0) {
          report.outOfOrder++
          note(`${partition}/${group}: round [${offsets.join(',')}] is not ascending or skips unsettled ${unsettled.join(',')}`)
        }
        if (offsets[0]! > highestFirst + 1 && !firstSeen.has(offsets[0]!)) {
          // A gap is fine only where the frames below were never acknowledged (an unknown push
          // that did not commit leaves no offset, so a gap means a frame was skipped).
          report.outOfOrder++
          note(`${partition}/${group}: offset ${offsets[0]} first delivered before ${highestFirst + 1}`)
        }
        for (const o of offsets) {
          const previous = last.get(o)
          if (previous) {
            report.redeliveries++
            const explained = previous.crashed || previous.leaseLost || previous.ackUnknown || (previous.failedAt !== null && previous.failedAt <= o)
            if (explained) report.explainedDuplicates++
            else {
              report.unexplainedDuplicates++
              note(`${partition}/${group}:${o} redelivered without cause`)
            }
          }
          last.set(o, r)
          if (!firstSeen.has(o)) {
            firstSeen.add(o)
            highestFirst = Math.max(highestFirst, o)
          }
        }
        for (const o of r.completed) settledBefore.add(o)
        if (r.ackUnknown) for (const o of offsets) settledBefore.add(o)
        const next = list[i + 1]
        if (next && !r.crashed && !r.leaseLost && !r.ackUnknown && r.ackAt !== null && next.popAt <= r.ackAt) {
          report.overlappingLeases++
          note(`${partition}/${group}: a round began at ${next.popAt.toFixed(0)} before the previous ack at ${r.ackAt.toFixed(0)}`)
        }
      }
    }

    const limit = input.retryLimit ?? 3
    for (const key of dead) {
      const explained = !confirmed.has(key) && (attempts.get(key) ?? 0) + this.lostPopAnswers >= limit + 1
      if (!explained) {
        report.unexplainedDlq++
        note(`${key} dead-lettered after ${attempts.get(key) ?? 0} recorded attempts${confirmed.has(key) ? ' though its completion was confirmed' : ''}`)
      }
    }
    return report
  }
}

/** The failing counts of a report, e.g. { lost: 2 }; empty when the run passed. */
export function failures(report: Report): Partial<Record<(typeof FAILURES)[number], number>> {
  return Object.fromEntries(FAILURES.filter((f) => report[f] !== 0).map((f) => [f, report[f]]))
}

/** A seeded generator, so a failing run can be replayed. */
export function rng(seed: number): () => number {
  return () => {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff
    return seed / 0x7fffffff
  }
}
