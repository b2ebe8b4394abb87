// `npx tsx bench/tenant-share.ts` (issue #37): does one tenant's flood starve another? Tenant B
// pushes one message, pops it and acks it at a steady rate (B_RATE cycles a second, open loop) for
// SECONDS alone, then again while tenant A floods: A_POLLS parked long polls (past the per-tenant
// cap; a 429 is retried after its Retry-After, a 204 at once), A_PUSHERS concurrent push loops and
// A_ACKERS ack storms (batches of 100 acks of unknown messages). The broker is its own Node process
// (src/node.ts) over one embedded PostgreSQL with tenancy on; the flood runs twice, with the default
// share knobs and with them off (TENANT_DB_CONCURRENCY=0, caps out of reach), to show what they buy.
// B's window opens SHARE_SETTLE_MS after A's first request (A's onset is not its steady flood).
// Prints B's latencies, the ratio of B's p99 under the flood to alone, and every status each tenant got.
// A's flood runs in a child process of its own (this file with `flood <url> <ms>`), so B's timings are
// not this process's event loop busy with A's hundreds of loops.
import { execFileSync, spawn } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { cpus, loadavg, tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { performance } from 'node:perf_hooks'
import { freePort, startEmbeddedPostgres } from '../src/db/embedded.js'
import { percentile, round, sleep } from './lib.js'

const SECONDS = Number(process.env.SHARE_SECONDS ?? 15)
const B_RATE = Number(process.env.SHARE_B_RATE ?? 20)
const A_POLLS = Number(process.env.SHARE_A_POLLS ?? 150)
const A_PUSHERS = Number(process.env.SHARE_A_PUSHERS ?? 64)
const A_ACKERS = Number(process.env.SHARE_A_ACKERS ?? 8)
/** `SHARE_TRACE=file`: every B request's start (ms), route and latency, a line each, to see where the tail falls. */
const TRACE = process.env.SHARE_TRACE
/** How long after A's first request B's window opens: A's onset (its first burst, before it counts as heavy) is not its steady flood. */
const SETTLE_MS = Number(process.env.SHARE_SETTLE_MS ?? 2000)
const FLOODING = 'flooding\n'
const traceLines: string[] = []

if (process.argv[2] === 'flood') {
  const base = process.argv[3]!
  const send = sender(base)
  const statuses = new Map<string, number>()
  const flooding = floodA(send, performance.now() + Number(process.argv[4]), statuses)
  process.stdout.write(FLOODING)
  await flooding
  // exit only once the pipe has the answer: a write to a pipe is asynchronous.
  const cpu = process.cpuUsage()
  process.stdout.write(JSON.stringify({ statuses: [...statuses], cpuMs: Math.round((cpu.user + cpu.system) / 1000) }), () => process.exit(0))
  await new Promise(() => {})
}

const scratch = mkdtempSync(join(tmpdir(), 'queen-share-'))
const server = await startEmbeddedPostgres({ dataDir: scratch })

function sender(base: string) {
  return async (method: string, path: string, tenant: string, body?: unknown) => {
    // A refused connection or reset under load is counted as status 0, not a crash of the run.
    const res = await fetch(base + path, { method, headers: { 'content-type': 'application/json', 'X-Tenant': tenant }, body: body === undefined ? undefined : JSON.stringify(body) }).catch(() => null)
    if (res === null) return { status: 0, retryAfter: 1, body: null }
    const text = await res.text()
    return { status: res.status, retryAfter: Number(res.headers.get('retry-after') ?? 0), body: text && res.headers.get('content-type')?.includes('json') ? JSON.parse(text) : null }
  }
}
type Send = ReturnType<typeof sender>

/**
 * A's flood in its own process, for `ms` from its first request: `started` resolves once the child
 * has sent it (its own start, tsx compiling this file, takes a core for a second or more, which is
 * not the flood's load), `done` to the statuses it got.
 */
function floodProcess(base: string, ms: number) {
  const child = spawn(process.execPath, ['--import', 'tsx', 'bench/tenant-share.ts', 'flood', base, String(ms)], { stdio: ['ignore', 'pipe', 'inherit'] })
  let out = ''
  let signal: () => void
  const started = new Promise<void>((resolve) => (signal = resolve))
  child.stdout.on('data', (c: Buffer) => {
    out += String(c)
    if (out.startsWith(FLOODING)) signal()
  })
  const done = new Promise<{ statuses: Map<string, number>; cpuMs: number }>((resolve) =>
    child.once('exit', () => {
      signal()
      const answer = JSON.parse(out.slice(FLOODING.length) || '{"statuses":[],"cpuMs":0}') as { statuses: [string, number][]; cpuMs: number }
      resolve({ statuses: new Map(answer.statuses), cpuMs: answer.cpuMs })
    }),
  )
  return { started, done }
}

async function broker(env: Record<string, string>, root = '.') {
  const port = await freePort()
  const child = spawn(process.execPath, ['--import', 'tsx', join(root, 'src/node.ts')], {
    cwd: root,
    env: { ...process.env, DATABASE_URL: server.url, QUEEN_TENANCY_HEADER: 'X-Tenant', PORT: String(port), LOG_LEVEL: 'error', DB_POOL_SIZE: '10', ...env },
    stdio: ['ignore', 'inherit', 'inherit'],
  })
  const base = `http://127.0.0.1:${port}`
  // A broker that exits at boot (say, a variant whose procedures differ from the shared database's)
  // or never answers ends the run instead of holding it forever.
  const deadline = Date.now() + 60_000
  for (;;) {
    if (child.exitCode !== null) throw new Error(`the broker of ${root} exited at boot (${child.exitCode})`)
    if ((await fetch(`${base}/health`).catch(() => null))?.ok) break
    if (Date.now() > deadline) {
      child.kill('SIGTERM')
      throw new Error(`the broker of ${root} did not become healthy within 60 s`)
    }
    await sleep(200)
  }
  return { base, send: sender(base), stop: () => new Promise<void>((done) => (child.once('exit', () => done()), child.kill('SIGTERM'))) }
}

type Broker = Awaited<ReturnType<typeof broker>>

function tally(into: Map<string, number>, key: string) {
  into.set(key, (into.get(key) ?? 0) + 1)
}
function codeOf(r: { status: number; body: any }) {
  return r.status >= 400 ? `${r.status} ${r.body?.code ?? ''}`.trim() : String(r.status)
}

/**
 * B: one push, one pop, one ack per tick, B_RATE ticks a second, until `window.end`. B runs from its
 * warm-up on without a pause (an idle spell before the window would make its first requests the
 * slow ones), and only the cycles started inside the window are measured.
 */
async function steadyB(b: Broker, window: { start: number; end: number }, statuses: Map<string, number>): Promise<number[]> {
  const latencies: number[] = []
  const timed = async (measured: boolean, method: string, path: string, body?: unknown) => {
    const t0 = performance.now()
    const r = await b.send(method, path, 'b', body)
    if (!measured) return r
    latencies.push(performance.now() - t0)
    if (TRACE) traceLines.push(`${Math.round(t0)} ${path.split('?')[0]} ${(performance.now() - t0).toFixed(1)}`)
    tally(statuses, codeOf(r))
    return r
  }
  const inFlight: Promise<void>[] = []
  for (let tick = 0; performance.now() < window.end; tick++) {
    const measured = performance.now() >= window.start
    inFlight.push(
      (async () => {
        await timed(measured, 'POST', '/api/v1/push', { items: [{ queue: 'steady', partition: `p${tick % 4}`, payload: { tick } }] })
        const popped = await timed(measured, 'GET', `/api/v1/pop/queue/steady?batch=1`)
        const m = popped.body?.messages?.[0]
        if (m) await timed(measured, 'POST', '/api/v1/ack', { transactionId: m.transactionId, partitionId: m.partitionId, leaseId: m.leaseId, status: 'completed' })
      })(),
    )
    await sleep(1000 / B_RATE)
  }
  await Promise.all(inFlight)
  return latencies.sort((x, y) => x - y)
}

/** A: parked polls past the cap, concurrent push loops and ack storms, until `until`. */
async function floodA(send: Send, until: number, statuses: Map<string, number>): Promise<void> {
  const live = () => performance.now() < until
  const poll = async (i: number) => {
    while (live()) {
      const r = await send('GET', `/api/v1/pop/queue/idle-${i}?wait=true&timeout=5000`, 'a')
      tally(statuses, `poll ${codeOf(r)}`)
      if (r.status === 429) await sleep(r.retryAfter * 1000)
    }
  }
  const push = async (w: number) => {
    for (let n = 0; live(); n++) {
      const r = await send('POST', '/api/v1/push', 'a', { items: Array.from({ length: 10 }, (_, i) => ({ queue: 'flood', partition: `p${(w + i) % 16}`, payload: { w, n, i } })) })
      tally(statuses, `push ${codeOf(r)}`)
      if (r.status === 429) await sleep(r.retryAfter * 1000)
    }
  }
  const ack = async () => {
    while (live()) {
      const acknowledgments = Array.from({ length: 100 }, () => ({ transactionId: randomUUID(), partitionId: randomUUID(), status: 'completed' }))
      const r = await send('POST', '/api/v1/ack/batch', 'a', { acknowledgments })
      tally(statuses, `ack ${codeOf(r)}`)
      if (r.status === 429) await sleep(r.retryAfter * 1000)
    }
  }
  await Promise.all([...Array.from({ length: A_POLLS }, (_, i) => poll(i)), ...Array.from({ length: A_PUSHERS }, (_, w) => push(w)), ...Array.from({ length: A_ACKERS }, ack)])
}

interface Row {
  label: string
  p50: number | null
  p99: number | null
  requests: number
  b: Map<string, number>
  a: Map<string, number>
  /** CPU the flooding client process itself used (it shares the machine with the broker). */
  floodCpuMs: number
}

async function run(label: string, env: Record<string, string>, flood: boolean, root?: string): Promise<Row> {
  const br = await broker(env, root)
  const b = new Map<string, number>()
  const window = { start: Infinity, end: Infinity }
  const steady = steadyB(br, window, b)
  // A warm-up of B alone (first queue creation and plan caching are not what is measured), then A's
  // start and onset, all unmeasured.
  await sleep(1000)
  // A's flood outlasts B's window by a margin, so the window never sees it wind down.
  const flooding = flood ? floodProcess(br.base, SETTLE_MS + SECONDS * 1000 + 1000) : { started: Promise.resolve(), done: Promise.resolve({ statuses: new Map<string, number>(), cpuMs: 0 }) }
  if (flood) {
    await flooding.started
    await sleep(SETTLE_MS)
  }
  window.start = performance.now()
  window.end = window.start + SECONDS * 1000
  const [latencies, a] = await Promise.all([steady, flooding.done])
  await br.stop()
  return { label, p50: percentile(latencies, 50), p99: percentile(latencies, 99), requests: latencies.length, b, a: a.statuses, floodCpuMs: a.cpuMs }
}

const show = (m: Map<string, number>) => [...m].sort().map(([k, v]) => `${k}: ${v}`).join(', ') || '–'
const before = loadavg()[0]!
/**
 * `SHARE_VARIANTS`: an A/B of the flood runs in one run, instead of the default three. A comma list,
 * each a git ref ('.' is this working tree) optionally followed by space-separated KEY=VALUE broker
 * settings; `SHARE_ROUNDS` times each in turn (A B A B …), with B alone first and last.
 */
function variantRuns(): { label: string; ref: string; env: Record<string, string> }[] | null {
  const v = process.env.SHARE_VARIANTS
  if (!v) return null
  return v.split(',').map((entry) => {
    const [ref, ...pairs] = entry.trim().split(/\s+/)
    return { label: entry.trim(), ref: ref!, env: Object.fromEntries(pairs.map((p) => [p.slice(0, p.indexOf('=')), p.slice(p.indexOf('=') + 1)])) }
  })
}

/** The ref's src/ and cron/ in a scratch directory sharing this checkout's node_modules. */
function checkout(ref: string): string {
  if (ref === '.') return '.'
  const dir = join(scratch, `ref-${ref.replace(/[^A-Za-z0-9._-]/g, '_')}`)
  if (existsSync(dir)) return dir
  mkdirSync(dir, { recursive: true })
  execFileSync('tar', ['-x', '-C', dir], { input: execFileSync('git', ['archive', ref, 'src', 'cron', 'package.json', 'tsconfig.json'], { maxBuffer: 1 << 28 }) })
  symlinkSync(resolve('node_modules'), join(dir, 'node_modules'))
  return dir
}

const variants = variantRuns()
const rounds = Number(process.env.SHARE_ROUNDS ?? 1)
const rows: Row[] = []
if (variants) {
  rows.push(await run('B alone', {}, false))
  for (let round = 0; round < rounds; round++) {
    for (const v of variants) rows.push(await run(`B + A flood (${v.label})`, v.env, true, checkout(v.ref)))
  }
  rows.push(await run('B alone, again', {}, false))
} else {
  rows.push(
    await run('B alone', {}, false),
    await run('B + A flood, defaults', {}, true),
    await run('B + A flood, TENANT_DB_CONCURRENCY=2', { TENANT_DB_CONCURRENCY: '2' }, true),
    await run('B + A flood, share knobs off', { TENANT_DB_CONCURRENCY: '0', MAX_PARKED_POLLS_PER_TENANT: '100000', MAX_PARKED_POLLS: '100000' }, true),
  )
}
const alone = rows[0]!.p99 ?? 0
console.log(`\nmachine: ${cpus().length} × ${cpus()[0]?.model}; load average ${round(before, 2)} before, ${round(loadavg()[0]!, 2)} after; ${SECONDS} s per run; B ${B_RATE} cycles/s; A ${A_POLLS} polls, ${A_PUSHERS} pushers (10 a push), ${A_ACKERS} ack storms (100 a batch)\n`)
console.log('| run | B requests | B p50 ms | B p99 ms | B p99 / alone | B statuses | A statuses | A client CPU s |\n|---|---|---|---|---|---|---|---|')
for (const r of rows) {
  console.log(`| ${r.label} | ${r.requests} | ${round(r.p50 ?? 0, 1)} | ${round(r.p99 ?? 0, 1)} | ${alone ? round((r.p99 ?? 0) / alone, 2) : '–'} | ${show(r.b)} | ${show(r.a)} | ${round(r.floodCpuMs / 1000, 1)} |`)
}
await server.stop()
rmSync(scratch, { recursive: true, force: true })
if (TRACE) writeFileSync(TRACE, traceLines.join('\n') + '\n')
