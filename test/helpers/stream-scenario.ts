// One seeded exactly-once run of a streams query (issue #34), over any transport: producers push
// keyed events to a few partitions in small multi-item pushes while ProtocolRunners of one query
// process them, every call delayed by latency plus jitter, with some cycles held past a short
// source lease so they arrive after it expired (the batch comes back, or has gone to the other
// runner). Within what docs/streams.md says the guarantee assumes of the client: either one runner,
// which may or may not serialise its own loop and idle flush, or two competing runners that do,
// only the first of them idle-flushing. When the source is drained the runners stop, a final flush
// closes what stays open, and the sink and the state are compared with an offline fold of the
// source as the broker stored it:
// - tumbling and sliding windows run on processing time, so a window the idle flush closed before a
//   late message reached the runner is emitted again with that message alone: the sink is folded
//   per (partition, key, window) before the comparison, and every message counts exactly once;
// - sessions on event time are deterministic: the emitted sessions must equal the offline sessions
//   one for one, and each shard keeps exactly its watermark;
// - sessions on processing time may also be closed early by the idle flush: each key's sessions must
//   cut its messages (in offset order) into consecutive runs, each run's gaps within the session gap
//   and its aggregate exact, so again every message counts exactly once.
import { addTo, ProtocolRunner, windowStarts, type Agg, type Emit, type Send, type SourceEvent, type WindowKind } from './stream-protocol.js'

export interface ScenarioOptions {
  /** The transport, retrying as the SDK does (network errors and 5xx). */
  send: Send
  /** Unique per run: prefixes the query and queue names. */
  name: string
  seed: number
  kind: WindowKind
  /** Sessions: on event time (payload.ts) rather than processing time. */
  eventTime?: boolean
  latencyMs: number
  jitterMs: number
  partitions?: number
  keys?: number
  /** Events per partition. */
  events?: number
  leaseSeconds?: number
  /** Chance that a runner holds a computed cycle past the lease. */
  stallChance?: number
  /** Runners serialise their own loop and flush per partition. */
  serialise: boolean
  /** Competing runners of the query: 1, or 2 (serialising; the second does not idle-flush). */
  runners: 1 | 2
}

export interface ScenarioResult {
  failures: string[]
  stats: { cycles: number; flushes: number; deferred: number; popped: number; errors: number; events: number }
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms))

const KINDS: { kind: WindowKind; eventTime: boolean }[] = [
  { kind: 'tumbling', eventTime: false },
  { kind: 'sliding', eventTime: false },
  { kind: 'session', eventTime: true },
  { kind: 'session', eventTime: false },
]

/**
 * The shape of run `i` of a test's series `step`: every window kind, each with one runner that does
 * not serialise its loop and flush (Queen's older runtime) and with two competing runners that do.
 */
export function variantOf(i: number, step: number) {
  const { kind, eventTime } = KINDS[i % KINDS.length]!
  const two = (Math.floor(i / KINDS.length) + step) % 2 === 0
  const label = `${kind}${kind === 'session' ? (eventTime ? ' on event time' : ' on processing time') : ''}, ${two ? 'two serialising runners' : 'one runner, not serialising'}`
  return { kind, eventTime, runners: (two ? 2 : 1) as 1 | 2, serialise: two, label }
}

export function rng(seed: number): () => number {
  let s = seed >>> 0 || 1
  return () => {
    s = (Math.imul(s, 1103515245) + 12345) >>> 0
    return (s >>> 8) / 0x1000000
  }
}

/** Every call takes latencyMs plus up to jitterMs more, half before the request and half after the answer. */
export function withLatency(send: Send, random: () => number, latencyMs: number, jitterMs: number): Send {
  if (latencyMs === 0 && jitterMs === 0) return send
  return async (method, path, body) => {
    const total = latencyMs + random() * jitterMs
    await sleep(total / 2)
    const res = await send(method, path, body)
    await sleep(total / 2)
    return res
  }
}

const shapeOf = (kind: WindowKind, eventTime: boolean): { sizeMs: number; slideMs?: number; idleFlushMs: number } =>
  kind === 'tumbling' ? { sizeMs: 240, idleFlushMs: 150 }
  : kind === 'sliding' ? { sizeMs: 300, slideMs: 100, idleFlushMs: 150 }
  : eventTime ? { sizeMs: 50, idleFlushMs: 200 }
  : { sizeMs: 150, idleFlushMs: 150 }

