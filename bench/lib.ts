// The harness's small tools: a keep-alive HTTP client, closed- and open-loop drivers with latency
// percentiles, and the profile taken around every workload (CPU of the broker, of PostgreSQL and of
// this process; wait events; WAL; statements per procedure from pg_stat_statements).
import http from 'node:http'
import { readFileSync, readdirSync } from 'node:fs'
import { performance } from 'node:perf_hooks'
import pg from 'pg'

export const sleep = (ms: number) => new Promise<void>((done) => setTimeout(done, ms))

// ---------------------------------------------------------------- HTTP

export interface HttpClient {
  request(method: string, path: string, body?: unknown): Promise<{ status: number; body: any }>
  /** The answer's bytes as they came (still content-encoded), with the request's extra headers. */
  requestBytes(method: string, path: string, headers: Record<string, string>): Promise<{ status: number; headers: http.IncomingHttpHeaders; bytes: Buffer }>
  /** Requests sent, per route label given by the caller (the round-trip denominator). */
  counts: Map<string, number>
  close(): void
}

/** One keep-alive agent for the whole run: connection setup must not be what we measure. */
export function httpClient(baseUrl: string): HttpClient {
  const url = new URL(baseUrl)
  const agent = new http.Agent({ keepAlive: true, maxSockets: 512, keepAliveMsecs: 10_000 })
  const counts = new Map<string, number>()
  const label = (method: string, path: string) => `${method} ${path.split('?')[0]!.replace(/\/queue\/[^/]+/, '/queue/:q').replace(/\/queues\/[^/]+/, '/queues/:q')}`
  const requestRaw = (method: string, path: string, payload: string | undefined, headers: Record<string, string>) => {
    const key = label(method, path)
    counts.set(key, (counts.get(key) ?? 0) + 1)
    return new Promise<{ status: number; headers: http.IncomingHttpHeaders; bytes: Buffer }>((resolve, reject) => {
      const req = http.request({ host: url.hostname, port: url.port, path, method, agent, headers }, (res) => {
        const chunks: Buffer[] = []
        res.on('data', (c: Buffer) => chunks.push(c))
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, bytes: Buffer.concat(chunks) }))
        res.on('error', reject)
      })
      req.on('error', reject)
      req.end(payload)
    })
  }
  return {
    counts,
    requestBytes: (method, path, headers) => requestRaw(method, path, undefined, headers),
    async request(method, path, body) {
      const payload = body === undefined ? undefined : JSON.stringify(body)
      const headers: Record<string, string> = payload === undefined ? {} : { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(payload)) }
      const { status, bytes } = await requestRaw(method, path, payload, headers)
      const text = bytes.toString('utf8')
      let parsed: unknown = null
      if (text) {
        try {
          parsed = JSON.parse(text)
        } catch {
          parsed = text
        }
      }
      return { status, body: parsed }
    },
    close: () => agent.destroy(),
  }
}

// ---------------------------------------------------------------- load

export interface LoopResult {
  /** Seconds of the measured window (shorter than asked when the work ran out). */
  seconds: number
  ops: number
  items: number
  itemsPerSec: number
  opsPerSec: number
  p50: number | null
  p99: number | null
  errors: number
  drained: boolean
  /** Items moved over the whole loop, warm-up included: the denominator for per-message costs. */
  totalItems: number
}

export function percentile(sorted: ArrayLike<number>, p: number): number | null {
  if (sorted.length === 0) return null
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))
  return Math.round(sorted[i]! * 100) / 100
}

/**
 * `concurrency` workers each run `op` back to back. Only operations that finish inside the
 * measured window (after `warmupMs`, for `durationMs`) count. `op` returns the items it moved, or
 * 'empty' when there was nothing to do; `isDone()` ends the window early (a drained backlog), and
 * the throughput is then taken over the time actually spent.
 */
export async function closedLoop(options: {
  concurrency: number
  warmupMs: number
  durationMs: number
  op: (worker: number) => Promise<number | 'empty'>
  isDone?: () => boolean
}): Promise<LoopResult> {
  const start = performance.now()
  const from = start + options.warmupMs
  let to = from + options.durationMs
  const latencies: number[] = []
  let ops = 0
  let items = 0
  let errors = 0
  let drained = false
  let lastItemAt = from
  let totalItems = 0
  const worker = async (w: number) => {
    while (performance.now() < to) {
      if (options.isDone?.()) {
        if (!drained) {
          drained = true
          to = Math.max(from, performance.now())
        }
        break
      }
      const t0 = performance.now()
      let n: number | 'empty'
      try {
        n = await options.op(w)
      } catch (error) {
        errors++
        if (errors <= 3) console.error(`  op failed: ${error instanceof Error ? error.message : String(error)}`)
        if (errors > 1000) throw error
        await sleep(10)
        continue
      }
      const t1 = performance.now()
      if (n !== 'empty') totalItems += n
      if (t0 >= from && t1 <= to) {
        ops++
        if (n !== 'empty') {
          items += n
          latencies.push(t1 - t0)
          if (n > 0) lastItemAt = t1
        }
      }
      if (n === 'empty') await sleep(2)
    }
  }
  await Promise.all(Array.from({ length: options.concurrency }, (_, w) => worker(w)))
  const end = drained ? Math.max(lastItemAt, from + 1) : to
  const seconds = (end - from) / 1000
  latencies.sort((a, b) => a - b)
  return {
    seconds: round(seconds, 2),
    ops,
    items,
    itemsPerSec: Math.round(items / seconds),
    opsPerSec: Math.round(ops / seconds),
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    errors,
    drained,
    totalItems,
  }
}

