// `npx tsx bench/ack-fusion.ts` (issue #9): PostgreSQL's CPU for one fused ack of several leases
// against the same acks sent one call each, called directly on one connection (no broker): what a
// fused call costs on the database, whichever path (_log_ack_leases, or the general one) it takes.
// One embedded cluster with the working tree's procedures (the generated bundle: run
// `npm run build:sql` after editing sql/); queue `q` of ACKF_PARTITIONS partitions with 200 frames
// each. Each round pops ACKF_LEASES leases of ACKF_ITEMS frames (one partition each) and acks them
// one call per lease, then pops as many again and acks them in one call, items renumbered as
// src/db/fusion.ts does; the backend's CPU (from /proc/<pid>/schedstat) around the acks only.
// Medians over ACKF_ROUNDS rounds. To compare a git ref, check out its src/db/sql-bundle.generated.ts.
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pg from 'pg'
import { startEmbeddedPostgres } from '../src/db/embedded.js'
import { migrate } from '../src/db/migrate.js'
import { createNodePool } from '../src/db/node-pool.js'
import { median, schedCpuNs as cpuNs } from './lib.js'

const int = (name: string, fallback: number) => (process.env[name] ? Number(process.env[name]) : fallback)
const LEASES = int('ACKF_LEASES', 2)
const ITEMS = int('ACKF_ITEMS', 100)
const ROUNDS = int('ACKF_ROUNDS', 80)
const PARTITIONS = int('ACKF_PARTITIONS', Math.max(200, Math.ceil((2 * ROUNDS * LEASES * ITEMS) / 200) + 1))


async function main() {
  const dir = mkdtempSync(join(tmpdir(), 'queen-ack-fusion-'))
  const server = await startEmbeddedPostgres({ dataDir: dir })
  try {
    const pool = createNodePool({ connectionString: server.url, max: 1 })
    await migrate(pool, { statementTimeoutMs: 60_000 })
    await pool.end()
    const client = new pg.Client({ connectionString: server.url })
    await client.connect()
    const pid = (await client.query('select pg_backend_pid() as pid')).rows[0].pid as number
    const call = async (proc: string, args: Record<string, unknown>) => {
      const names = Object.keys(args)
      const text = `select queen.${proc}(${names.map((n, i) => `p_${n} => $${i + 1}${typeof args[n] === 'object' ? '::jsonb' : ''}`).join(', ')}) as r`
      return (await client.query(text, names.map((n) => (typeof args[n] === 'object' ? JSON.stringify(args[n]) : args[n])))).rows[0].r
    }
    for (let p = 0; p < PARTITIONS; p += 5) {
      const items = []
      for (let k = p; k < Math.min(PARTITIONS, p + 5); k++) {
        for (let j = 0; j < 200; j++) items.push({ index: items.length, queue: 'q', partition: `p${k}`, transactionId: null, traceId: null, producerSub: null, enc: false, data: { n: j } })
      }
      await call('log_push_v1', { tenant: '', items })
    }

    let next = 0
    /** LEASES leases of ITEMS frames, one partition each, as ack items numbered from 0 per lease. */
    const leases = async () => {
      const out = []
      for (let l = 0; l < LEASES; l++) {
        const request = { queue: 'q', partition: `p${next++ % PARTITIONS}`, group: null, batch: ITEMS, partitions: 1, autoAck: false, subscriptionMode: 'all', maxBytes: 8 << 20 }
        const r = await call('log_pop_v1', { tenant: '', request })
        const frames = (r.claims as { partitionId: string; frames: { txn: string }[] }[]).flatMap((c) => c.frames.map((f) => ({ partitionId: c.partitionId, transactionId: f.txn })))
        if (frames.length !== ITEMS) throw new Error(`popped ${frames.length} of ${ITEMS}`)
        out.push(frames.map((f, index) => ({ index, ...f, leaseId: r.leaseId, offset: null, consumerGroup: null, status: 'completed', error: null })))
      }
      return out
    }
    // A compact answer ({plain} or {leases}) means every item it carries succeeded.
    const failures = (r: { success: boolean }[] | { rest?: { success: boolean }[] }) => (Array.isArray(r) ? r : (r.rest ?? [])).some((x) => !x.success)
    const alone: number[] = []
    const fused: number[] = []
    for (let round = 0; round < ROUNDS; round++) {
      const separate = await leases()
      let t = cpuNs(pid)
      for (const acks of separate) if (failures(await call('log_ack_v1', { tenant: '', acks }))) throw new Error('an ack alone failed')
      alone.push((cpuNs(pid) - t) / 1e6)
      const together = (await leases()).flat().map((a, index) => ({ ...a, index }))
      t = cpuNs(pid)
      if (failures(await call('log_ack_v1', { tenant: '', acks: together }))) throw new Error('a fused ack failed')
      fused.push((cpuNs(pid) - t) / 1e6)
    }
    console.log(`${LEASES} leases of ${ITEMS} items, backend CPU (median of ${ROUNDS}): one call each ${median(alone).toFixed(2)} ms, one fused call ${median(fused).toFixed(2)} ms`)
    await client.end()
  } finally {
    await server.stop()
    rmSync(dir, { recursive: true, force: true })
  }
}

main().catch((error) => {
  console.error(error)
  process.exit(1)
})
