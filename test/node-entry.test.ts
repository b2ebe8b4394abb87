// `npm start` as a user runs it: no DATABASE_URL, so an embedded PostgreSQL in QUEEN_DATA_DIR;
// healthy within 20 s; data survives a restart; SIGTERM answers parked long-polls and stops the
// broker and the server cleanly.
import { spawn, type ChildProcess } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pg from 'pg'
import { afterAll, describe, expect, it } from 'vitest'
import { createServer, type AddressInfo } from 'node:net'
import { freePort } from '../src/db/embedded.js'
import { freshDatabase } from './helpers/database.js'

const dataDir = mkdtempSync(join(tmpdir(), 'queen-start-'))
afterAll(() => rmSync(dataDir, { recursive: true, force: true }))

interface Broker {
  child: ChildProcess
  output: () => string
  base: string
}

const DIRECT = [process.execPath, '--import', 'tsx', 'src/node.ts']

/** Starts the broker with `command` (the node entry directly by default) and waits until healthy. */
async function start(command: string[] = DIRECT): Promise<Broker> {
  const port = await freePort()
  const env: NodeJS.ProcessEnv = { ...process.env, QUEEN_DATA_DIR: dataDir, PORT: String(port), LOG_LEVEL: 'warn' }
  delete env.DATABASE_URL
  const child = spawn(command[0]!, command.slice(1), { cwd: new URL('..', import.meta.url), env, stdio: ['ignore', 'pipe', 'pipe'] })
  let output = ''
  child.stdout!.on('data', (d) => (output += String(d)))
  child.stderr!.on('data', (d) => (output += String(d)))
  const base = `http://127.0.0.1:${port}`
  const deadline = Date.now() + 20_000
  for (;;) {
    const res = await fetch(`${base}/health`).catch(() => undefined)
    if (res?.status === 200) break
    if (child.exitCode !== null || Date.now() > deadline) throw new Error(`broker did not become healthy within 20 s:\n${output}`)
    await new Promise((r) => setTimeout(r, 200))
  }
  return { child, output: () => output, base }
}

async function stop(broker: Broker): Promise<number | null> {
  const exited = new Promise<number | null>((done) => broker.child.once('exit', (code) => done(code)))
  broker.child.kill('SIGTERM')
  return exited
}

function embeddedUrl(output: string): string {
  const port = /Embedded PostgreSQL postgres:\/\/postgres:\*\*\*@127\.0\.0\.1:(\d+)\//.exec(output)?.[1]
  if (!port) throw new Error(`no embedded URL printed:\n${output}`)
  const password = readFileSync(join(dataDir, 'password'), 'utf8').trim()
  return `postgres://postgres:${encodeURIComponent(password)}@127.0.0.1:${port}/postgres`
}

async function sql(url: string, text: string, params: unknown[] = []) {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    return (await client.query(text, params)).rows
  } finally {
    await client.end()
  }
}

describe('npm start on a fresh machine', () => {
  it('serves on an embedded PostgreSQL whose data survives a restart, and stops cleanly', async () => {
    const first = await start()
    expect(first.output()).toContain(`listening on ${first.base}`)
    expect(first.output()).toContain(join(dataDir, 'pgdata'))
    expect(first.output()).toContain('DATABASE_URL=')
    const health = await (await fetch(`${first.base}/health`)).json()
    expect(health).toMatchObject({ status: 'healthy', database: 'connected' })
    await sql(embeddedUrl(first.output()), `insert into queen.kv_entries (tenant_id, ns, key, value, version, updated_at) values ('', 'boot', 'survives', '{"n": 1}', 1, now())`)
    expect(await stop(first)).toBe(0)
    expect(existsSync(join(dataDir, 'pgdata', 'postmaster.pid'))).toBe(false)

    const second = await start()
    let stopped: Promise<number | null> | undefined
    try {
      const rows = await sql(embeddedUrl(second.output()), `select value from queen.kv_entries where key = 'survives'`)
      expect(rows).toEqual([{ value: { n: 1 } }])
      // A parked long-poll answers 204 at shutdown instead of holding it to its deadline.
      const parked = fetch(`${second.base}/api/v1/pop/queue/at-shutdown?wait=true&timeout=25000`)
      await new Promise((r) => setTimeout(r, 300))
      stopped = stop(second)
      expect((await parked).status).toBe(204)
    } finally {
      expect(await (stopped ?? stop(second))).toBe(0)
    }
  }, 90_000)
})

