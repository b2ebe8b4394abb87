// A streams runtime written for the tests that speaks /streams/v1/* the way Queen's JS runtime does
// (clients/client-js/client-v2/streams/runtime/Runner.js in queen-mq/queen), for three window kinds
// with keyed aggregates {count, sum, min, max} over payloads {key, v, ts}:
// - tumbling and sliding windows on processing time (the source message's createdAt), closed by the
//   batch's newest createdAt in a cycle, or by the idle flush: a ripe read (key_prefix +
//   ripe_at_or_before = now) and an ack:null cycle deleting and emitting every row it returned;
// - session windows per key, on event time (payload.ts, with the watermark under `__wm__`) or on
//   processing time, closed by the watermark or the batch's newest createdAt in a cycle, or by the
//   idle flush from a whole-shard read (its clock: the committed watermark, or now).
// The loop pops (group streams.<name>, partitions=4), groups by partitionId, sorts each group by
// (createdAt, id), reads the shard's state (keys: []), folds, and commits state ops + sink items +
// the ack of the last message with `count` in one cycle. With `serialise`, the loop and the flush of
// one partition never overlap (the per-partition lock of Queen's newer runtime); without it they
// interleave at every await, as in its older one. `stall` holds a computed cycle before committing
// it, so its lease can expire first and the batch go to another runner.

import type { Send } from './stream-runner.js'

export type { Send }

export type WindowKind = 'tumbling' | 'sliding' | 'session'

export interface Agg {
  count: number
  sum: number
  min: number
  max: number
}

/** What the runner pushes to the sink for one closed window or session. */
export interface Emit extends Agg {
  partition: string
  key: string
  start: number
  /** Window end (exclusive) for tumbling and sliding windows; the last event time for sessions. */
  end: number
}

export interface SourceEvent {
  key: string
  v: number
  ts: number
}

export interface ProtocolRunnerOptions {
  send: Send
  name: string
  source: string
  sink: string
  kind: WindowKind
  /** Window size (tumbling, sliding) or session gap, in milliseconds. */
  sizeMs: number
  /** Sliding windows: the slide; it divides sizeMs. */
  slideMs?: number
  /** Sessions: on the events' own time (payload.ts) rather than createdAt. */
  eventTime?: boolean
  /** The idle flush's period; 0: this runner does not flush. */
  idleFlushMs: number
  batch?: number
  serialise: boolean
  /** Milliseconds to hold a computed cycle before committing it. */
  stall?: () => number
}

const SEP = '\u001f'
const WM = '__wm__'
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms))

export const addTo = (agg: Agg | undefined, v: number): Agg =>
  agg ? { count: agg.count + 1, sum: agg.sum + v, min: Math.min(agg.min, v), max: Math.max(agg.max, v) } : { count: 1, sum: v, min: v, max: v }

/** The windows (start times) a processing-time instant belongs to. */
export function windowStarts(t: number, sizeMs: number, slideMs = sizeMs): number[] {
  const starts: number[] = []
  for (let s = Math.floor(t / slideMs) * slideMs; s > t - sizeMs; s -= slideMs) starts.push(s)
  return starts
}

interface Popped {
  id: string
  transactionId: string
  partitionId: string
  partition: string
  leaseId: string
  createdAt: string
  data: SourceEvent
}

interface Cycle {
  state_ops: { type: 'upsert' | 'delete'; key: string; value?: unknown }[]
  emits: Emit[]
}

export class ProtocolRunner {
  queryId = ''
  readonly errors: string[] = []
  readonly stats = { cycles: 0, flushes: 0, deferred: 0, popped: 0 }
  private readonly partitions = new Map<string, string>()
  /** The source partitions this runner has seen: id → name. */
  get partitionNames(): ReadonlyMap<string, string> {
    return this.partitions
  }
  private readonly locks = new Map<string, Promise<void>>()
  /** Event-time watermark per partition, as the last committed cycle left it. */
  private readonly watermarks = new Map<string, number>()
  private running = false
  private tasks: Promise<void>[] = []
  private readonly tag: string

  constructor(private readonly o: ProtocolRunnerOptions) {
    this.tag = o.kind === 'tumbling' ? `tumb:${o.sizeMs}` : o.kind === 'sliding' ? `slide:${o.sizeMs}:${o.slideMs}` : `sess:${o.sizeMs}`
  }

