// Process-scope metrics (GET /metrics and /metrics/prometheus, docs/status.md): counters this process (on Workers, this isolate) has seen
// since createApp built it. One object per app, set on every request's context, so two apps in one
// test process never mix their numbers. Only numbers live here, never a socket or a pool: workerd
// ties sockets to the request that opened them. The cluster series are the database's (one
// procedure call per scrape, cached here for CLUSTER_TTL_MS).
import type { PoolStats } from './db/database.js'
import { uuidv7 } from './ids.js'
import { ACK_STATUSES } from './messages/ack-statuses.js'

const KNOWN_ACK_STATUSES: ReadonlySet<string> = new Set(ACK_STATUSES)

/** Prometheus buckets of queen_http_request_duration_seconds (Prometheus's default buckets plus 30 s, the longest long poll). */
export const DURATION_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30] as const
export const CLUSTER_TTL_MS = 5000
const RATE_WINDOW_S = 60

/** Counts per second over the last minute, in a ring of 60 one-second slots. */
class Rate {
  private readonly counts = new Array<number>(RATE_WINDOW_S).fill(0)
  private readonly seconds = new Array<number>(RATE_WINDOW_S).fill(-1)

  add(n: number, nowMs: number): void {
    const second = Math.floor(nowMs / 1000)
    const slot = second % RATE_WINDOW_S
    if (this.seconds[slot] !== second) {
      this.seconds[slot] = second
      this.counts[slot] = 0
    }
    this.counts[slot]! += n
  }

  perSecond(nowMs: number): number {
    const second = Math.floor(nowMs / 1000)
    let sum = 0
    for (let i = 0; i < RATE_WINDOW_S; i++) if (this.seconds[i]! > second - RATE_WINDOW_S) sum += this.counts[i]!
    return Math.round((sum / RATE_WINDOW_S) * 1000) / 1000
  }
}

interface Histogram {
  buckets: number[]
  sum: number
  count: number
}

/** An ack item as the metrics see it: the status it asked for and what became of it. */
export interface AckObservation {
  status: string
  success: boolean
  dlq: boolean
}

export interface ProcessMetrics {
  readonly instance: string
  readonly startedAtMs: number
  request(method: string, route: string, status: number, seconds: number): void
  pushed(statuses: readonly string[]): void
  popped(messages: number): void
  acked(items: readonly AckObservation[]): void
  /** Ephemeral traffic (docs/ephemeral.md): messages pushed, messages delivered, ack verdicts. */
  ephemeral(event: { pushed?: number; popped?: number; outcomes?: readonly string[] }): void
  /** +1 when a long poll starts waiting, −1 when it stops. */
  longPoll(delta: 1 | -1): void
  readonly longPollsWaiting: number
  /** The GET /metrics object. */
  json(pool: PoolStats | null): Record<string, unknown>
  /** The process-scope lines of GET /metrics/prometheus, without the database series. */
  prometheusLines(pool: PoolStats | null): string[]
  /** The cluster answer cached for CLUSTER_TTL_MS per key (database and per-queue scope); compute runs on a miss. */
  cluster<T>(key: string, compute: () => Promise<T>): Promise<T>
}

interface Runtime {
  memory(): Record<string, number> | null
  cpu(): { user: number; system: number } | null
}

// Node's process object, reached through globalThis so the Worker bundle imports nothing of Node;
// under workerd's nodejs_compat it exists but measures nothing real, hence the runtime switch.
function runtimeProbe(runtime: 'node' | 'workers'): Runtime {
  const proc = (globalThis as { process?: NodeJS.Process }).process
  if (runtime !== 'node' || !proc?.memoryUsage || !proc.cpuUsage) return { memory: () => null, cpu: () => null }
  return {
    memory: () => {
      const m = proc.memoryUsage()
      return { rss: m.rss, heapTotal: m.heapTotal, heapUsed: m.heapUsed, external: m.external, arrayBuffers: m.arrayBuffers }
    },
    cpu: () => proc.cpuUsage(),
  }
}

/** A label value in the exposition format: backslash, double quote and newline escaped. */
export const label = (value: string) => value.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n')

