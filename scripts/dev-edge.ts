// `npm run dev:edge`: the worker in workerd (wrangler dev) on http://127.0.0.1:8787 against
// DATABASE_URL, or against the embedded PostgreSQL when it is unset. Starts the WebSocket bridge
// Neon's driver needs to reach a plain PostgreSQL, migrates, and stops everything on Ctrl-C.
import { spawn } from 'node:child_process'
import { loadConfig } from '../src/config.js'
import { startEmbeddedPostgres } from '../src/db/embedded.js'
import { migrate } from '../src/db/migrate.js'
import { createNodePool } from '../src/db/node-pool.js'
import { startWsBridge } from './ws-bridge.js'

const config = loadConfig(process.env, 'node')
const embedded = config.DATABASE_URL ? undefined : await startEmbeddedPostgres({ dataDir: config.QUEEN_DATA_DIR })
const url = config.DATABASE_URL ?? embedded!.url
const pool = createNodePool({ connectionString: url, max: 1 })
await migrate(pool, { statementTimeoutMs: config.STATEMENT_TIMEOUT_MS })
await pool.end()
const bridge = await startWsBridge()

const wrangler = spawn(
  process.execPath,
  ['node_modules/wrangler/bin/wrangler.js', 'dev', '--ip', '127.0.0.1', '--port', '8787', '--var', `DATABASE_URL:${url}`, '--var', `NEON_WS_PROXY:${bridge.address}`],
  { stdio: 'inherit', env: { ...process.env, WRANGLER_SEND_METRICS: 'false' } },
)

let stopping = false
const stop = async () => {
  if (stopping) return
  stopping = true
  wrangler.kill('SIGTERM')
  await bridge.close()
  await embedded?.stop()
  process.exit(0)
}
wrangler.on('exit', () => void stop())
process.on('SIGINT', () => void stop())
process.on('SIGTERM', () => void stop())
