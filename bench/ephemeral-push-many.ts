// `npx tsx bench/ephemeral-push-many.ts`: ephemeral_push_many_v1 alone, the call Node's push fusion
// sends (src/db/ephemeral-push-fusion.ts): PUSH_MANY_CALLS (200) calls of 16 partition groups × 100
// small payloads to one queue over one connection, after 30 to warm up. Prints msg/s and the
// backend's CPU per message (utime + stime from /proc). To compare two versions of the procedure,
// copy this file into the other's worktree and run both, alternating.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import pg from 'pg'
import { startEmbeddedPostgres } from '../src/db/embedded.js'
import { migrate } from '../src/db/migrate.js'
import { createNodePool } from '../src/db/node-pool.js'

const CALLS = Number(process.env.PUSH_MANY_CALLS ?? 200)
const GROUPS = 16
const BATCH = 100

async function main() {
  const tmp = mkdtempSync(join(tmpdir(), 'queen-eph-push-many-'))
  const server = await startEmbeddedPostgres({ dataDir: tmp })
  try {
    const setup = createNodePool({ connectionString: server.url, max: 1 })
    await migrate(setup, { statementTimeoutMs: 60_000 })
    await setup.end()
    const client = new pg.Client({ connectionString: server.url })
    await client.connect()
    const pid = (await client.query('select pg_backend_pid() as pid')).rows[0].pid as number
    const ticks = () => {
      const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ')
      return Number(fields[11]) + Number(fields[12]) // 10 ms each
    }
    await client.query(`select queen.ephemeral_configure_v1('', 'q', '{"maxLength": 1000000, "maxBytes": 268435456}'::jsonb)`)
    const groups = JSON.stringify(Array.from({ length: GROUPS }, (_, w) => ({ partition: `p${w}`, payloads: Array.from({ length: BATCH }, (_, i) => ({ n: i, t: 1234.567 + i })) })))
    const call = () => client.query(`select queen.ephemeral_push_many_v1('', 'q', $1::jsonb)`, [groups])
    for (let i = 0; i < 30; i++) await call()
    const cpu0 = ticks()
    const started = performance.now()
    for (let i = 0; i < CALLS; i++) await call()
    const ms = performance.now() - started
    const messages = CALLS * GROUPS * BATCH
    console.log(`${CALLS} calls of ${GROUPS * BATCH} in ${ms.toFixed(0)} ms: ${((messages / ms) * 1000).toFixed(0)} msg/s, ` +
      `backend CPU ${(((ticks() - cpu0) * 10_000) / messages).toFixed(2)} µs/msg, load ${loadavg()[0]!.toFixed(1)}`)
    await client.end()
  } finally {
    await server.stop()
    rmSync(tmp, { recursive: true, force: true })
  }
}

await main()
