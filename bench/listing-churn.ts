// `npx tsx bench/listing-churn.ts` (issue #41, item 5): what a `?stats=cached` poll costs when the
// tenant created a queue since the previous poll, at LISTING_QUEUES (10 000) queues: the shape of a
// tenant creating queues continuously while a metering proxy polls. One embedded cluster with
// pg_stat_statements; one database and one broker process per ref (`LISTING_REFS=<git ref>,…`,
// `.` = the working tree; default `.`), lanes parked so only the script moves anything. Each ref's
// tenant gets its queues in one push call from SQL, one stats pass and a first cached poll (which
// renders its listing). Then LISTING_ROUNDS (5) rounds, every ref in turn inside each round, each
// LISTING_POLLS (20) times: push one frame to a new queue over HTTP, then poll; first plain, then
// the same again with `Accept-Encoding: gzip` (as fetch sends it). Per poll: time to the first byte
// (the answer's headers) and to the last; per round: the cached call's execution time inside
// PostgreSQL (pg_stat_statements, top-level, that ref's database alone) divided by its calls, the
// CPU the broker's backends used across each poll (/proc/<pid>/schedstat, which a backend waiting
// for a core does not grow), and how many polls rendered the whole listing again
// (`stats_listings.rendered_at` moved).
// Every poll must list the queue just created, or the run fails. Medians over rounds per ref.
import { execFileSync } from 'node:child_process'
import http from 'node:http'
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { performance } from 'node:perf_hooks'
import { gunzipSync } from 'node:zlib'
import pg from 'pg'
import { median, percentile, round } from './lib.js'
import { PARKED_LANES, ROOT, envInt, log, startBroker, startPostgres, type Broker } from './stack.js'

const QUEUES = envInt('LISTING_QUEUES', 10_000)
const ROUNDS = envInt('LISTING_ROUNDS', 5)
const POLLS = envInt('LISTING_POLLS', 20)
const REFS = (process.env.LISTING_REFS ?? '.').split(',').filter(Boolean)

/** The ref's src/ and cron/ in a temp directory sharing this checkout's node_modules. */
function checkout(ref: string, tmp: string): string {
  if (ref === '.') return ROOT
  const dir = join(tmp, ref.replace(/[^A-Za-z0-9._-]/g, '_'))
  mkdirSync(dir, { recursive: true })
  const archive = execFileSync('git', ['archive', ref, 'src', 'cron', 'package.json', 'tsconfig.json'], { cwd: ROOT, maxBuffer: 1 << 28 })
  execFileSync('tar', ['-x', '-C', dir], { input: archive })
  symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'))
  return dir
}

interface Timed {
  firstByteMs: number
  lastByteMs: number
  names: string[]
}

/** One GET to the last byte, timing the answer's headers (its first byte) apart. */
function poll(agent: http.Agent, port: number, gzip: boolean): Promise<Timed> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now()
    const req = http.request(
      { host: '127.0.0.1', port, path: '/api/v1/resources/queues?stats=cached', agent, headers: gzip ? { 'accept-encoding': 'gzip' } : {} },
      (res) => {
        const firstByteMs = performance.now() - t0
        const chunks: Buffer[] = []
        res.on('data', (c: Buffer) => chunks.push(c))
        res.on('error', reject)
        res.on('end', () => {
          const lastByteMs = performance.now() - t0
          if (res.statusCode !== 200) return reject(new Error(`the listing answered ${res.statusCode}`))
          const body = Buffer.concat(chunks)
          const text = (res.headers['content-encoding'] === 'gzip' ? gunzipSync(body) : body).toString('utf8')
          resolve({ firstByteMs, lastByteMs, names: (JSON.parse(text).queues as { name: string }[]).map((q) => q.name) })
        })
      },
    )
    req.on('error', reject)
    req.end()
  })
}

interface Ref {
  ref: string
  database: string
  broker: Broker
  db: pg.Client
  agent: http.Agent
  created: number
}

interface RoundFigures {
  firstByteP50: number | null
  firstByteP99: number | null
  lastByteP50: number | null
  pgMsPerPoll: number
  pgCpuMsPerPoll: number
  rendersPerPoll: number
}

