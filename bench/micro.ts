// `npx tsx bench/micro.ts`: times the three hot procedures called directly (no HTTP, no broker), so
// a change to sql/procedures can be judged in seconds on a shared machine. With MICRO_BASE=<git ref>
// a second database in the same cluster gets that ref's procedures (MICRO_REFS=a,b,… for several
// refs), and they are measured in
// alternating rounds, so load from other tenants of the machine hits both sides alike (A/B).
//
// Per database: queue `m` with MICRO_PARTITIONS (1 001) partitions of MICRO_FRAMES (300) frames,
// and queue `w` with MICRO_WIDE (10 001) partitions of 3 frames (0 skips it). Each round times, per
// side: push of 100 frames to one random partition of `m`; wildcard pop of 100 from `m` (queue
// mode) and the ack of what it returned (by transactionId, as bench/queen.ts acks); the same for a
// named group; and a wildcard pop of 1 + its ack on `w`. Medians over all rounds of the wall time
// and of the backend's CPU time (from /proc, so PostgreSQL must run on this machine); µs of CPU per
// frame for the batch-100 calls. MICRO_EXPLAIN=1 prints auto_explain plans of one call of each afterwards.
import { execFileSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { performance } from 'node:perf_hooks'
import pg from 'pg'
import { startEmbeddedPostgres } from '../src/db/embedded.js'
import { migrate } from '../src/db/migrate.js'
import { createNodePool } from '../src/db/node-pool.js'
import { median, schedCpuNs as cpuNs } from './lib.js'

const PARTITIONS = Number(process.env.MICRO_PARTITIONS ?? 1001)
const FRAMES = Number(process.env.MICRO_FRAMES ?? 300)
const WIDE = Number(process.env.MICRO_WIDE ?? 10001)
const ROUNDS = Number(process.env.MICRO_ROUNDS ?? 8)
const PER_ROUND = Number(process.env.MICRO_PER_ROUND ?? 10)
const BASE = process.env.MICRO_BASE

interface SqlFile { name: string; checksum: string; sql: string }
const sqlFile = (name: string, sql: string): SqlFile => ({ name, checksum: createHash('sha256').update(sql).digest('hex'), sql })

/** The migrations and procedures of the working tree, or of a git ref. */
function sqlFiles(ref?: string) {
  const read = (dir: string) =>
    ref
      ? execFileSync('git', ['ls-tree', '--name-only', `${ref}:${dir}`], { encoding: 'utf8' }).split('\n').filter((n) => n.endsWith('.sql')).sort()
          .map((n) => sqlFile(n, execFileSync('git', ['show', `${ref}:${dir}/${n}`], { encoding: 'utf8', maxBuffer: 1 << 26 })))
      : readdirSync(dir).filter((n) => n.endsWith('.sql')).sort().map((n) => sqlFile(n, readFileSync(join(dir, n), 'utf8')))
  const procedures = read('sql/procedures')
  const functions = new Set<string>()
  for (const f of procedures) for (const m of f.sql.matchAll(/create\s+(?:or\s+replace\s+)?function\s+queen\.([a-z_][a-z0-9_]*)\s*\(/gi)) functions.add(m[1]!.toLowerCase())
  return { migrations: read('sql/migrations'), procedures, functions: [...functions].sort() }
}

const item = (i: number, queue: string, partition: string) => ({ index: i, queue, partition, transactionId: null, traceId: null, producerSub: null, enc: false, data: { n: i, t: 1234.567, s: 'bench' } })



class Side {
  times = new Map<string, number[]>()
  frames = new Map<string, number[]>()
  cpu = new Map<string, number[]>()
  pid = 0
  cellTurn = 0
  constructor(readonly label: string, readonly client: pg.Client) {}
  async call(proc: string, args: Record<string, unknown>): Promise<any> {
    const names = Object.keys(args)
    const text = `select queen.${proc}(${names.map((n, i) => `p_${n} => $${i + 1}${typeof args[n] === 'object' ? '::jsonb' : ''}`).join(', ')}) as r`
    const values = names.map((n) => (typeof args[n] === 'object' ? JSON.stringify(args[n]) : args[n]))
    return (await this.client.query(text, values)).rows[0].r
  }
  async timed(key: string, proc: string, args: Record<string, unknown>, frames = 0): Promise<any> {
    const c0 = cpuNs(this.pid)
    const t0 = performance.now()
    const r = await this.call(proc, args)
    const ms = performance.now() - t0
    const cpuMs = (cpuNs(this.pid) - c0) / 1e6
    if (!this.cpu.has(key)) this.cpu.set(key, [])
    this.cpu.get(key)!.push(cpuMs)
    if (!this.times.has(key)) this.times.set(key, [])
    this.times.get(key)!.push(ms)
    if (frames > 0) {
      if (!this.frames.has(key)) this.frames.set(key, [])
      this.frames.get(key)!.push((ms * 1000) / frames)
    }
    return r
  }
}

async function fill(side: Side, queue: string, partitions: number, frames: number) {
  // ~1000 frames per call, whole partitions per call.
  const perCall = Math.max(1, Math.floor(1000 / frames))
  for (let from = 0; from < partitions; from += perCall) {
    const items = []
    for (let p = from; p < Math.min(partitions, from + perCall); p++) for (let k = 0; k < frames; k++) items.push(item(items.length, queue, `p${p}`))
    await side.call('log_push_v1', { tenant: '', items })
  }
}

type Claim = { partitionId: string; frames: { txn: string }[] }
const poppedMessages = (popped: any) =>
  (popped.messages ?? (popped.claims as Claim[]).flatMap((c) => c.frames.map((f) => ({ partitionId: c.partitionId, transactionId: f.txn, leaseId: popped.leaseId })))) as
    { partitionId: string; transactionId: string; leaseId: string }[]

async function popAck(side: Side, key: string, queue: string, batch: number, group: string | null, partition?: string) {
  const request = { queue, ...(partition !== undefined ? { partition } : {}), group, batch, partitions: 1, autoAck: false, subscriptionMode: 'all', maxBytes: 8 * 1024 * 1024 }
  const popped = await side.timed(`pop ${key}`, 'log_pop_v1', { tenant: '', request }, batch)
  // Pop answers claims of stored frames (004_log_pop.sql); an older ref answered messages.
  const messages = poppedMessages(popped)
  if (messages.length === 0) return
  const acks = messages.map((m, i) => ({ index: i, partitionId: m.partitionId, transactionId: m.transactionId, offset: null, consumerGroup: group, leaseId: m.leaseId, status: 'completed', error: null }))
  const res = await side.timed(`ack ${key}`, 'log_ack_v1', { tenant: '', acks }, batch)
  // The common ack answers in its compact shape (005_log_ack.sql), which means every item succeeded.
  const bad = Array.isArray(res) ? (res as { success: boolean }[]).filter((r) => !r.success).length : 0
  if (bad > 0) throw new Error(`${side.label}: ${bad} acks refused`)
}

// MICRO_ONLY=push|pop|cell|fetch|create: time only those calls (the fill and first contact still run).
const ONLY = process.env.MICRO_ONLY
/** The cell bench's queue: 8 partitions, group `workers`, messages pushed one a call and popped as they come. */
const CELL_PARTITIONS = 8

/**
 * The cell bench's cycle with nothing in between (bench/cell.ts): `n` pushes of one frame to the
 * partitions in turn, one pop of up to 50 for the group (it claims one partition, so it answers
 * that partition's share), its ack, and a pop that finds nothing: the fixed cost per call that
 * small messages pay.
 */
async function cellCycle(side: Side, n: number) {
  for (let k = 0; k < n; k++) {
    await side.timed('cell push 1', 'log_push_v1', { tenant: 'cell', items: [item(0, 'c', `p${(side.cellTurn++) % CELL_PARTITIONS}`)] })
  }
  for (;;) {
    const request = { queue: 'c', group: 'workers', batch: 50, partitions: 1, autoAck: false, subscriptionMode: 'all', maxBytes: 8 * 1024 * 1024 }
    const popped = await side.timed(`cell pop (${n} pushed)`, 'log_pop_v1', { tenant: 'cell', request })
    const messages = poppedMessages(popped)
    if (messages.length === 0) break
    const acks = messages.map((m, i) => ({ index: i, partitionId: m.partitionId, transactionId: m.transactionId, offset: null, consumerGroup: 'workers', leaseId: m.leaseId, status: 'completed', error: null }))
    await side.timed(`cell ack ${messages.length}`, 'log_ack_v1', { tenant: 'cell', acks })
  }
}

/** The fetch bench's partitions: 10 000 frames each, stored as pushes of 100 and as pushes of 1. */
const FETCH_LOG = 10_000
async function fillFetch(side: Side) {
  for (let from = 0; from < FETCH_LOG; from += 100) {
    await side.call('log_push_v1', { tenant: 'fetch', items: Array.from({ length: 100 }, (_, k) => item(k, 'f', 'seg100')) })
  }
  for (let k = 0; k < FETCH_LOG; k++) await side.call('log_push_v1', { tenant: 'fetch', items: [item(0, 'f', 'seg1')] })
}

/** Pages of 100 and 1 000 frames from a random offset in the first half of each partition, as the sink reads. */
async function fetchRound(side: Side) {
  for (const partition of ['seg100', 'seg1']) {
    for (const limit of [100, 1000]) {
      for (let i = 0; i < PER_ROUND; i++) {
        const fromOffset = Math.floor((Math.random() * FETCH_LOG) / 2)
        const entries = [{ queue: 'f', partition, fromOffset, limit, maxBytes: 8 * 1024 * 1024 }]
        const answer = await side.timed(`fetch ${limit} ${partition}`, 'log_fetch_v1', { tenant: 'fetch', entries })
        if (answer.entries[0].frames.length !== limit) throw new Error(`${side.label}: fetch answered ${answer.entries[0].frames.length} of ${limit}`)
      }
    }
  }
}

/** Queues one bulk-create round makes in a single push (MICRO_CREATE), one frame each. */
const CREATE = Number(process.env.MICRO_CREATE ?? 10_000)
/** One push naming CREATE queues that do not exist yet, then the same push again (all found). */
async function createRound(side: Side) {
  const prefix = `bulk-${side.times.get('create')?.length ?? 0}-`
  const items = Array.from({ length: CREATE }, (_, i) => item(i, `${prefix}${String(i).padStart(6, '0')}`, 'Default'))
  await side.timed('create', 'log_push_v1', { tenant: 'create', items })
  await side.timed('push to existing', 'log_push_v1', { tenant: 'create', items })
}

async function round(side: Side) {
  if (ONLY === 'fetch') return fetchRound(side)
  if (ONLY === 'create') return createRound(side)
  if (ONLY === 'cell') {
    for (let i = 0; i < PER_ROUND; i++) await cellCycle(side, 1)
    for (let i = 0; i < PER_ROUND; i++) await cellCycle(side, 8)
    for (let i = 0; i < PER_ROUND; i++) {
      const request = { queue: 'c', group: 'workers', batch: 50, partitions: 1, autoAck: false, subscriptionMode: 'all', maxBytes: 8 * 1024 * 1024 }
      await side.timed('cell pop empty', 'log_pop_v1', { tenant: 'cell', request })
    }
    return
  }
  for (const n of ONLY === 'pop' ? [] : [1, 10, 100]) {
    for (let i = 0; i < PER_ROUND; i++) {
      const p = `p${Math.floor(Math.random() * PARTITIONS)}`
      await side.timed(`push ${n}`, 'log_push_v1', { tenant: '', items: Array.from({ length: n }, (_, k) => item(k, 'm', p)) }, n)
    }
  }
  // With client transaction ids: the dedup path (hash lookups and inserts).
  for (let i = 0; i < PER_ROUND && ONLY !== 'pop'; i++) {
    const p = `p${Math.floor(Math.random() * PARTITIONS)}`
    const items = Array.from({ length: 100 }, (_, k) => ({ ...item(k, 'm', p), transactionId: `t-${Math.random().toString(36).slice(2)}-${k}` }))
    await side.timed('push 100 txn', 'log_push_v1', { tenant: '', items }, 100)
  }
  if (ONLY === 'push') return
  for (let i = 0; i < PER_ROUND; i++) await popAck(side, '100 queue-mode', 'm', 100, null)
  for (let i = 0; i < PER_ROUND; i++) await popAck(side, '100 group', 'm', 100, 'g1')
  if (WIDE > 0) for (let i = 0; i < PER_ROUND; i++) await popAck(side, `1 @${WIDE}`, 'w', 1, null)
  if (WIDE > 0) for (let i = 0; i < PER_ROUND; i++) await popAck(side, `1 group @${WIDE}`, 'w', 1, 'g1')
  // A partition-scoped pop on the wide queue: one partition's probe, whatever the queue's width.
  if (WIDE > 0) for (let i = 0; i < PER_ROUND; i++) await popAck(side, `1 partition @${WIDE}`, 'w', 1, 'g1', `p${Math.floor(Math.random() * WIDE)}`)
}

async function main() {
  const tmp = mkdtempSync(join(tmpdir(), 'queen-micro-'))
  const server = await startEmbeddedPostgres({ dataDir: tmp, postgresFlags: ['-c', 'shared_buffers=128MB'] })
  const clients: pg.Client[] = []
  try {
    const sides: Side[] = []
    // MICRO_BASE=<ref> compares that ref with the working tree; MICRO_REFS=a,b,… compares refs
    // (`.` is the working tree), e.g. to measure one commit against its parent.
    const refs = process.env.MICRO_REFS?.split(',') ?? (BASE ? [BASE, '.'] : ['.'])
    const variants: [string, string | undefined][] = refs.map((r, i) => [`v${i}_${r === '.' ? 'work' : r.replace(/[^a-z0-9]/gi, '')}`.toLowerCase(), r === '.' ? undefined : r])
    for (const [label, ref] of variants) {
      const admin = new pg.Client({ connectionString: server.url })
      await admin.connect()
      await admin.query(`create database micro_${label}`)
      await admin.end()
      const u = new URL(server.url)
      u.pathname = `/micro_${label}`
      const setup = createNodePool({ connectionString: u.toString(), max: 1 })
      // The broker's 60 s statement timeout, unless a bench of slow calls (the old bulk create) needs more.
      await migrate(setup, { statementTimeoutMs: Number(process.env.MICRO_STATEMENT_TIMEOUT_MS ?? 60_000), files: sqlFiles(ref) })
      await setup.end()
      const client = new pg.Client({ connectionString: u.toString() })
      await client.connect()
      clients.push(client)
      const side = new Side(label, client)
      side.pid = (await client.query('select pg_backend_pid() as pid')).rows[0].pid
      await fill(side, 'm', PARTITIONS, FRAMES)
      if (WIDE > 0) await fill(side, 'w', WIDE, 3)
      // First contact of both groups (cursor rows), then statistics, as a running broker would have.
      await popAck(side, 'warm', 'm', 100, null)
      await popAck(side, 'warm', 'm', 100, 'g1')
      if (WIDE > 0) await popAck(side, 'warm', 'w', 1, null)
      if (WIDE > 0) await popAck(side, 'warm', 'w', 1, 'g1')
      if (ONLY === 'cell') await cellCycle(side, CELL_PARTITIONS)
      if (ONLY === 'fetch') await fillFetch(side)
      await client.query('vacuum analyze')
      side.times.clear()
      side.frames.clear()
      side.cpu.clear()
      sides.push(side)
    }
    for (let r = 0; r < ROUNDS; r++) for (const side of r % 2 ? [...sides].reverse() : sides) await round(side)

    const keys = [...sides[0]!.times.keys()]
    const rows = keys.map((k) => {
      const cols = sides.map((s) => {
        const ms = median(s.times.get(k) ?? [])
        const cpu = median(s.cpu.get(k) ?? [])
        const per = / 100( |$)/.test(k) ? ` ${((cpu * 1000) / 100).toFixed(1).padStart(6)} µs/frame` : ''.padEnd(16)
        return `${ms.toFixed(2).padStart(8)} ms wall ${cpu.toFixed(2).padStart(7)} ms cpu${per}`
      })
      return `${k.padEnd(22)} ${cols.join('   |')}`
    })
    console.log(`partitions ${PARTITIONS} × ${FRAMES} frames, wide ${WIDE}; ${ROUNDS} rounds × ${PER_ROUND} calls; medians`)
    console.log(`${''.padEnd(22)} ${sides.map((s) => s.label.padEnd(48)).join('|')}`)
    for (const r of rows) console.log(r)

    if (process.env.MICRO_EXPLAIN === '1') {
      const side = sides[sides.length - 1]!
      const c = side.client
      c.on('notice', (n) => console.log(n.message))
      await c.query(`load 'auto_explain'`)
      await c.query(`set auto_explain.log_min_duration = ${Number(process.env.MICRO_EXPLAIN_MIN_MS ?? 0.5)}`)
      await c.query(`set auto_explain.log_analyze = on`)
      await c.query(`set auto_explain.log_buffers = on`)
      await c.query(`set auto_explain.log_nested_statements = on`)
      await c.query(`set client_min_messages = log`)
      const what = process.env.MICRO_EXPLAIN_WHAT ?? 'push,pop,wide'
      if (what.includes('push')) {
        console.log('==== push 100')
        await side.call('log_push_v1', { tenant: '', items: Array.from({ length: 100 }, (_, k) => item(k, 'm', 'p3')) })
      }
      if (what.includes('pop')) {
        console.log('==== pop 100 + ack (queue mode)')
        await popAck(side, 'x', 'm', 100, null)
      }
      if (what.includes('wide')) {
        console.log(`==== pop 1 + ack @${WIDE} (group)`)
        await popAck(side, 'x', 'w', 1, 'g1')
      }
    }
  } finally {
    for (const c of clients) await c.end().catch(() => {})
    await server.stop()
    rmSync(tmp, { recursive: true, force: true })
  }
}

main().catch((error) => {
  console.error(error)
  process.exit(1)
})
