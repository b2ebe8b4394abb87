// Builds the real worker bundle exactly as `wrangler deploy` would, into a scratch directory.
import { execFileSync } from 'node:child_process'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

export function buildWorker(): string {
  const outdir = mkdtempSync(join(tmpdir(), 'queen-worker-'))
  execFileSync(process.execPath, ['node_modules/wrangler/bin/wrangler.js', 'deploy', '--dry-run', '--outdir', outdir], {
    cwd: new URL('../..', import.meta.url),
    env: { ...process.env, WRANGLER_SEND_METRICS: 'false', CI: 'true' },
    stdio: 'pipe',
  })
  return join(outdir, 'worker.js')
}
