// `npm run check:sql`: plpgsql_check over every procedure (docs/sql-check.md). Prints one line per
// finding with its file and line; exits 1 on any finding sql/check-allow.txt does not accept and on
// any entry there that no longer matches, and 2 when the check could not run at all — loudly,
// because a check that cannot run must never look like a check that passed.
import { AllowListError } from './sql-check/allow-list.js'
import { ALLOW_LIST_PATH, checkSql } from './sql-check/check.js'
import { ServerUnavailable } from './sql-check/debian-server.js'
import { formatFinding } from './sql-check/findings.js'

try {
  const result = await checkSql()
  for (const { finding, entry } of result.allowed) {
    console.log(`${formatFinding(finding)}  [allowed, ${ALLOW_LIST_PATH}:${entry.line}]`)
  }
  for (const finding of result.unlisted) console.log(formatFinding(finding))
  for (const entry of result.stale) {
    console.log(`${ALLOW_LIST_PATH}:${entry.line}: stale entry: ${entry.function} no longer reports "${entry.text}"; remove it`)
  }
  console.log(
    `check:sql: ${result.checked} plpgsql functions checked on PostgreSQL ${result.serverVersion}; ` +
      `${result.unlisted.length} unlisted finding(s), ${result.allowed.length} allowed, ${result.stale.length} stale allow entr${result.stale.length === 1 ? 'y' : 'ies'}`,
  )
  if (result.unlisted.length > 0 || result.stale.length > 0) process.exitCode = 1
} catch (error) {
  if (error instanceof ServerUnavailable || error instanceof AllowListError) {
    console.error('')
    console.error('*** check:sql DID NOT RUN: nothing was checked ***')
    console.error(`*** ${error.message}`)
    console.error('*** it needs Debian PostgreSQL 15 with plpgsql_check: apt-get install postgresql-15 postgresql-15-plpgsql-check ***')
    console.error('')
    process.exitCode = 2
  } else {
    console.error(`check:sql failed: ${(error as Error).stack ?? String(error)}`)
    process.exitCode = 2
  }
}
