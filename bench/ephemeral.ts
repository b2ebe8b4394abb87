// `npx tsx bench/ephemeral.ts`: ephemeral queues beside durable queues of the same shape, in the
// same run, against the same broker process and PostgreSQL (docs/ephemeral.md). Two workloads,
// each measured in alternating rounds (durable, ephemeral, durable, ephemeral, …) so load from
// other work on the machine falls on both alike:
//   push      batch 100, one queue, one partition per client, small payloads;
//   pop+ack   batch 100, queue mode, over a backlog pushed beforehand, one ack call per pop.
// Prints msg/s per round and the median ratio ephemeral / durable, and beside each the CPU time per
// message of the broker process, of every PostgreSQL process of the cluster (backends, WAL writer,
// checkpointer, autovacuum) and of this client, over the whole loop: the figure a busy shared
// machine does not distort, where msg/s moves with other work on the cores.
import { spawn } from 'node:child_process'
import { appendFileSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { freePort, startEmbeddedPostgres } from '../src/db/embedded.js'
import { closedLoop, httpClient, median, round, sleep, type HttpClient, type LoopResult } from './lib.js'
import { configure, popAck, smallPayload } from './queen.js'

const ROOT = fileURLToPath(new URL('..', import.meta.url))
const envInt = (name: string, fallback: number) => Number(process.env[name] ?? fallback)
const CLIENTS = envInt('BENCH_CONCURRENCY', 16)
const ROUNDS = envInt('BENCH_ROUNDS', 3)
const WINDOW_MS = envInt('BENCH_DURATION_MS', 5000)
const WARMUP_MS = 1000
// Enough that neither side drains its backlog within a round's window at 60 000 msg/s.
const BACKLOG = envInt('BENCH_BACKLOG', 400_000)
const BATCH = 100

const ok = (res: { status: number; body: unknown }, want: number, what: string) => {
  if (res.status !== want) throw new Error(`${what} answered ${res.status}: ${JSON.stringify(res.body).slice(0, 200)}`)
}

const durablePush = (client: HttpClient, queue: string) => async (w: number) => {
  const items = Array.from({ length: BATCH }, (_, i) => ({ queue, partition: `p${w}`, payload: smallPayload(i) }))
  ok(await client.request('POST', '/api/v1/push', { items }), 201, 'push')
  return BATCH
}

const ephemeralPush = (client: HttpClient, queue: string) => async (w: number) => {
  const messages = Array.from({ length: BATCH }, (_, i) => ({ payload: smallPayload(i) }))
  ok(await client.request('POST', '/api/v1/ephemeral/push', { queue, partition: `p${w}`, messages }), 201, 'ephemeral push')
  return BATCH
}

const ephemeralPopAck = (client: HttpClient, queue: string) => async (): Promise<number | 'empty'> => {
  const res = await client.request('GET', `/api/v1/ephemeral/pop?queue=${queue}&batch=${BATCH}`)
  ok(res, 200, 'ephemeral pop')
  const messages = res.body.messages as { id: string }[]
  if (messages.length === 0) return 'empty'
  ok(await client.request('POST', '/api/v1/ephemeral/ack', { queue, acks: messages.map((m) => ({ id: m.id })) }), 200, 'ephemeral ack')
  return messages.length
}

/** utime + stime of one process in µs (USER_HZ 100), 0 once it is gone. */
function cpuMicros(pid: number): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ')
    return (Number(fields[11]) + Number(fields[12])) * 10_000
  } catch {
    return 0
  }
}

/** Whether a PostgreSQL child is an autovacuum worker (its title says so), false once it is gone. */
function isAutovacuumWorker(pid: number): boolean {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('autovacuum worker')
  } catch {
    return false
  }
}

/**
 * CPU µs of the postmaster and each of its children, by pid, read now, and which of them are
 * autovacuum workers. A delta sums what the pids still there used since the first read (a child
 * that started since counts from zero; a short-lived autovacuum worker that ended in between is
 * missed).
 */
