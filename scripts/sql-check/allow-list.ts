// sql/check-allow.txt: the plpgsql_check findings accepted on purpose, each with its reason.
//
//   # a comment; blank lines are ignored
//   <function> | <finding> | <reason>
//
// <function> is the name in schema `queen` (migrate allows no overloads, so the name is enough).
// <finding> is the finding's text exactly as check:sql prints it after "in <function>: " (message,
// then ": detail" when there is one). Line numbers are deliberately not part of an entry: they move
// with every edit above them. One entry covers every occurrence of that finding in that function.
// <reason> must not be empty. An entry that matches no finding is stale and fails the check too,
// so the file never keeps excuses for problems that are gone.
import type { Finding } from './findings.js'

export interface AllowEntry {
  function: string
  text: string
  reason: string
  /** Line in the allow-list file, for messages. */
  line: number
}

export class AllowListError extends Error {
  override name = 'AllowListError'
}

export function parseAllowList(content: string, path = 'sql/check-allow.txt'): AllowEntry[] {
  const entries: AllowEntry[] = []
  const seen = new Set<string>()
  content.split('\n').forEach((raw, index) => {
    const line = index + 1
    const text = raw.trim()
    if (text === '' || text.startsWith('#')) return
    const parts = text.split(' | ')
    if (parts.length !== 3) throw new AllowListError(`${path}:${line}: expected "<function> | <finding> | <reason>"`)
    const [fn, finding, reason] = parts.map((p) => p.trim()) as [string, string, string]
    if (!/^[a-z_][a-z0-9_]*$/.test(fn)) throw new AllowListError(`${path}:${line}: "${fn}" is not a function name in schema queen`)
    if (finding === '') throw new AllowListError(`${path}:${line}: the finding is empty`)
    if (reason === '') throw new AllowListError(`${path}:${line}: the reason is empty; say why this finding is accepted`)
    const key = `${fn}\u0000${finding}`
    if (seen.has(key)) throw new AllowListError(`${path}:${line}: the same function and finding are listed twice`)
    seen.add(key)
    entries.push({ function: fn, text: finding, reason, line })
  })
  return entries
}

export interface Verdict {
  /** Findings no entry accepts: each one fails the check. */
  unlisted: Finding[]
  /** Findings an entry accepts, with it. */
  allowed: { finding: Finding; entry: AllowEntry }[]
  /** Entries that match no finding: each one fails the check. */
  stale: AllowEntry[]
}

export function judge(findings: Finding[], entries: AllowEntry[]): Verdict {
  const used = new Set<AllowEntry>()
  const verdict: Verdict = { unlisted: [], allowed: [], stale: [] }
  for (const finding of findings) {
    const entry = entries.find((e) => e.function === finding.function && e.text === finding.text)
    if (entry) {
      used.add(entry)
      verdict.allowed.push({ finding, entry })
    } else {
      verdict.unlisted.push(finding)
    }
  }
  verdict.stale = entries.filter((e) => !used.has(e))
  return verdict
}