/**
 * CPU time so far (ms) of the broker's backends on `database`, from /proc/<pid>/schedstat: it does
 * not grow while a backend waits for a core another tenant holds, where the execution time does.
 */
async function backendCpuMs(admin: pg.Client, database: string) {
  const { rows } = await admin.query(`select pid from pg_stat_activity where datname = $1 and backend_type = 'client backend' and application_name <> 'bench-listing'`, [database])
  let ns = 0
  for (const { pid } of rows) {
    try {
      ns += Number(readFileSync(`/proc/${pid}/schedstat`, 'utf8').split(' ')[0])
    } catch {
      // a backend that ended meanwhile
    }
  }
  return { pids: rows.map((r) => r.pid as number).sort().join(','), ms: ns / 1e6 }
}

async function cachedCallTime(admin: pg.Client, database: string) {
  const { rows } = await admin.query(
    `select coalesce(sum(calls), 0)::bigint as calls, coalesce(sum(total_exec_time), 0)::float8 as ms
       from pg_stat_statements where toplevel and dbid = (select oid from pg_database where datname = $1)
        and query like '%log_queue_stats_cached_v1%'`,
    [database],
  )
  return { calls: Number(rows[0].calls), ms: Number(rows[0].ms) }
}

async function renderedAt(r: Ref) {
  return (await r.db.query(`select rendered_at::text as at from queen.stats_listings where tenant_id = ''`)).rows[0]?.at as string | undefined
}

/** POLLS times: a new queue, then a poll that must list it. */
async function churn(r: Ref, admin: pg.Client, gzip: boolean, label: string): Promise<RoundFigures> {
  const first: number[] = []
  const last: number[] = []
  let renders = 0
  let cpuMs = 0
  let cpuPolls = 0
  const before = await cachedCallTime(admin, r.database)
  for (let i = 0; i < POLLS; i++) {
    const queue = `churn-${String(++r.created).padStart(6, '0')}`
    const res = await r.broker.client.request('POST', '/api/v1/push', { items: [{ queue, payload: { i } }] })
    if (res.status !== 201) throw new Error(`push answered ${res.status}`)
    const at = await renderedAt(r)
    const cpu0 = await backendCpuMs(admin, r.database)
    const timed = await poll(r.agent, r.broker.port, gzip)
    const cpu1 = await backendCpuMs(admin, r.database)
    // Counted only when the pool's connections were the same around the poll.
    if (cpu0.pids === cpu1.pids) {
      cpuMs += cpu1.ms - cpu0.ms
      cpuPolls++
    }
    if (!timed.names.includes(queue)) throw new Error(`${r.ref} ${label}: the poll after creating ${queue} does not list it`)
    if ((await renderedAt(r)) !== at) renders++
    first.push(timed.firstByteMs)
    last.push(timed.lastByteMs)
  }
  const after = await cachedCallTime(admin, r.database)
  first.sort((a, b) => a - b)
  last.sort((a, b) => a - b)
  return {
    firstByteP50: percentile(first, 50),
    firstByteP99: percentile(first, 99),
    lastByteP50: percentile(last, 50),
    pgMsPerPoll: round((after.ms - before.ms) / Math.max(after.calls - before.calls, 1), 2),
    pgCpuMsPerPoll: round(cpuMs / Math.max(cpuPolls, 1), 2),
    rendersPerPoll: round(renders / POLLS, 2),
  }
}

