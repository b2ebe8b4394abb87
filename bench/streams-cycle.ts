// `npx tsx bench/streams-cycle.ts`: the backend CPU of one streams cycle (issue #21's yardstick)
// against a plain pop + ack of the same batch, procedures called directly (no HTTP, no broker).
//
// Queue `s` has STREAMS_PARTITIONS (64) partitions of STREAMS_FRAMES (1 200) frames. Each round, per
// partition in turn: a named-group pop of 200 (group `plain`) and the ack of all 200 by transaction
// id (what a consumer does); then a pop of 200 for group `streams.q` and one streams_cycle_v1 with
// 10 state upserts, 5 sink items and the ack of the batch's last message with count 200 (what the
// streams SDK does). Medians of wall time and of the backend's CPU (from /proc, so PostgreSQL must
// run on this machine) per call. A cycle is one call: one round trip, one transaction.
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { performance } from 'node:perf_hooks'
import pg from 'pg'
import { startEmbeddedPostgres } from '../src/db/embedded.js'
import { migrate } from '../src/db/migrate.js'
import { createNodePool } from '../src/db/node-pool.js'
import { median, schedCpuNs } from './lib.js'

const PARTITIONS = Number(process.env.STREAMS_PARTITIONS ?? 64)
const FRAMES = Number(process.env.STREAMS_FRAMES ?? 1200)
const BATCH = 200

async function main() {
  const tmp = mkdtempSync(join(tmpdir(), 'queen-streams-bench-'))
  const server = await startEmbeddedPostgres({ dataDir: tmp, postgresFlags: ['-c', 'shared_buffers=128MB'] })
  const client = new pg.Client({ connectionString: server.url })
  try {
    const setup = createNodePool({ connectionString: server.url, max: 1 })
    await migrate(setup, { statementTimeoutMs: 60_000 })
    await setup.end()
    await client.connect()
    const pid = (await client.query('select pg_backend_pid() as pid')).rows[0].pid as number
    const call = async (sql: string, values: unknown[]) => (await client.query(sql, values)).rows[0].r
    const samples = new Map<string, { ms: number[]; cpu: number[] }>()
    const timed = async (key: string, sql: string, values: unknown[]) => {
      const c0 = schedCpuNs(pid)
      const t0 = performance.now()
      const r = await call(sql, values)
      const s = samples.get(key) ?? { ms: [], cpu: [] }
      s.ms.push(performance.now() - t0)
      s.cpu.push((schedCpuNs(pid) - c0) / 1e6)
      samples.set(key, s)
      return r
    }

    for (let p = 0; p < PARTITIONS; p++) {
      for (let k = 0; k < FRAMES; k += 1000) {
        const items = Array.from({ length: Math.min(1000, FRAMES - k) }, (_, i) => ({ index: i, queue: 's', partition: `p${p}`, data: { key: `k${i % 10}`, ts: k + i } }))
        await call('select queen.log_push_v1(p_tenant => $1, p_items => $2::jsonb) as r', ['', JSON.stringify(items)])
      }
    }
    const queryId = (await call(`select queen.streams_register_query_v1(p_tenant => '', p_name => 'q', p_source_queue => 's', p_sink_queue => 'sink', p_config_hash => 'h') as r`, [])).query_id
    await client.query('vacuum analyze')

    const pop = async (key: string, group: string, partition: string) => {
      const request = { queue: 's', partition, group, batch: BATCH, partitions: 1, autoAck: false, subscriptionMode: 'all', maxBytes: 8 * 1024 * 1024 }
      const popped = await timed(key, 'select queen.log_pop_v1(p_tenant => $1, p_request => $2::jsonb) as r', ['', JSON.stringify(request)])
      type Claim = { partitionId: string; frames: { txn: string }[] }
      return (popped.claims as Claim[]).flatMap((c) => c.frames.map((f) => ({ partitionId: c.partitionId, transactionId: f.txn, leaseId: popped.leaseId as string })))
    }
    const rounds = Math.floor(FRAMES / BATCH)
    for (let r = 0; r < rounds; r++) {
      for (let p = 0; p < PARTITIONS; p++) {
        const plain = await pop('pop 200', 'plain', `p${p}`)
        const acks = plain.map((m, i) => ({ index: i, partitionId: m.partitionId, transactionId: m.transactionId, consumerGroup: 'plain', leaseId: m.leaseId, status: 'completed' }))
        await timed('ack 200', 'select queen.log_ack_v1(p_tenant => $1, p_acks => $2::jsonb) as r', ['', JSON.stringify(acks)])

        const batch = await pop('pop 200 (streams)', 'streams.q', `p${p}`)
        const last = batch[batch.length - 1]!
        const body = {
          query_id: queryId,
          partition_id: last.partitionId,
          consumer_group: 'streams.q',
          release_lease: true,
          state_ops: Array.from({ length: 10 }, (_, i) => ({ type: 'upsert', key: `tumble\u001fk${i}\u001f${r}`, value: { count: 20, windowStart: r, windowEnd: r + 1 } })),
          push_items: Array.from({ length: 5 }, (_, i) => ({ index: i, queue: 'sink', partition: `p${p}`, data: { key: `k${i}`, count: 20 } })),
          ack: { transactionId: last.transactionId, leaseId: last.leaseId, status: 'completed', count: batch.length },
        }
        const res = await timed('cycle 200 + 10 ops + 5 items', 'select queen.streams_cycle_v1(p_tenant => $1, p_body => $2::jsonb, p_cycle_hash => $3) as r', ['', JSON.stringify(body), `${p}:${r}`])
        if (!res.success || res.ack_result.count !== BATCH) throw new Error(`cycle failed: ${JSON.stringify(res)}`)
      }
    }
    console.log(`${PARTITIONS} partitions × ${rounds} rounds, medians`)
    console.log('call                              wall ms   backend CPU ms')
    for (const [key, s] of samples) console.log(`${key.padEnd(34)}${median(s.ms).toFixed(3).padStart(7)}   ${median(s.cpu).toFixed(3).padStart(7)}`)
    const cpu = (k: string) => median(samples.get(k)!.cpu)
    console.log(`cycle / (pop + ack) backend CPU: ${(cpu('cycle 200 + 10 ops + 5 items') / (cpu('pop 200') + cpu('ack 200'))).toFixed(2)}; cycle / ack: ${(cpu('cycle 200 + 10 ops + 5 items') / cpu('ack 200')).toFixed(2)}`)
  } finally {
    await client.end().catch(() => {})
    await server.stop()
    rmSync(tmp, { recursive: true, force: true })
  }
}

await main()
