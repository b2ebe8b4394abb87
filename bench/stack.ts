// The stack the scale, memory and cell workloads run on: a fresh embedded PostgreSQL in a temp dir
// (or BENCH_DATABASE_URL) and the broker as a separate process (`node --import tsx src/node.ts`), as
// `npm run bench` starts them. Kept apart from bench/run.ts so that file stays as it is. The two
// halves start apart too: the cell bench keeps one cluster and starts a broker per point.
import { spawn, type ChildProcess } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import pg from 'pg'
import { freePort, startEmbeddedPostgres, type EmbeddedServer } from '../src/db/embedded.js'
import { httpClient, sleep, type HttpClient } from './lib.js'

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..')

export function log(line: string) {
  console.log(`[${new Date().toISOString().slice(11, 19)}] ${line}`)
}

export const envInt = (name: string, fallback: number) => {
  const v = process.env[name]
  if (v === undefined || v === '') return fallback
  const n = Number(v)
  if (!Number.isInteger(n) || n <= 0) throw new Error(`${name} must be a positive integer`)
  return n
}

export interface Stack {
  url: string
  postmasterPid?: number
  admin: pg.Client
  broker: ChildProcess
  client: HttpClient
  stop(): Promise<void>
}

/** Lanes parked: a day between runs, so nothing but the workload touches the data. */
export const PARKED_LANES = {
  STATS_INTERVAL_MS: '86400000',
  RETAINED_BYTES_INTERVAL_MS: '86400000',
  RETENTION_INTERVAL_MS: '86400000',
  EVICTION_INTERVAL_MS: '86400000',
  DEDUP_PURGE_INTERVAL_MS: '86400000',
}

export interface Postgres {
  url: string
  /** Set for the embedded cluster only: its processes are ours to measure. */
  postmasterPid?: number
  admin: pg.Client
  stop(): Promise<void>
}

/** A fresh embedded PostgreSQL in a temp dir, or BENCH_DATABASE_URL; `admin` is a connection of its own. */
export async function startPostgres(options: { postgresFlags?: string[] } = {}): Promise<Postgres> {
  let embedded: EmbeddedServer | undefined
  let tmp: string | undefined
  let url = process.env.BENCH_DATABASE_URL
  if (!url) {
    tmp = mkdtempSync(join(tmpdir(), 'queen-bench-'))
    log(`starting embedded PostgreSQL in ${tmp}`)
    embedded = await startEmbeddedPostgres({ dataDir: tmp, postgresFlags: options.postgresFlags ?? [] })
    url = embedded.url
  }
  const postmasterPid = embedded ? Number(readFileSync(join(embedded.dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]) : undefined
  const admin = new pg.Client({ connectionString: url, application_name: 'bench-admin' })
  await admin.connect()
  let stopped = false
  const stop = async () => {
    if (stopped) return
    stopped = true
    await admin.end().catch(() => {})
    await embedded?.stop()
    if (tmp) rmSync(tmp, { recursive: true, force: true })
  }
  return { url, ...(postmasterPid !== undefined ? { postmasterPid } : {}), admin, stop }
}

export interface Broker {
  process: ChildProcess
  port: number
  client: HttpClient
  /** The tail of what the broker wrote, for a report when it fails mid-run. */
  output(): string
  stop(): Promise<void>
}

/** The broker as a separate process on `url`, once /health answers; it migrates at boot as `npm start` does. */
export async function startBroker(url: string, options: { brokerEnv?: Record<string, string>; nodeFlags?: string[]; root?: string } = {}): Promise<Broker> {
  const port = await freePort()
  // `root`: another checkout's src/ (an A/B against a commit), this one by default.
  const root = options.root ?? ROOT
  log(`starting the broker on :${port} (separate process${root === ROOT ? '' : `, from ${root}`})`)
  const broker = spawn(process.execPath, [...(options.nodeFlags ?? []), '--import', 'tsx', join(root, 'src/node.ts')], {
    cwd: root,
    env: { ...process.env, PORT: String(port), HOST: '127.0.0.1', DATABASE_URL: url, LOG_LEVEL: 'warn', DB_POOL_SIZE: '10', ...options.brokerEnv },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  const brokerLog: string[] = []
  broker.stdout!.on('data', (d: Buffer) => brokerLog.push(d.toString()))
  broker.stderr!.on('data', (d: Buffer) => brokerLog.push(d.toString()))
  const client = httpClient(`http://127.0.0.1:${port}`)
  let stopped = false
  const stop = async () => {
    if (stopped) return
    stopped = true
    client.close()
    await stopBroker(broker)
  }

  const deadline = Date.now() + 60_000
  for (;;) {
    if (broker.exitCode !== null) {
      await stop()
      throw new Error(`the broker exited (${broker.exitCode}): ${brokerLog.join('').slice(-2000)}`)
    }
    try {
      if ((await client.request('GET', '/health')).status === 200) break
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      await stop()
      throw new Error('the broker did not become healthy within 60 s')
    }
    await sleep(200)
  }
  return { process: broker, port, client, output: () => brokerLog.join('').slice(-4000), stop }
}

export async function startStack(options: { brokerEnv?: Record<string, string>; nodeFlags?: string[]; postgresFlags?: string[] } = {}): Promise<Stack> {
  const postgres = await startPostgres(options)
  let broker: Broker | undefined
  let stopped = false
  const stop = async () => {
    if (stopped) return
    stopped = true
    await broker?.stop()
    await postgres.stop()
  }
  process.on('SIGINT', () => void stop().then(() => process.exit(130)))
  try {
    broker = await startBroker(postgres.url, options)
  } catch (error) {
    await stop()
    throw error
  }
  return { url: postgres.url, ...(postgres.postmasterPid !== undefined ? { postmasterPid: postgres.postmasterPid } : {}), admin: postgres.admin, broker: broker.process, client: broker.client, stop }
}

async function stopBroker(broker: ChildProcess) {
  if (broker.exitCode !== null || broker.signalCode !== null) return
  const exited = new Promise<void>((done) => broker.once('exit', () => done()))
  broker.kill('SIGTERM')
  const timer = setTimeout(() => broker.kill('SIGKILL'), 10_000)
  await exited
  clearTimeout(timer)
}

/** VmRSS of a process in MB, from /proc/<pid>/status. */
export function rssMb(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))
  return m ? Math.round((Number(m[1]) / 1024) * 10) / 10 : NaN
}