export const round = (n: number, digits = 1) => Math.round(n * 10 ** digits) / 10 ** digits

/** The middle value (the mean of the two middle ones for an even count); NaN when empty. */
export const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b)
  const m = s.length >> 1
  return s.length === 0 ? NaN : s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2
}

/** CPU time a process has run, in ns (/proc/<pid>/schedstat): unlike wall time, it does not grow
 * while the process waits for a core that another tenant of the machine holds. */
export const schedCpuNs = (pid: number) => Number(readFileSync(`/proc/${pid}/schedstat`, 'utf8').split(' ')[0])

// ---------------------------------------------------------------- profile

const TICK = 100 // USER_HZ on Linux

function procTicks(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    return Number(fields[11]) + Number(fields[12])
  } catch {
    return 0
  }
}

function parentOf(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1])
  } catch {
    return -1
  }
}

/** The postmaster and its children (backends, walwriter, checkpointer, autovacuum…). */
function pgTree(postmaster: number): number[] {
  const pids = [postmaster]
  for (const entry of readdirSync('/proc')) {
    const pid = Number(entry)
    if (Number.isInteger(pid) && parentOf(pid) === postmaster) pids.push(pid)
  }
  return pids
}

function machineTicks(): { busy: number; total: number } {
  const cpu = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.split(/\s+/).slice(1).map(Number)
  const total = cpu.reduce((a, b) => a + b, 0)
  const idle = (cpu[3] ?? 0) + (cpu[4] ?? 0)
  return { busy: total - idle, total }
}

export interface ProfileTargets {
  brokerPid?: number
  postmasterPid?: number
  /** A connection of its own for the samplers, so they never queue behind the workload. */
  admin: pg.Client
  statements: boolean
}

export interface Profile {
  seconds: number
  /** Percent of one core, over the whole workload (warm-up included). 200 = both cores. */
  cpu: { broker: number | null; postgres: number | null; harness: number; machine: number }
  /** Share of sampled active backends per wait event; CPU means running, not waiting. */
  waits: Record<string, number>
  wal: { bytes: number; syncs: number; records: number } | null
  /** Top-level statements per procedure (or statement kind) in the window. */
  statements: Record<string, number> | null
}

