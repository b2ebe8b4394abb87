// `npx tsx bench/ephemeral-profile.ts`: where the time of bench/ephemeral.ts goes inside PostgreSQL,
// without the broker. The same shapes (batch 100, ~28-byte payloads, 16 clients over a pool of 10;
// pop+ack in queue mode over a 60 000 backlog) call the procedures directly, durable and ephemeral
// alternating, and each phase reports the backends' CPU per message (utime + stime of every
// connection's backend from /proc), the commits and WAL bytes per message, and, from
// pg_stat_statements with nested tracking, the statements inside the procedures that took the time.
// PROFILE_CLIENTS (16), PROFILE_BACKLOG (60 000), PROFILE_PUSHES (300 calls a phase),
// PROFILE_ROUNDS (1), PROFILE_ANALYZE=1 (ANALYZE before the pops: plans differ before and after a
// fresh unlogged table's first statistics), PROFILE_PERF=<dir> (`perf record` per phase).
import { spawn } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pg from 'pg'
import { createDatabase } from '../src/db/database.js'
import { startEmbeddedPostgres } from '../src/db/embedded.js'
import { ackVerdicts, parseAcks } from '../src/ephemeral/ack-ids.js'
import { popMessages } from '../src/ephemeral/pop-result.js'
import { migrate } from '../src/db/migrate.js'
import { createNodePool } from '../src/db/node-pool.js'
import type { PoolLike } from '../src/db/queryable.js'
import { round } from './lib.js'

const envInt = (name: string, fallback: number) => Number(process.env[name] ?? fallback)
const CLIENTS = envInt('PROFILE_CLIENTS', 16)
const BACKLOG = envInt('PROFILE_BACKLOG', 60_000)
const PUSHES = envInt('PROFILE_PUSHES', 300)
const BATCH = 100
const payload = (n: number) => ({ n, t: round(1234.567 + n, 3) })

function ticks(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ')
  return Number(fields[11]) + Number(fields[12]) // utime + stime, in 10 ms ticks
}

