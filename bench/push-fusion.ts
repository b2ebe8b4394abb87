// `npx tsx bench/push-fusion.ts`: push fusion's A/B on the cell bench's push shape (issue #33),
// without HTTP and without a broker process, so the comparison is not lost in their noise: open-loop
// pushes of one ~256-byte message, T tenants taking turns, each over P partitions of queue `orders`,
// at a fixed rate, through the Node database layer (src/db/database.ts) with NODE_FUSION's push
// settings, and with the same settings without the wait under load (`busy`), in alternating rounds
// on one database. Per variant and rate: messages per push procedure call, PostgreSQL backend CPU
// per message (the pool's backends, from /proc), and each push's latency from its intended send
// time (p50 / p99). Knobs: FUSION_RATES (600,1200,2400 msg/s), FUSION_TENANTS (4),
// FUSION_PARTITIONS (8), FUSION_SECS (4 per round), FUSION_ROUNDS (3), FUSION_POOL (10, the
// broker's default DB_POOL_SIZE), FUSION_MAX_INFLIGHT (512: past it a message is shed, as bench:cell
// does).
import { performance } from 'node:perf_hooks'
import { createDatabase, type Database } from '../src/db/database.js'
import { NODE_FUSION, type FusionOptions } from '../src/db/fusion.js'
import { migrate } from '../src/db/migrate.js'
import { createNodePool } from '../src/db/node-pool.js'
import { TICKS_PER_SECOND, postgresTicks } from './cell-cpu.js'
import { median, percentile, round, sleep } from './lib.js'
import { envInt, log, startPostgres } from './stack.js'

const RATES = (process.env.FUSION_RATES ?? '600,1200,2400').split(',').map(Number)
const TENANTS = envInt('FUSION_TENANTS', 4)
const PARTITIONS = envInt('FUSION_PARTITIONS', 8)
const SECS = envInt('FUSION_SECS', 4)
const ROUNDS = envInt('FUSION_ROUNDS', 3)
const POOL = envInt('FUSION_POOL', 10)
const MAX_INFLIGHT = envInt('FUSION_MAX_INFLIGHT', 512)
const DATABASE = 'push_fusion'
const PAD = 'x'.repeat(200)

const item = (k: number, partition: number) =>
  ({ index: 0, queue: 'orders', partition: `p${partition}`, transactionId: null, traceId: null, producerSub: null, enc: false, data: { k, pad: PAD } }) as const

interface Variant {
  label: string
  db: Database
  calls: { n: number }
}

interface Round {
  sent: number
  shed: number
  calls: number
  backendTicks: number
  latencies: number[]
}

async function runRound(variant: Variant, rate: number, postmaster: number): Promise<Round> {
  const latencies: number[] = []
  let inflight = 0
  let shed = 0
  const total = rate * SECS
  const calls0 = variant.calls.n
  const ticks0 = postgresTicks(postmaster, DATABASE).backends
  const start = performance.now()
  const pending: Promise<void>[] = []
  for (let k = 0; k < total; ) {
    const due = Math.min(total, Math.floor(((performance.now() - start) * rate) / 1000) + 1)
    for (; k < due; k++) {
      if (inflight >= MAX_INFLIGHT) {
        shed++
        continue
      }
      const intended = start + (k * 1000) / rate
      const tenant = k % TENANTS
      inflight++
      pending.push(
        variant.db.call('log_push_v1', { tenant: `t${tenant}`, items: [item(k, Math.floor(k / TENANTS) % PARTITIONS)] }).then(() => {
          inflight--
          latencies.push(performance.now() - intended)
        }),
      )
    }
    await sleep(Math.max(0, start + (k * 1000) / rate - performance.now()))
  }
  await Promise.all(pending)
  return { sent: total - shed, shed, calls: variant.calls.n - calls0, backendTicks: postgresTicks(postmaster, DATABASE).backends - ticks0, latencies }
}