async function main() {
  const tmp = mkdtempSync(join(tmpdir(), 'queen-listing-churn-'))
  const postgres = await startPostgres({ postgresFlags: ['-c', 'shared_preload_libraries=pg_stat_statements'] })
  const { admin } = postgres
  const refs: Ref[] = []
  const loads: string[] = []
  const loadavg = () => execFileSync('cat', ['/proc/loadavg']).toString().split(' ').slice(0, 3).join(' ')
  try {
    await admin.query('create extension if not exists pg_stat_statements')
    for (const [i, ref] of REFS.entries()) {
      const database = `listing_${i}`
      await admin.query(`create database ${database}`)
      const url = postgres.url.replace(/\/postgres(\?.*)?$/, `/${database}$1`)
      const broker = await startBroker(url, { brokerEnv: PARKED_LANES, root: checkout(ref, tmp) })
      const db = new pg.Client({ connectionString: url, application_name: 'bench-listing' })
      const r: Ref = { ref, database, broker, db, agent: new http.Agent({ keepAlive: true, maxSockets: 1 }), created: 0 }
      refs.push(r)
      await db.connect()
      const t0 = performance.now()
      await db.query(
        `select queen.log_push_v1('', (select jsonb_agg(jsonb_build_object('queue', 'lq-' || lpad(i::text, 5, '0'), 'partition', 'Default', 'data', jsonb_build_object('n', i)))
                                        from generate_series(1, $1::int) i))`,
        [QUEUES],
      )
      await db.query(`select queen.log_stats_refresh_v1('')`)
      const rendered = await poll(r.agent, broker.port, false)
      log(`${ref}: ${QUEUES} queues and a stats pass in ${round((performance.now() - t0) / 1000, 1)} s; the first poll (renders) ${round(rendered.firstByteMs, 1)} ms to the first byte`)
      // Warm: the route's and the procedure's first calls of each kind are not measured.
      await churn(r, admin, false, 'warm-up')
      await churn(r, admin, true, 'warm-up')
    }

    const results = new Map<string, { plain: RoundFigures[]; gzip: RoundFigures[] }>(REFS.map((ref) => [ref, { plain: [], gzip: [] }]))
    for (let n = 1; n <= ROUNDS; n++) {
      for (const r of refs) {
        loads.push(loadavg())
        for (const gzip of [false, true]) {
          const figures = await churn(r, admin, gzip, `round ${n}`)
          results.get(r.ref)![gzip ? 'gzip' : 'plain'].push(figures)
          log(`round ${n} ${r.ref.padEnd(10)} ${gzip ? 'gzip ' : 'plain'}  first byte p50 ${round(figures.firstByteP50 ?? 0, 1)} ms p99 ${round(figures.firstByteP99 ?? 0, 1)} ms, last byte p50 ${round(figures.lastByteP50 ?? 0, 1)} ms, PostgreSQL ${figures.pgMsPerPoll} ms (CPU ${figures.pgCpuMsPerPoll} ms) a poll, renders a poll ${figures.rendersPerPoll}  (load ${loads[loads.length - 1]})`)
        }
      }
    }

    const summary: Record<string, unknown> = {}
    for (const ref of REFS) {
      for (const kind of ['plain', 'gzip'] as const) {
        const rounds = results.get(ref)![kind]
        const m = (f: (x: RoundFigures) => number | null) => round(median(rounds.map((x) => f(x) ?? 0)), 2)
        const row = {
          firstByteP50: m((x) => x.firstByteP50),
          firstByteP99: m((x) => x.firstByteP99),
          lastByteP50: m((x) => x.lastByteP50),
          pgMsPerPoll: m((x) => x.pgMsPerPoll),
          pgCpuMsPerPoll: m((x) => x.pgCpuMsPerPoll),
          rendersPerPoll: m((x) => x.rendersPerPoll),
        }
        summary[`${ref} ${kind}`] = row
        log(`${ref.padEnd(10)} ${kind.padEnd(5)} medians over ${ROUNDS} rounds: first byte p50 ${row.firstByteP50} ms, p99 ${row.firstByteP99} ms; last byte p50 ${row.lastByteP50} ms; PostgreSQL ${row.pgMsPerPoll} ms (backend CPU ${row.pgCpuMsPerPoll} ms) a poll; renders a poll ${row.rendersPerPoll}`)
      }
    }
    mkdirSync(join(ROOT, 'bench/results'), { recursive: true })
    writeFileSync(
      join(ROOT, 'bench/results/listing-churn.json'),
      JSON.stringify({ at: new Date().toISOString(), settings: { QUEUES, ROUNDS, POLLS, REFS }, loads, summary, rounds: Object.fromEntries(results) }, null, 2),
    )
    log('bench/results/listing-churn.json written')
  } finally {
    for (const r of refs) {
      r.agent.destroy()
      await r.db.end().catch(() => {})
      await r.broker.stop()
    }
    await postgres.stop()
    rmSync(tmp, { recursive: true, force: true })
  }
}

main().catch((error) => {
  console.error(error)
  process.exitCode = 1
})
