// The cell bench's bookkeeping, free of I/O so the harness test can check it: the open-loop
// schedule (when each message is due, whose it is), the in-flight gate that sheds instead of
// queueing, and the ledger that turns pushes and deliveries into lost, duplicated and latency
// figures, per partition as well as overall.
import { percentile } from './lib.js'

/** When message k (0-based, every tenant's messages interleaved) is due, in ms after the start. */
export const dueAt = (k: number, rate: number) => (k * 1000) / rate

/** How many messages are due `elapsedMs` after the start (the first at 0), at most `total`. */
export const dueBy = (elapsedMs: number, rate: number, total: number) => (elapsedMs < 0 ? 0 : Math.min(total, Math.floor((elapsedMs * rate) / 1000) + 1))

/**
 * Message k's tenant and partition. Tenants take turns, so each offers rate / tenants; each
 * tenant's own messages go round its partitions, so every partition is offered the same rate and
 * one partition's worst delay is comparable with another's.
 */
export const placement = (k: number, tenants: number, partitions: number) => ({ tenant: k % tenants, partition: Math.floor(k / tenants) % partitions })

/**
 * The cap on requests in flight. A send that finds it full is shed (counted, never sent, never
 * queued): waiting for room would let a slow broker slow the schedule, and the offered rate would
 * stop being the one asked for.
 */
export class InflightGate {
  inflight = 0
  peak = 0
  shed = 0
  constructor(readonly cap: number) {}

  tryEnter(): boolean {
    if (this.inflight >= this.cap) {
      this.shed++
      return false
    }
    this.inflight++
    if (this.inflight > this.peak) this.peak = this.inflight
    return true
  }

  leave(): void {
    this.inflight--
  }
}

const ACCEPTED = 1
const REFUSED = 2

export interface PartitionFigures {
  tenant: number
  partition: number
  accepted: number
  delivered: number
  lost: number
  /** The longest delay of the partition's messages; an undelivered one counts as waiting until the end. */
  worstMs: number
  /** Messages delivered more than a second after their intended send time. */
  lateOver1s: number
}

export interface LedgerSummary {
  offered: number
  accepted: number
  refused: number
  /** Distinct messages delivered (each counted once, however often it came). */
  delivered: number
  lost: number
  duplicated: number
  /** Delivered, yet its push was never answered as queued (refused, or it failed on the wire). */
  stray: number
  /** Delivered to a consumer of another tenant: must stay 0. */
  crossTenant: number
  latencyMs: { p50: number | null; p99: number | null; p999: number | null; max: number | null }
  partitions: {
    worstMs: number | null
    /** The best partition's worst delay: far below worstMs means delivery was not spread evenly. */
    bestWorstMs: number | null
    over1s: number
    perPartition: PartitionFigures[]
  }
}

/**
 * Every message of a point by its id k: when it was meant to be sent, whether its push was answered
 * `queued`, how often it was delivered, and each first delivery's delay from its intended send time
 * (so a schedule that fell behind, or a push that waited, shows as latency rather than vanishing).
 * Sized up front: k runs from 0 to capacity - 1.
 */
export class Ledger {
  private readonly intended: Float64Array
  private readonly state: Uint8Array
  private readonly deliveries: Uint8Array
  private readonly latencies: Float64Array
  private readonly partWorst: Float64Array
  private readonly partLate: Uint32Array
  private readonly partDelivered: Uint32Array
  offered = 0
  accepted = 0
  refused = 0
  /** First deliveries, accepted or not. */
  delivered = 0
  duplicated = 0
  crossTenant = 0
  /** Accepted and delivered: the drain is over when this reaches `accepted`. */
  settled = 0
  /** Deliveries of every copy, the numerator of messages per pop. */
  copies = 0

  constructor(
    readonly capacity: number,
    readonly tenants: number,
    readonly partitions: number,
  ) {
    this.intended = new Float64Array(capacity).fill(NaN)
    this.state = new Uint8Array(capacity)
    this.deliveries = new Uint8Array(capacity)
    this.latencies = new Float64Array(capacity)
    this.partWorst = new Float64Array(tenants * partitions)
    this.partLate = new Uint32Array(tenants * partitions)
    this.partDelivered = new Uint32Array(tenants * partitions)
  }

