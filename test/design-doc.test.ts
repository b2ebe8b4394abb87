// docs/design.md is the one place the broker's design decisions are written down, and the docs stand
// on their own: these fail when the decisions' numbering has a hole, when a comment or doc cites a
// decision that does not exist, when design.md links a page that is not there, and when a doc or a
// code comment cites a document outside this repository instead of giving the reason.
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'

const ROOT = new URL('..', import.meta.url).pathname
const read = (path: string) => readFileSync(join(ROOT, path), 'utf8')
const design = read('docs/design.md')

function files(dir: string, ext: RegExp): string[] {
  return readdirSync(join(ROOT, dir)).flatMap((name) => {
    const path = join(dir, name)
    if (statSync(join(ROOT, path)).isDirectory()) return files(path, ext)
    return ext.test(name) ? [path] : []
  })
}

/** The numbers a text cites: "design decision 7", "design decisions 11, 31 and 33", "design.md#7". */
export function citedDecisions(text: string): number[] {
  const cited: number[] = []
  for (const m of text.matchAll(/design decisions? (\d+(?:(?:, | and |,? and )\d+)*)/g)) {
    cited.push(...m[1]!.split(/, | and |,? and /).map(Number))
  }
  for (const m of text.matchAll(/design\.md#(\d+)/g)) cited.push(Number(m[1]))
  return cited
}

const decisions = [...design.matchAll(/^<a id="(\d+)"><\/a>\n\*\*(\d+)\. /gm)].map((m) => [Number(m[1]), Number(m[2])] as const)

describe('docs/design.md', () => {
  it('numbers its decisions 1, 2, 3, … with an anchor each', () => {
    expect(decisions.length).toBeGreaterThan(40)
    expect(decisions.map(([anchor]) => anchor)).toEqual(decisions.map((_, i) => i + 1))
    expect(decisions.every(([anchor, number]) => anchor === number)).toBe(true)
  })

  it('links only pages that exist', () => {
    const links = [...design.matchAll(/\]\(([a-z-]+\.md)(#[a-z-]+)?\)/g)]
    expect(links.length).toBeGreaterThan(10)
    for (const [, page, anchor] of links) {
      const text = read(`docs/${page}`)
      if (anchor) expect(text, `${page}${anchor}`).toMatch(new RegExp(`^## ${anchor.slice(1).replace(/-/g, '[ -]')}\\b`, 'im'))
    }
  })
})

describe('citations of design decisions', () => {
  const sources = [
    'README.md', 'BENCHMARKS.md',
    ...['docs', 'src', 'sql', 'cron', 'scripts', 'test', 'bench'].flatMap((dir) => files(dir, /\.(md|ts|sql|mjs)$/)),
  ].filter((path) => !path.endsWith('.generated.ts'))

  it('name decisions that exist', () => {
    const known = new Set(decisions.map(([n]) => n))
    const unknown = sources.flatMap((path) => citedDecisions(read(path)).filter((n) => !known.has(n)).map((n) => `${path}: ${n}`))
    expect(unknown).toEqual([])
  })

  it('are found in the forms the docs use', () => {
    expect(citedDecisions('design decisions 11, 31 and 33; design decision 4; docs/design.md#45')).toEqual([11, 31, 33, 4, 45])
  })
})

// The specification this broker was first built from is not part of the repository; a citation of
// it is a reason nobody can read (design decision 48). Every text file under STANDS_ALONE is held
// to that, except the paths of NEVER_CHECKED.
const STANDS_ALONE = ['README.md', 'BENCHMARKS.md', 'docs', 'bench', 'cron', 'scripts', 'sql', 'src']
// Never: a generated file repeats its sources; bench/results holds local run output. (Applied
// migrations are checked too: their comments can be corrected, docs/migrations.md.)
const NEVER_CHECKED = ['bench/results', 'bench/baseline']
const TEXT = /\.(md|ts|mjs|sql|txt)$/
const CITATION =
  /\b(API|ENGINE|RUNTIME|DECISIONS|SDK-SURFACE|STREAMS|QUEEN16|STYLE)\.md\b|API §|\bAPI \d|\bSTYLE \d|§\s?\d|\bENGINE\b|\bRUNTIME\b|DECISIONS|SDK-SURFACE|queues-and-resources|\bq&r\b|\bD\d{1,2}\b|\b(S[12456]|A[1-4])\b/

const under = (path: string, prefixes: readonly string[]) => prefixes.some((p) => path === p || path.startsWith(`${p}/`))

/** The files STANDS_ALONE holds to the rule, NEVER_CHECKED left out. */
function standingAlone(): string[] {
  return STANDS_ALONE.flatMap((root) => (statSync(join(ROOT, root)).isDirectory() ? files(root, TEXT) : [root])).filter(
    (path) => !under(path, NEVER_CHECKED) && !path.endsWith('.generated.ts'),
  )
}

describe('the docs stand on their own', () => {
  it('cite no document outside the repository', () => {
    const found = standingAlone().flatMap((path) =>
      read(path)
        .split('\n')
        .flatMap((line, i) => (CITATION.test(line) ? [`${path}:${i + 1}: ${line.trim()}`] : [])),
    )
    expect(found).toEqual([])
  })

  it('checks the docs, the SQL and the code it names', () => {
    const checked = standingAlone()
    const samples = ['README.md', 'docs/design.md', 'bench/README.md', 'sql/procedures/003_log_push.sql', 'sql/check-allow.txt', 'sql/migrations/0001_schema.sql']
    const code = ['cron/lanes.ts', 'scripts/migrate.ts', 'src/config.ts', 'src/sink/engine.ts', 'src/app.ts', 'src/http/route.ts', 'src/routes/push.ts', 'src/routes/pop.ts', 'src/db/fusion.ts']
    for (const path of [...samples, ...code]) {
      expect(checked).toContain(path)
    }
  })

  it('recognises the forms the spec was cited in', () => {
    const cited = ['API §2.1', 'API.md §4', 'ENGINE 5.2', 'RUNTIME.md', 'D13', '(D23)', 'SDK-SURFACE A3', 'S6', 'q&r', 'STREAMS.md', 'DECISIONS']
    expect(cited.filter((text) => !CITATION.test(text))).toEqual([])
    const fine = ['S3 PutObject', 'OpenAPI 3.1', 'design decision 13', 'docs/design.md#23', 'STORAGE_ENGINE', 'AES-256-GCM', 'sha256']
    expect(fine.filter((text) => CITATION.test(text))).toEqual([])
  })
})
