// `npx tsx bench/concurrent.ts <ref|.> <ref|.> …`: pop 100 + ack throughput under 16 concurrent
// callers on a pool of 10 (the bench's shape, without HTTP), each ref's sql/ in its own database of
// one cluster (`.` is the working tree), measured in alternating rounds. The backlog is filled as
// bench/queen.ts fills it: 100 pushes of 1 000 frames to random partitions of 1 001. GROUP=<name>
// pops as a named group instead of queue mode; ROUNDS (2) and SECS (5) per round; FILL (100) pushes of
// 1 000 frames make the backlog. A round after the
// backlog drains reports 0. This is the check behind BENCHMARKS.md's "pop + ack under 16 clients".
import { execFileSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pg from 'pg'
import { startEmbeddedPostgres } from '../src/db/embedded.js'
import { migrate } from '../src/db/migrate.js'
import { createNodePool } from '../src/db/node-pool.js'
import type { PoolLike } from '../src/db/queryable.js'
interface SqlFile { name: string; checksum: string; sql: string }
const sqlFile = (name: string, sql: string): SqlFile => ({ name, checksum: createHash('sha256').update(sql).digest('hex'), sql })
function sqlFiles(ref?: string) {
  const read = (dir: string): SqlFile[] => ref
    ? execFileSync('git', ['ls-tree', '--name-only', `${ref}:${dir}`], { encoding: 'utf8' }).split('\n').filter((n) => n.endsWith('.sql')).sort().map((n) => sqlFile(n, execFileSync('git', ['show', `${ref}:${dir}/${n}`], { encoding: 'utf8', maxBuffer: 1 << 26 })))
    : readdirSync(dir).filter((n) => n.endsWith('.sql')).sort().map((n) => sqlFile(n, readFileSync(join(dir, n), 'utf8')))
  const procedures = read('sql/procedures')
  const functions = new Set<string>()
  for (const f of procedures) for (const m of f.sql.matchAll(/create\s+(?:or\s+replace\s+)?function\s+queen\.([a-z_][a-z0-9_]*)\s*\(/gi)) functions.add(m[1]!.toLowerCase())
  return { migrations: read('sql/migrations'), procedures, functions: [...functions].sort() }
}
const tmp = mkdtempSync(join(tmpdir(), 'queen-conc-'))
const server = await startEmbeddedPostgres({ dataDir: tmp })
const item = (i: number, partition: string) => ({ index: i, queue: 'm', partition, transactionId: null, traceId: null, producerSub: null, enc: false, data: { n: i, t: 1234.567, s: 'bench' } })
// Raw calls, not the working tree's decoders: the refs compared may answer in different shapes.
const call = async (pool: PoolLike, name: string, arg: string, value: unknown) =>
  (await pool.query(`select queen.${name}(p_tenant => '', ${arg} => $1::jsonb) as r`, [JSON.stringify(value)])).rows[0]!.r as Record<string, unknown>
// The popped (partition, transaction id) pairs of either answer shape: messages, or claims of stored frames.
const popped = (r: Record<string, unknown>) =>
  (r.messages as { partitionId: string; transactionId: string }[] | undefined) ??
  (r.claims as { partitionId: string; frames: { txn: string }[] }[]).flatMap((c) => c.frames.map((f) => ({ partitionId: c.partitionId, transactionId: f.txn })))
const dbs: { label: string; pool: PoolLike }[] = []
for (const ref of process.argv.slice(2)) {
  const label = ref.replace(/[^a-z0-9]/gi, '') || 'work'
  const admin = new pg.Client({ connectionString: server.url }); await admin.connect(); await admin.query(`create database c_${label}`); await admin.end()
  const u = new URL(server.url); u.pathname = `/c_${label}`
  const setup = createNodePool({ connectionString: u.toString(), max: 1 })
  await migrate(setup, { statementTimeoutMs: 60000, files: sqlFiles(ref === '.' ? undefined : ref) }); await setup.end()
  const pool = createNodePool({ connectionString: u.toString(), max: 10 })
  await call(pool, 'log_push_v1', 'p_items', Array.from({ length: 1001 }, (_, i) => item(0, `p${i}`)))
  dbs.push({ label, pool })
}
async function fill(pool: PoolLike) { for (let i = 0; i < Number(process.env.FILL ?? 100); i++) await call(pool, 'log_push_v1', 'p_items', Array.from({ length: 1000 }, (_, k) => item(k, `p${Math.floor(Math.random() * 1001)}`))) }
async function run(d: (typeof dbs)[number], secs: number) {
  let n = 0; const end = Date.now() + secs * 1000
  await Promise.all(Array.from({ length: 16 }, async () => {
    while (Date.now() < end) {
      const r = await call(d.pool, 'log_pop_v1', 'p_request', { queue: 'm', group: process.env.GROUP ?? '', batch: 100, partitions: 1, autoAck: false, subscriptionMode: 'all', maxBytes: 8388608 })
      const messages = popped(r)
      if (messages.length === 0) continue
      await call(d.pool, 'log_ack_v1', 'p_acks', messages.map((m, i) => ({ index: i, partitionId: m.partitionId, transactionId: m.transactionId, offset: null, consumerGroup: process.env.GROUP ?? null, leaseId: r.leaseId, status: 'completed', error: null })))
      n += messages.length
    }
  }))
  return n / secs
}
for (const d of dbs) await fill(d.pool)
for (let round = 0; round < Number(process.env.ROUNDS ?? 2); round++) for (const d of round % 2 ? [...dbs].reverse() : dbs) console.log(d.label, (await run(d, Number(process.env.SECS ?? 5))).toFixed(0), 'msg/s')
for (const d of dbs) await d.pool.end()
await server.stop(); rmSync(tmp, { recursive: true, force: true })