const mergeAgg = (a: Agg | undefined, b: Agg): Agg =>
  a ? { count: a.count + b.count, sum: a.sum + b.sum, min: Math.min(a.min, b.min), max: Math.max(a.max, b.max) } : { count: b.count, sum: b.sum, min: b.min, max: b.max }

interface Stored {
  partition: string
  offset: number
  createdAt: string
  data: SourceEvent
}

/**
 * Every frame of the named partitions of a queue, read by offset (POST /api/v1/fetch): no group, no
 * lease, nothing written, so a read retried across a broker kill reads the same again.
 */
async function readLog(send: Send, queue: string, partitions: string[]): Promise<Stored[]> {
  const out: Stored[] = []
  for (const partition of partitions) {
    for (let from = 0; ; ) {
      const res = await send('POST', '/api/v1/fetch', { entries: [{ queue, partition, fromOffset: from, limit: 1000 }] })
      if (res.status !== 200) throw new Error(`fetch of ${queue}/${partition} answered ${res.status}: ${JSON.stringify(res.body)}`)
      const entry = res.body.entries[0]
      if (!entry.frames || entry.frames.length === 0) break
      out.push(...entry.frames.map((f: Omit<Stored, 'partition'>) => ({ ...f, partition })))
      from = entry.nextOffset
    }
  }
  return out
}

export async function runScenario(o: ScenarioOptions): Promise<ScenarioResult> {
  const random = rng(o.seed)
  const eventTime = o.kind === 'session' && o.eventTime === true
  const shape = shapeOf(o.kind, eventTime)
  const partitions = o.partitions ?? 4
  const keys = o.keys ?? 3
  const perPartition = o.events ?? 40
  const lease = o.leaseSeconds ?? 1
  const source = `${o.name}.src`
  const sink = `${o.name}.sink`
  const send = withLatency(o.send, random, o.latencyMs, o.jitterMs)
  const failures: string[] = []

  // A retry budget no run exhausts: a batch whose cycles keep missing the short lease would
  // otherwise have its head frame dead-lettered after retryLimit deliveries, and not counted.
  const configured = await o.send('POST', '/api/v1/configure', { queue: source, options: { leaseTime: lease, retryLimit: 1000 } })
  if (configured.status !== 200) throw new Error(`configure answered ${configured.status}: ${JSON.stringify(configured.body)}`)

  const stallChance = o.stallChance ?? 0.05
  if (o.runners === 2 && !o.serialise) throw new Error('two runners must serialise their own loop and flush (docs/streams.md)')
  const runners = Array.from({ length: o.runners }, () => 0).map(
    (_, i) =>
      new ProtocolRunner({
        send,
        name: o.name,
        source,
        sink,
        kind: o.kind,
        eventTime,
        ...shape,
        idleFlushMs: i === 0 ? shape.idleFlushMs : 0,
        batch: 20,
        serialise: o.serialise,
        stall: () => (random() < stallChance ? lease * 1000 + 300 : 0),
      }),
  )
  for (const r of runners) await r.register()
  for (const r of runners) r.start()

  // Producers: per partition, event times rise with the offset (sessions need no lateness), in
  // pushes of 1 to 4 items (the items of one push share createdAt) a few tens of ms apart.
  const clocks = Array.from({ length: partitions }, () => 0)
  const left = Array.from({ length: partitions }, () => perPartition)
  const seq = Array.from({ length: partitions }, () => 0)
  while (left.some((n) => n > 0)) {
    const p = Math.floor(random() * partitions)
    if (left[p] === 0) continue
    const n = Math.min(left[p]!, 1 + Math.floor(random() * 4))
    left[p]! -= n
    const items = Array.from({ length: n }, () => {
      clocks[p]! += random() < 0.2 ? 60 + Math.floor(random() * 40) : Math.floor(random() * 30)
      const event: SourceEvent = { key: `k${Math.floor(random() * keys)}`, v: 1 + Math.floor(random() * 100), ts: clocks[p]! }
      // A transaction id, so a push retried after a kill swallowed its answer is stored once.
      return { queue: source, partition: `p${p}`, payload: event, transactionId: `p${p}-${seq[p]!++}` }
    })
    const res = await o.send('POST', '/api/v1/push', { items })
    if (res.status !== 201) throw new Error(`push answered ${res.status}: ${JSON.stringify(res.body)}`)
    await sleep(random() * 40)
  }

  // Drained: the group's lag is zero and stays so while nothing is in flight.
  const deadline = Date.now() + 120_000
  for (;;) {
    const list = await o.send('GET', '/streams/v1/queries')
    const lag = (list.body?.queries ?? []).find((q: { name: string }) => q.name === o.name)?.lag
    if (lag === 0) break
    if (Date.now() > deadline) {
      failures.push(`source not drained in 120 s (lag ${lag})`)
      break
    }
    await sleep(100)
  }
  await Promise.all(runners.map((r) => r.stop()))
  for (const r of runners) await r.flush(Number.MAX_SAFE_INTEGER)

  const names = Array.from({ length: partitions }, (_, p) => `p${p}`)
  const stored = await readLog(o.send, source, names)
  // Sink items keep their source partition's name.
  const emitted = (await readLog(o.send, sink, names)).map((m) => m.data as unknown as Emit)
  const queryId = runners[0]!.queryId
  const state = new Map<string, { key: string; value: any }[]>()
  for (const [id, name] of new Map(runners.flatMap((r) => [...r.partitionNames]))) {
    const res = await o.send('POST', '/streams/v1/state/get', { query_id: queryId, partition_id: id, keys: [] })
    state.set(name, res.body.rows)
  }

  if (stored.length !== partitions * perPartition) failures.push(`the source holds ${stored.length} events, ${partitions * perPartition} were pushed`)
  if (eventTime) compareSessions(stored, emitted, state, shape.sizeMs, failures)
  else if (o.kind === 'session') compareSessionRuns(stored, emitted, state, shape.sizeMs, failures)
  else compareWindows(stored, emitted, state, shape.sizeMs, shape.slideMs, failures)

  const errors = runners.flatMap((r) => r.errors)
  return {
    failures,
    stats: {
      cycles: runners.reduce((a, r) => a + r.stats.cycles, 0),
      flushes: runners.reduce((a, r) => a + r.stats.flushes, 0),
      deferred: runners.reduce((a, r) => a + r.stats.deferred, 0),
      popped: runners.reduce((a, r) => a + r.stats.popped, 0),
      errors: errors.length,
      events: stored.length,
    },
  }
}

