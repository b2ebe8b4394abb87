// A real PgBouncer in transaction mode for the pooler project (RUNTIME §4): the HTTP suite runs
// through it to prove the engine keeps no session state.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { chmodSync, existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createConnection } from 'node:net'
import { freePort } from '../../src/db/embedded.js'

export interface PgBouncer {
  address: string
  port: number
  stop(): Promise<void>
}

export function findPgBouncer(): string | null {
  for (const candidate of ['/usr/sbin/pgbouncer', '/usr/bin/pgbouncer', '/usr/local/bin/pgbouncer']) {
    if (existsSync(candidate)) return candidate
  }
  const which = spawnSync('sh', ['-c', 'command -v pgbouncer'], { encoding: 'utf8' })
  return which.status === 0 && which.stdout.trim() ? which.stdout.trim() : null
}

/** `port` reuses an address, so a restart (the chaos scenario) comes back where clients look. */
export async function startPgBouncer(binary: string, serverUrl: string, options: { port?: number } = {}): Promise<PgBouncer> {
  const server = new URL(serverUrl)
  const user = decodeURIComponent(server.username)
  const password = decodeURIComponent(server.password)
  const port = options.port ?? (await freePort())
  const dir = mkdtempSync(join(tmpdir(), 'queen-pgbouncer-'))
  chmodSync(dir, 0o755)
  // Clients are trusted (loopback, test only); PgBouncer logs in to PostgreSQL with the real
  // password. Every database name is forwarded, so each test file's clone works unchanged.
  writeFileSync(join(dir, 'users.txt'), `"${user}" ""\n`, { mode: 0o644 })
  writeFileSync(
    join(dir, 'pgbouncer.ini'),
    [
      '[databases]',
      `* = host=${server.hostname} port=${server.port} user=${user} password=${password}`,
      '[pgbouncer]',
      'listen_addr = 127.0.0.1',
      `listen_port = ${port}`,
      'unix_socket_dir =',
      'auth_type = trust',
      `auth_file = ${join(dir, 'users.txt')}`,
      'pool_mode = transaction',
      'max_client_conn = 1000',
      'default_pool_size = 40',
      'max_db_connections = 60',
      'ignore_startup_parameters = extra_float_digits,options,application_name',
      'server_reset_query =',
      'log_connections = 0',
      'log_disconnections = 0',
      '',
    ].join('\n'),
    { mode: 0o644 },
  )
  // PgBouncer refuses to run as root; -u drops to an unprivileged user.
  const args = process.getuid?.() === 0 ? ['-u', 'nobody', join(dir, 'pgbouncer.ini')] : [join(dir, 'pgbouncer.ini')]
  const child: ChildProcess = spawn(binary, args, { stdio: ['ignore', 'ignore', 'pipe'] })
  let stderr = ''
  child.stderr?.on('data', (chunk) => (stderr += String(chunk)))
  await waitForPort(port, 10_000).catch((error) => {
    child.kill('SIGKILL')
    throw new Error(`pgbouncer did not start: ${(error as Error).message}\n${stderr}`)
  })
  return {
    address: `127.0.0.1:${port}`,
    port,
    async stop() {
      if (child.exitCode === null) {
        const exited = new Promise((done) => child.once('exit', done))
        child.kill('SIGTERM')
        await exited
      }
      rmSync(dir, { recursive: true, force: true })
    },
  }
}

async function waitForPort(port: number, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const open = await new Promise<boolean>((done) => {
      const socket = createConnection({ host: '127.0.0.1', port }, () => {
        socket.end()
        done(true)
      })
      socket.on('error', () => done(false))
    })
    if (open) return
    if (Date.now() > deadline) throw new Error(`port ${port} not open after ${timeoutMs} ms`)
    await new Promise((r) => setTimeout(r, 100))
  }
}
