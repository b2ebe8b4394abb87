// Builds the real worker bundle exactly as `wrangler deploy` would (same bundler, same
// conditions, same nodejs_compat polyfills), into a scratch directory, and reads the
// compatibility settings from wrangler.toml so the tests run what is deployed.
import { execFileSync } from 'node:child_process'
import { mkdtempSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

export interface WorkerBundle {
  scriptPath: string
  outdir: string
  compatibilityDate: string
  compatibilityFlags: string[]
}

const root = fileURLToPath(new URL('../..', import.meta.url))

export function buildWorker(): WorkerBundle {
  const outdir = mkdtempSync(join(tmpdir(), 'queen-worker-'))
  execFileSync(process.execPath, [join(root, 'node_modules/wrangler/bin/wrangler.js'), 'deploy', '--dry-run', '--outdir', outdir], {
    cwd: root,
    // Offline: no telemetry prompt or upload, no interactive banner questions.
    env: { ...process.env, WRANGLER_SEND_METRICS: 'false', CI: 'true' },
    stdio: 'pipe',
  })
  const toml = readFileSync(join(root, 'wrangler.toml'), 'utf8')
  const date = /^compatibility_date\s*=\s*"([^"]+)"/m.exec(toml)?.[1]
  const flags = /^compatibility_flags\s*=\s*\[([^\]]*)\]/m.exec(toml)?.[1]
  if (!date || flags === undefined) throw new Error('wrangler.toml lacks compatibility_date or compatibility_flags')
  return {
    scriptPath: join(outdir, 'worker.js'),
    outdir,
    compatibilityDate: date,
    compatibilityFlags: [...flags.matchAll(/"([^"]+)"/g)].map((m) => m[1]!),
  }
}