function classify(query: string): string {
  const proc = /queen\.([a-z_0-9]+)\s*\(/.exec(query)
  if (proc) return proc[1]!
  if (/pg_stat_activity|pg_stat_statements|pg_stat_wal|pg_stat_reset/.test(query)) return 'harness'
  if (/bench_raw\./.test(query)) return 'raw'
  if (/pgboss\./.test(query)) return 'pgboss'
  return query.replace(/\s+/g, ' ').slice(0, 60)
}

/** Top-level statements only: with track = all, nested ones are not round trips. */
export async function readStatements(admin: pg.Client): Promise<Record<string, number>> {
  const { rows } = await admin.query<{ query: string; calls: string }>(
    `select query, calls from pg_stat_statements where dbid = (select oid from pg_database where datname = current_database()) and toplevel`,
  )
  const out: Record<string, number> = {}
  for (const r of rows) {
    const k = classify(r.query)
    out[k] = (out[k] ?? 0) + Number(r.calls)
  }
  delete out.harness
  return out
}

export async function resetStatements(admin: pg.Client): Promise<void> {
  await admin.query('select pg_stat_statements_reset()')
}

async function walSnapshot(admin: pg.Client) {
  try {
    const { rows } = await admin.query(`select wal_records::bigint as records, wal_bytes::bigint as bytes, wal_sync::bigint as syncs from pg_stat_wal`)
    return { records: Number(rows[0].records), bytes: Number(rows[0].bytes), syncs: Number(rows[0].syncs) }
  } catch {
    return null
  }
}

/** Runs `fn` with CPU, wait-event, WAL and statement accounting around it. */
export async function profiled<T>(targets: ProfileTargets, fn: () => Promise<T>): Promise<{ result: T; profile: Profile }> {
  const { admin } = targets
  if (targets.statements) await resetStatements(admin)
  const wal0 = await walSnapshot(admin)
  const pgPids = targets.postmasterPid ? pgTree(targets.postmasterPid) : []
  const pg0 = new Map(pgPids.map((p) => [p, procTicks(p)]))
  const broker0 = targets.brokerPid ? procTicks(targets.brokerPid) : 0
  const self0 = process.cpuUsage()
  const m0 = machineTicks()
  const t0 = performance.now()

  const waits = new Map<string, number>()
  let samples = 0
  let sampling = true
  const sampler = (async () => {
    while (sampling) {
      try {
        const { rows } = await admin.query<{ w: string; n: number }>(
          `select coalesce(wait_event_type || ':' || wait_event, 'CPU') as w, count(*)::int as n
             from pg_stat_activity
            where state = 'active' and backend_type = 'client backend' and pid <> pg_backend_pid()
              and datid = (select oid from pg_database where datname = current_database())
            group by 1`,
        )
        for (const r of rows) {
          waits.set(r.w, (waits.get(r.w) ?? 0) + r.n)
          samples += r.n
        }
      } catch {
        // a sample lost is a sample lost
      }
      await sleep(50)
    }
  })()

  const result = await fn()

  const seconds = (performance.now() - t0) / 1000
  sampling = false
  await sampler
  const self = process.cpuUsage(self0)
  const m1 = machineTicks()
  let pgTicks = 0
  if (targets.postmasterPid) {
    for (const p of pgTree(targets.postmasterPid)) pgTicks += procTicks(p) - (pg0.get(p) ?? 0)
  }
  const wal1 = await walSnapshot(admin)
  const statements = targets.statements ? await readStatements(admin) : null
  const pct = (ticks: number) => round((ticks / TICK / seconds) * 100, 0)
  const waitShare: Record<string, number> = {}
  for (const [k, v] of [...waits].sort((a, b) => b[1] - a[1])) waitShare[k] = round((v / Math.max(1, samples)) * 100, 0)
  return {
    result,
    profile: {
      seconds: round(seconds, 1),
      cpu: {
        broker: targets.brokerPid ? pct(procTicks(targets.brokerPid) - broker0) : null,
        postgres: targets.postmasterPid ? pct(pgTicks) : null,
        harness: round(((self.user + self.system) / 1e6 / seconds) * 100, 0),
        machine: round(((m1.busy - m0.busy) / Math.max(1, m1.total - m0.total)) * 200, 0),
      },
      waits: waitShare,
      wal: wal0 && wal1 ? { bytes: wal1.bytes - wal0.bytes, syncs: wal1.syncs - wal0.syncs, records: wal1.records - wal0.records } : null,
      statements,
    },
  }
}

export interface SqlProfile {
  /** Execution time of the top-level procedure calls, ms. */
  topLevelMs: number
  topLevelCalls: number
  /** Statements inside the procedures, most expensive first; ms includes what they call. */
  nested: { statement: string; calls: number; ms: number; share: number }[]
}

/**
 * Runs `fn` with pg_stat_statements tracking nested statements too (track = all, through ALTER
 * SYSTEM and a reload, undone afterwards), and returns where inside the procedures the time went.
 * Kept out of the measured workloads: nested tracking has a cost of its own.
 */
export async function sqlProfiled(admin: pg.Client, fn: () => Promise<unknown>): Promise<SqlProfile | null> {
  try {
    await admin.query(`alter system set pg_stat_statements.track = 'all'`)
    await admin.query('select pg_reload_conf()')
  } catch {
    return null
  }
  try {
    await sleep(300)
    await resetStatements(admin)
    await fn()
    const { rows } = await admin.query<{ toplevel: boolean; query: string; calls: string; ms: number }>(
      `select toplevel, query, calls, total_exec_time as ms from pg_stat_statements
        where dbid = (select oid from pg_database where datname = current_database()) order by total_exec_time desc`,
    )
    const top = rows.filter((r) => r.toplevel && /queen\./.test(r.query))
    const topLevelMs = top.reduce((a, r) => a + r.ms, 0)
    const nested = rows
      .filter((r) => !r.toplevel && !/pg_stat/.test(r.query))
      .slice(0, 8)
      .map((r) => ({ statement: r.query.replace(/\s+/g, ' ').trim().slice(0, 150), calls: Number(r.calls), ms: round(r.ms, 0), share: round((r.ms / Math.max(1, topLevelMs)) * 100, 0) }))
    return { topLevelMs: round(topLevelMs, 0), topLevelCalls: top.reduce((a, r) => a + Number(r.calls), 0), nested }
  } finally {
    await admin.query(`alter system reset pg_stat_statements.track`)
    await admin.query('select pg_reload_conf()')
    await sleep(300)
  }
}
