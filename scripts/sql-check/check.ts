// One run of the static check: a throwaway Debian PostgreSQL 15, sql/ applied by the broker's own
// migration runner (so the check sees exactly what a deploy installs), then plpgsql_check over every
// plpgsql function in schema `queen`, judged against sql/check-allow.txt.
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { migrate } from '../../src/db/migrate.js'
import { createNodePool } from '../../src/db/node-pool.js'
import type { Queryable } from '../../src/db/queryable.js'
import { declaredFunctions, readSqlTree, ROOT } from '../build-sql.js'
import { judge, parseAllowList, type Verdict } from './allow-list.js'
import { startDebianServer } from './debian-server.js'
import { runPlpgsqlCheck, toFindings, type SourceFile } from './findings.js'

export const ALLOW_LIST_PATH = 'sql/check-allow.txt'

export interface CheckResult extends Verdict {
  /** How many functions plpgsql_check looked at. */
  checked: number
  serverVersion: string
}

/**
 * Runs the check. `extra` runs after migrate, on the same database, before the check: the tests use
 * it to add a function with known faults and prove the findings land on the right lines.
 */
export async function checkSql(options: { extra?: (db: Queryable) => Promise<void>; extraFiles?: SourceFile[] } = {}): Promise<CheckResult> {
  const entries = parseAllowList(readFileSync(join(ROOT, ALLOW_LIST_PATH), 'utf8'), ALLOW_LIST_PATH)
  const tree = readSqlTree()
  const server = await startDebianServer()
  const pool = createNodePool({ connectionString: server.url, max: 1 })
  try {
    await migrate(pool, {
      statementTimeoutMs: 60_000,
      files: { migrations: tree.migrations, procedures: tree.procedures, functions: declaredFunctions(tree.procedures) },
    })
    await options.extra?.(pool)
    const { rows: version } = await pool.query(`select current_setting('server_version') as v`)
    const { rows: count } = await pool.query(
      `select count(*)::int as n from pg_proc p join pg_namespace n on n.oid = p.pronamespace
         join pg_language l on l.oid = p.prolang where n.nspname = 'queen' and l.lanname = 'plpgsql'`,
    )
    const files: SourceFile[] = [
      ...tree.procedures.map((f) => ({ path: `sql/procedures/${f.name}`, sql: f.sql })),
      ...(options.extraFiles ?? []),
    ]
    const findings = toFindings(await runPlpgsqlCheck(pool), files)
    return { ...judge(findings, entries), checked: Number(count[0]!.n), serverVersion: String(version[0]!.v) }
  } finally {
    await pool.end()
    server.stop()
  }
}
