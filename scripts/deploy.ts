// `npm run deploy`: validates the Worker's configuration (wrangler.toml [vars] plus the secrets,
// set locally or already in Cloudflare) before `wrangler deploy`, so a bad value is caught here
// and not by the first request at the edge (design decision 36).
import { spawnSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { deployRefusal } from './deploy-checks.js'

function remoteSecretNames(): Set<string> | null {
  const listed = spawnSync('npx', ['wrangler', 'secret', 'list', '--format', 'json'], { encoding: 'utf8' })
  if (listed.status !== 0) return null
  try {
    return new Set((JSON.parse(listed.stdout) as { name: string }[]).map((s) => s.name))
  } catch {
    return null
  }
}

const toml = readFileSync(new URL('../wrangler.toml', import.meta.url), 'utf8')
const refusal = await deployRefusal(toml, process.env, remoteSecretNames())
if (refusal !== null) {
  console.error(`deploy refused: ${refusal}`)
  process.exit(1)
}
const deploy = spawnSync('npx', ['wrangler', 'deploy', ...process.argv.slice(2)], { stdio: 'inherit' })
process.exit(deploy.status ?? 1)
