// The console's browser code is TypeScript under src/console/browser/, checked by its own tsconfig
// and bundled into src/console/client.generated.ts. These fail when the committed bundle is stale,
// when bundling is not reproducible, or when the browser code does not type-check.
import { execFileSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { BROWSER_DIR, BUNDLE_PATH, ROOT, bundleConsole, renderConsoleModule } from '../../scripts/build-console.js'
import { CONSOLE_JS } from '../../src/console/client.generated.js'

describe('the generated console module', () => {
  it('is up to date with src/console/browser/ (run `npm run build:console` when this fails)', async () => {
    expect(readFileSync(BUNDLE_PATH, 'utf8')).toBe(await renderConsoleModule())
  })

  it('bundles the same bytes on every run, and exports them unchanged', async () => {
    const first = await bundleConsole()
    expect(await bundleConsole()).toBe(first)
    expect(CONSOLE_JS).toBe(first)
  })

  it('comes from code that type-checks against the DOM, with no Node types', () => {
    const tsc = join(ROOT, 'node_modules/typescript/bin/tsc')
    // execFileSync throws with tsc's report on any error; stdio is kept for that report.
    const out = execFileSync(process.execPath, [tsc, '--noEmit', '-p', join(ROOT, BROWSER_DIR)], { encoding: 'utf8' })
    expect(out).toBe('')
  }, 60_000)
})