  private get group() {
    return `streams.${this.o.name}`
  }

  private async post(path: string, body: unknown) {
    const res = await this.o.send('POST', path, body)
    if (res.status !== 200) throw new Error(`${path} answered ${res.status}: ${JSON.stringify(res.body)}`)
    return res.body
  }

  async register(): Promise<void> {
    const reg = await this.post('/streams/v1/queries', { name: this.o.name, source_queue: this.o.source, sink_queue: this.o.sink, config_hash: this.tag, reset: false })
    this.queryId = reg.query_id
  }

  /** Starts the pop loop and the idle-flush timer. */
  start(): void {
    this.running = true
    this.tasks = this.o.idleFlushMs > 0 ? [this.loop(), this.flushTimer()] : [this.loop()]
  }

  /** Stops both and waits for what is in flight. */
  async stop(): Promise<void> {
    this.running = false
    await Promise.all(this.tasks)
  }

  private async loop(): Promise<void> {
    while (this.running) {
      const found = await this.step().catch((e: Error) => {
        this.errors.push(`pop: ${e.message}`)
        return false
      })
      if (!found) await sleep(50)
    }
  }

  private async flushTimer(): Promise<void> {
    while (this.running) {
      await sleep(this.o.idleFlushMs)
      if (this.running) await this.flush()
    }
  }

  /** Runs fn with the partition's lock when the runner serialises, else at once. */
  private locked(partitionId: string, fn: () => Promise<void>): Promise<void> {
    if (!this.o.serialise) return fn()
    const run = (this.locks.get(partitionId) ?? Promise.resolve()).then(fn)
    this.locks.set(partitionId, run.catch(() => {}))
    return run
  }

  /** One pop and its cycles; false when the pop found nothing. */
  async step(): Promise<boolean> {
    // subscriptionMode all, as Queen's suite runs its streams: a new group otherwise starts at the
    // tail, skipping what was pushed before its first pop.
    const qs = new URLSearchParams({ batch: String(this.o.batch ?? 50), consumerGroup: this.group, partitions: '4', wait: 'false', subscriptionMode: 'all' })
    const popped = await this.o.send('GET', `/api/v1/pop/queue/${encodeURIComponent(this.o.source)}?${qs}`)
    if (popped.status === 204) return false
    if (popped.status !== 200) throw new Error(`pop answered ${popped.status}: ${JSON.stringify(popped.body)}`)
    const groups = new Map<string, Popped[]>()
    for (const m of popped.body.messages as Popped[]) groups.set(m.partitionId, [...(groups.get(m.partitionId) ?? []), m])
    this.stats.popped += popped.body.messages.length
    for (const [partitionId, messages] of groups) {
      this.partitions.set(partitionId, messages[0]!.partition)
      await this.locked(partitionId, () => this.batchCycle(partitionId, messages)).catch((e: Error) => {
        this.errors.push(`cycle: ${e.message}`)
      })
    }
    return true
  }

  private async batchCycle(partitionId: string, messages: Popped[]): Promise<void> {
    // Queen's runtime orders a batch by (createdAt, id) to restore the partition's FIFO order.
    const ordered = [...messages].sort((a, b) => Date.parse(a.createdAt) - Date.parse(b.createdAt) || a.id.localeCompare(b.id))
    const loaded = await this.post('/streams/v1/state/get', { query_id: this.queryId, partition_id: partitionId, keys: [] })
    const state = new Map<string, any>(loaded.rows.map((r: { key: string; value: unknown }) => [r.key, r.value]))
    const partition = ordered[0]!.partition
    const { cycle, watermark } = this.o.kind === 'session' ? this.foldSessions(state, ordered, partition) : { cycle: this.foldWindows(state, ordered, partition), watermark: undefined }
    const stall = this.o.stall?.() ?? 0
    if (stall > 0) await sleep(stall)
    const last = ordered[ordered.length - 1]!
    await this.commit(partitionId, cycle, { transactionId: last.transactionId, leaseId: last.leaseId, status: 'completed', count: ordered.length })
    if (watermark !== undefined) this.watermarks.set(partitionId, watermark)
    this.stats.cycles++
  }