function postgresMicros(dataDir: string): { byPid: Map<number, number>; autovacuum: Set<number> } {
  const postmaster = Number(readFileSync(join(dataDir, 'pgdata', 'postmaster.pid'), 'utf8').split('\n')[0])
  const byPid = new Map([[postmaster, cpuMicros(postmaster)]])
  const autovacuum = new Set<number>()
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    try {
      const ppid = Number(readFileSync(`/proc/${entry}/stat`, 'utf8').split(') ')[1]!.split(' ')[1])
      if (ppid !== postmaster) continue
      byPid.set(Number(entry), cpuMicros(Number(entry)))
      if (isAutovacuumWorker(Number(entry))) autovacuum.add(Number(entry))
    } catch {
      // gone meanwhile
    }
  }
  return { byPid, autovacuum }
}

/**
 * The PostgreSQL CPU µs between two reads, and the part of it autovacuum workers used: maintenance
 * that one workload's writes set off lands in whichever window it runs in, often the next one's.
 */
function postgresDelta(before: ReturnType<typeof postgresMicros>, after: ReturnType<typeof postgresMicros>) {
  let all = 0
  let autovacuum = 0
  for (const [pid, us] of after.byPid) {
    const used = Math.max(0, us - (before.byPid.get(pid) ?? 0))
    all += used
    if (after.autovacuum.has(pid) || before.autovacuum.has(pid)) autovacuum += used
  }
  return { all, autovacuum }
}

interface CpuPerMessage {
  broker: number
  postgres: number
  /** The part of `postgres` that autovacuum workers used. */
  autovacuum: number
  client: number
  total: number
}

async function fill(push: (w: number) => Promise<number>) {
  let pushed = 0
  await Promise.all(Array.from({ length: CLIENTS }, async (_, w) => {
    // The count read after the await: `pushed += await push(w)` reads it before, so every client
    // pushed a whole backlog of its own (16 × BACKLOG in all).
    while (pushed < BACKLOG) {
      const n = await push(w)
      pushed += n
    }
  }))
}