async function main() {
  const pg = await startPostgres()
  if (!pg.postmasterPid) throw new Error('bench/push-fusion.ts reads PostgreSQL CPU from /proc: it needs the embedded server (unset BENCH_DATABASE_URL)')
  const postmaster = pg.postmasterPid
  const variants: Variant[] = []
  try {
    await pg.admin.query(`create database ${DATABASE}`)
    const u = new URL(pg.url)
    u.pathname = `/${DATABASE}`
    const setup = createNodePool({ connectionString: u.toString(), max: 1 })
    await migrate(setup, { statementTimeoutMs: 60_000 })
    await setup.end()
    const make = (label: string, push: FusionOptions): Variant => {
      const calls = { n: 0 }
      const pool = createNodePool({ connectionString: u.toString(), max: POOL })
      const query = pool.query.bind(pool) as typeof pool.query
      pool.query = ((text: string, values?: unknown[]) => {
        if (text.includes('log_push_v1')) calls.n++
        return query(text, values)
      }) as typeof pool.query
      return { label, db: createDatabase(pool, { longLived: true, fusion: { push } }), calls }
    }
    const { busy: _busy, ...holdOnly } = NODE_FUSION.push
    variants.push(make('2 ms hold only', holdOnly), make('hold + wait under load (NODE_FUSION)', NODE_FUSION.push))
    // Every tenant's queue and partitions exist before timing, as bench:cell warms them.
    for (let t = 0; t < TENANTS; t++) {
      await variants[0]!.db.call('log_push_v1', { tenant: `t${t}`, items: Array.from({ length: PARTITIONS }, (_, p) => ({ ...item(-1, p), index: p })) })
    }
    log(`push fusion A/B: ${TENANTS} tenants × ${PARTITIONS} partitions, one message a push, pool ${POOL}, ${ROUNDS} rounds of ${SECS} s per variant and rate`)
    const results = new Map<string, Round[]>()
    for (const rate of RATES) {
      for (let r = 0; r < ROUNDS; r++) {
        for (const v of r % 2 ? [...variants].reverse() : variants) {
          const res = await runRound(v, rate, postmaster)
          const key = `${rate}|${v.label}`
          results.set(key, [...(results.get(key) ?? []), res])
          log(`  ${rate} msg/s, ${v.label}: ${round(res.sent / res.calls, 2)} msgs / call, ${Math.round(((res.backendTicks / TICKS_PER_SECOND) * 1e6) / res.sent)} backend µs / msg, shed ${res.shed}`)
          await sleep(500)
        }
      }
    }
    const rows = [...results].map(([key, rounds]) => {
      const [rate, label] = key.split('|')
      const sent = rounds.reduce((n, x) => n + x.sent, 0)
      const calls = rounds.reduce((n, x) => n + x.calls, 0)
      const ticks = rounds.reduce((n, x) => n + x.backendTicks, 0)
      const lat = rounds.flatMap((x) => x.latencies).sort((a, b) => a - b)
      const perRound = rounds.map((x) => Math.round(((x.backendTicks / TICKS_PER_SECOND) * 1e6) / x.sent))
      return `| ${rate} | ${label} | ${round(sent / calls, 2)} | ${Math.round(((ticks / TICKS_PER_SECOND) * 1e6) / sent)} (median of rounds ${median(perRound)}) | ${Math.round(percentile(lat, 50) ?? NaN)} / ${Math.round(percentile(lat, 99) ?? NaN)} ms | ${rounds.reduce((n, x) => n + x.shed, 0)} |`
    })
    console.log(['', '| msg/s | push fusion | msgs / push call | backend µs / msg | push latency p50 / p99 | shed |', '|---:|---|---:|---:|---:|---:|', ...rows].join('\n'))
  } finally {
    for (const v of variants) await v.db.close()
    await pg.stop()
  }
}

main().catch((error) => {
  console.error(error)
  process.exitCode = 1
})
