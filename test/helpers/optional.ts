// Programs some tests need that npm cannot install: Debian packages, which .ci/run installs. On a
// machine without one, `npm test` still passes: the tests that need it are skipped, and one notice
// names what is missing, what is not run and the apt package that brings it. Never a failure, never
// a silent skip.
//
// QUEEN_TEST_ABSENT=chromium,curl,jq,pgbouncer,postgresql-15 makes the named components look missing,
// to see what a fresh machine sees.
import { spawnSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import { DEFAULT_BIN_DIR, unavailableReason } from '../../scripts/sql-check/debian-server.js'
import { findPgBouncer } from './pgbouncer.js'

export interface OptionalComponent {
  /** The name QUEEN_TEST_ABSENT uses. */
  name: string
  /** What `apt-get install` needs to bring it. */
  apt: string
  /** Why it cannot be used here, or null when it can. */
  missing(): string | null
}

/** The component's reason for being unusable, counting QUEEN_TEST_ABSENT. */
export function whyMissing(component: OptionalComponent): string | null {
  const absent = (process.env.QUEEN_TEST_ABSENT ?? '').split(',').map((s) => s.trim())
  if (absent.includes(component.name)) return `${component.name} is treated as missing (QUEEN_TEST_ABSENT)`
  return component.missing()
}

/**
 * True when the component can be used; otherwise prints the notice and returns false. `skipped`
 * says what is not run, e.g. "the console browser test".
 */
export function available(component: OptionalComponent, skipped: string): boolean {
  const reason = whyMissing(component)
  if (reason === null) return true
  const notice = `[queen-edge tests] NOTICE: ${reason}; not run: ${skipped} (apt-get install ${component.apt})`
  // vitest evaluates its config once per project in one process: say each thing once.
  const said = ((globalThis as { queenNotices?: Set<string> }).queenNotices ??= new Set())
  if (!said.has(notice)) console.warn(`\n${notice}\n`)
  said.add(notice)
  return false
}

export const CHROMIUM_PATH = '/usr/bin/chromium'
export const CURL_PATH = '/usr/bin/curl'

/** Debian's Chromium, which playwright-core drives for the console's browser tests. */
export const chromiumBrowser: OptionalComponent = {
  name: 'chromium',
  apt: 'chromium',
  missing: () => (existsSync(CHROMIUM_PATH) ? null : `${CHROMIUM_PATH} not found`),
}

/** The curl binary docs/quickstart-curl.md's examples are run with. */
export const curlBinary: OptionalComponent = {
  name: 'curl',
  apt: 'curl',
  missing: () => (existsSync(CURL_PATH) ? null : `${CURL_PATH} not found`),
}

/** jq, which docs/quickstart-curl.md's examples use to pick a lease or partition id out of an answer. */
export const jqBinary: OptionalComponent = {
  name: 'jq',
  apt: 'jq',
  missing: () => (spawnSync('sh', ['-c', 'command -v jq'], { stdio: 'ignore' }).status === 0 ? null : 'no jq binary on PATH'),
}

/** python3 with boto3, which the SQS endpoint's boto3 test runs (.ci/run installs it with pip). */
export const boto3Module: OptionalComponent = {
  name: 'boto3',
  apt: 'python3-boto3',
  missing: () => (spawnSync('python3', ['-c', 'import boto3'], { stdio: 'ignore' }).status === 0 ? null : 'python3 with boto3 not found'),
}

/** PgBouncer, run in transaction mode in front of the test server. */
export const pgbouncerBinary: OptionalComponent = {
  name: 'pgbouncer',
  apt: 'pgbouncer',
  missing: () => (findPgBouncer() ? null : 'no pgbouncer binary on PATH'),
}

/** Debian's PostgreSQL 15 with plpgsql_check, for `npm run check:sql` (QUEEN_PG15_BIN moves it). */
export const debianPostgres15: OptionalComponent = {
  name: 'postgresql-15',
  apt: 'postgresql-15 postgresql-15-plpgsql-check',
  missing: () => unavailableReason(process.env.QUEEN_PG15_BIN ?? DEFAULT_BIN_DIR),
}