export function createProcessMetrics(runtime: 'node' | 'workers', now: () => number = Date.now): ProcessMetrics {
  const probe = runtimeProbe(runtime)
  const startedAtMs = now()
  const instance = uuidv7(startedAtMs)
  const requests = new Rate()
  const messages = new Rate()
  let requestTotal = 0
  let messageTotal = 0
  const counters = { pushedMessages: 0, duplicateMessages: 0, poppedMessages: 0, emptyPops: 0, messagePops: 0, acks: 0, failedAcks: 0, deadLettered: 0 }
  const httpTotals = new Map<string, number>()
  const durations = new Map<string, Histogram>()
  const ackTotals = new Map<string, number>()
  const ephemeral = { pushed: 0, popped: 0, pops: 0 }
  const ephemeralAcks = new Map<string, number>()
  let waiting = 0
  const clusterCache = new Map<string, { at: number; value: unknown }>()

  return {
    instance,
    startedAtMs,
    request(method, route, status, seconds) {
      requestTotal++
      requests.add(1, now())
      const key = `${method}\u0000${route}\u0000${status}`
      httpTotals.set(key, (httpTotals.get(key) ?? 0) + 1)
      let h = durations.get(route)
      if (!h) durations.set(route, (h = { buckets: DURATION_BUCKETS.map(() => 0), sum: 0, count: 0 }))
      DURATION_BUCKETS.forEach((le, i) => {
        if (seconds <= le) h!.buckets[i]!++
      })
      h.sum += seconds
      h.count++
    },
    pushed(statuses) {
      const queued = statuses.filter((s) => s === 'queued').length
      counters.pushedMessages += queued
      counters.duplicateMessages += statuses.length - queued
      messageTotal += queued
      messages.add(queued, now())
    },
    popped(n) {
      if (n > 0) {
        counters.messagePops++
        counters.poppedMessages += n
      } else counters.emptyPops++
    },
    acked(items) {
      for (const item of items) {
        counters.acks++
        // Queen's failedAcks: negative acknowledgements (status failed); errored items show in
        // queen_acks_total{outcome="error"}.
        if (item.status === 'failed') counters.failedAcks++
        if (item.dlq) counters.deadLettered++
        // A client chooses the status text: counted under its own name only when the engine knows
        // it, else as `invalid`, so the series (and this map) cannot grow with what clients send.
        const status = KNOWN_ACK_STATUSES.has(item.status) ? item.status : 'invalid'
        const key = `${status}\u0000${item.success ? 'ok' : 'error'}`
        ackTotals.set(key, (ackTotals.get(key) ?? 0) + 1)
      }
    },
    ephemeral(event) {
      ephemeral.pushed += event.pushed ?? 0
      if (event.popped !== undefined) {
        ephemeral.pops++
        ephemeral.popped += event.popped
      }
      for (const outcome of event.outcomes ?? []) ephemeralAcks.set(outcome, (ephemeralAcks.get(outcome) ?? 0) + 1)
    },
    longPoll(delta) {
      waiting = Math.max(0, waiting + delta)
    },
    get longPollsWaiting() {
      return waiting
    },
    json(pool) {
      const at = now()
      const { messagePops: _, ...visible } = counters
      return {
        uptime: Math.round((at - startedAtMs) / 10) / 100,
        instance,
        requests: { total: requestTotal, rate: requests.perSecond(at) },
        messages: { total: messageTotal, rate: messages.perSecond(at) },
        counters: visible,
        database: pool ? { poolSize: pool.total, idleConnections: pool.idle, waitingRequests: pool.waiting } : { poolSize: null, idleConnections: null, waitingRequests: null },
        memory: probe.memory() ?? { rss: null, heapTotal: null, heapUsed: null, external: null, arrayBuffers: null },
        cpu: probe.cpu() ?? { user: null, system: null },
      }
    },
    prometheusLines(pool) {
      const out: string[] = []
      const family = (name: string, type: string, help: string) => out.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`)

      family('queen_http_requests_total', 'counter', 'HTTP requests by method, registered route pattern and status.')
      for (const [key, n] of httpTotals) {
        const [method, route, status] = key.split('\u0000')
        out.push(`queen_http_requests_total{method="${label(method!)}",route="${label(route!)}",status="${status}"} ${n}`)
      }
      family('queen_http_request_duration_seconds', 'histogram', 'HTTP request duration by registered route pattern.')
      for (const [route, h] of durations) {
        const r = label(route)
        DURATION_BUCKETS.forEach((le, i) => out.push(`queen_http_request_duration_seconds_bucket{route="${r}",le="${le}"} ${h.buckets[i]}`))
        out.push(`queen_http_request_duration_seconds_bucket{route="${r}",le="+Inf"} ${h.count}`)
        out.push(`queen_http_request_duration_seconds_sum{route="${r}"} ${h.sum}`)
        out.push(`queen_http_request_duration_seconds_count{route="${r}"} ${h.count}`)
      }
      family('queen_push_messages_total', 'counter', 'Pushed items by result.')
      out.push(`queen_push_messages_total{result="queued"} ${counters.pushedMessages}`)
      out.push(`queen_push_messages_total{result="duplicate"} ${counters.duplicateMessages}`)
      family('queen_pop_requests_total', 'counter', 'Pop requests by result.')
      out.push(`queen_pop_requests_total{result="messages"} ${counters.messagePops}`)
      out.push(`queen_pop_requests_total{result="empty"} ${counters.emptyPops}`)
      family('queen_popped_messages_total', 'counter', 'Messages delivered by pops.')
      out.push(`queen_popped_messages_total ${counters.poppedMessages}`)
      family('queen_acks_total', 'counter', 'Ack items by requested status and outcome.')
      for (const [key, n] of ackTotals) {
        const [status, outcome] = key.split('\u0000')
        out.push(`queen_acks_total{status="${label(status!)}",outcome="${outcome}"} ${n}`)
      }
      family('queen_dead_lettered_total', 'counter', 'Ack items (transactions included) that wrote a DLQ row.')
      out.push(`queen_dead_lettered_total ${counters.deadLettered}`)
      family('queen_ephemeral_pushed_messages_total', 'counter', 'Messages pushed to ephemeral queues.')
      out.push(`queen_ephemeral_pushed_messages_total ${ephemeral.pushed}`)
      family('queen_ephemeral_pop_requests_total', 'counter', 'Ephemeral pop requests answered.')
      out.push(`queen_ephemeral_pop_requests_total ${ephemeral.pops}`)
      family('queen_ephemeral_popped_messages_total', 'counter', 'Messages delivered by ephemeral pops.')
      out.push(`queen_ephemeral_popped_messages_total ${ephemeral.popped}`)
      family('queen_ephemeral_acks_total', 'counter', 'Ephemeral ack items by verdict.')
      for (const [outcome, n] of ephemeralAcks) out.push(`queen_ephemeral_acks_total{outcome="${label(outcome)}"} ${n}`)
      family('queen_long_polls_waiting', 'gauge', 'Pops of this process waiting for messages.')
      out.push(`queen_long_polls_waiting ${waiting}`)
      if (pool) {
        family('queen_db_pool_connections', 'gauge', 'Connections of this process pool by state.')
        out.push(`queen_db_pool_connections{state="total"} ${pool.total}`)
        out.push(`queen_db_pool_connections{state="idle"} ${pool.idle}`)
        out.push(`queen_db_pool_connections{state="waiting"} ${pool.waiting}`)
      }
      family('queen_process_start_time_seconds', 'gauge', 'Start of this process (isolate) in Unix seconds.')
      out.push(`queen_process_start_time_seconds ${startedAtMs / 1000}`)
      return out
    },
    async cluster<T>(key: string, compute: () => Promise<T>): Promise<T> {
      const hit = clusterCache.get(key)
      if (hit && now() - hit.at < CLUSTER_TTL_MS) return hit.value as T
      // Failures are not cached: the next scrape tries the database again.
      const value = await compute()
      clusterCache.set(key, { at: now(), value })
      return value
    },
  }
}
