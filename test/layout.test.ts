// The layout's rules, read from the source: a route file is a route, not a library (what two routes
// share lives in a module named for what it does); cron/ is scheduled work that only the composition
// root, the two entry files, wires in; and a route neither names a tenant to a procedure (its
// database handle supplies the request's) nor decides a 404 (the procedure that looked raises it).
// Each rule first proves its scanner sees what it looks for, so it cannot pass by reading nothing.
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

  it('no route file passes a tenant to a procedure: the request\'s handle supplies it', () => {
    expect(callArguments("c.get('db').call('kv_get_v1', { tenant: c.get('tenant'), key: f(x) })")).toEqual(["'kv_get_v1', { tenant: c.get('tenant'), key: f(x) }"])
    const calls = routeFiles().flatMap((file) => callArguments(readFileSync(file, 'utf8')).map((args) => ({ file: rel(file), args })))
    expect(calls.some(({ args }) => args.startsWith("'log_push_v1'"))).toBe(true)

    expect(calls.filter(({ args }) => /\btenant\b/.test(args)).map(({ file, args }) => `${file}: .call(${args})`)).toEqual([])
  })

  it('no route file builds its own 404: a procedure raises not-found and src/errors.ts maps it', () => {
    expect(builds404("throw new HttpError(404, 'queue_not_found', 'Queue not found')")).toBe(true)
    expect(builds404("return c.json({ error: 'x' }, 404)")).toBe(true)
    expect(builds404("return c.json(body, 409)")).toBe(false)

    const offenders = routeFiles().filter((file) => builds404(readFileSync(file, 'utf8'))).map(rel)
    expect(offenders).toEqual([])
  })
})

function routeFiles(): string[] {
  const files = sourceFiles(ROUTES)
  expect(files.length).toBeGreaterThan(20)
  return files
}

/** The argument text of every `.call(` in a source, to its matching parenthesis. */
function callArguments(source: string): string[] {
  const found: string[] = []
  for (const match of source.matchAll(/\.call\(/g)) {
    const start = match.index + match[0].length
    let depth = 1
    let end = start
    for (; end < source.length && depth > 0; end++) {
      if (source[end] === '(') depth++
      else if (source[end] === ')') depth--
    }
    found.push(source.slice(start, end - 1))
  }
  return found
}

/** An HttpError made with 404, or an answer sent with status 404. */
const builds404 = (source: string) => /\bHttpError\(\s*404\b/.test(source) || /,\s*404\s*(?:,[^)]*)?\)/.test(source)