  private slot(k: number) {
    const { tenant, partition } = placement(k, this.tenants, this.partitions)
    return tenant * this.partitions + partition
  }

  /** Message k's turn came at `intendedMs` (sent or shed alike: shedding is the gate's count). */
  offer(k: number, intendedMs: number): void {
    this.intended[k] = intendedMs
    this.offered++
  }

  accept(k: number): void {
    this.state[k] = ACCEPTED
    this.accepted++
    if (this.deliveries[k]! > 0) this.settled++
  }

  refuse(k: number): void {
    this.state[k] = REFUSED
    this.refused++
  }

  /** A copy of message k reached a consumer of `tenant` at `atMs`; its delay runs from `intendedMs`, as the payload carried it. */
  deliver(k: number, tenant: number, intendedMs: number, atMs: number): void {
    if (!(k >= 0 && k < this.capacity)) return
    this.copies++
    if (placement(k, this.tenants, this.partitions).tenant !== tenant) this.crossTenant++
    const seen = this.deliveries[k]!
    if (seen < 255) this.deliveries[k] = seen + 1
    if (seen > 0) {
      this.duplicated++
      return
    }
    const delay = atMs - intendedMs
    this.latencies[this.delivered++] = delay
    if (this.state[k] === ACCEPTED) this.settled++
    const s = this.slot(k)
    this.partDelivered[s]!++
    if (delay > this.partWorst[s]!) this.partWorst[s] = delay
    if (delay > 1000) this.partLate[s]!++
  }

  /** Delays of the first deliveries from index `from` on, in arrival order (for interval reports). */
  delaysSince(from: number): Float64Array {
    return this.latencies.slice(from, this.delivered)
  }

  /** The figures at `endMs` (on the clock of `intended`): what was accepted and never delivered is lost. */
  summary(endMs: number): LedgerSummary {
    const slots = this.tenants * this.partitions
    const worst = Float64Array.from(this.partWorst)
    const accepted = new Uint32Array(slots)
    const lost = new Uint32Array(slots)
    let lostTotal = 0
    let stray = 0
    for (let k = 0; k < this.capacity; k++) {
      const st = this.state[k]
      const got = this.deliveries[k]! > 0
      if (st !== ACCEPTED) {
        if (got) stray++
        continue
      }
      const s = this.slot(k)
      accepted[s]!++
      if (!got) {
        lost[s]!++
        lostTotal++
        const waited = endMs - this.intended[k]!
        if (waited > worst[s]!) worst[s] = waited
      }
    }
    const perPartition: PartitionFigures[] = []
    for (let s = 0; s < slots; s++) {
      perPartition.push({
        tenant: Math.floor(s / this.partitions),
        partition: s % this.partitions,
        accepted: accepted[s]!,
        delivered: this.partDelivered[s]!,
        lost: lost[s]!,
        worstMs: round1(worst[s]!),
        lateOver1s: this.partLate[s]!,
      })
    }
    const active = perPartition.filter((p) => p.accepted > 0 || p.delivered > 0)
    const sorted = this.latencies.slice(0, this.delivered).sort()
    return {
      offered: this.offered,
      accepted: this.accepted,
      refused: this.refused,
      delivered: this.delivered,
      lost: lostTotal,
      duplicated: this.duplicated,
      stray,
      crossTenant: this.crossTenant,
      latencyMs: { p50: percentile(sorted, 50), p99: percentile(sorted, 99), p999: percentile(sorted, 99.9), max: percentile(sorted, 100) },
      partitions: {
        worstMs: active.length ? Math.max(...active.map((p) => p.worstMs)) : null,
        bestWorstMs: active.length ? Math.min(...active.map((p) => p.worstMs)) : null,
        over1s: active.filter((p) => p.worstMs > 1000).length,
        perPartition,
      },
    }
  }
}

const round1 = (n: number) => Math.round(n * 10) / 10
