// `npm run bench:cell` (issue #33): the multitenant cell under open-loop load, the shape most Queen
// users run and Queen publishes for a two-core cell. T tenants (each its own tenancy-header value)
// share one queue name of P partitions and one consumer group name; producers push one ~256-byte
// message per request at a fixed offered rate without waiting on answers; C consumers per tenant
// long-poll batches of 50 and ack them. Each offered rate is a point on a fresh database and a fresh
// broker. Prints, per point, delivery (achieved, shed, lost, duplicated, latency from the intended
// send time, the worst partition) and cost (CPU per process, commits, CPU and calls per delivered
// message), and writes bench/results/cell.json and cell.md.
import { execFileSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { cpus, tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import type { CellShape } from './cell-load.js'
import { runPoint, type PointResult } from './cell-point.js'
import { ROOT, envInt, log, startPostgres } from './stack.js'

/** The ladder `BENCH_CELL_RATES=ladder` runs: past Queen's published 2 400 msg/s, to find the knee. */
const LADDER = [300, 600, 900, 1200, 1800, 2400, 3000]

const SHAPES = {
  // Queen's published two-core cell: 4 tenants on queue `orders`, group `workers`, 8 partitions.
  cell: { tenants: 4, rates: [600], durationMs: 30_000, drainMs: 30_000, reportMs: 0 },
  // Queen's one-hour soak: 12 tenants at 70 msg/s each on the same queue and group names.
  soak: { tenants: 12, rates: [840], durationMs: 3_600_000, drainMs: 30_000, reportMs: 15_000 },
} as const

const envCount = (name: string, fallback: number) => {
  const v = process.env[name]
  if (v === undefined || v === '') return fallback
  const n = Number(v)
  if (!Number.isInteger(n) || n < 0) throw new Error(`${name} must be a whole number of 0 or more`)
  return n
}

function rates(fallback: readonly number[]): number[] {
  const v = process.env.BENCH_CELL_RATES
  if (v === undefined || v === '') return [...fallback]
  if (v === 'ladder') return LADDER
  const list = v.split(',').map((x) => Number(x.trim()))
  if (list.some((n) => !(n > 0))) throw new Error('BENCH_CELL_RATES must be "ladder" or a comma list of positive msg/s')
  return list
}

/**
 * `BENCH_CELL_VARIANTS`: an A/B in one run. A comma list of variants, each a git ref ('.' is this
 * working tree) optionally followed by space-separated KEY=VALUE broker settings, e.g.
 * `HEAD~1,.` or `. TENANT_DB_CONCURRENCY=0,.`. Every rate runs each variant in turn,
 * `BENCH_CELL_ROUNDS` times (A B A B …), so the machine's drift falls on both alike.
 */
interface Variant {
  label: string
  ref: string
  env: Record<string, string>
}

function variants(): Variant[] {
  const v = process.env.BENCH_CELL_VARIANTS
  if (v === undefined || v.trim() === '') return [{ label: '', ref: '.', env: {} }]
  return v.split(',').map((entry) => {
    const [ref, ...pairs] = entry.trim().split(/\s+/)
    const env: Record<string, string> = {}
    for (const pair of pairs) {
      const at = pair.indexOf('=')
      if (at <= 0) throw new Error(`BENCH_CELL_VARIANTS: "${pair}" is not KEY=VALUE`)
      env[pair.slice(0, at)] = pair.slice(at + 1)
    }
    return { label: entry.trim(), ref: ref!, env }
  })
}

/** The ref's src/ and cron/ in a temp directory sharing this checkout's node_modules. */
function checkout(ref: string, tmp: string): string | undefined {
  if (ref === '.') return undefined
  const dir = join(tmp, ref.replace(/[^A-Za-z0-9._-]/g, '_'))
  mkdirSync(dir, { recursive: true })
  const archive = execFileSync('git', ['archive', ref, 'src', 'cron', 'package.json', 'tsconfig.json'], { cwd: ROOT, maxBuffer: 1 << 28 })
  execFileSync('tar', ['-x', '-C', dir], { input: archive })
  symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'))
  return dir
}

function settingsFromEnv() {
  const shapeName = process.env.BENCH_CELL_SHAPE ?? 'cell'
  if (shapeName !== 'cell' && shapeName !== 'soak') throw new Error('BENCH_CELL_SHAPE must be cell or soak')
  const base = SHAPES[shapeName]
  const shape: CellShape = {
    tenants: envInt('BENCH_CELL_TENANTS', base.tenants),
    partitions: envInt('BENCH_CELL_PARTITIONS', 8),
    consumersPerTenant: envInt('BENCH_CELL_CONSUMERS', 3),
    popBatch: envInt('BENCH_CELL_POP_BATCH', 50),
    popWaitMs: envInt('BENCH_CELL_POP_WAIT_MS', 5000),
    payloadBytes: envInt('BENCH_CELL_PAYLOAD_BYTES', 256),
    maxInflight: envInt('BENCH_CELL_MAX_INFLIGHT', 512),
    queue: 'orders',
    group: 'workers',
    tenantHeader: 'x-tenant',
  }
  return {
    shapeName,
    shape,
    rates: rates(base.rates),
    durationMs: envInt('BENCH_CELL_DURATION_MS', base.durationMs),
    // A fresh broker's first seconds at a high rate are a cold start (JIT, sockets, backends): the
    // point measures the steady state after this much of the same load (BENCHMARKS.md shows both).
    warmupMs: envCount('BENCH_CELL_WARMUP_MS', 3000),
    drainMs: envCount('BENCH_CELL_DRAIN_MS', base.drainMs),
    reportMs: envCount('BENCH_CELL_REPORT_MS', base.reportMs),
    poolSize: envInt('BENCH_CELL_POOL_SIZE', 10),
    variants: variants(),
    rounds: envInt('BENCH_CELL_ROUNDS', 1),
    // `BENCH_CELL_PROF=<dir>`: each point's broker writes a V8 CPU profile there when it stops.
    profileDir: process.env.BENCH_CELL_PROF ? resolve(process.env.BENCH_CELL_PROF) : undefined,
    // `BENCH_CELL_STATEMENTS=<n>`: each point also reports its n costliest statements, nested ones included.
    statements: envCount('BENCH_CELL_STATEMENTS', 0),
    // `BENCH_CELL_PG_FLAGS="-c name=value …"`: server settings for an A/B of PostgreSQL's own knobs.
    postgresFlags: (process.env.BENCH_CELL_PG_FLAGS ?? '').split(/\s+/).filter(Boolean),
  }
}

/** The rate, and the variant when the run compares several. */
const pointName = (p: PointResult & { variant?: string }) => (p.variant ? `${p.rate} (${p.variant})` : String(p.rate))

const ms = (v: number | null) => (v === null ? '-' : v >= 1000 ? `${(v / 1000).toFixed(1)} s` : `${Math.round(v)} ms`)
const num = (v: number | null) => (v === null || Number.isNaN(v) ? '-' : String(v))

function deliveryTable(points: PointResult[]): string {
  const head = '| offered msg/s | load avg before (1 / 5 min) | CPU probe before | pushed/s | delivered/s | shed | push errors | lost | duplicated | p50 | p99 | p99.9 | max | worst partition | best partition\'s worst | partitions worst > 1 s |'
  const rows = points.map((p) => {
    const s = p.summary
    return `| ${pointName(p)} | ${p.loadBefore[0]} / ${p.loadBefore[1]} | ${p.cpuProbeMs} ms | ${p.achieved.pushedPerSec} | ${p.achieved.deliveredPerSec} | ${p.shed} | ${s.refused} | ${s.lost}${p.drained ? '' : ' (drain timed out)'} | ${s.duplicated} | ${ms(s.latencyMs.p50)} | ${ms(s.latencyMs.p99)} | ${ms(s.latencyMs.p999)} | ${ms(s.latencyMs.max)} | ${ms(s.partitions.worstMs)} | ${ms(s.partitions.bestWorstMs)} | ${s.partitions.over1s} of ${s.partitions.perPartition.length} |`
  })
  return [head, `|${'---:|'.repeat(16)}`, ...rows].join('\n')
}

/** Requests by route against the procedure calls they cost: push fusion shows as push calls below push requests. */
function callsTable(points: PointResult[]): string {
  const head = '| offered msg/s | push requests / calls | pop requests (empty) / calls | ack requests / calls | msgs / push call | procedure calls / msg | round trip p50 / p99: push, pop, ack |'
  const rows = points.map((p) => {
    const r = p.calls
    const pc = p.procedureCalls
    const delivered = p.summary.delivered
    const perPush = pc && pc.push > 0 ? Math.round((r.push / pc.push) * 100) / 100 : null
    const perMsg = pc && delivered > 0 ? Math.round(((pc.push + pc.pop + pc.ack) / delivered) * 100) / 100 : null
    const t = p.roundTrips
    const trip = (k: keyof typeof t) => `${ms(t[k].p50)} / ${ms(t[k].p99)}`
    return `| ${pointName(p)} | ${r.push} / ${num(pc?.push ?? null)} | ${r.pop} (${r.popEmpty}) / ${num(pc?.pop ?? null)} | ${r.ack} / ${num(pc?.ack ?? null)} | ${num(perPush)} | ${num(perMsg)} | ${trip('push')}, ${trip('pop')}, ${trip('ack')} |`
  })
  return [head, `|${'---:|'.repeat(7)}`, ...rows].join('\n')
}

function costTable(points: PointResult[]): string {
  const head = '| offered msg/s | CPU broker / PostgreSQL / loader (cores) | PG backends (cores) | machine busy (cores) | others (cores) | commits / msg | PG µs / msg | backend µs / msg | broker µs / msg | calls / msg | msgs / pop | pacer lag max | peak in flight |'
  const rows = points.map((p) => {
    const c = p.cpuCores
    const m = p.perMessage
    // What the rest of the machine used meanwhile: on a shared machine, the noise under the figures.
    const others = c.postgres === null ? null : Math.max(0, Math.round((c.machine - c.broker - c.postgres - c.loader) * 100) / 100)
    return `| ${pointName(p)} | ${c.broker} / ${num(c.postgres)} / ${c.loader} | ${num(c.backends)} | ${c.machine} | ${num(others)} | ${num(m.commits)} | ${num(m.postgresUs)} | ${num(m.backendUs)} | ${num(m.brokerUs)} | ${num(m.calls)} | ${num(m.messagesPerPop)} | ${ms(p.pacerMaxLagMs)} | ${p.peakInflight} |`
  })
  return [head, `|${'---:|'.repeat(13)}`, ...rows].join('\n')
}

/** With BENCH_CELL_STATEMENTS: per point, where PostgreSQL's execution time went. */
function statementsTables(points: (PointResult & { variant?: string })[]): string[] {
  return points.flatMap((p) => {
    if (!p.statements?.length) return []
    const delivered = p.summary.delivered
    const rows = p.statements.map((s) => `| ${s.calls} | ${s.totalMs} | ${s.meanUs} | ${delivered > 0 ? Math.round((s.totalMs * 1000) / delivered) : '-'} | \`${s.query.replace(/\|/g, '\\|')}\` |`)
    return [`## Statements at ${pointName(p)} msg/s`, '', '| calls | total ms | mean µs | µs / delivered msg | statement |', `|${'---:|'.repeat(4)}---|`, ...rows, '']
  })
}

async function main() {
  const settings = settingsFromEnv()
  const { shape } = settings
  const started = Date.now()
  log(
    `cell bench (${settings.shapeName}): ${shape.tenants} tenants × queue "${shape.queue}" of ${shape.partitions} partitions, ` +
      `${shape.consumersPerTenant} consumers per tenant in group "${shape.group}" (pop ${shape.popBatch}, long poll ${shape.popWaitMs} ms), ` +
      `push 1 × ~${shape.payloadBytes} B, in-flight cap ${shape.maxInflight}; ${settings.durationMs / 1000} s load + up to ${settings.drainMs / 1000} s drain per point; ` +
      `rates ${settings.rates.join(', ')} msg/s; ${cpus().length} cores`,
  )
  // pg_stat_statements counts the broker's procedure calls per point (the calls table).
  const trackAll = settings.statements > 0 ? ['-c', 'pg_stat_statements.track=all', '-c', 'pg_stat_statements.track_planning=on'] : []
  const pg = await startPostgres({ postgresFlags: ['-c', 'shared_preload_libraries=pg_stat_statements', ...trackAll, ...settings.postgresFlags] })
  await pg.admin.query('create extension if not exists pg_stat_statements').catch((error: unknown) => log(`pg_stat_statements unavailable (${String(error)}): procedure calls will not be counted`))
  process.on('SIGINT', () => void pg.stop().then(() => process.exit(130)))
  const points: (PointResult & { variant?: string })[] = []
  const tmp = mkdtempSync(join(tmpdir(), 'queen-cell-refs-'))
  const roots = new Map(settings.variants.map((v) => [v.ref, checkout(v.ref, tmp)]))
  const schedule = settings.rates.flatMap((rate) => Array.from({ length: settings.rounds }, () => settings.variants.map((variant) => ({ rate, variant }))).flat())
  try {
    for (const [i, { rate, variant }] of schedule.entries()) {
      log(`point ${i + 1}/${schedule.length}: ${rate} msg/s offered${variant.label ? ` (${variant.label})` : ''}`)
      const prof = settings.profileDir && join(settings.profileDir, `${i + 1}-${rate}-${variant.label.replace(/[^A-Za-z0-9._-]/g, '_') || 'tree'}`)
      const point = await runPoint(pg, i + 1, shape, {
        rate,
        durationMs: settings.durationMs,
        warmupMs: settings.warmupMs,
        drainMs: settings.drainMs,
        reportMs: settings.reportMs,
        brokerEnv: { DB_POOL_SIZE: String(settings.poolSize), ...variant.env },
        brokerRoot: roots.get(variant.ref),
        nodeFlags: prof ? ['--cpu-prof', '--cpu-prof-dir', prof] : undefined,
        statements: settings.statements,
      })
      points.push(variant.label ? { ...point, variant: variant.label } : point)
      const s = point.summary
      log(
        `  ${rate} msg/s: pushed ${point.achieved.pushedPerSec}/s, delivered ${point.achieved.deliveredPerSec}/s, shed ${point.shed}, lost ${s.lost}, dup ${s.duplicated}, ` +
          `p50 ${ms(s.latencyMs.p50)} p99 ${ms(s.latencyMs.p99)} p99.9 ${ms(s.latencyMs.p999)}, worst partition ${ms(s.partitions.worstMs)}; ` +
          `CPU ${point.cpuCores.broker} / ${num(point.cpuCores.postgres)} / ${point.cpuCores.loader} cores; CPU probe before ${point.cpuProbeMs} ms`,
      )
      if (s.crossTenant > 0) log(`  ${s.crossTenant} messages were delivered to another tenant's consumer`)
      if (s.stray > 0) log(`  ${s.stray} messages were delivered although their push was not answered as queued`)
      for (const e of point.errors.slice(0, 5)) log(`  error: ${e}`)
    }
  } finally {
    await pg.stop()
    rmSync(tmp, { recursive: true, force: true })
  }
  const md = [`## Delivery`, '', deliveryTable(points), '', `## Cost`, '', costTable(points), '', `## Calls`, '', callsTable(points), '', ...statementsTables(points)].join('\n')
  console.log(`\n${md}`)
  const out = join(ROOT, 'bench/results')
  mkdirSync(out, { recursive: true })
  writeFileSync(join(out, 'cell.json'), JSON.stringify({ at: new Date().toISOString(), settings, points }, null, 2))
  writeFileSync(join(out, 'cell.md'), md)
  log(`done in ${Math.round((Date.now() - started) / 1000)} s; bench/results/cell.json and cell.md written`)
}

main().catch((error) => {
  console.error(error)
  process.exitCode = 1
})
