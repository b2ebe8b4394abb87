// `npx tsx bench/explain.ts`: the plans, with actual times, of the statements inside one push of 100
// frames, one wildcard pop of 100 and its ack, on a queue of BENCH_EXPLAIN_PARTITIONS (1 001)
// partitions. auto_explain (nested statements, analyze) is loaded in this session only and its
// output arrives as notices, so nothing outside this throwaway cluster changes. This is the
// drill-down behind BENCHMARKS.md's "what limits each figure"; it measures nothing by itself.
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pg from 'pg'
import { createDatabase } from '../src/db/database.js'
import { startEmbeddedPostgres } from '../src/db/embedded.js'
import { migrate } from '../src/db/migrate.js'
import { createNodePool } from '../src/db/node-pool.js'
import type { PoolLike } from '../src/db/queryable.js'

const partitions = Number(process.env.BENCH_EXPLAIN_PARTITIONS ?? 1001)
const minMs = Number(process.env.BENCH_EXPLAIN_MIN_MS ?? 1)

async function main() {
  const tmp = mkdtempSync(join(tmpdir(), 'queen-explain-'))
  const server = await startEmbeddedPostgres({ dataDir: tmp })
  try {
    const setup = createNodePool({ connectionString: server.url, max: 1 })
    await migrate(setup, { statementTimeoutMs: 60_000 })
    await setup.end()

    // One connection, so the LOAD and SETs below apply to every call.
    const pool = new pg.Pool({ connectionString: server.url, max: 1 })
    let printing = false
    pool.on('connect', (client) => client.on('notice', (n) => printing && console.log(n.message)))
    await pool.query(`load 'auto_explain'`)
    await pool.query(`set auto_explain.log_min_duration = ${minMs}`)
    await pool.query(`set auto_explain.log_analyze = on`)
    await pool.query(`set auto_explain.log_nested_statements = on`)
    await pool.query(`set auto_explain.log_timing = on`)
    await pool.query(`set client_min_messages = log`)
    const db = createDatabase(pool as unknown as PoolLike, { longLived: true })

    const tenant = ''
    const queue = 'explain'
    const item = (i: number, partition: string) => ({ index: i, queue, partition, transactionId: null, traceId: null, producerSub: null, enc: false, data: { n: i, t: 1234.567 } })
    // 200 frames in every partition, pushed before anything is printed; a first pop and ack create
    // the cursor rows, so what is printed is the steady state, not first contact.
    for (let from = 0; from < partitions; from += 10) {
      const items = []
      for (let i = from; i < Math.min(partitions, from + 10); i++) for (let k = 0; k < 200; k++) items.push(item(items.length, `p${i}`))
      await db.call('log_push_v1', { tenant, items })
    }
    const request = { queue, group: '__QUEUE_MODE__', batch: 100, partitions: 1, autoAck: false, subscriptionMode: 'all', maxBytes: 8 * 1024 * 1024 } as const
    const ackAll = (messages: { partitionId: string; transactionId: string; leaseId: string }[]) =>
      db.call('log_ack_v1', {
        tenant,
        acks: messages.map((m, i) => ({ index: i, partitionId: m.partitionId, transactionId: m.transactionId, offset: null, consumerGroup: null, leaseId: m.leaseId, status: 'completed', error: null })),
      })
    await ackAll((await db.call('log_pop_v1', { tenant, request })).messages)
    // BENCH_EXPLAIN_ANALYZE=1 refreshes planner statistics first: plans differ before and after
    // autovacuum's first ANALYZE of the freshly filled tables, and so can a benchmark run.
    if (process.env.BENCH_EXPLAIN_ANALYZE === '1') await pool.query('analyze')
    printing = true
    console.log(`==== push of 100 frames to one partition of ${partitions}`)
    await db.call('log_push_v1', { tenant, items: Array.from({ length: 100 }, (_, i) => item(i, 'p7')) })
    console.log(`==== wildcard pop batch 100 over ${partitions} partitions`)
    const popped = await db.call('log_pop_v1', { tenant, request })
    console.log(`==== ack of the ${popped.messages.length} popped frames`)
    await ackAll(popped.messages)
    printing = false
    await pool.end()
  } finally {
    await server.stop()
    rmSync(tmp, { recursive: true, force: true })
  }
}

main().catch((error) => {
  console.error(error)
  process.exit(1)
})
