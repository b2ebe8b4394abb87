// Chaos: the archive sink (`node --import tsx src/sink/cli.ts`, what `npm run sink` runs) killed
// with SIGKILL at random points while producers push over 16 partitions of a queue with retention
// on (short retentionSeconds, retentionSinkHold naming the sink) and the retention lane running
// every second; once per format of the hive layout (Parquet, gzip JSONL), windows per queue.
// `npm run chaos`: 50 000 frames over about 90 s and 10 kills per format, long enough for
// retention to delete frames the sink committed more than the hold's 60 s ago; `npm test`: 5 000
// frames over 6 s and 3 kills per format. At the end the committed archive must hold every frame exactly once, in
// offset order per partition, with no gap (so retention never deleted a frame before the archive
// had it: the sink would have found it missing and recorded a gap), each payload as pushed, and
// `npm run sink -- verify` must pass. SINK_CHAOS_FORMATS picks other variants, e.g.
// `jsonl+zstd,parquet+zstd` for the zstd codec.
import { spawn, type ChildProcess } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { retention } from '../../cron/retention.js'
import { runLane } from '../../cron/runner.js'
import { directoryStore } from '../../src/sink/store-directory.js'
import { testApp, type TestApp } from '../helpers/app.js'
import { push } from '../helpers/engine.js'
import { pointerPath, readArchive, sinkDatabase } from '../helpers/sink.js'
import { FULL, sleep } from './harness.js'

const FRAMES = FULL ? 50_000 : 5_000
const PUSH_MS = FULL ? 90_000 : 6_000
const KILLS = FULL ? 10 : 3
const PARTITIONS = 16
const BATCH = 50
const FORMATS = (process.env.SINK_CHAOS_FORMATS ?? 'parquet,jsonl').split(',')
const root = new URL('../..', import.meta.url)

let app: TestApp
let root_: string
let child: ChildProcess | undefined
let output = ''

beforeAll(async () => {
  app = await testApp({ database: await sinkDatabase() })
  root_ = mkdtempSync(join(tmpdir(), 'queen-sink-kill-'))
})
afterAll(async () => {
  child?.kill('SIGKILL')
  await app?.close()
  await app?.database.drop()
  if (root_) rmSync(root_, { recursive: true, force: true })
})

