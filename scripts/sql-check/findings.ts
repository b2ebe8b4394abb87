// Runs plpgsql_check over every plpgsql function in schema `queen` and places each finding in the
// sql/procedures file that defines the function. plpgsql_check counts lines inside the function
// body, so the body's own text (pg_proc.prosrc, stored verbatim) is looked up in the files: the
// last file holding it wins, as the last CREATE OR REPLACE does when migrate applies them in order.
import type { Queryable } from '../../src/db/queryable.js'

export interface SourceFile {
  /** Path shown in findings, e.g. sql/procedures/005_log_ack_per_item.sql. */
  path: string
  sql: string
}

/** One row of plpgsql_check_function_tb, as the check reports it. */
export interface CheckRow {
  function: string
  source: string
  lineno: number | null
  level: string
  sqlstate: string | null
  message: string
  detail: string | null
  context: string | null
}

export interface Finding {
  function: string
  /** The file and the line in it; the `create function` line for findings about the whole routine. */
  path: string
  line: number
  level: string
  sqlstate: string | null
  /** What the allow-list matches: the message, then `: detail` when plpgsql_check gives one. */
  text: string
}

// fatal_errors off: every error of a function is reported, not only its first one. Trigger
// functions need the table their trigger is on; one that no trigger uses cannot be checked and
// says so as an error.
const CHECK_SQL = `
  with f as (
    select p.oid, p.proname, p.prosrc, p.prorettype = 'trigger'::regtype as is_trigger,
           (select t.tgrelid from pg_trigger t where t.tgfoid = p.oid order by t.oid limit 1) as relid
      from pg_proc p
      join pg_namespace n on n.oid = p.pronamespace
      join pg_language l on l.oid = p.prolang
     where n.nspname = 'queen' and l.lanname = 'plpgsql' and p.prokind = 'f'
  )
  select f.proname as function, f.prosrc as source, c.lineno, c.level, c.sqlstate, c.message, c.detail, c.context
    from f
    cross join lateral plpgsql_check_function_tb(f.oid, coalesce(f.relid, 0),
                                                 fatal_errors => false, other_warnings => true,
                                                 extra_warnings => true, performance_warnings => true,
                                                 security_warnings => true) c
   where not f.is_trigger or f.relid is not null
  union all
  select f.proname, f.prosrc, null, 'error', null, 'trigger function used by no trigger cannot be checked', null, null
    from f where f.is_trigger and f.relid is null
   order by 1, 3 nulls first, 6, 7`

export async function runPlpgsqlCheck(db: Queryable): Promise<CheckRow[]> {
  await db.query('create extension if not exists plpgsql_check')
  const { rows } = await db.query(CHECK_SQL)
  return rows.map((r) => ({
    function: String(r.function),
    source: String(r.source),
    lineno: r.lineno === null ? null : Number(r.lineno),
    level: String(r.level),
    sqlstate: r.sqlstate === null || r.sqlstate === '00000' ? null : String(r.sqlstate),
    message: String(r.message),
    detail: r.detail === null ? null : String(r.detail),
    context: r.context === null ? null : String(r.context),
  }))
}

const lineAt = (text: string, offset: number) => text.slice(0, offset).split('\n').length

/** Where a function is defined: the file, the line its body starts on and its `create` line. */
export function locate(name: string, source: string, files: SourceFile[]): { path: string; bodyLine: number | null; createLine: number } | null {
  const declaration = new RegExp(`create\\s+(?:or\\s+replace\\s+)?function\\s+queen\\.${name}\\s*\\(`, 'gi')
  for (const file of [...files].reverse()) {
    const creates = [...file.sql.matchAll(declaration)]
    if (creates.length === 0) continue
    const body = file.sql.lastIndexOf(source)
    const create = creates.filter((m) => body < 0 || m.index! < body).at(-1) ?? creates.at(-1)!
    return { path: file.path, bodyLine: body < 0 ? null : lineAt(file.sql, body), createLine: lineAt(file.sql, create.index!) }
  }
  return null
}

/**
 * Turns check rows into findings with a file and line. plpgsql_check's line 1 is the line the body
 * starts on (the one holding the opening `$$`), so a finding's line is bodyLine + lineno - 1.
 */
export function toFindings(rows: CheckRow[], files: SourceFile[]): Finding[] {
  return rows.map((row) => {
    const place = locate(row.function, row.source, files)
    // A DECLARE initialiser is reported on the block's line; the context names the variable and its
    // own line, which is where the fix goes.
    const init = row.context?.match(/local variable "([^"]+)" initialization on line (\d+)/)
    const lineno = init ? Number(init[2]) : row.lineno
    const text = (row.detail ? `${row.message}: ${row.detail}` : row.message) + (init ? ` (initialising "${init[1]}")` : '')
    const base = { function: row.function, level: row.level, sqlstate: row.sqlstate, text }
    if (!place) return { ...base, path: '(no file in sql/procedures declares it)', line: 0 }
    if (lineno === null || place.bodyLine === null) return { ...base, path: place.path, line: place.createLine }
    return { ...base, path: place.path, line: place.bodyLine + lineno - 1 }
  })
}

export const formatFinding = (f: Finding) =>
  `${f.path}:${f.line}: ${f.level}${f.sqlstate ? ` ${f.sqlstate}` : ''} in ${f.function}: ${f.text}`
