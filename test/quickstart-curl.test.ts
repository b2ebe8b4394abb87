// docs/quickstart-curl.md is run, not just read. Every fenced block opened with ```sh test status=…
// is executed in document order by bash with the real curl binary against a real broker listening
// on a real port (createApp over this file's own PostgreSQL, served by @hono/node-server), with
// $QUEEN set to its base URL. A block passes when bash exits 0 and its curl calls answer exactly
// the statuses its fence names, in order (in any order for a block with a background command).
// Shell variables a block assigns (NAME=…, upper case) are carried to the later blocks, which is
// how a leaseId from a pop reaches the ack. At the end, the broker's own request counters must show
// every registered route exercised, so a route cannot quietly lose (or never get) its example.
// Needs curl and jq (Debian packages); without either the examples are skipped with a printed
// notice naming the package.
import { serve, type ServerType } from '@hono/node-server'
import { spawn } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createApp } from '../src/app.js'
import { loadConfig } from '../src/config.js'
import { createDatabase, type Database } from '../src/db/database.js'
import { createNodePool } from '../src/db/node-pool.js'
import { createLogger } from '../src/log.js'
import { allRoutes } from '../src/routes/index.js'
import { VERSION } from '../src/version.js'
import { freshDatabase, type TestDatabase } from './helpers/database.js'
import { available, CURL_PATH, curlBinary, jqBinary } from './helpers/optional.js'

const DOC = new URL('../docs/quickstart-curl.md', import.meta.url)

export interface Example {
  /** 1-based line of the opening fence, for failure messages. */
  line: number
  script: string
  statuses: number[]
  /** Upper-case shell variables the block assigns; handed on to later blocks. */
  captures: string[]
}

export function examples(markdown: string): Example[] {
  const found: Example[] = []
  const lines = markdown.split('\n')
  for (let i = 0; i < lines.length; i++) {
    const open = /^```sh test status=(\d{3}(?:,\d{3})*)\s*$/.exec(lines[i]!)
    if (!open) continue
    const body: string[] = []
    let j = i + 1
    while (j < lines.length && lines[j] !== '```') body.push(lines[j++]!)
    if (j === lines.length) throw new Error(`unclosed sh test block at line ${i + 1}`)
    const script = body.join('\n')
    const captures = [...new Set([...script.matchAll(/^([A-Z][A-Z0-9_]*)=/gm)].map((m) => m[1]!))]
    found.push({ line: i + 1, script, statuses: open[1]!.split(',').map(Number), captures })
    i = j
  }
  return found
}

const doc = readFileSync(DOC, 'utf8')
const blocks = examples(doc)
const skipped = 'the examples of docs/quickstart-curl.md (test/quickstart-curl.test.ts)'
// Both checked, so a machine without either is told about each.
const hasTools = [available(curlBinary, skipped), available(jqBinary, skipped)].every(Boolean)

let database: TestDatabase
let db: Database
let server: ServerType
let base: string
const stateDir = mkdtempSync(join(tmpdir(), 'queen-quickstart-'))
const stateFile = join(stateDir, 'state.sh')

beforeAll(async () => {
  database = await freshDatabase()
  const config = loadConfig({ LOG_LEVEL: 'silent' }, 'node')
  db = createDatabase(createNodePool({ connectionString: database.appUrl, max: 5 }), { longLived: true })
  const app = createApp({ config, log: createLogger(config.LOG_LEVEL), database: () => db })
  server = await new Promise<ServerType>((done) => {
    const s = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, () => done(s))
  })
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
})

afterAll(async () => {
  await new Promise<void>((done) => (server ? server.close(() => done()) : done()))
  await db?.close()
  await database?.drop()
  rmSync(stateDir, { recursive: true, force: true })
})

interface Run {
  code: number
  stdout: string
  stderr: string
  statuses: number[]
}

// curl is wrapped by a shell function that only adds a write-out to stderr, so the commands run as
// written and the test still learns every status, including those of curls inside $(…).
function run(example: Example): Promise<Run> {
  const script = [
    'set -euo pipefail',
    `curl() { ${CURL_PATH} --write-out '%{stderr}@@status %{http_code}\\n' "$@"; }`,
    `[ -f '${stateFile}' ] && source '${stateFile}'`,
    example.script,
    ...example.captures.map((name) => `declare -p ${name} >> '${stateFile}'`),
  ].join('\n')
  return new Promise((done) => {
    // stdin closed: bash reads ~/.bashrc when its stdin looks like a remote shell's socket.
    const child = spawn('bash', ['-c', script], { env: { PATH: process.env.PATH, QUEEN: base }, stdio: ['ignore', 'pipe', 'pipe'] })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (d) => (stdout += String(d)))
    child.stderr.on('data', (d) => (stderr += String(d)))
    const timer = setTimeout(() => child.kill('SIGKILL'), 20_000)
    child.on('close', (code) => {
      clearTimeout(timer)
      const statuses = [...stderr.matchAll(/^@@status (\d{3})$/gm)].map((m) => Number(m[1]))
      done({ code: code ?? 1, stdout, stderr: stderr.replace(/^@@status \d{3}\n/gm, ''), statuses })
    })
  })
}

describe.runIf(hasTools)('docs/quickstart-curl.md runs as written', () => {
  it('has runnable examples', () => {
    expect(blocks.length).toBeGreaterThan(40)
  })

  for (const example of blocks) {
    const title = `line ${example.line}: ${example.script.split('\n').find((l) => l.trim() && !l.startsWith('#'))?.slice(0, 90)}`
    it(title, async () => {
      const result = await run(example)
      const report = `exit ${result.code}, statuses ${result.statuses.join(',')}\nstdout:\n${result.stdout}\nstderr:\n${result.stderr}`
      if (process.env.QUICKSTART_PRINT) console.log(`--- line ${example.line}\n${report}`)
      expect(result.code, report).toBe(0)
      // A block that runs a curl in the background (`… &`) has no defined completion order between
      // its calls (the long-poll example's push can print its status after the pop it woke), so
      // there the statuses are compared as a set of answers; everywhere else in order.
      const concurrent = /\)\s*&\s*$/m.test(example.script)
      const order = (xs: number[]) => (concurrent ? [...xs].sort() : xs)
      expect(order(result.statuses), report).toEqual(order(example.statuses))
    })
  }

  it('exercises every route of the broker', async () => {
    const text = await (await fetch(`${base}/metrics/prometheus`)).text()
    // The request counters label each request with its registered route pattern (API §5.3).
    const seen = new Set([...text.matchAll(/^queen_http_requests_total\{method="(\w+)",route="([^"]+)"/gm)].map((m) => `${m[1]} ${m[2]}`))
    const missing = allRoutes(VERSION).map((r) => `${r.method} ${r.path}`).filter((key) => !seen.has(key))
    expect(missing, 'routes without an example in docs/quickstart-curl.md: add one').toEqual([])
  })
})
