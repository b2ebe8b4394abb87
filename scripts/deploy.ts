// `npm run deploy`: validates the Worker's configuration (wrangler.toml [vars] plus the secrets
// the deploy needs) before `wrangler deploy`, so a bad value is caught here and not by the first
// request at the edge (D22).
import { spawnSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { ConfigError, loadConfig } from '../src/config.js'
import { loadStaticKeys } from '../src/http/jwt-keys.js'

function wranglerVars(): Record<string, string> {
  const toml = readFileSync(new URL('../wrangler.toml', import.meta.url), 'utf8')
  const section = /^\[vars\]\s*$([\s\S]*?)(?=^\[|$(?![\s\S]))/m.exec(toml)?.[1] ?? ''
  const vars: Record<string, string> = {}
  for (const line of section.split('\n')) {
    const m = /^\s*([A-Z0-9_]+)\s*=\s*"([^"]*)"/.exec(line)
    if (m) vars[m[1]!] = m[2]!
  }
  return vars
}

try {
  const config = loadConfig({ ...wranglerVars(), ...process.env }, 'workers')
  // The PEM import the Worker does at its first event, done here first so a bad key never ships.
  if (config.JWT_ENABLED) await loadStaticKeys(config)
} catch (error) {
  if (!(error instanceof ConfigError)) throw error
  console.error(`deploy refused: ${error.message}`)
  process.exit(1)
}
const secrets = spawnSync('npx', ['wrangler', 'secret', 'list'], { encoding: 'utf8' })
if (secrets.status === 0 && !secrets.stdout.includes('DATABASE_URL')) {
  console.error('deploy refused: the DATABASE_URL secret is not set (npx wrangler secret put DATABASE_URL)')
  process.exit(1)
}
const deploy = spawnSync('npx', ['wrangler', 'deploy', ...process.argv.slice(2)], { stdio: 'inherit' })
process.exit(deploy.status ?? 1)
