// One point of the cell bench: a fresh database and a fresh broker, the tenants' queues configured
// and their partitions warmed, then `durationMs` of open-loop load at one offered rate and a drain,
// with CPU per process, PostgreSQL's commits and the requests sent measured around it.
import { loadavg } from 'node:os'
import { cpuProbeMs } from './cpu-probe.js'
import { performance } from 'node:perf_hooks'
import { percentile, round, sleep } from './lib.js'
import { InflightGate, Ledger, type LedgerSummary } from './cell-ledger.js'
import { CellHttp, type RouteKind, runPacer, startConsumers, tenantName, warmLoad, warmPartitions, zeroCalls, type CallCounts, type CellShape } from './cell-load.js'
import { TICKS_PER_SECOND, machineTicks, postgresTicks, processTicks, selfTicks } from './cell-cpu.js'
import { log, startBroker, type Postgres } from './stack.js'

export interface PointSettings {
  rate: number
  durationMs: number
  /** Load at the same rate before the measured window, its messages not counted (0: none). */
  warmupMs: number
  /** How long after the load the consumers may take to deliver what is left; undelivered then is lost. */
  drainMs: number
  /** A progress line every this many ms of load (0: none). */
  reportMs: number
  brokerEnv: Record<string, string>
  /** The checkout whose broker runs this point (an A/B against a commit); this one by default. */
  brokerRoot?: string
  /** Extra node flags for the broker (`--cpu-prof …`). */
  nodeFlags?: string[]
  /** Report this many top statements by execution time (0: none). */
  statements?: number
}

export interface PointResult {
  rate: number
  database: string
  /** The machine's 1, 5 and 15 minute load averages just before the point's broker started. */
  loadBefore: number[]
  /** The CPU probe just before the point (bench/cpu-probe.ts): ms for a fixed workload, lower is a faster core. */
  cpuProbeMs: number
  loadSeconds: number
  drainSeconds: number
  /** Every accepted message was delivered before the drain's deadline. */
  drained: boolean
  achieved: { pushedPerSec: number; deliveredPerSec: number }
  shed: number
  peakInflight: number
  pacerMaxLagMs: number
  summary: LedgerSummary
  /** Cores used over the load window (not the drain); null where the process is not ours to read. */
  cpuCores: { broker: number; postgres: number | null; backends: number | null; loader: number; machine: number }
  /** From the load's start to the drain's end, divided by the messages delivered in that span. */
  perMessage: { commits: number | null; postgresUs: number | null; backendUs: number | null; brokerUs: number; calls: number; messagesPerPop: number | null }
  commits: number | null
  /**
   * Procedure calls the broker made over the same span (top-level statements from pg_stat_statements;
   * null without it): fewer push calls than push requests is push fusion at work, fewer ack calls
   * than ack requests ack fusion.
   */
  procedureCalls: { push: number; pop: number; ack: number } | null
  calls: CallCounts
  /** Round trips by route over the load window, ms (a pop's includes any long-poll wait). */
  roundTrips: Record<RouteKind, { p50: number | null; p99: number | null }>
  /** With `BENCH_CELL_STATEMENTS`: the statements (nested ones included) that took the most backend time. */
  statements?: StatementCost[]
  errors: string[]
}

export interface StatementCost {
  query: string
  calls: number
  totalMs: number
  meanUs: number
}

interface Snapshot {
  at: number
  broker: number
  postgres: { total: number; backends: number } | null
  loader: number
  machine: { busy: number; total: number }
  calls: CallCounts
  /** Distinct messages delivered so far, and every copy (duplicates included). */
  delivered: number
  copies: number
}