async function main() {
  const tmp = mkdtempSync(join(tmpdir(), 'queen-bench-ephemeral-'))
  // `BENCH_EPHEMERAL_PG_FLAGS="-c name=value …"`: server settings, e.g. auto_explain to see a slow
  // round's plans; `BENCH_EPHEMERAL_PG_LOG=<file>`: the server's log, appended there.
  const logFile = process.env.BENCH_EPHEMERAL_PG_LOG
  const pg = await startEmbeddedPostgres({
    dataDir: tmp,
    postgresFlags: (process.env.BENCH_EPHEMERAL_PG_FLAGS ?? '').split(/\s+/).filter(Boolean),
    ...(logFile ? { log: (line: string) => appendFileSync(logFile, `${line}\n`) } : {}),
  })
  const port = await freePort()
  // `BENCH_BROKER_NODE_FLAGS="--cpu-prof --cpu-prof-dir=<dir>"`: node flags for the broker, e.g. a CPU profile.
  const brokerFlags = (process.env.BENCH_BROKER_NODE_FLAGS ?? '').split(/\s+/).filter(Boolean)
  const broker = spawn(process.execPath, [...brokerFlags, '--import', 'tsx', join(ROOT, 'src/node.ts')], {
    cwd: ROOT,
    env: { ...process.env, PORT: String(port), HOST: '127.0.0.1', DATABASE_URL: pg.url, LOG_LEVEL: 'warn', DB_POOL_SIZE: '10' },
    stdio: ['ignore', 'inherit', 'inherit'],
  })
  const client = httpClient(`http://127.0.0.1:${port}`)
  try {
    for (let i = 0; ; i++) {
      if (i > 300) throw new Error('the broker did not become healthy')
      const health = await client.request('GET', '/health').catch(() => null)
      if (health?.status === 200) break
      await sleep(200)
    }
    type Measured = LoopResult & { cpu: CpuPerMessage; load: number }
    const rows: { workload: string; round: number; durable: Measured; ephemeral: Measured }[] = []
    const loop = async (op: (w: number) => Promise<number | 'empty'>, isDone?: () => boolean): Promise<Measured> => {
      let messages = 0
      const counted = async (w: number) => {
        const n = await op(w)
        if (n !== 'empty') messages += n
        return n
      }
      const before = { broker: cpuMicros(broker.pid!), postgres: postgresMicros(tmp), client: process.cpuUsage() }
      const result = await closedLoop({ concurrency: CLIENTS, warmupMs: WARMUP_MS, durationMs: WINDOW_MS, op: counted, ...(isDone ? { isDone } : {}) })
      const client = process.cpuUsage(before.client)
      const per = (us: number) => round(us / Math.max(1, messages), 1)
      const pgUsed = postgresDelta(before.postgres, postgresMicros(tmp))
      const cpu = { broker: per(cpuMicros(broker.pid!) - before.broker), postgres: per(pgUsed.all), autovacuum: per(pgUsed.autovacuum), client: per(client.user + client.system), total: 0 }
      cpu.total = round(cpu.broker + cpu.postgres + cpu.client, 1)
      return { ...result, cpu, load: round(loadavg()[0]!, 1) }
    }
    const cpuText = (m: Measured) => `${m.cpu.total} µs/msg (broker ${m.cpu.broker}, PostgreSQL ${m.cpu.postgres} of which autovacuum ${m.cpu.autovacuum}, client ${m.cpu.client}; load ${m.load})`
    for (let r = 0; r < ROUNDS; r++) {
      const dq = `durable-${r}`
      const eq = `ephemeral-${r}`
      await configure(client, dq)
      ok(await client.request('POST', '/api/v1/ephemeral/configure', { queue: eq, options: { maxLength: 1_000_000, maxBytes: 268_435_456 } }), 201, 'ephemeral configure')
      const durable = await loop(durablePush(client, dq))
      const ephemeral = await loop(ephemeralPush(client, eq))
      rows.push({ workload: 'push', round: r, durable, ephemeral })

      const dc = `durable-consume-${r}`
      const ec = `ephemeral-consume-${r}`
      await configure(client, dc)
      ok(await client.request('POST', '/api/v1/ephemeral/configure', { queue: ec, options: { maxLength: 1_000_000, maxBytes: 268_435_456 } }), 201, 'ephemeral configure')
      await fill(durablePush(client, dc))
      await fill(ephemeralPush(client, ec))
      // Drained once an empty pop comes after the whole backlog was taken: a durable queue-mode pop
      // answers empty while every partition is leased to another consumer, which is not the end.
      const drained = () => {
        let taken = 0
        let done = false
        return {
          count: (n: number | 'empty') => {
            if (n === 'empty') done = taken >= BACKLOG
            else taken += n
            return n
          },
          done: () => done,
        }
      }
      const dDrain = drained()
      const dPop = await loop(async () => dDrain.count(await popAck(client, dc, BATCH)), dDrain.done)
      const ePopAck = ephemeralPopAck(client, ec)
      const eDrain = drained()
      const ePop = await loop(async () => eDrain.count(await ePopAck()), eDrain.done)
      rows.push({ workload: 'pop+ack', round: r, durable: dPop, ephemeral: ePop })
      for (const row of rows.slice(-2)) {
        console.log(`round ${r} ${row.workload}: durable ${row.durable.itemsPerSec} msg/s, ephemeral ${row.ephemeral.itemsPerSec} msg/s (${round(row.ephemeral.itemsPerSec / row.durable.itemsPerSec, 2)}×)` +
          `; errors ${row.durable.errors}/${row.ephemeral.errors}; drained ${row.durable.drained}/${row.ephemeral.drained}`)
        console.log(`    CPU durable ${cpuText(row.durable)}, ephemeral ${cpuText(row.ephemeral)}: ${round(row.durable.cpu.total / row.ephemeral.cpu.total, 2)}× less per message`)
      }
    }
    for (const workload of ['push', 'pop+ack']) {
      const of = rows.filter((r) => r.workload === workload)
      console.log(`${workload}: median durable ${median(of.map((r) => r.durable.itemsPerSec))} msg/s, ephemeral ${median(of.map((r) => r.ephemeral.itemsPerSec))} msg/s, ` +
        `median ratio ${round(median(of.map((r) => r.ephemeral.itemsPerSec / r.durable.itemsPerSec)), 2)}×; ` +
        `CPU per message median durable ${median(of.map((r) => r.durable.cpu.total))} µs, ephemeral ${median(of.map((r) => r.ephemeral.cpu.total))} µs, ` +
        `median ratio ${round(median(of.map((r) => r.durable.cpu.total / r.ephemeral.cpu.total)), 2)}×`)
    }
  } finally {
    client.close()
    broker.kill('SIGTERM')
    await new Promise((done) => broker.once('exit', done))
    await pg.stop()
    rmSync(tmp, { recursive: true, force: true })
  }
}

await main()
