// ENGINE §13.15 / RUNTIME §4: the procedures keep the pooler happy by construction. No session
// state (LISTEN, advisory locks, PREPARE, temporary tables, statement-level SET), and every API
// function VOLATILE so a caching pooler never answers it from cache. And every function has the
// one header docs/procedures.md describes (issue #24), new files included.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { procedureFiles } from '../src/db/sql-bundle.generated.js'
import { freshDatabase, type TestDatabase } from './helpers/database.js'

let database: TestDatabase
beforeAll(async () => {
  database = await freshDatabase()
})
afterAll(() => database.drop())

// Comments may name the forbidden things (to say why they are absent); code may not.
const code = (sql: string) => sql.replace(/--[^\n]*/g, '')

describe('procedure files', () => {
  it.each(procedureFiles.map((f) => [f.name, f.sql]))('%s uses no session state', (_name, sql) => {
    const body = code(sql)
    expect(body).not.toMatch(/\blisten\b|\bnotify\b|pg_notify/i)
    expect(body).not.toMatch(/pg_advisory|pg_try_advisory/i)
    expect(body).not.toMatch(/\bprepare\b/i)
    expect(body).not.toMatch(/create\s+(global\s+|local\s+)?temp(orary)?\b/i)
    expect(body).not.toMatch(/with\s+hold/i)
    // A statement-level SET (not SET LOCAL, not UPDATE … SET, not a function's SET clause).
    expect(body).not.toMatch(/(;|\bbegin|\bthen|\bloop|\belse)\s*set\s+(?!local\b)/i)
  })

  it('declares every API function VOLATILE', async () => {
    const rows = await database.sql<{ name: string; volatility: string }>(`
      select p.proname as name, p.provolatile as volatility from pg_proc p join pg_namespace n on n.oid = p.pronamespace
       where n.nspname = 'queen' and p.proname !~ '^_'`)
    expect(rows.length).toBeGreaterThan(5)
    for (const r of rows) expect(r, r.name).toMatchObject({ volatility: 'v' })
  })
})

interface Declared {
  file: string
  name: string
  /** From `create` to the line before `as $$`. */
  header: string[]
  body: string
}

// Each `create or replace function queen.x(` to its closing `$$;`, split at the `as $$` line.
function declared(): Declared[] {
  const out: Declared[] = []
  for (const file of procedureFiles) {
    for (const m of file.sql.matchAll(/^create or replace function queen\.(\w+)\(.*?^\$\$;/gms)) {
      const [head, body] = m[0].split(/^as \$\$$/m) as [string, string | undefined]
      out.push({ file: file.name, name: m[1]!, header: head.trimEnd().split('\n'), body: body ?? '' })
    }
  }
  return out
}

const functions = declared()
const byName = functions.map((f) => [`${f.file} ${f.name}`, f] as const)

describe('procedure headers (docs/procedures.md)', () => {
  it('finds every function the files declare, each written `create or replace function queen.<name>(`', () => {
    const loose = procedureFiles.reduce((n, f) => n + [...f.sql.matchAll(/create\s+(?:or\s+replace\s+)?function\b/gi)].length, 0)
    expect(functions.length).toBe(loose)
    expect(functions.every((f) => f.body !== '')).toBe(true)
  })

  it.each(procedureFiles.map((f) => [f.name, f.sql]))('%s starts with its contract comment', (_name, sql) => {
    expect(sql.startsWith('--')).toBe(true)
  })

  it.each(byName)('%s: returns, language and volatility, search_path, then reasoned SET clauses', (_name, f) => {
    const lines = f.header.filter((l) => !l.trimStart().startsWith('--'))
    const returns = lines.findIndex((l) => /^(\) )?returns\b/.test(l))
    const language = lines.findIndex((l) => /^language\b/.test(l))
    expect(returns, 'a `returns` line (or `) returns`) after the parameters').toBeGreaterThan(0)
    expect(language, '`language` after `returns` (a `returns table` may take several lines)').toBeGreaterThan(returns)
    const clauses = lines.slice(language)
    expect(clauses[0]).toMatch(/^language (plpgsql|sql) (volatile|stable|immutable)$/)
    const sets = clauses.slice(1)
    for (const line of sets) expect(line).toMatch(/^set \w+ = \S.*$/)
    if (sets[0] === 'set search_path = queen, pg_catalog') {
      for (const line of sets.slice(1)) expect(line).toMatch(/^set (lock_timeout|plan_cache_mode|timezone|enable_seqscan) = /)
    } else {
      // Only an inlined SQL helper goes without: no SET clause at all, and its header says why.
      expect(clauses[0]).toMatch(/^language sql /)
      expect(sets).toEqual([])
      expect(f.header.join('\n')).toMatch(/inline/i)
    }
  })

  it.each(byName)('%s: reads its clock as docs/procedures.md says', (_name, f) => {
    const reads = [...f.body.matchAll(/coalesce\(p_now, (?:pg_catalog\.)?(\w+)\(\)\)/g)].map((m) => m[1])
    expect(f.body.match(/coalesce\(p_now\b/g)?.length ?? 0, 'every p_now read names its clock').toBe(reads.length)
    for (const clock of reads) expect(['clock_timestamp', 'now']).toContain(clock)
    if (reads.length > 0) expect(f.header.join('\n')).toMatch(/p_now timestamptz/)
    if (/^language plpgsql/m.test(f.header.join('\n'))) {
      expect(reads.length, 'plpgsql reads the clock once').toBeLessThanOrEqual(1)
      const declare = f.body.split(/^begin$/m)[0]!
      if (/coalesce\(p_now/.test(declare)) {
        expect(declare).toMatch(/^declare\n {2}v_now timestamptz := coalesce\(p_now, (clock_timestamp|now)\(\)\);$/m)
      }
    } else if (reads.length > 1) {
      // Several readings agree only with transaction time.
      expect(new Set(reads)).toEqual(new Set(['now']))
    }
    if (!f.name.startsWith('_') && /\bp_now\b/.test(f.header.join('\n'))) {
      expect(f.header.join('\n'), 'API functions let tests pin time').toMatch(/p_now timestamptz default null/)
    }
  })
})
