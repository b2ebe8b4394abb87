// The layout's import rules, read from the source: a route file is a route, not a library (what two
// routes share lives in a module named for what it does), and cron/ is scheduled work that only the
// composition root, the two entry files, wires in. Each rule first proves its scanner sees a real
// import, so it cannot pass by reading nothing.
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..')
const ROUTES = join(ROOT, 'src/routes')
const CRON = join(ROOT, 'cron')
const ENTRIES = ['src/node.ts', 'src/worker.ts']

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name)
    if (statSync(path).isDirectory()) return sourceFiles(path)
    return name.endsWith('.ts') ? [path] : []
  })
}

/** The files a module imports (static, type-only, re-exports and dynamic), as absolute .ts paths. */
function importsOf(file: string): string[] {
  const source = readFileSync(file, 'utf8')
  const specifiers = [...source.matchAll(/(?:\bfrom\s*|\bimport\s*\(?\s*)['"]([^'"]+)['"]/g)].map((m) => m[1]!)
  return specifiers.filter((s) => s.startsWith('.')).map((s) => resolve(dirname(file), s).replace(/\.js$/, '.ts'))
}

const inside = (path: string, dir: string) => !relative(dir, path).startsWith('..')
const rel = (path: string) => relative(ROOT, path)

describe('layout', () => {
  it('no route file imports another route file (src/routes/index.ts lists them all, and may)', () => {
    const index = join(ROUTES, 'index.ts')
    expect(importsOf(index)).toContain(join(ROUTES, 'push.ts'))

    const crossings = sourceFiles(ROUTES)
      .filter((file) => file !== index)
      .flatMap((file) => importsOf(file).filter((target) => inside(target, ROUTES)).map((target) => `${rel(file)} imports ${rel(target)}`))
    expect(crossings).toEqual([])
  })

  it('only the entry files import cron/: the app itself schedules nothing', () => {
    expect(importsOf(join(ROOT, 'src/worker.ts')).some((target) => inside(target, CRON))).toBe(true)

    const importers = sourceFiles(join(ROOT, 'src'))
      .filter((file) => !ENTRIES.includes(rel(file)))
      .flatMap((file) => importsOf(file).filter((target) => inside(target, CRON)).map((target) => `${rel(file)} imports ${rel(target)}`))
    expect(importers).toEqual([])
  })
})