  /** Tumbling and sliding windows on processing time: the cycle's clock is the batch's newest createdAt. */
  private foldWindows(state: Map<string, any>, ordered: Popped[], partition: string): Cycle {
    const entries = new Map<string, { key: string; start: number; end: number; agg: Agg | undefined; seeded: boolean; touched: boolean }>()
    for (const [k, v] of state) {
      const parts = k.split(SEP)
      if (parts[0] !== this.tag || parts.length !== 3) continue
      entries.set(k, { key: parts[2]!, start: v.windowStart, end: v.windowEnd, agg: v.acc, seeded: true, touched: false })
    }
    let clock = -Infinity
    for (const m of ordered) {
      const t = Date.parse(m.createdAt)
      clock = Math.max(clock, t)
      for (const start of windowStarts(t, this.o.sizeMs, this.o.slideMs)) {
        const k = [this.tag, new Date(start).toISOString(), m.data.key].join(SEP)
        const e = entries.get(k) ?? { key: m.data.key, start, end: start + this.o.sizeMs, agg: undefined, seeded: false, touched: false }
        e.agg = addTo(e.agg, m.data.v)
        e.touched = true
        entries.set(k, e)
      }
    }
    const cycle: Cycle = { state_ops: [], emits: [] }
    for (const [k, e] of [...entries].sort(([a], [b]) => (a < b ? -1 : 1))) {
      if (e.end <= clock) {
        cycle.emits.push({ partition, key: e.key, start: e.start, end: e.end, ...e.agg! })
        if (e.seeded) cycle.state_ops.push({ type: 'delete', key: k })
      } else if (e.touched) {
        cycle.state_ops.push({ type: 'upsert', key: k, value: { acc: e.agg, windowStart: e.start, windowEnd: e.end } })
      }
    }
    return cycle
  }

  /**
   * Session windows: events extend their key's open session within the gap, a later one closes it
   * and opens the next; the clock (the watermark, the newest event time, on event time; else the
   * batch's newest createdAt) closes sessions whose last event is a gap behind it. On event time,
   * events older than the loaded watermark are late and dropped.
   */
  private foldSessions(state: Map<string, any>, ordered: Popped[], partition: string): { cycle: Cycle; watermark: number | undefined } {
    const eventTime = this.o.eventTime === true
    const loadedWm: number = eventTime ? (state.get(WM)?.eventTimeMs ?? -Infinity) : -Infinity
    const prefix = `${this.tag}${SEP}open${SEP}`
    const sessions = new Map<string, { start: number; last: number; agg: Agg | undefined; persisted: boolean; dirty: boolean; closed: boolean }>()
    for (const [k, v] of state) {
      if (k.startsWith(prefix)) sessions.set(k.slice(prefix.length), { start: v.sessionStart, last: v.lastEventTime, agg: v.acc, persisted: true, dirty: false, closed: false })
    }
    const cycle: Cycle = { state_ops: [], emits: [] }
    const emit = (key: string, s: { start: number; last: number; agg: Agg | undefined }) => cycle.emits.push({ partition, key, start: s.start, end: s.last, ...s.agg! })
    let wm = loadedWm
    for (const m of ordered) {
      const { key, v } = m.data
      const ts = eventTime ? m.data.ts : Date.parse(m.createdAt)
      if (ts < loadedWm) continue
      wm = Math.max(wm, ts)
      let s = sessions.get(key)
      if (s && !s.closed && ts > s.last + this.o.sizeMs) {
        emit(key, s)
        s = { start: ts, last: ts, agg: undefined, persisted: s.persisted, dirty: true, closed: false }
      } else if (!s || s.closed) {
        s = { start: ts, last: ts, agg: undefined, persisted: s?.persisted ?? false, dirty: true, closed: false }
      }
      // As Queen's session operator: an event older than the session's last one joins it without moving it.
      s.last = Math.max(s.last, ts)
      s.agg = addTo(s.agg, v)
      s.dirty = true
      sessions.set(key, s)
    }
    this.closeSessions(sessions, wm, emit)
    for (const [key, s] of [...sessions].sort(([a], [b]) => (a < b ? -1 : 1))) {
      if (s.closed) {
        if (s.persisted) cycle.state_ops.push({ type: 'delete', key: prefix + key })
      } else if (s.dirty) {
        cycle.state_ops.push({ type: 'upsert', key: prefix + key, value: { acc: s.agg, sessionStart: s.start, lastEventTime: s.last } })
      }
    }
    if (!eventTime) return { cycle, watermark: undefined }
    if (wm > -Infinity) cycle.state_ops.push({ type: 'upsert', key: WM, value: { eventTimeMs: wm } })
    return { cycle, watermark: wm }
  }