/** Top-level calls of log_push_v1, log_pop_v1 and log_ack_v1 in `database` so far; null without pg_stat_statements. */
async function procedureCallsOf(pg: Postgres, database: string): Promise<Record<'push' | 'pop' | 'ack', number> | null> {
  try {
    const { rows } = await pg.admin.query<{ proc: string; n: string }>(
      `select substring(query from 'queen\\.log_(push|pop|ack)_v1\\s*\\(') as proc, sum(calls)::text as n
         from pg_stat_statements
        where toplevel and dbid = (select oid from pg_database where datname = $1)
        group by 1`,
      [database],
    )
    const out = { push: 0, pop: 0, ack: 0 }
    for (const r of rows) if (r.proc === 'push' || r.proc === 'pop' || r.proc === 'ack') out[r.proc] = Number(r.n)
    return out
  } catch {
    return null
  }
}

/** The `limit` statements of `database` with the most execution time (pg_stat_statements, track = all). */
async function statementsOf(pg: Postgres, database: string, limit: number): Promise<StatementCost[]> {
  const { rows } = await pg.admin.query<{ query: string; calls: string; total: number; mean: number }>(
    `select regexp_replace(query, '\\s+', ' ', 'g') as query, calls::text, total_exec_time + total_plan_time as total, (total_exec_time + total_plan_time) / greatest(calls, 1) as mean, total_plan_time as plan
       from pg_stat_statements
      where dbid = (select oid from pg_database where datname = $1)
      order by total_exec_time + total_plan_time desc limit $2`,
    [database, limit],
  )
  return rows.map((r) => ({ query: r.query.slice(0, 160), calls: Number(r.calls), totalMs: round(r.total, 0), meanUs: round(r.mean * 1000, 0) }))
}

async function commitsOf(pg: Postgres, database: string): Promise<number | null> {
  try {
    const { rows } = await pg.admin.query<{ n: string }>('select xact_commit::text as n from pg_stat_database where datname = $1', [database])
    return rows[0] ? Number(rows[0].n) : null
  } catch {
    return null
  }
}

/** A database URL for `database` on the server of `url`. */
function urlFor(url: string, database: string): string {
  const u = new URL(url)
  u.pathname = `/${database}`
  return u.toString()
}

async function until(test: () => boolean, timeoutMs: number, stepMs = 20): Promise<boolean> {
  const deadline = performance.now() + timeoutMs
  while (!test()) {
    if (performance.now() > deadline) return false
    await sleep(stepMs)
  }
  return true
}

