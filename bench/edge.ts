// npm run bench:edge (issue #22): the worker bundle in workerd (miniflare) over Neon's serverless
// driver and the WebSocket bridge, with a fixed round-trip time added in the bridge
// (bench/edge-link.ts). For push 1, push 100, pop 100, ack 100 and configure it reports p50/p99
// latency and the round trips each call made, counted at the bridge; beside it the same work done
// the usual way by a client on the same driver (BEGIN / INSERT / COMMIT, and a SELECT … FOR UPDATE
// SKIP LOCKED consumer), from this process. Calls are sequential: this measures latency, not
// throughput. Writes bench/results/edge.json and edge.md.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { neonConfig } from '@neondatabase/serverless'
import { Miniflare, type MiniflareOptions } from 'miniflare'
import { WebSocket } from 'ws'
import { startWsBridge } from '../scripts/ws-bridge.js'
import { createEdgePool } from '../src/db/edge-pool.js'
import { startEmbeddedPostgres } from '../src/db/embedded.js'
import { migrate } from '../src/db/migrate.js'
import { createNodePool } from '../src/db/node-pool.js'
import { buildWorker } from '../test/edge/build-worker.js'
import { findPgBouncer, startPgBouncer } from '../test/helpers/pgbouncer.js'
import { latencyLink, type LinkCounters, type LinkShape, type SetupPlacement } from './edge-link.js'
import { percentile, round } from './lib.js'

const RTTS = (process.env.BENCH_EDGE_RTTS ?? '0,5,20,50').split(',').map(Number)
const PLACEMENTS: SetupPlacement[] = ['pooled-at-edge', 'per-request']
/** Samples per operation: fewer at long round trips, where every sample costs seconds. */
const samplesAt = (rttMs: number) => Number(process.env.BENCH_EDGE_SAMPLES ?? (rttMs <= 5 ? 100 : rttMs <= 20 ? 50 : 30))
const log = (line: string) => console.log(`[bench:edge] ${line}`)

interface Sample {
  ms: number
  setupTurns: number
  queryTurns: number
  connections: number
}
interface Row {
  setup: SetupPlacement
  rttMs: number
  client: 'queen-edge' | 'usual'
  op: string
  n: number
  p50: number | null
  p99: number | null
  /** Round trips of one call, as the bridge counted them (the median call's). */
  setupTurns: number
  queryTurns: number
  connections: number
}

const counters: LinkCounters = { connections: 0, setupTurns: 0, queryTurns: 0 }
let shape: LinkShape = { rttMs: 0, setup: 'pooled-at-edge' }

/** Runs one call and returns its latency with what the bridge counted during it. */
async function measure(call: () => Promise<void>): Promise<Sample> {
  const before = { ...counters }
  const started = performance.now()
  await call()
  const ms = performance.now() - started
  return {
    ms,
    setupTurns: counters.setupTurns - before.setupTurns,
    queryTurns: counters.queryTurns - before.queryTurns,
    connections: counters.connections - before.connections,
  }
}

function summarise(key: Omit<Row, 'n' | 'p50' | 'p99' | 'setupTurns' | 'queryTurns' | 'connections'>, samples: Sample[]): Row {
  const ms = samples.map((s) => s.ms).sort((a, b) => a - b)
  const mid = (pick: (s: Sample) => number) => samples.map(pick).sort((a, b) => a - b)[Math.floor(samples.length / 2)]!
  const at = (p: number) => {
    const v = percentile(ms, p)
    return v === null ? null : round(v, 1)
  }
  return { ...key, n: samples.length, p50: at(50), p99: at(99), setupTurns: mid((s) => s.setupTurns), queryTurns: mid((s) => s.queryTurns), connections: mid((s) => s.connections) }
}

