// The comment-only edits of applied migrations (docs/migrations.md). An applied migration is
// checksummed, so a database refuses a file that changed; sql/migrations/superseded-checksums.txt
// names the checksums an edit replaced, and the runner accepts those as the current one. Each entry
// also records the checksum of the file's statements (comments removed, whitespace collapsed)
// before the edit: the build refuses an entry whose file's statements no longer match it, so the list
// can only ever excuse comments.
//
// `npx tsx scripts/superseded-checksums.ts sql/migrations/NNNN_x.sql`, run BEFORE editing, prints the
// file's line for the list.
import { createHash } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { basename } from 'node:path'
import { fileURLToPath } from 'node:url'

export const SUPERSEDED_PATH = 'sql/migrations/superseded-checksums.txt'

export interface SupersededChecksum {
  /** The migration's file name, e.g. 0001_schema.sql. */
  name: string
  /** The checksum a database's ledger may still hold for it. */
  checksum: string
}

interface Named {
  name: string
  checksum: string
  sql: string
}

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex')

/**
 * The SQL with every comment (`--` to the end of the line, `/* … *\/`, which nest in PostgreSQL)
 * replaced by a space and every run of whitespace collapsed to one space. Quoted strings and
 * identifiers are kept as written, so a `--` inside one is not taken for a comment.
 */
export function statementsOf(sql: string): string {
  let out = ''
  const space = () => {
    if (out !== '' && !out.endsWith(' ')) out += ' '
  }
  let i = 0
  while (i < sql.length) {
    const c = sql[i]!
    if (c === '-' && sql[i + 1] === '-') {
      const end = sql.indexOf('\n', i)
      i = end === -1 ? sql.length : end
      space()
    } else if (c === '/' && sql[i + 1] === '*') {
      let depth = 0
      do {
        if (sql.startsWith('/*', i)) {
          depth++
          i += 2
        } else if (sql.startsWith('*/', i)) {
          depth--
          i += 2
        } else i++
      } while (depth > 0 && i < sql.length)
      space()
    } else if (c === "'" || c === '"') {
      // A doubled quote is the quote itself; the literal ends at the first single one.
      let end = i + 1
      while (end < sql.length && !(sql[end] === c && sql[end + 1] !== c)) end += sql[end] === c ? 2 : 1
      out += sql.slice(i, end + 1)
      i = end + 1
    } else if (/\s/.test(c)) {
      space()
      i++
    } else {
      out += c
      i++
    }
  }
  return out.trimEnd()
}

export const statementsChecksum = (sql: string) => sha256(statementsOf(sql))

/**
 * Parses the list (`<name> <superseded checksum> <statements checksum>` a line, `#` comments) and
 * checks it against the migrations as they are now: each entry must name a migration, must not be
 * its current checksum, and must record the statements the migration still has.
 */
export function parseSupersededChecksums(text: string, migrations: readonly Named[]): SupersededChecksum[] {
  const current = new Map(migrations.map((m) => [m.name, m]))
  const entries: SupersededChecksum[] = []
  for (const [index, raw] of text.split('\n').entries()) {
    const line = raw.replace(/#.*/, '').trim()
    if (line === '') continue
    const where = `${SUPERSEDED_PATH}:${index + 1}`
    const fields = line.split(/\s+/)
    const [name, checksum, statements] = fields
    if (fields.length !== 3 || !/^[0-9a-f]{64}$/.test(checksum!) || !/^[0-9a-f]{64}$/.test(statements!)) {
      throw new Error(`${where}: expected "<migration> <superseded sha256> <statements sha256>"`)
    }
    const migration = current.get(name!)
    if (!migration) throw new Error(`${where}: no migration is named ${name}`)
    if (checksum === migration.checksum) throw new Error(`${where}: ${checksum} is ${name}'s current checksum, not a superseded one`)
    if (statementsChecksum(migration.sql) !== statements) {
      throw new Error(
        `${where}: the statements of ${name} changed since ${checksum}; an applied migration may change in its comments only (add a new migration instead)`,
      )
    }
    entries.push({ name: name!, checksum: checksum! })
  }
  return entries
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  for (const path of process.argv.slice(2)) {
    const sql = readFileSync(path, 'utf8')
    console.log(`${basename(path)} ${sha256(sql)} ${statementsChecksum(sql)}`)
  }
}