const describe = (m: Map<string, Agg>) => JSON.stringify([...m].sort(([a], [b]) => (a < b ? -1 : 1)))

function compareWindows(stored: Stored[], emitted: Emit[], state: Map<string, { key: string }[]>, sizeMs: number, slideMs: number | undefined, failures: string[]) {
  const expected = new Map<string, Agg>()
  for (const m of stored) {
    for (const start of windowStarts(Date.parse(m.createdAt), sizeMs, slideMs)) {
      const k = `${m.partition}|${m.data.key}|${start}`
      expected.set(k, addTo(expected.get(k), m.data.v))
    }
  }
  const actual = new Map<string, Agg>()
  for (const e of emitted) {
    if (e.end !== e.start + sizeMs) failures.push(`window ${e.partition}|${e.key}|${e.start} emitted with end ${e.end}`)
    const k = `${e.partition}|${e.key}|${e.start}`
    actual.set(k, mergeAgg(actual.get(k), e))
  }
  for (const [k, agg] of expected) {
    const got = actual.get(k)
    if (JSON.stringify(got) !== JSON.stringify(agg)) failures.push(`window ${k}: sink folds to ${JSON.stringify(got)}, the source to ${JSON.stringify(agg)}`)
  }
  for (const [k, agg] of actual) if (!expected.has(k)) failures.push(`window ${k} emitted (${JSON.stringify(agg)}) but holds no source event`)
  for (const [p, rows] of state) if (rows.length > 0) failures.push(`shard ${p} keeps ${rows.map((r) => r.key.replaceAll('\u001f', '|')).join(', ')} after the final flush`)
  if (failures.length > 0) failures.push(`expected ${describe(expected)}`, `sink ${describe(actual)}`)
}