export async function runPoint(pg: Postgres, index: number, shape: CellShape, settings: PointSettings): Promise<PointResult> {
  const database = `bench_cell_${index}`
  const loadBefore = loadavg().map((l) => round(l, 2))
  const cpuProbe = cpuProbeMs()
  await pg.admin.query(`drop database if exists ${database} with (force)`)
  await pg.admin.query(`create database ${database}`)
  // The previous point's writes are flushed now rather than by a checkpoint inside this one.
  await pg.admin.query('checkpoint').catch(() => {})
  const broker = await startBroker(urlFor(pg.url, database), {
    brokerEnv: { QUEEN_TENANCY_HEADER: shape.tenantHeader, ...settings.brokerEnv },
    root: settings.brokerRoot,
    nodeFlags: settings.nodeFlags,
  })
  const sockets = shape.maxInflight + 2 * shape.tenants * shape.consumersPerTenant + 8
  const client = new CellHttp(broker.port, shape.tenantHeader, sockets)
  const errors: string[] = []
  const total = Math.max(1, Math.round((settings.rate * settings.durationMs) / 1000))
  const ledger = new Ledger(total, shape.tenants, shape.partitions)
  const gate = new InflightGate(shape.maxInflight)
  let consumers: ReturnType<typeof startConsumers> | undefined
  try {
    for (let t = 0; t < shape.tenants; t++) {
      const answer = await client.request('POST', '/api/v1/configure', tenantName(t), JSON.stringify({ queue: shape.queue, leaseTime: 30 }))
      if (answer.status !== 200 && answer.status !== 201) throw new Error(`configure answered ${answer.status}: ${answer.text.slice(0, 200)}`)
    }
    consumers = startConsumers(client, shape, ledger, errors)
    let warm = await warmPartitions(client, shape)
    if (settings.warmupMs > 0) warm += await warmLoad(client, shape, new InflightGate(shape.maxInflight), settings.rate, settings.warmupMs)
    const c = consumers
    if (!(await until(() => c.warmAcked() >= warm, 60_000))) throw new Error(`the warm-up messages were not all delivered and acked within 60 s (${c.warmAcked()} of ${warm})`)

    const snap = (): Snapshot => ({
      at: performance.now(),
      broker: processTicks(broker.process.pid!),
      postgres: pg.postmasterPid ? postgresTicks(pg.postmasterPid, database) : null,
      loader: selfTicks(),
      machine: machineTicks(),
      calls: { ...client.calls },
      delivered: ledger.delivered,
      copies: ledger.copies,
    })
    // The statements table covers the load and the drain only, not the configure and the warm-up.
    if (settings.statements) await pg.admin.query('select pg_stat_statements_reset(0, (select oid from pg_database where datname = $1), 0)', [database])
    const commits0 = await commitsOf(pg, database)
    const procs0 = await procedureCallsOf(pg, database)
    const tripsFrom = { push: client.roundTrips.push.length, pop: client.roundTrips.pop.length, ack: client.roundTrips.ack.length }
    const a = snap()
    const pacer = runPacer(client, shape, ledger, gate, { rate: settings.rate, total, start: a.at }, errors)
    const reporter = settings.reportMs > 0 ? progress(ledger, gate, client, a.at, settings.reportMs) : undefined
    await pacer.done
    // The last message is due one interval before the window ends: the window is the whole duration.
    await sleep(Math.max(0, a.at + settings.durationMs - performance.now()))
    const b = snap()
    const roundTrips = tripSummary(client, tripsFrom)
    reporter?.stop()
    const drained = await until(() => gate.inflight === 0 && ledger.settled === ledger.accepted, settings.drainMs)
    const c2 = snap()
    const procs1 = await procedureCallsOf(pg, database)
    const statements = settings.statements ? await statementsOf(pg, database, settings.statements) : undefined
    const endMs = c2.at
    await consumers.stop()
    consumers = undefined
    client.close()
    if (broker.process.exitCode !== null) throw new Error(`the broker exited during the point: ${broker.output()}`)
    // The backends flush their statistics as they exit: read the commits once the broker's are gone.
    await broker.stop()
    const commits1 = await backendsGone(pg, database).then(() => commitsOf(pg, database))

    const loadSeconds = (b.at - a.at) / 1000
    const cores = (ticks: number) => round(ticks / TICKS_PER_SECOND / loadSeconds, 2)
    const delivered = ledger.delivered
    const perMsgUs = (ticks: number) => (delivered > 0 ? round((ticks / TICKS_PER_SECOND / delivered) * 1e6, 0) : NaN)
    const calls = diffCalls(c2.calls, a.calls)
    const commits = commits0 !== null && commits1 !== null ? commits1 - commits0 : null
    const pops = calls.pop - calls.popEmpty
    return {
      rate: settings.rate,
      database,
      loadBefore,
      cpuProbeMs: cpuProbe,
      loadSeconds: round(loadSeconds, 2),
      drainSeconds: round((c2.at - b.at) / 1000, 2),
      drained,
      achieved: { pushedPerSec: Math.round(ledger.accepted / loadSeconds), deliveredPerSec: Math.round(b.delivered / loadSeconds) },
      shed: gate.shed,
      peakInflight: gate.peak,
      pacerMaxLagMs: round(pacer.maxLagMs(), 1),
      summary: ledger.summary(endMs),
      cpuCores: {
        broker: cores(b.broker - a.broker),
        postgres: a.postgres && b.postgres ? cores(b.postgres.total - a.postgres.total) : null,
        backends: a.postgres && b.postgres ? cores(b.postgres.backends - a.postgres.backends) : null,
        loader: cores(b.loader - a.loader),
        machine: cores(b.machine.busy - a.machine.busy),
      },
      perMessage: {
        commits: commits !== null && delivered > 0 ? round(commits / delivered, 2) : null,
        postgresUs: a.postgres && c2.postgres ? perMsgUs(c2.postgres.total - a.postgres.total) : null,
        backendUs: a.postgres && c2.postgres ? perMsgUs(c2.postgres.backends - a.postgres.backends) : null,
        brokerUs: perMsgUs(c2.broker - a.broker),
        calls: delivered > 0 ? round((calls.push + calls.pop + calls.ack) / delivered, 2) : NaN,
        messagesPerPop: pops > 0 ? round((c2.copies - a.copies) / pops, 1) : null,
      },
      commits,
      procedureCalls: procs0 && procs1 ? { push: procs1.push - procs0.push, pop: procs1.pop - procs0.pop, ack: procs1.ack - procs0.ack } : null,
      calls,
      roundTrips,
      statements,
      errors,
    }
  } finally {
    await consumers?.stop()
    client.close()
    await broker.stop()
    await pg.admin.query(`drop database if exists ${database} with (force)`).catch((error: unknown) => log(`could not drop ${database}: ${String(error)}`))
  }
}