const dataDir = mkdtempSync(join(tmpdir(), 'queen-bench-edge-'))
const embedded = await startEmbeddedPostgres({ dataDir })
// Both placements reach PostgreSQL through a pooler, as deployed: Neon's pooled endpoint and Hyperdrive
// keep authenticated server connections whose backends have already compiled the procedures. A
// fresh backend per request would instead cost ~40 ms of fork, SCRAM and plpgsql compilation here.
const bouncerBinary = findPgBouncer()
if (!bouncerBinary) throw new Error('bench:edge needs PgBouncer (apt-get install -y pgbouncer)')
const bouncer = await startPgBouncer(bouncerBinary, embedded.url)
const pooledUrl = Object.assign(new URL(embedded.url), { port: String(bouncer.port) }).toString()
const rows: Row[] = []
let mf: Miniflare | undefined
const bridge = await startWsBridge({ link: latencyLink(() => shape, counters) })
try {
  const admin = createNodePool({ connectionString: embedded.url, max: 1 })
  await migrate(admin, { statementTimeoutMs: 30_000 })
  await admin.query(`
    drop schema if exists bench_edge cascade;
    create schema bench_edge;
    create table bench_edge.messages (
      id bigint generated always as identity primary key,
      partition text not null,
      payload jsonb not null,
      created_at timestamptz not null default now(),
      lease_until timestamptz
    );`)
  await admin.end()

  log('building the worker bundle (wrangler deploy --dry-run)')
  const bundle = buildWorker()
  mf = new Miniflare({
    modules: true,
    scriptPath: bundle.scriptPath,
    modulesRoot: dirname(bundle.scriptPath),
    compatibilityDate: bundle.compatibilityDate,
    compatibilityFlags: bundle.compatibilityFlags,
    bindings: { LOG_LEVEL: 'warn', DATABASE_URL: pooledUrl, NEON_WS_PROXY: bridge.url },
  } as MiniflareOptions)
  await mf.ready
  const worker = mf
  const request = async (method: string, path: string, body?: unknown) => {
    const res = await worker.dispatchFetch(`http://edge.bench${path}`, {
      method,
      headers: body === undefined ? {} : { 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    } as never)
    const text = await res.text()
    if (res.status >= 300 && res.status !== 204) throw new Error(`${method} ${path} answered ${res.status}: ${text.slice(0, 200)}`)
    return { status: res.status, body: text ? JSON.parse(text) : null }
  }
  const items = (n: number) => Array.from({ length: n }, (_, i) => ({ queue: 'edge', partition: 'p', payload: { n: i, pad: 'x'.repeat(16) } }))

  // The usual way, on the same driver through the same bridge: one pool per call as on Workers.
  neonConfig.webSocketConstructor = WebSocket
  const usual = async (work: (query: (text: string, values?: unknown[]) => Promise<{ rows: { id: string }[] }>) => Promise<void>) => {
    const pool = createEdgePool({ connectionString: pooledUrl, wsProxy: bridge.url })
    const client = await pool.connect()
    try {
      await work((text, values) => client.query(text, values as unknown[]) as never)
    } finally {
      client.release()
      await pool.end()
    }
  }
  const insertRows = (n: number) => `insert into bench_edge.messages (partition, payload) values ${Array.from({ length: n }, (_, i) => `('p', $${i + 1}::jsonb)`).join(', ')}`
  const payloads = (n: number) => Array.from({ length: n }, (_, i) => JSON.stringify({ n: i, pad: 'x'.repeat(16) }))

  await request('GET', '/health') // the isolate's first request also checks the statement timeout
  for (const setup of PLACEMENTS) {
    for (const rttMs of RTTS) {
      shape = { rttMs, setup }
      const n = samplesAt(rttMs)
      log(`${setup}, RTT ${rttMs} ms: ${n} calls of each`)
      const queen: Record<string, Sample[]> = { 'push 1': [], 'push 100': [], 'pop 100': [], 'ack 100': [], configure: [], 'push 1 + pop + ack': [] }
      const plain: Record<string, Sample[]> = { 'push 1': [], 'push 100': [], 'pop 100': [], 'ack 100': [], 'push 1 + pop + ack': [] }
      for (let i = 0; i < n; i++) {
        queen['push 1']!.push(await measure(async () => void (await request('POST', '/api/v1/push', { items: items(1) }))))
        queen['push 100']!.push(await measure(async () => void (await request('POST', '/api/v1/push', { items: items(100) }))))
        let popped: { transactionId: string; partitionId: string; leaseId: string }[] = []
        queen['pop 100']!.push(await measure(async () => void (popped = (await request('GET', '/api/v1/pop/queue/edge?batch=100&wait=false')).body.messages)))
        const acks = popped.map((m) => ({ transactionId: m.transactionId, partitionId: m.partitionId, leaseId: m.leaseId, status: 'completed' }))
        queen['ack 100']!.push(await measure(async () => void (await request('POST', '/api/v1/ack/batch', { acknowledgments: acks }))))
        queen.configure!.push(await measure(async () => void (await request('POST', '/api/v1/configure', { queue: 'edge', options: { leaseTime: 60 + (i % 2) } }))))
        // The cycle: one message pushed, popped and acked (the backlog is empty after the ack above).
        queen['push 1 + pop + ack']!.push(
          await measure(async () => {
            await request('POST', '/api/v1/push', { items: items(1) })
            const m = (await request('GET', '/api/v1/pop/queue/edge?batch=100&wait=false')).body.messages
            await request('POST', '/api/v1/ack/batch', { acknowledgments: m.map((x: { transactionId: string; partitionId: string; leaseId: string }) => ({ ...x, status: 'completed' })) })
          }),
        )

        plain['push 1']!.push(await measure(() => usual(async (q) => { await q('begin'); await q(insertRows(1), payloads(1)); await q('commit') })))
        plain['push 100']!.push(await measure(() => usual(async (q) => { await q('begin'); await q(insertRows(100), payloads(100)); await q('commit') })))
        let ids: string[] = []
        const lease = async (q: (text: string, values?: unknown[]) => Promise<{ rows: { id: string }[] }>) => {
          await q('begin')
          ids = (await q(`select id from bench_edge.messages where partition = 'p' and (lease_until is null or lease_until < now()) order by id limit 100 for update skip locked`)).rows.map((r) => r.id)
          await q(`update bench_edge.messages set lease_until = now() + interval '60 seconds' where id = any($1::bigint[])`, [ids])
          await q('commit')
        }
        plain['pop 100']!.push(await measure(() => usual(lease)))
        plain['ack 100']!.push(await measure(() => usual(async (q) => void (await q('delete from bench_edge.messages where id = any($1::bigint[])', [ids])))))
        plain['push 1 + pop + ack']!.push(
          await measure(async () => {
            await usual(async (q) => { await q('begin'); await q(insertRows(1), payloads(1)); await q('commit') })
            await usual(lease)
            await usual(async (q) => void (await q('delete from bench_edge.messages where id = any($1::bigint[])', [ids])))
          }),
        )
      }
      for (const [op, samples] of Object.entries(queen)) rows.push(summarise({ setup, rttMs, client: 'queen-edge', op }, samples))
      for (const [op, samples] of Object.entries(plain)) rows.push(summarise({ setup, rttMs, client: 'usual', op }, samples))
    }
  }
} finally {
  await mf?.dispose()
  await bridge.close()
  await bouncer.stop()
  await embedded.stop()
  rmSync(dataDir, { recursive: true, force: true })
}

const out = join(fileURLToPath(new URL('.', import.meta.url)), 'results')
mkdirSync(out, { recursive: true })
writeFileSync(join(out, 'edge.json'), JSON.stringify({ at: new Date().toISOString(), rows }, null, 2))
const table = [
  '| setup | RTT ms | op | Queen Edge p50 / p99 ms | round trips (setup + query) | usual way p50 / p99 ms | round trips (setup + query) |',
  '|---|---:|---|---:|---:|---:|---:|',
  ...rows
    .filter((r) => r.client === 'queen-edge')
    .map((r) => {
      const u = rows.find((x) => x.client === 'usual' && x.setup === r.setup && x.rttMs === r.rttMs && x.op === r.op)
      const cell = (x: Row | undefined) => (x ? `${x.p50} / ${x.p99}` : '—')
      const turns = (x: Row | undefined) => (x ? `${x.connections + x.setupTurns} + ${x.queryTurns}` : '—')
      return `| ${r.setup} | ${r.rttMs} | ${r.op} | ${cell(r)} | ${turns(r)} | ${cell(u)} | ${turns(u)} |`
    }),
].join('\n')
writeFileSync(join(out, 'edge.md'), `${table}\n`)
console.log(table)