function compareSessions(stored: Stored[], emitted: Emit[], state: Map<string, { key: string; value: any }[]>, gapMs: number, failures: string[]) {
  const expected: Emit[] = []
  const byPartition = new Map<string, Stored[]>()
  for (const m of stored) byPartition.set(m.partition, [...(byPartition.get(m.partition) ?? []), m])
  const lastTs = new Map<string, number>()
  for (const [partition, messages] of byPartition) {
    const open = new Map<string, Emit>()
    for (const m of messages.sort((a, b) => a.offset - b.offset)) {
      const { key, v, ts } = m.data
      lastTs.set(partition, Math.max(lastTs.get(partition) ?? -Infinity, ts))
      const s = open.get(key)
      if (s && ts <= s.end + gapMs) {
        Object.assign(s, addTo(s, v), { end: Math.max(s.end, ts) })
      } else {
        if (s) expected.push(s)
        open.set(key, { partition, key, start: ts, end: ts, ...addTo(undefined, v) })
      }
    }
    expected.push(...open.values())
  }
  const order = (a: Emit, b: Emit) => a.partition.localeCompare(b.partition) || a.key.localeCompare(b.key) || a.start - b.start || a.end - b.end
  const want = expected.sort(order).map((e) => JSON.stringify(e))
  const got = [...emitted].sort(order).map((e) => JSON.stringify({ partition: e.partition, key: e.key, start: e.start, end: e.end, count: e.count, sum: e.sum, min: e.min, max: e.max }))
  const wantSet = new Map<string, number>()
  for (const w of want) wantSet.set(w, (wantSet.get(w) ?? 0) + 1)
  for (const g of got) {
    const n = wantSet.get(g) ?? 0
    if (n === 0) failures.push(`session emitted but not in the offline fold: ${g}`)
    else wantSet.set(g, n - 1)
  }
  for (const [w, n] of wantSet) if (n > 0) failures.push(`session of the offline fold not emitted: ${w}`)
  for (const [p, rows] of state) {
    const wm = lastTs.get(p)
    const shape = JSON.stringify(rows.map((r) => [r.key, r.value]))
    if (shape !== JSON.stringify([['__wm__', { eventTimeMs: wm }]])) failures.push(`shard ${p} ends as ${shape}, not its watermark ${wm} alone`)
  }
}

/**
 * Processing-time sessions: the idle flush may close a session before a message within its gap
 * reached the runner (that message then opens the next session), so sessions are not unique; but
 * each key's sessions, ordered, must take its messages in offset order as consecutive runs whose
 * gaps stay within the session gap and whose aggregates are exact. Sessions that share start and end
 * are checked together (their order among themselves is not known).
 */
function compareSessionRuns(stored: Stored[], emitted: Emit[], state: Map<string, { key: string }[]>, gapMs: number, failures: string[]) {
  const events = new Map<string, Stored[]>()
  for (const m of stored) events.set(`${m.partition}|${m.data.key}`, [...(events.get(`${m.partition}|${m.data.key}`) ?? []), m])
  const sessions = new Map<string, Emit[]>()
  for (const e of emitted) sessions.set(`${e.partition}|${e.key}`, [...(sessions.get(`${e.partition}|${e.key}`) ?? []), e])
  for (const k of sessions.keys()) if (!events.has(k)) failures.push(`sessions emitted for ${k}, which has no message`)
  for (const [k, list] of events) {
    const ts = list.sort((a, b) => a.offset - b.offset).map((m) => ({ t: Date.parse(m.createdAt), v: m.data.v }))
    const runs = (sessions.get(k) ?? []).sort((a, b) => a.start - b.start || a.end - b.end)
    let at = 0
    for (let i = 0; i < runs.length; ) {
      let j = i
      let merged: Agg | undefined
      while (j < runs.length && runs[j]!.start === runs[i]!.start && runs[j]!.end === runs[i]!.end) merged = mergeAgg(merged, runs[j++]!)
      const run = ts.slice(at, at + merged!.count)
      const agg = run.reduce<Agg | undefined>((a, e) => addTo(a, e.v), undefined)
      const gaps = run.every((e, n) => n === 0 || e.t - run[n - 1]!.t <= gapMs)
      if (run.length !== merged!.count || run[0]!.t !== runs[i]!.start || run[run.length - 1]!.t !== runs[i]!.end || !gaps || JSON.stringify(agg) !== JSON.stringify(merged)) {
        failures.push(`${k}: sessions ${JSON.stringify(runs.slice(i, j))} do not take messages ${at}.. (${JSON.stringify(run.slice(0, 6))}) as one run`)
        break
      }
      at += run.length
      i = j
    }
    if (at !== ts.length) failures.push(`${k}: sessions take ${at} of its ${ts.length} messages`)
  }
  for (const [p, rows] of state) if (rows.length > 0) failures.push(`shard ${p} keeps ${rows.map((r) => r.key.replaceAll('\u001f', '|')).join(', ')} after the final flush`)
}
