// `npx tsx bench/broker-cpu.ts` (issue #9): the broker process's own CPU per message on the hot
// routes, the figure the broker takes from PostgreSQL on a shared machine, and each round's
// throughput (messages over wall time), the A/B for changes whose gain is not in the broker's CPU
// (fusing acks shares commits). One embedded cluster;
// one broker process per ref (`BROKER_REFS=<git ref>,…`, `.` = the working tree; default `.`),
// each on its own database, all started before the first round. Each round drives every ref in
// turn with the same fixed amount of work over keep-alive HTTP (16 clients) and reads the
// broker's utime+stime from /proc/<pid>/stat before and after, so a tenant stealing a core slows
// a round down without inflating its figure. Medians over the rounds, per ref and workload:
//   push 100  POST /api/v1/push of 100 frames for one random partition of 101
//   push 1    POST /api/v1/push of one frame (fusion on, as `npm start` runs it)
//   pop+ack   GET /api/v1/pop/queue/:q?batch=100 (partition wildcard) + POST /api/v1/ack/batch
//             over a backlog filled (unmeasured) before each round
// Knobs: BROKER_ROUNDS (5), BROKER_PUSH100 (requests, 300), BROKER_PUSH1 (requests, 3000),
// BROKER_POPACK (messages, 30000), BROKER_ONLY=push100|push1|popack (comma list),
// BROKER_PROF=<dir> (each broker runs with --cpu-prof into <dir>/<ref>/, written at its stop).
import { execFileSync, spawn, type ChildProcess } from 'node:child_process'
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import pg from 'pg'
import { freePort, startEmbeddedPostgres } from '../src/db/embedded.js'
import { httpClient, median, sleep, type HttpClient } from './lib.js'

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..')
const int = (name: string, fallback: number) => (process.env[name] ? Number(process.env[name]) : fallback)
const ROUNDS = int('BROKER_ROUNDS', 5)
const PUSH100 = int('BROKER_PUSH100', 300)
const PUSH1 = int('BROKER_PUSH1', 3000)
const POPACK = int('BROKER_POPACK', 30_000)
const CONCURRENCY = 16
const PARTITIONS = 101
const ONLY = new Set((process.env.BROKER_ONLY ?? 'push100,push1,popack').split(','))
const REFS = (process.env.BROKER_REFS ?? '.').split(',').filter(Boolean)
const PROF = process.env.BROKER_PROF ? resolve(process.env.BROKER_PROF) : undefined

const TICK_US = 10_000 // USER_HZ 100
function cpuTicks(pid: number): { user: number; sys: number } {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  return { user: Number(fields[11]), sys: Number(fields[12]) }
}

interface Broker {
  ref: string
  process: ChildProcess
  client: HttpClient
  log: string[]
}

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

async function startBroker(ref: string, dir: string, url: string): Promise<Broker> {
  const port = await freePort()
  const flags = PROF ? ['--cpu-prof', '--cpu-prof-dir', join(PROF, ref.replace(/[^A-Za-z0-9._-]/g, '_'))] : []
  const child = spawn(process.execPath, [...flags, '--import', 'tsx', join(dir, 'src/node.ts')], {
    cwd: dir,
    env: { ...process.env, PORT: String(port), HOST: '127.0.0.1', DATABASE_URL: url, LOG_LEVEL: 'warn', DB_POOL_SIZE: '10' },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  const log: string[] = []
  child.stdout!.on('data', (d: Buffer) => log.push(d.toString()))
  child.stderr!.on('data', (d: Buffer) => log.push(d.toString()))
  const client = httpClient(`http://127.0.0.1:${port}`)
  const deadline = Date.now() + 60_000
  for (;;) {
    if (child.exitCode !== null) throw new Error(`broker ${ref} exited: ${log.join('').slice(-2000)}`)
    if (Date.now() > deadline) throw new Error(`broker ${ref} did not become healthy`)
    const ok = await client.request('GET', '/health').then((r) => r.status === 200, () => false)
    if (ok) return { ref, process: child, client, log }
    await sleep(200)
  }
}

async function stopBroker(b: Broker) {
  b.client.close()
  if (b.process.exitCode !== null) return
  const exited = new Promise<void>((done) => b.process.once('exit', () => done()))
  b.process.kill('SIGTERM')
  const timer = setTimeout(() => b.process.kill('SIGKILL'), 10_000)
  await exited
  clearTimeout(timer)
}

const rand = (n: number) => Math.floor(Math.random() * n)

async function push(client: HttpClient, items: unknown[]) {
  const res = await client.request('POST', '/api/v1/push', { items })
  if (res.status !== 201) throw new Error(`push answered ${res.status}: ${JSON.stringify(res.body).slice(0, 200)}`)
}

/** `requests` requests shared by CONCURRENCY clients back to back. */
async function spread(requests: number, op: () => Promise<void>) {
  let left = requests
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (left > 0) {
        left--
        await op()
      }
    }),
  )
}