describe.each(FORMATS)('the sink writing %s', (variant) => {
  const [format, codec] = variant.split('+') as ['parquet' | 'jsonl', 'zstd' | undefined]
  const name = variant.replace('+', '-')
  const QUEUE = `archived-${name}`
  const SINK = `lake-${name}`
  const dir = () => join(root_, name)
  const sinkArgs = (extra: string[] = []) => ['--import', 'tsx', 'src/sink/cli.ts', ...extra, '--queue', QUEUE, '--to', dir(), '--name', SINK]

  function startSink(): ChildProcess {
    const c = spawn(process.execPath, sinkArgs(['--format', format, ...(codec ? ['--compression', codec] : []), '--window-seconds', '1', '--lease-seconds', '2', '--poll-ms', '200', '--max-frames', '400']), {
      cwd: root,
      env: { ...process.env, DATABASE_URL: app.database.url, LOG_LEVEL: 'warn' },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    c.stdout!.on('data', (d) => (output = (output + String(d)).slice(-20_000)))
    c.stderr!.on('data', (d) => (output = (output + String(d)).slice(-20_000)))
    return c
  }

  async function exit(c: ChildProcess, signal: NodeJS.Signals): Promise<void> {
    if (c.exitCode !== null || c.signalCode !== null) return
    const exited = new Promise((done) => c.once('exit', done))
    c.kill(signal)
    await exited
  }

  const pointer = async () => {
    const res = await app.json('GET', pointerPath(SINK, QUEUE))
    return res.body.found === true ? (res.body.value.windowEnd as string) : null
  }

  it(`archives every frame exactly once across ${KILLS} SIGKILLs of the sink, with retention on`, { timeout: FULL ? 600_000 : 120_000 }, async () => {
    const configured = await app.json('POST', '/api/v1/configure', {
      queue: QUEUE,
      options: { retentionEnabled: true, retentionSeconds: 2, retentionSinkHold: SINK, retentionSinkHoldMaxSeconds: 86_400 },
    })
    expect(configured.status).toBe(200)

    const sent = new Map<string, unknown[]>()
    let retentionRuns = 0
    let pushing = true
    // The retention lane as the broker runs it, every second instead of every five minutes.
    const retaining = (async () => {
      while (pushing) {
        const run = await runLane(app.db, retention, { config: app.config, budgetMs: 2000, force: true })
        if (run.claimed) retentionRuns++
        await sleep(1000)
      }
    })()

    child = startSink()
    const killTimes = Array.from({ length: KILLS }, () => Math.random() * PUSH_MS).sort((a, b) => a - b)
    let kills = 0
    const started = Date.now()
    const killing = (async () => {
      for (const at of killTimes) {
        await sleep(Math.max(0, started + at - Date.now()))
        await exit(child!, 'SIGKILL')
        kills++
        child = startSink()
      }
    })()

    let lastCreatedAt = ''
    const batches = FRAMES / BATCH
    for (let b = 0; b < batches; b++) {
      const items = Array.from({ length: BATCH }, (_, i) => {
        const partition = `p${(b * 7 + i) % PARTITIONS}`
        const payload = { b, i }
        sent.set(partition, [...(sent.get(partition) ?? []), payload])
        return { queue: QUEUE, partition, payload }
      })
      await push(app, items)
      await sleep(Math.max(0, started + ((b + 1) * PUSH_MS) / batches - Date.now()))
    }
    const [{ at }] = (await app.database.sql<{ at: Date }>(
      `select max(s.created_at) as at from queen.log_segments s join queen.log_partitions p on p.id = s.partition_id join queen.queues q on q.id = p.queue_id where q.name = $1`,
      [QUEUE],
    )) as [{ at: Date }]
    lastCreatedAt = at.toISOString()
    await killing
    expect(kills).toBe(KILLS)

    // The last process catches up; every frame pushed is then below its pointer.
    const deadline = Date.now() + 60_000
    for (;;) {
      const at = await pointer()
      if (at !== null && Date.parse(at) > Date.parse(lastCreatedAt)) break
      if (Date.now() > deadline) throw new Error(`the sink did not catch up (pointer ${at}, last frame ${lastCreatedAt}):\n${output}`)
      await sleep(250)
    }
    pushing = false
    await retaining
    await exit(child!, 'SIGTERM')
    expect(retentionRuns).toBeGreaterThan(0)

    const archive = await readArchive(directoryStore(dir()), { sink: SINK, queue: QUEUE, pointer: await pointer() })
    // One object series per window for the queue: never more objects than windows times parts.
    expect(archive.objects.every((key) => key.startsWith(`queue=${QUEUE}/dt=`) && key.endsWith(format === 'parquet' ? '.parquet' : codec === 'zstd' ? '.jsonl.zst' : '.jsonl.gz'))).toBe(true)
    expect(archive.gaps).toEqual([])
    expect(archive.partitions.size).toBe(PARTITIONS)
    for (const [partition, payloads] of sent) {
      const lines = archive.partitions.get(partition)!
      expect(lines.map((l) => l.offset), partition).toEqual(payloads.map((_, i) => i))
      expect(lines.map((l) => l.payload), partition).toEqual(payloads)
    }
    if (FULL) {
      // Long enough for retention to have deleted frames the archive already held.
      const [{ deleted }] = (await app.database.sql<{ deleted: number }>(
        `select coalesce(sum(p.log_start), 0)::int as deleted from queen.log_partitions p join queen.queues q on q.id = p.queue_id where q.name = $1`,
        [QUEUE],
      )) as [{ deleted: number }]
      expect(deleted).toBeGreaterThan(0)
    }

    const verify = spawn(process.execPath, sinkArgs(['verify']), { cwd: root, env: { ...process.env, DATABASE_URL: app.database.url, LOG_LEVEL: 'warn' } })
    let report = ''
    verify.stdout!.on('data', (d) => (report += String(d)))
    verify.stderr!.on('data', (d) => (report += String(d)))
    const code = await new Promise((done) => verify.once('exit', done))
    expect(code, report).toBe(0)
    expect(JSON.parse(report.trim().split('\n').at(-1)!)).toMatchObject({ ok: true, frames: FRAMES, problems: [] })
  })
})