  private closeSessions(
    sessions: Map<string, { start: number; last: number; agg: Agg | undefined; closed: boolean }>,
    clock: number,
    emit: (key: string, s: { start: number; last: number; agg: Agg | undefined }) => void,
  ) {
    for (const [key, s] of [...sessions].sort(([a], [b]) => (a < b ? -1 : 1))) {
      // Strictly behind: an event at exactly last + gap still joins the session, so closing at equality
      // would make a session depend on where a batch happened to end.
      if (!s.closed && s.last + this.o.sizeMs < clock) {
        emit(key, s)
        s.closed = true
      }
    }
  }

  /** The idle flush over every partition this runner has seen; `ripeAt` pins its clock (the final flush). */
  async flush(ripeAt?: number): Promise<void> {
    for (const partitionId of [...this.partitions.keys()]) {
      await this.locked(partitionId, () => this.flushPartition(partitionId, ripeAt)).catch((e: Error) => {
        this.errors.push(`flush: ${e.message}`)
      })
    }
  }

  private async flushPartition(partitionId: string, ripeAt: number | undefined): Promise<void> {
    const partition = this.partitions.get(partitionId)!
    const cycle: Cycle = { state_ops: [], emits: [] }
    if (this.o.kind === 'session') {
      // On event time the clock is the committed watermark (no new events here); else now.
      const clock = ripeAt ?? (this.o.eventTime ? this.watermarks.get(partitionId) : Date.now())
      if (clock === undefined) return
      const loaded = await this.post('/streams/v1/state/get', { query_id: this.queryId, partition_id: partitionId, keys: [] })
      const prefix = `${this.tag}${SEP}open${SEP}`
      const sessions = new Map<string, { start: number; last: number; agg: Agg | undefined; closed: boolean }>()
      for (const r of loaded.rows as { key: string; value: any }[]) {
        if (r.key.startsWith(prefix)) sessions.set(r.key.slice(prefix.length), { start: r.value.sessionStart, last: r.value.lastEventTime, agg: r.value.acc, closed: false })
      }
      this.closeSessions(sessions, clock, (key, s) => {
        cycle.emits.push({ partition, key, start: s.start, end: s.last, ...s.agg! })
        cycle.state_ops.push({ type: 'delete', key: prefix + key })
      })
    } else {
      const ripe = await this.post('/streams/v1/state/get', {
        query_id: this.queryId,
        partition_id: partitionId,
        keys: [],
        key_prefix: this.tag + SEP,
        ripe_at_or_before: ripeAt ?? Date.now(),
      })
      for (const r of ripe.rows as { key: string; value: any }[]) {
        cycle.emits.push({ partition, key: r.key.split(SEP)[2]!, start: r.value.windowStart, end: r.value.windowEnd, ...r.value.acc })
        cycle.state_ops.push({ type: 'delete', key: r.key })
      }
    }
    if (cycle.emits.length === 0) return
    if (await this.commit(partitionId, cycle, null)) this.stats.deferred++
    this.stats.flushes++
  }

  /** Commits a cycle; true when the broker deferred it (a flush that would have raced a cycle). */
  private async commit(partitionId: string, cycle: Cycle, ack: Record<string, unknown> | null): Promise<boolean> {
    const res = await this.post('/streams/v1/cycle', {
      query_id: this.queryId,
      partition_id: partitionId,
      consumer_group: this.group,
      state_ops: cycle.state_ops,
      push_items: cycle.emits.map((e) => ({ queue: this.o.sink, partition: e.partition, payload: e })),
      ack,
      release_lease: true,
    })
    if (res.success !== true) throw new Error(`cycle failed: ${res.error}`)
    return res.deferred === true
  }
}