/** Waits (up to 10 s) until no backend is connected to `database`. */
async function backendsGone(pg: Postgres, database: string): Promise<void> {
  const deadline = performance.now() + 10_000
  while (performance.now() < deadline) {
    const { rows } = await pg.admin.query<{ n: number }>('select count(*)::int as n from pg_stat_activity where datname = $1', [database])
    if (rows[0]!.n === 0) return
    await sleep(50)
  }
}

function tripSummary(client: CellHttp, from: Record<RouteKind, number>): PointResult['roundTrips'] {
  const one = (kind: RouteKind) => {
    const ms = client.roundTrips[kind].slice(from[kind]).sort((x, y) => x - y)
    const at = (p: number) => (ms.length ? round(percentile(ms, p)!, 1) : null)
    return { p50: at(50), p99: at(99) }
  }
  return { push: one('push'), pop: one('pop'), ack: one('ack') }
}

function diffCalls(after: CallCounts, before: CallCounts): CallCounts {
  const out = zeroCalls()
  for (const key of Object.keys(out) as (keyof CallCounts)[]) out[key] = after[key] - before[key]
  return out
}

const fmt = (v: number | null) => (v === null ? '-' : `${Math.round(v)} ms`)

/** A line every `everyMs` of load: what was offered, accepted and delivered in the interval, and its p99. */
function progress(ledger: Ledger, gate: InflightGate, client: CellHttp, start: number, everyMs: number) {
  let last = { at: start, offered: 0, accepted: 0, delivered: 0, shed: 0 }
  const seen = { push: client.roundTrips.push.length, pop: client.roundTrips.pop.length, ack: client.roundTrips.ack.length }
  const trips = (kind: RouteKind) => {
    const all = client.roundTrips[kind]
    const recent = all.slice(seen[kind]).sort((x, y) => x - y)
    seen[kind] = all.length
    return `${fmt(percentile(recent, 50))}/${fmt(percentile(recent, 99))}`
  }
  const timer = setInterval(() => {
    const now = performance.now()
    const s = (now - last.at) / 1000
    const delays = ledger.delaysSince(last.delivered).sort()
    const rate = (n: number) => Math.round(n / s)
    log(
      `  t=${Math.round((now - start) / 1000)} s: offered ${rate(ledger.offered - last.offered)}/s, accepted ${rate(ledger.accepted - last.accepted)}/s, ` +
        `delivered ${rate(ledger.delivered - last.delivered)}/s, shed ${gate.shed - last.shed}, in flight ${gate.inflight}, p99 ${fmt(percentile(delays, 99))}; ` +
        `round trips p50/p99 push ${trips('push')} pop ${trips('pop')} ack ${trips('ack')}`,
    )
    last = { at: now, offered: ledger.offered, accepted: ledger.accepted, delivered: ledger.delivered, shed: gate.shed }
  }, everyMs)
  return { stop: () => clearInterval(timer) }
}
