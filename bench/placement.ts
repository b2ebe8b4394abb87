// `npx tsx bench/placement.ts` (issue #26): aggregate push throughput of one broker over 1, 2 and 3
// databases, and the move window per million frames. One embedded PostgreSQL cluster hosts every
// database (CREATE DATABASE), the broker runs as its own Node process (src/node.ts, what `npm start`
// runs) with QUEEN_DATABASES and tenancy on, and this process drives it over HTTP: PLACE_CLIENTS
// (32) clients push PLACE_BATCH (10) small frames per request, client k as tenant k mod N, each
// tenant placed on its own database. Prints a table for BENCHMARKS.md.
import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { cpus, tmpdir } from 'node:os'
import { join } from 'node:path'
import pg from 'pg'
import { freePort, startEmbeddedPostgres } from '../src/db/embedded.js'
import { closedLoop, round, sleep } from './lib.js'

const CLIENTS = Number(process.env.PLACE_CLIENTS ?? 32)
const BATCH = Number(process.env.PLACE_BATCH ?? 10)
const SECONDS = Number(process.env.PLACE_SECONDS ?? 6)
const MOVE_FRAMES = Number(process.env.PLACE_MOVE_FRAMES ?? 200_000)

const scratch = mkdtempSync(join(tmpdir(), 'queen-place-'))
const server = await startEmbeddedPostgres({ dataDir: scratch })
const urlOf = (db: string) => {
  const u = new URL(server.url)
  u.pathname = `/${db}`
  return u.toString()
}
const admin = new pg.Client({ connectionString: server.url })
await admin.connect()

async function broker(databases: string[]) {
  for (const db of databases) {
    await admin.query(`drop database if exists ${db} with (force)`)
    await admin.query(`create database ${db}`)
  }
  const port = await freePort()
  const others = Object.fromEntries(databases.slice(1).map((db) => [db, urlOf(db)]))
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/node.ts'], {
    env: {
      ...process.env,
      DATABASE_URL: urlOf(databases[0]!),
      QUEEN_DATABASES: JSON.stringify(others),
      QUEEN_TENANCY_HEADER: 'X-Tenant',
      PORT: String(port),
      LOG_LEVEL: 'warn',
      DB_POOL_SIZE: '10',
    },
    stdio: ['ignore', 'inherit', 'inherit'],
  })
  const base = `http://127.0.0.1:${port}`
  for (;;) {
    if ((await fetch(`${base}/health`).catch(() => null))?.ok) break
    await sleep(200)
  }
  const send = async (method: string, path: string, tenant: string, body?: unknown) => {
    const res = await fetch(base + path, { method, headers: { 'content-type': 'application/json', 'X-Tenant': tenant }, body: body === undefined ? undefined : JSON.stringify(body) })
    const text = await res.text()
    return { status: res.status, body: text ? JSON.parse(text) : null }
  }
  const names = ['default', ...databases.slice(1)]
  for (let i = 0; i < names.length; i++) await send('PUT', `/api/v1/system/placements/t${i}`, 'ops', { database: names[i] })
  return { send, names, stop: () => new Promise<void>((done) => (child.once('exit', () => done()), child.kill('SIGTERM'))) }
}

const rows: string[] = []
for (const n of [1, 2, 3]) {
  const b = await broker(Array.from({ length: n }, (_, i) => `place_${n}_${i}`))
  let seq = 0
  const result = await closedLoop({
    concurrency: CLIENTS,
    warmupMs: 1000,
    durationMs: SECONDS * 1000,
    op: async (w) => {
      const items = Array.from({ length: BATCH }, () => ({ queue: 'bench', partition: `p${seq++ % 101}`, payload: { n: seq } }))
      const answer = await b.send('POST', '/api/v1/push', `t${w % n}`, { items })
      if (answer.status !== 201) throw new Error(`push answered ${answer.status}`)
      return BATCH
    },
  })
  rows.push(`| ${n} | ${round(result.itemsPerSec, 0)} | ${round(result.opsPerSec, 0)} | ${result.p50} | ${result.p99} | ${result.errors} |`)
  console.log(rows.at(-1))
  await b.stop()
}

// The move window: one tenant with MOVE_FRAMES frames (pushes of 100) moved to an empty database.
const m = await broker(['place_move_0', 'place_move_1'])
for (let pushed = 0; pushed < MOVE_FRAMES; pushed += 1000) {
  await Promise.all(
    Array.from({ length: 10 }, (_, k) =>
      m.send('POST', '/api/v1/push', 't0', { items: Array.from({ length: 100 }, (_, i) => ({ queue: 'big', partition: `p${k}`, payload: { n: pushed + k * 100 + i, s: 'x'.repeat(100) } })) }),
    ),
  )
}
const moved = await m.send('POST', '/api/v1/system/placements/t0/move', 'ops', { to: 'place_move_1' })
await m.stop()
const perMillion = (ms: number) => round((ms * 1_000_000) / MOVE_FRAMES / 1000, 1)

console.log(`\nmachine: ${cpus().length} × ${cpus()[0]?.model}; one embedded PostgreSQL cluster hosting every database; ${CLIENTS} clients, ${BATCH} frames a push, ${SECONDS} s\n`)
console.log('| databases | frames/s | pushes/s | p50 ms | p99 ms | errors |\n|---|---|---|---|---|---|')
for (const row of rows) console.log(row)
console.log(`\nmove of ${MOVE_FRAMES} frames (${moved.status}): ${JSON.stringify(moved.body.ms)} copied ${JSON.stringify(moved.body.copied)}`)
console.log(`window per million frames ≈ ${perMillion(moved.body.ms.window)} s (copy ${perMillion(moved.body.ms.copy)} s, verify ${perMillion(moved.body.ms.verify)} s; purge after the window ${perMillion(moved.body.ms.purge)} s)`)
await admin.end()
await server.stop()
rmSync(scratch, { recursive: true, force: true })