async function main() {
  const tmp = mkdtempSync(join(tmpdir(), 'queen-eph-profile-'))
  const server = await startEmbeddedPostgres({ dataDir: tmp, postgresFlags: ['-c', 'shared_preload_libraries=pg_stat_statements', '-c', 'pg_stat_statements.track=all', '-c', 'pg_stat_statements.track_planning=on'] })
  try {
    const setup = createNodePool({ connectionString: server.url, max: 1 })
    await migrate(setup, { statementTimeoutMs: 60_000 })
    await setup.end()
    const admin = new pg.Client({ connectionString: server.url })
    await admin.connect()
    await admin.query('create extension if not exists pg_stat_statements')
    const pool = new pg.Pool({ connectionString: server.url, max: 10 })
    admin.on('error', () => {})
    pool.on('error', () => {})
    // Every client backend but the admin's: the pool's connections, opened on first use.
    const backends = async () =>
      (await admin.query(`select pid from pg_stat_activity where backend_type = 'client backend' and pid <> pg_backend_pid()`)).rows.map((r) => r.pid as number)
    const cpu = (pids: number[]) => pids.reduce((a, p) => { try { return a + ticks(p) } catch { return a } }, 0)
    const db = createDatabase(pool as unknown as PoolLike, { longLived: true })
    const tenant = ''

    const phase = async (name: string, op: (w: number) => Promise<number>, until: () => boolean) => {
      await admin.query('select pg_stat_statements_reset()')
      const before = await admin.query(`select xact_commit::bigint as c, pg_current_wal_lsn() as lsn from pg_stat_database where datname = current_database()`)
      const before0 = new Map((await backends()).map((p) => [p, cpu([p])]))
      // PROFILE_PERF=<dir>: `perf record` of the pool's backends during the phase, into <dir>/<phase>.data.
      const perf = process.env.PROFILE_PERF && before0.size > 0
        ? spawn('perf', ['record', '-g', '-o', join(process.env.PROFILE_PERF, `${name.replace(/\W+/g, '-')}.data`), '-p', [...before0.keys()].join(',')], { stdio: 'ignore' })
        : undefined
      const started = performance.now()
      let n = 0
      await Promise.all(Array.from({ length: CLIENTS }, async (_, w) => {
        while (!until()) {
          const got = await op(w)
          if (got === 0) break
          n += got
        }
      }))
      const ms = performance.now() - started
      if (perf) {
        perf.kill('SIGINT')
        await new Promise((done) => perf.once('exit', done))
      }
      const after0 = await backends()
      const t1 = cpu(after0)
      const t0 = after0.reduce((a, p) => a + (before0.get(p) ?? 0), 0)
      const after = await admin.query(`select xact_commit::bigint as c, pg_wal_lsn_diff(pg_current_wal_lsn(), $1) as wal from pg_stat_database where datname = current_database()`, [before.rows[0].lsn])
      // The round's own admin queries are left out; plan_ms is the planning time of those statements.
      const { rows } = await admin.query(`select toplevel, calls, round(total_exec_time::numeric, 0) as ms, round(total_plan_time::numeric, 0) as plan_ms, regexp_replace(query, '\\s+', ' ', 'g') as q
                                            from pg_stat_statements where query not like '%pg_stat%' order by total_exec_time + total_plan_time desc limit 12`)
      console.log(`== ${name}: ${n} msgs in ${round(ms, 0)} ms (${round((n / ms) * 1000, 0)} msg/s), backend CPU ${round(((t1 - t0) * 10_000) / n, 1)} µs/msg, ` +
        `commits ${round((Number(after.rows[0].c) - Number(before.rows[0].c)) / n, 3)}/msg, WAL ${round(Number(after.rows[0].wal) / n, 1)} B/msg, load ${(await import('node:os')).loadavg()[0]!.toFixed(1)}`)
      for (const r of rows) console.log(`   ${r.toplevel ? 'top ' : '    '} ${String(r.calls).padStart(6)} calls ${String(r.ms).padStart(7)} ms exec ${String(r.plan_ms).padStart(6)} ms plan  ${r.q.slice(0, 150)}`)
    }

    for (let round_ = 0; round_ < envInt('PROFILE_ROUNDS', 1); round_++) {
      const dq = `durable-${round_}`
      const eq = `ephemeral-${round_}`
      await db.call('ephemeral_configure_v1', { tenant, queue: eq, options: { maxLength: 1_000_000, maxBytes: 268_435_456 } })
      // Push: PUSHES calls of 100 per phase.
      let calls = 0
      const durablePush = async (w: number) => {
        calls++
        const items = Array.from({ length: BATCH }, (_, i) => ({ index: i, queue: dq, partition: `p${w}`, transactionId: null, traceId: null, producerSub: null, enc: false, data: payload(i) }))
        await db.call('log_push_v1', { tenant, items } as never)
        return BATCH
      }
      const ephemeralPush = async (w: number) => {
        calls++
        await db.call('ephemeral_push_v1', { tenant, queue: eq, partition: `p${w}`, payloads: Array.from({ length: BATCH }, (_, i) => payload(i)) } as never)
        return BATCH
      }
      await phase('durable push', durablePush, () => calls >= PUSHES)
      calls = 0
      await phase('ephemeral push', ephemeralPush, () => calls >= PUSHES)
      calls = 0

      // Pop+ack over a backlog.
      const dc = `durable-consume-${round_}`
      const ec = `ephemeral-consume-${round_}`
      await db.call('ephemeral_configure_v1', { tenant, queue: ec, options: { maxLength: 1_000_000, maxBytes: 268_435_456 } })
      const fill = async (fn: (w: number) => Promise<unknown>) => {
        let pushed = 0
        await Promise.all(Array.from({ length: CLIENTS }, async (_, w) => {
          while (pushed < BACKLOG) {
            await fn(w)
            pushed += BATCH
          }
        }))
      }
      await fill((w) => db.call('log_push_v1', { tenant, items: Array.from({ length: BATCH }, (_, i) => ({ index: i, queue: dc, partition: `p${w}`, transactionId: null, traceId: null, producerSub: null, enc: false, data: payload(i) })) } as never))
      await fill((w) => db.call('ephemeral_push_v1', { tenant, queue: ec, partition: `p${w}`, payloads: Array.from({ length: BATCH }, (_, i) => payload(i)) } as never))
      if (process.env.PROFILE_ANALYZE === '1') await admin.query('analyze')
      const request = { queue: dc, group: '__QUEUE_MODE__', batch: BATCH, partitions: 1, autoAck: false, subscriptionMode: 'all', maxBytes: 8 * 1024 * 1024 }
      let dDone = false
      await phase('durable pop+ack', async () => {
        const popped = (await db.call('log_pop_v1', { tenant, request } as never)) as { messages: { partitionId: string; transactionId: string; leaseId: string }[] }
        if (popped.messages.length === 0) {
          dDone = true
          return 0
        }
        await db.call('log_ack_v1', { tenant, acks: popped.messages.map((m, i) => ({ index: i, partitionId: m.partitionId, transactionId: m.transactionId, offset: null, consumerGroup: null, leaseId: m.leaseId, status: 'completed', error: null })) } as never)
        return popped.messages.length
      }, () => dDone)
      let eDone = false
      await phase('ephemeral pop+ack', async () => {
        const popped = { messages: popMessages(await db.call('ephemeral_pop_v2', { tenant, queue: ec, partition: null, group: '', batch: BATCH, autoAck: false })) }
        if (popped.messages.length === 0) {
          eDone = true
          return 0
        }
        // As the route does: the ids parsed in the broker, the parsed deliveries settled by ephemeral_ack_v2.
        const acks = popped.messages.map((m) => ({ id: m.id, status: 'completed' as const }))
        const parsed = parseAcks(acks)
        ackVerdicts(acks, parsed, await db.call('ephemeral_ack_v2', { tenant, queue: ec, group: '', ...parsed.args }))
        return popped.messages.length
      }, () => eDone)
    }
    await pool.end()
    await admin.end()
  } finally {
    await server.stop()
    rmSync(tmp, { recursive: true, force: true })
  }
}

main().catch((error) => {
  console.error(error)
  process.exit(1)
})