const frames = (queue: string, n: number, partition = `p${rand(PARTITIONS)}`) =>
  Array.from({ length: n }, (_, i) => ({ queue, partition, payload: { n: i, t: Date.now() } }))

async function fill(client: HttpClient, queue: string, count: number) {
  const per = Math.ceil(count / 1000)
  await spread(per, () => push(client, frames(queue, 1000)))
}

/** Pops and acks until `count` messages have moved (or the queue is empty); returns how many moved. */
async function popAck(client: HttpClient, queue: string, count: number): Promise<number> {
  let moved = 0
  let empties = 0
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (moved < count && empties < CONCURRENCY * 3) {
        const res = await client.request('GET', `/api/v1/pop/queue/${queue}?batch=100`)
        if (res.status === 204) {
          empties++
          continue
        }
        if (res.status !== 200) throw new Error(`pop answered ${res.status}`)
        empties = 0
        const messages = res.body.messages as { transactionId: string; partitionId: string; leaseId: string }[]
        const ack = await client.request('POST', '/api/v1/ack/batch', {
          acknowledgments: messages.map((m) => ({ transactionId: m.transactionId, partitionId: m.partitionId, leaseId: m.leaseId, status: 'completed' })),
        })
        if (ack.status !== 200 || (ack.body as { success: boolean }[]).some((r) => !r.success)) throw new Error(`ack answered ${ack.status}`)
        moved += messages.length
      }
    }),
  )
  return moved
}

interface Measured {
  /** Broker CPU, µs per message, and the kernel's part of it. */
  total: number
  sys: number
  /** Messages a second over the round's wall time. */
  rate: number
}

/** Broker CPU per message and throughput over `work`, which returns the messages it moved. */
async function measured(b: Broker, work: () => Promise<number>): Promise<Measured> {
  const pid = b.process.pid!
  const t0 = cpuTicks(pid)
  const started = performance.now()
  const n = await work()
  const seconds = (performance.now() - started) / 1000
  const t1 = cpuTicks(pid)
  const sys = ((t1.sys - t0.sys) * TICK_US) / n
  return { total: ((t1.user - t0.user) * TICK_US) / n + sys, sys, rate: n / seconds }
}

