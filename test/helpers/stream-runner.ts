// A client-side streams runner written for the tests (no Queen streams runtime is on the registry):
// it does what the SDK's Runner does over /streams/v1/* — register, pop with group
// streams.<name> and partitions=4, group by partitionId and sort by (createdAt, id), load the
// shard's state (keys: []), fold a tumbling event-time window per key into it, emit the windows the
// watermark closed to a sink queue, and commit state ops + sink pushes + the ack of the batch's last
// message with `count` in one cycle; idle flushes read ripe windows by key_prefix and
// ripe_at_or_before and commit ack:null cycles. `replays` sends every cycle that many extra times,
// as a client whose answers were lost would.

export type Send = (method: string, path: string, body?: unknown) => Promise<{ status: number; body: any }>

export interface Event {
  key: string
  ts: number
}

export interface WindowRow {
  key: string
  windowStart: number
  windowEnd: number
  count: number
}

const TAG = 'tumble'
const SEP = '\u001f'
const WM = '__wm__'

export interface RunnerOptions {
  send: Send
  name: string
  source: string
  sink: string
  windowMs: number
  replays?: number
  /**
   * Set: a failed cycle is reported here and the loop goes on (the SDK's Runner logs it and pops
   * again; the rolled-back batch comes back at lease expiry). Unset: it throws.
   */
  onCycleError?: (error: Error) => void
}

export class TumblingCounter {
  queryId = ''
  cycles = 0
  readonly partitions = new Map<string, string>()

  constructor(private readonly o: RunnerOptions) {}

  private async post(path: string, body: unknown) {
    const res = await this.o.send('POST', path, body)
    if (res.status !== 200) throw Object.assign(new Error(`${path} answered ${res.status}: ${JSON.stringify(res.body)}`), { status: res.status })
    return res.body
  }

  async start(): Promise<void> {
    const reg = await this.post('/streams/v1/queries', { name: this.o.name, source_queue: this.o.source, sink_queue: this.o.sink, config_hash: `tumble:${this.o.windowMs}`, reset: false })
    this.queryId = reg.query_id
  }

  /** One pop and its cycles; false when the pop found nothing. */
  async step(): Promise<boolean> {
    const qs = new URLSearchParams({ batch: '200', consumerGroup: `streams.${this.o.name}`, partitions: '4', wait: 'false', subscriptionMode: 'all' })
    const popped = await this.o.send('GET', `/api/v1/pop/queue/${encodeURIComponent(this.o.source)}?${qs}`)
    if (popped.status === 204) return false
    if (popped.status !== 200) throw new Error(`pop answered ${popped.status}: ${JSON.stringify(popped.body)}`)
    const groups = new Map<string, any[]>()
    for (const m of popped.body.messages) groups.set(m.partitionId, [...(groups.get(m.partitionId) ?? []), m])
    for (const [partitionId, messages] of groups) {
      messages.sort((a, b) => Date.parse(a.createdAt) - Date.parse(b.createdAt) || String(a.id).localeCompare(String(b.id)))
      this.partitions.set(partitionId, messages[0].partition)
      try {
        await this.cycleFor(partitionId, messages)
      } catch (error) {
        if (!this.o.onCycleError) throw error
        this.o.onCycleError(error as Error)
      }
    }
    return true
  }

  private async cycleFor(partitionId: string, messages: any[]): Promise<void> {
    const loaded = await this.post('/streams/v1/state/get', { query_id: this.queryId, partition_id: partitionId, keys: [] })
    const state = new Map<string, any>(loaded.rows.map((r: { key: string; value: unknown }) => [r.key, r.value]))
    // As the SDK does: late events are judged against the watermark loaded with the state, and the
    // watermark then moves to the batch's newest event time.
    const loadedWm: number = state.get(WM)?.eventTimeMs ?? -Infinity
    let wm = loadedWm
    const touched = new Set<string>()
    for (const m of messages) {
      const e = m.data as Event
      if (e.ts < loadedWm) continue // late: the SDK's 'drop' policy (never happens with ordered event times)
      const start = Math.floor(e.ts / this.o.windowMs) * this.o.windowMs
      const k = `${TAG}${SEP}${e.key}${SEP}${start}`
      const row = state.get(k) ?? { key: e.key, windowStart: start, windowEnd: start + this.o.windowMs, count: 0 }
      row.count += 1
      state.set(k, row)
      touched.add(k)
      wm = Math.max(wm, e.ts)
    }
    const stateOps: unknown[] = []
    const pushItems: unknown[] = []
    for (const [k, row] of [...state].sort(([a], [b]) => (a < b ? -1 : 1))) {
      if (!k.startsWith(TAG + SEP)) continue
      if (row.windowEnd <= wm) {
        pushItems.push({ queue: this.o.sink, partition: this.partitions.get(partitionId), payload: row })
        stateOps.push({ type: 'delete', key: k })
      } else if (touched.has(k)) stateOps.push({ type: 'upsert', key: k, value: row })
    }
    stateOps.push({ type: 'upsert', key: WM, value: { eventTimeMs: wm } })
    const last = messages[messages.length - 1]
    await this.commit({
      query_id: this.queryId,
      partition_id: partitionId,
      consumer_group: `streams.${this.o.name}`,
      state_ops: stateOps,
      push_items: pushItems,
      ack: { transactionId: last.transactionId, leaseId: last.leaseId, status: 'completed', count: messages.length },
    })
  }

  /** The idle flush: every window ripe at `ripeAt` on every partition seen, in ack:null cycles. */
  async flush(ripeAt: number): Promise<void> {
    for (const [partitionId, partition] of this.partitions) {
      const ripe = await this.post('/streams/v1/state/get', { query_id: this.queryId, partition_id: partitionId, keys: [], key_prefix: TAG + SEP, ripe_at_or_before: ripeAt })
      if (ripe.rows.length === 0) continue
      await this.commit({
        query_id: this.queryId,
        partition_id: partitionId,
        consumer_group: `streams.${this.o.name}`,
        state_ops: ripe.rows.map((r: { key: string }) => ({ type: 'delete', key: r.key })),
        push_items: ripe.rows.map((r: { value: unknown }) => ({ queue: this.o.sink, partition, payload: r.value })),
        ack: null,
      })
    }
  }

  private async commit(body: Record<string, unknown>): Promise<void> {
    for (let i = 0; i <= (this.o.replays ?? 0); i++) {
      const res = await this.post('/streams/v1/cycle', body)
      if (res.success !== true) throw Object.assign(new Error(`cycle failed: ${res.error}`), { code: 'STREAMS_CYCLE_FAILED' })
    }
    this.cycles++
  }

  /** Runs until the source is drained, then flushes every window. */
  async drain(): Promise<void> {
    while (await this.step());
    await this.flush(Number.MAX_SAFE_INTEGER)
  }
}

/** The windows a tumbling count over `events` must produce, computed offline. */
export function offlineWindows(events: Event[], windowMs: number): WindowRow[] {
  const rows = new Map<string, WindowRow>()
  for (const e of events) {
    const start = Math.floor(e.ts / windowMs) * windowMs
    const k = `${e.key}|${start}`
    const row = rows.get(k) ?? { key: e.key, windowStart: start, windowEnd: start + windowMs, count: 0 }
    row.count += 1
    rows.set(k, row)
  }
  return sortWindows([...rows.values()])
}

export const sortWindows = (rows: WindowRow[]) => [...rows].sort((a, b) => a.key.localeCompare(b.key) || a.windowStart - b.windowStart)
