// `npm run check:sql` itself (issue #24): the real check on a throwaway Debian PostgreSQL 15 with
// plpgsql_check, as CI runs it. Proves that sql/check-allow.txt holds no entry for a finding that is
// gone, and that findings are read right: a fixture function with faults on known lines must come
// back with exactly those lines, levels and texts. Needs `postgresql-15 postgresql-15-plpgsql-check`
// (.ci/run installs them, and runs `npm run check:sql` itself, which fails loudly without them);
// without them the check's tests here are skipped with a printed notice naming the packages, and the
// allow-list format tests still run.
import { beforeAll, describe, expect, it } from 'vitest'
import { AllowListError, judge, parseAllowList } from '../scripts/sql-check/allow-list.js'
import { checkSql, type CheckResult } from '../scripts/sql-check/check.js'
import type { Finding } from '../scripts/sql-check/findings.js'
import { available, debianPostgres15 } from './helpers/optional.js'

const FIXTURE_PATH = 'test/fixtures/faulty.sql'
// Line numbers matter: the assertions below name them.
const FIXTURE = [
  '-- A function with one known fault a line, checked beside the real ones.', // 1
  'create or replace function queen.zz_check_fixture(p_x integer)', //           2
  'returns bigint', //                                                           3
  'language plpgsql volatile', //                                                4
  'set search_path = queen, pg_catalog', //                                      5
  'as $$', //                                                                    6
  'declare', //                                                                  7
  '  v_unused integer;', //                                                      8
  "  v_doc jsonb := '{}';", //                                                   9
  'begin', //                                                                   10
  '  v_doc := v_doc || jsonb_build_object(\'x\', p_x);', //                      11
  '  return (select count(*) from queues where no_such_column = p_x);', //     12
  'end', //                                                                     13
  '$$;', //                                                                     14
].join('\n')

const hasServer = available(debianPostgres15, 'the check:sql tests of test/sql-check.test.ts')

let result: CheckResult
const fixtureFindings = () => [...result.unlisted, ...result.allowed.map((a) => a.finding)].filter((f) => f.function === 'zz_check_fixture')

describe.runIf(hasServer)('check:sql on sql/procedures', () => {
  beforeAll(async () => {
    result = await checkSql({
      extra: async (db) => {
        await db.query(FIXTURE)
      },
      extraFiles: [{ path: FIXTURE_PATH, sql: FIXTURE }],
    })
  }, 120_000)

  it('checks every plpgsql function on Debian PostgreSQL 15', () => {
    expect(result.serverVersion).toMatch(/^15\./)
    expect(result.checked).toBeGreaterThan(40)
  })

  it('finds nothing in sql/procedures that sql/check-allow.txt does not accept', () => {
    const unlisted = result.unlisted.filter((f) => f.function !== 'zz_check_fixture')
    expect(unlisted.map((f) => `${f.path}:${f.line} ${f.function}: ${f.text}`)).toEqual([])
  })

  it('keeps no allow-list entry for a finding that no longer occurs', () => {
    expect(result.stale.map((e) => `sql/check-allow.txt:${e.line} ${e.function} | ${e.text}`)).toEqual([])
  })

  it('places each finding of a function on its own file and line, with its level and text', () => {
    const found = fixtureFindings()
      .map((f: Finding) => ({ path: f.path, line: f.line, level: f.level, sqlstate: f.sqlstate, text: f.text }))
      .sort((a, b) => a.line - b.line)
    expect(found).toEqual([
      // About the whole routine: placed on its `create function` line.
      { path: FIXTURE_PATH, line: 2, level: 'performance', sqlstate: null, text: 'routine is marked as VOLATILE, should be STABLE' },
      { path: FIXTURE_PATH, line: 8, level: 'warning', sqlstate: null, text: 'unused variable "v_unused"' },
      // plpgsql_check reports an initialiser on its block; the finding names the variable's own line.
      {
        path: FIXTURE_PATH,
        line: 9,
        level: 'warning',
        sqlstate: '42804',
        text: 'target type is different type than source type: cast "text" value to "jsonb" type (initialising "v_doc")',
      },
      { path: FIXTURE_PATH, line: 12, level: 'error', sqlstate: '42703', text: 'column "no_such_column" does not exist' },
    ])
  })
})

describe('sql/check-allow.txt format', () => {
  const finding: Finding = { function: 'f', path: 'x.sql', line: 3, level: 'warning', sqlstate: null, text: 'unused variable "v"' }

  it('accepts an exact function and finding, and reports the entries nothing matched as stale', () => {
    const entries = parseAllowList('# comment\n\nf | unused variable "v" | why\ng | unused variable "v" | why\n')
    const verdict = judge([finding, { ...finding, function: 'h' }], entries)
    expect(verdict.allowed.map((a) => a.entry.line)).toEqual([3])
    expect(verdict.unlisted.map((f) => f.function)).toEqual(['h'])
    expect(verdict.stale.map((e) => e.line)).toEqual([4])
  })

  it('matches the finding text exactly, not as a prefix', () => {
    const verdict = judge([finding], parseAllowList('f | unused variable | why'))
    expect(verdict.unlisted).toHaveLength(1)
    expect(verdict.stale).toHaveLength(1)
  })

  it.each([
    ['no reason', 'f | unused variable "v" | '],
    ['two fields', 'f | unused variable "v"'],
    ['a qualified name', 'queen.f | unused variable "v" | why'],
    ['a duplicate', 'f | x | why\nf | x | again'],
  ])('refuses an entry with %s', (_what, text) => {
    expect(() => parseAllowList(text)).toThrow(AllowListError)
  })
})