async function main() {
  const tmp = mkdtempSync(join(tmpdir(), 'queen-broker-cpu-'))
  const pgServer = await startEmbeddedPostgres({ dataDir: tmp })
  const brokers: Broker[] = []
  try {
    const admin = new pg.Client({ connectionString: pgServer.url })
    await admin.connect()
    for (const [i, ref] of REFS.entries()) {
      await admin.query(`create database ref_${i}`)
      const url = pgServer.url.replace(/\/postgres$/, `/ref_${i}`)
      brokers.push(await startBroker(ref, checkout(ref, tmp), url))
    }
    await admin.end()
    for (const b of brokers) {
      for (const q of ['cpu-push100', 'cpu-push1', 'cpu-popack']) {
        const res = await b.client.request('POST', '/api/v1/configure', { queue: q, leaseTime: 60, retryLimit: 3 })
        if (res.status >= 300) throw new Error(`configure answered ${res.status}`)
      }
      // Every partition exists and the JIT is warm before the first measured round.
      for (let p = 0; p < PARTITIONS; p++) await push(b.client, [...frames('cpu-push100', 1, `p${p}`), ...frames('cpu-push1', 1, `p${p}`)])
      if (ONLY.has('push100')) await spread(150, () => push(b.client, frames('cpu-push100', 100)))
      if (ONLY.has('push1')) await spread(1500, () => push(b.client, frames('cpu-push1', 1)))
      if (ONLY.has('popack')) {
        await fill(b.client, 'cpu-popack', 10_000)
        await popAck(b.client, 'cpu-popack', 10_000)
      }
    }
    const results = new Map<string, Map<string, number[]>>(REFS.map((r) => [r, new Map()]))
    const sysShare = new Map<string, number[]>()
    const rates = new Map<string, number[]>()
    const record = (ref: string, workload: string, value: Measured) => {
      const m = results.get(ref)!
      m.set(workload, [...(m.get(workload) ?? []), value.total])
      const key = `${ref}\u0000${workload}`
      sysShare.set(key, [...(sysShare.get(key) ?? []), value.sys / value.total])
      rates.set(key, [...(rates.get(key) ?? []), value.rate])
    }
    for (let round = 0; round < ROUNDS; round++) {
      // Alternate the order so neither ref always runs right after the fill.
      const order = round % 2 ? [...brokers].reverse() : brokers
      for (const b of order) {
        if (ONLY.has('popack')) await fill(b.client, 'cpu-popack', POPACK)
        if (ONLY.has('push100')) record(b.ref, 'push100', await measured(b, async () => (await spread(PUSH100, () => push(b.client, frames('cpu-push100', 100))), PUSH100 * 100)))
        if (ONLY.has('push1')) record(b.ref, 'push1', await measured(b, async () => (await spread(PUSH1, () => push(b.client, frames('cpu-push1', 1))), PUSH1)))
        if (ONLY.has('popack')) record(b.ref, 'popack', await measured(b, () => popAck(b.client, 'cpu-popack', POPACK)))
      }
      const line = [...results]
        .map(([ref, m]) => `${ref}: ${[...m].map(([w, xs]) => `${w} ${xs.at(-1)!.toFixed(1)} (${Math.round(rates.get(`${ref}\u0000${w}`)!.at(-1)!)} msg/s)`).join(', ')}`)
        .join(' | ')
      console.log(`round ${round + 1}/${ROUNDS}  µs/msg  ${line}`)
    }
    console.log('\nbroker CPU per message (µs), median of rounds [min..max]; throughput, median msg/s [min..max]:')
    for (const [ref, m] of results) {
      for (const [w, xs] of m) {
        const key = `${ref}\u0000${w}`
        const sys = Math.round(100 * median(sysShare.get(key)!))
        const r = rates.get(key)!
        console.log(
          `  ${ref.padEnd(12)} ${w.padEnd(8)} ${median(xs).toFixed(1).padStart(7)}  [${Math.min(...xs).toFixed(1)}..${Math.max(...xs).toFixed(1)}]  kernel ${sys}%` +
            `   ${String(Math.round(median(r))).padStart(6)} msg/s [${Math.round(Math.min(...r))}..${Math.round(Math.max(...r))}]`,
        )
      }
    }
  } finally {
    for (const b of brokers) await stopBroker(b)
    await pgServer.stop()
    rmSync(tmp, { recursive: true, force: true })
  }
}

main().catch((error) => {
  console.error(error)
  process.exit(1)
})