describe('npm start under a supervisor', () => {
  // A supervisor (systemd, a container runtime, a CI step) signals only the process it started:
  // here npm. npm passes SIGTERM to its script's shell, so the script must exec the broker or the
  // shell dies and leaves the broker and its PostgreSQL running as orphans.
  it('stops the broker and its embedded PostgreSQL when only npm gets SIGTERM', async () => {
    const broker = await start(['npm', 'start', '--silent'])
    const exited = new Promise<number | null>((done) => broker.child.once('exit', (code) => done(code)))
    broker.child.kill('SIGTERM')
    await exited
    const deadline = Date.now() + 15_000
    while (existsSync(join(dataDir, 'pgdata', 'postmaster.pid')) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200))
    expect(existsSync(join(dataDir, 'pgdata', 'postmaster.pid')), `PostgreSQL still running:\n${broker.output()}`).toBe(false)
    expect(await fetch(`${broker.base}/health`).then(() => 'answered', () => 'closed')).toBe('closed')
  }, 60_000)
})

describe('npm start with JWT_ENABLED', () => {
  // The PEM is imported asynchronously after loadConfig, still before the database or the port.
  it('refuses to start on an unparsable JWT_PUBLIC_KEY, naming it and not printing the key', async () => {
    const key = '-----BEGIN PUBLIC KEY-----\\nbm90IGEga2V5\\n-----END PUBLIC KEY-----'
    const env: NodeJS.ProcessEnv = { ...process.env, QUEEN_DATA_DIR: dataDir, JWT_ENABLED: 'true', JWT_ALGORITHM: 'RS256', JWT_PUBLIC_KEY: key }
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/node.ts'], { cwd: new URL('..', import.meta.url), env, stdio: ['ignore', 'pipe', 'pipe'] })
    let output = ''
    child.stdout!.on('data', (d) => (output += String(d)))
    child.stderr!.on('data', (d) => (output += String(d)))
    const code = await new Promise<number | null>((done) => child.once('exit', (c) => done(c)))
    expect(code).toBe(1)
    expect(output).toContain('invalid configuration: JWT_PUBLIC_KEY')
    expect(output).not.toContain('bm90IGEga2V5')
    expect(output).not.toContain('listening')
  }, 30_000)
})

describe('npm start on a port in use', () => {
  // A user's second broker, or any other server, already holds the port: the start fails in one
  // line that names PORT, without a stack trace, and exits non-zero.
  it('prints one line naming PORT and exits 1, with no stack trace', async () => {
    const database = await freshDatabase()
    const holder = createServer()
    await new Promise<void>((ready) => holder.listen(0, '127.0.0.1', ready))
    const port = (holder.address() as AddressInfo).port
    try {
      const env: NodeJS.ProcessEnv = { ...process.env, DATABASE_URL: database.url, PORT: String(port), LOG_LEVEL: 'warn' }
      const child = spawn(DIRECT[0]!, DIRECT.slice(1), { cwd: new URL('..', import.meta.url), env, stdio: ['ignore', 'pipe', 'pipe'] })
      let stderr = ''
      child.stderr!.on('data', (d) => (stderr += String(d)))
      const code = await new Promise<number | null>((done) => child.once('exit', (c) => done(c)))
      expect(code).toBe(1)
      expect(stderr.trim().split('\n'), stderr).toEqual([`Queen Edge cannot listen on 127.0.0.1:${port}: PORT ${port} is already in use; set PORT to a free port`])
    } finally {
      await new Promise<void>((done) => holder.close(() => done()))
      await database.drop()
    }
  }, 30_000)
})

describe('npm start refusing what Node refuses before the app', () => {
  // Node answers an over-long request line itself; src/node.ts gives that answer the envelope.
  it('answers a 100 000-character URL 431 with the error envelope', async () => {
    const database = await freshDatabase()
    const port = await freePort()
    const env: NodeJS.ProcessEnv = { ...process.env, DATABASE_URL: database.url, PORT: String(port), LOG_LEVEL: 'warn' }
    const child = spawn(DIRECT[0]!, DIRECT.slice(1), { cwd: new URL('..', import.meta.url), env, stdio: ['ignore', 'pipe', 'pipe'] })
    let output = ''
    child.stdout!.on('data', (d) => (output += String(d)))
    child.stderr!.on('data', (d) => (output += String(d)))
    const broker = { child, output: () => output, base: `http://127.0.0.1:${port}` }
    try {
      const deadline = Date.now() + 20_000
      while ((await fetch(`${broker.base}/health`).catch(() => undefined))?.status !== 200) {
        if (child.exitCode !== null || Date.now() > deadline) throw new Error(`broker did not become healthy:\n${output}`)
        await new Promise((r) => setTimeout(r, 200))
      }
      const res = await fetch(`${broker.base}/api/v1/messages?queue=${'x'.repeat(100_000)}`)
      expect(res.status).toBe(431)
      expect(await res.json()).toEqual({ error: 'Request line and headers too large (the URL counts)', code: 'headers_too_large' })
      expect((await fetch(`${broker.base}/health`)).status).toBe(200)
    } finally {
      expect(await stop(broker)).toBe(0)
      await database.drop()
    }
  }, 40_000)
})
