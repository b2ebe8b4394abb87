// `npm run sink -- --queue Q --to DIR|s3://bucket/prefix [options]` archives continuously;
// `npm run sink -- verify --queue Q --to ...` checks an archive against the broker (exit 1 when
// it does not hold). The sink talks to PostgreSQL at DATABASE_URL through the broker's own db
// layer (docs/sink.md says why), and decrypts with QUEEN_ENCRYPTION_KEY like the broker does.
import { parseArgs } from 'node:util'
import { loadConfig, ConfigError } from '../config.js'
import { createDatabase } from '../db/database.js'
import { createNodePool } from '../db/node-pool.js'
import { createLogger, describeError } from '../log.js'
import { createSinkEngine } from './engine.js'
import { sinkOptions } from './options.js'
import { databaseSource } from './source.js'
import { openTarget } from './target.js'
import { verifyArchive } from './verify.js'

const USAGE = `usage: npm run sink -- [verify] --queue Q [--queue Q2 ...] --to DIR|s3://bucket/prefix
  --name NAME            sink name, the queues' retentionSinkHold (default archive)
  --window-seconds N     window length (default 60)
  --layout hive|legacy   hive: queue=/dt=/hour= keys (default); legacy: the first per-partition layout
  --format jsonl|parquet hive layout: JSONL lines or Parquet rows (default jsonl)
  --compression gzip|zstd|none  hive layout: JSONL's codec (default gzip); Parquet pages are
                         zstd with zstd, Snappy otherwise
  --windows queue|partition  hive layout: one object series per window for the queue (default) or per partition
  --align hour|day|none  hive layout: the boundary no window straddles (default hour)
  --max-frames N         frames per object part (default 100000)
  --max-bytes N          encoded bytes per object part, before compression (default 67108864)
  --lease-seconds N      lease lifetime (default 30)
  --poll-ms N            pause when caught up (default 1000)
  --tenant T             tenant of the queues (default '')
  --once                 archive what is closable, then exit
environment: DATABASE_URL (required), QUEEN_ENCRYPTION_KEY, S3_ENDPOINT, S3_REGION, S3_ACCESS_KEY_ID, S3_SECRET_ACCESS_KEY`

const sleep = (ms: number) => new Promise<void>((done) => setTimeout(done, ms))

function fail(message: string): never {
  console.error(message)
  console.error(USAGE)
  process.exit(2)
}

async function main(): Promise<void> {
  const args = process.argv.slice(2)
  const verify = args[0] === 'verify'
  let parsed
  try {
    parsed = parseArgs({
      args: verify ? args.slice(1) : args,
      options: {
        queue: { type: 'string', multiple: true },
        to: { type: 'string' },
        name: { type: 'string', default: 'archive' },
        'window-seconds': { type: 'string' },
        layout: { type: 'string' },
        format: { type: 'string' },
        compression: { type: 'string' },
        windows: { type: 'string' },
        align: { type: 'string' },
        'max-frames': { type: 'string' },
        'max-bytes': { type: 'string' },
        'lease-seconds': { type: 'string' },
        'poll-ms': { type: 'string', default: '1000' },
        tenant: { type: 'string', default: '' },
        once: { type: 'boolean', default: false },
        help: { type: 'boolean', default: false },
      },
    }).values
  } catch (error) {
    fail((error as Error).message)
  }
  if (parsed.help) {
    console.log(USAGE)
    return
  }
  if (!parsed.to) fail('--to is required')
  const number = (flag: string, value: string | undefined) => {
    if (value === undefined) return undefined
    if (!/^\d+$/.test(value)) fail(`--${flag} must be a non-negative integer`)
    return Number(value)
  }
  const options = sinkOptions.safeParse({
    sink: parsed.name,
    queues: parsed.queue ?? [],
    tenant: parsed.tenant,
    windowSeconds: number('window-seconds', parsed['window-seconds']),
    layout: parsed.layout,
    format: parsed.format,
    compression: parsed.compression,
    windows: parsed.windows,
    align: parsed.align,
    maxFrames: number('max-frames', parsed['max-frames']),
    maxBytes: number('max-bytes', parsed['max-bytes']),
    leaseSeconds: number('lease-seconds', parsed['lease-seconds']),
  })
  if (!options.success) {
    const issue = options.error.issues[0]!
    fail(`${issue.path.join('.') || 'options'}: ${issue.message}`)
  }
  const pollMs = number('poll-ms', parsed['poll-ms'])!

  let config
  try {
    config = loadConfig(process.env, 'node')
  } catch (error) {
    if (error instanceof ConfigError) fail(error.message)
    throw error
  }
  if (!config.DATABASE_URL) fail('DATABASE_URL is required: the sink reads the broker database')
  const log = createLogger(config.LOG_LEVEL)
  let target
  try {
    target = openTarget(parsed.to, process.env)
  } catch (error) {
    fail((error as Error).message)
  }
  const db = createDatabase(createNodePool({ connectionString: config.DATABASE_URL, max: 2 }), { longLived: true })
  const source = databaseSource(db, config, options.data.tenant)
  const sink = { ...options.data, prefix: target.prefix }

  if (verify) {
    let ok = true
    for (const queue of sink.queues) {
      // Without --layout, verify reads whichever layout the pointer's manifest is in.
      const report = await verifyArchive(source, target.store, { sink: sink.sink, queue, prefix: sink.prefix, tenant: sink.tenant, layout: parsed.layout === undefined ? undefined : sink.layout })
      console.log(JSON.stringify(report))
      ok &&= report.ok
    }
    await db.close()
    process.exit(ok ? 0 : 1)
  }

  const engine = createSinkEngine(source, target.store, sink)
  let stopping = false
  const stop = () => {
    stopping = true
  }
  process.on('SIGINT', stop)
  process.on('SIGTERM', stop)
  log.info('sink started', { sink: sink.sink, queues: sink.queues, target: target.store.describe, windowSeconds: sink.windowSeconds, layout: sink.layout, format: sink.format })
  while (!stopping) {
    let idle = true
    try {
      for (const run of await engine.runOnce(10_000)) {
        if (run.windows > 0) log.info('sink archived', { ...run })
        if (!run.caughtUp && run.leased) idle = false
      }
    } catch (error) {
      // A database restart or a store hiccup: the committed state is intact, so retry after a pause.
      log.error('sink cycle failed', describeError(error))
    }
    if (parsed.once) break
    if (idle) await sleep(pollMs)
  }
  await engine.release()
  await db.close()
}

main().catch((error) => {
  console.error(`sink failed: ${error instanceof Error ? error.message : String(error)}`)
  process.exit(1)
})
