// The Workers sink: the real worker bundle in workerd (miniflare) with miniflare's R2 as the
// SINK_BUCKET binding, over a real PostgreSQL through the WebSocket bridge. scheduled() archives
// SINK_QUEUES into the bucket; the archive is then read back from R2 in Node and held against
// fetch by the same verify the Node command runs. Twice: the hive layout writing Parquet with
// per-queue windows (the pure-JS Parquet writer must run in workerd), and the legacy layout.
import { rmSync } from 'node:fs'
import { dirname } from 'node:path'
import type { Readable } from 'node:stream'
import { Miniflare } from 'miniflare'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { startWsBridge, type WsBridge } from '../../scripts/ws-bridge.js'
import { loadConfig } from '../../src/config.js'
import { createDatabase, type Database } from '../../src/db/database.js'
import { createNodePool } from '../../src/db/node-pool.js'
import { databaseSource } from '../../src/sink/source.js'
import { r2Store, type R2BucketLike } from '../../src/sink/store-r2.js'
import { verifyArchive } from '../../src/sink/verify.js'
import type { TestDatabase } from '../helpers/database.js'
import { readArchive, sinkDatabase, sleep } from '../helpers/sink.js'
import { buildWorker, type WorkerBundle } from './build-worker.js'

let bundle: WorkerBundle
let database: TestDatabase
let bridge: WsBridge
let mf: Miniflare
let legacyMf: Miniflare
const lakes: Miniflare[] = []
let worker: (bindings: Record<string, string>) => Miniflare
let db: Database
let output = ''

beforeAll(async () => {
  bundle = buildWorker()
  ;[database, bridge] = await Promise.all([sinkDatabase(), startWsBridge()])
  worker = (bindings: Record<string, string>) =>
    new Miniflare({
      modules: true,
      scriptPath: bundle.scriptPath,
      modulesRoot: dirname(bundle.scriptPath),
      compatibilityDate: bundle.compatibilityDate,
      compatibilityFlags: bundle.compatibilityFlags,
      bindings: { LOG_LEVEL: 'warn', DATABASE_URL: database.url, NEON_WS_PROXY: bridge.url, SINK_WINDOW_SECONDS: '1', SINK_PREFIX: 'archive', ...bindings },
      r2Buckets: ['SINK_BUCKET'],
      handleRuntimeStdio(stdout: Readable, stderr: Readable) {
        stdout.on('data', (chunk: Buffer) => (output += String(chunk)))
        stderr.on('data', (chunk: Buffer) => (output += String(chunk)))
      },
    })
  mf = worker({ SINK_QUEUES: 'edge.archive', SINK_NAME: 'r2lake', SINK_LAYOUT: 'legacy' })
  legacyMf = mf
  await mf.ready
  db = createDatabase(createNodePool({ connectionString: database.url, max: 2 }), { longLived: true })
}, 120_000)

afterAll(async () => {
  await legacyMf?.dispose()
  for (const lake of lakes) await lake.dispose()
  await db?.close()
  await bridge?.close()
  await database?.drop()
  if (bundle) rmSync(bundle.outdir, { recursive: true, force: true })
})

const post = async (path: string, body: unknown) => {
  const res = await mf.dispatchFetch(`http://edge.test${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })
  return { status: res.status, body: (await res.json()) as any }
}

it('archives a live queue into the R2 binding from scheduled(), and verify passes on what R2 holds', { timeout: 90_000 }, async () => {
  const source = databaseSource(db, loadConfig({ LOG_LEVEL: 'silent' }, 'node'), '')
  const sent = new Map<string, unknown[]>()
  for (let round = 0; round < 3; round++) {
    const items = Array.from({ length: 20 }, (_, i) => ({ queue: 'edge.archive', partition: `p${i % 3}`, payload: { round, i } }))
    for (const item of items) sent.set(item.partition, [...(sent.get(item.partition) ?? []), item.payload])
    expect((await post('/api/v1/push', { items })).status).toBe(201)
    await sleep(400)
  }
  const [{ last }] = (await database.sql<{ last: Date }>(`select max(created_at) as last from queen.log_segments`)) as [{ last: Date }]
  const worker = await mf.getWorker()
  const deadline = Date.now() + 30_000
  let pointer: string | null = null
  while (pointer === null || Date.parse(pointer) <= last.getTime()) {
    if (Date.now() > deadline) throw new Error(`the Worker's sink did not catch up (pointer ${pointer}):\n${output}`)
    await sleep(500)
    await worker.scheduled({ cron: '* * * * *' })
    // scheduled() hands the sink to waitUntil: give it a moment, then read the pointer it commits.
    await sleep(300)
    pointer = await source.readPointer('r2lake', 'edge.archive')
  }
  const bucket = (await mf.getR2Bucket('SINK_BUCKET')) as unknown as R2BucketLike
  const store = r2Store(bucket)
  const archive = await readArchive(store, { prefix: 'archive', sink: 'r2lake', queue: 'edge.archive', pointer, layout: 'legacy' })
  for (const [partition, payloads] of sent) {
    expect(archive.partitions.get(partition)!.map((l) => l.offset)).toEqual(payloads.map((_, i) => i))
    expect(archive.partitions.get(partition)!.map((l) => l.payload)).toEqual(payloads)
  }
  expect(archive.objects.every((key) => key.startsWith('archive/r2lake/edge.archive/data/'))).toBe(true)
  const report = await verifyArchive(source, store, { sink: 'r2lake', queue: 'edge.archive', prefix: 'archive', layout: 'legacy' })
  expect(report).toMatchObject({ ok: true, frames: 60, problems: [] })
  expect(output).not.toMatch(/sink failed|sink not run/)
})

it('archives a queue as Parquet under the hive layout from scheduled(), one object series per window for the queue', { timeout: 90_000 }, async () => {
  await archiveLake('edge.lake', 'r2parquet', { SINK_FORMAT: 'parquet' }, '.parquet')
})

it('archives zstd JSONL and Parquet with zstd pages from scheduled(): the own encoder runs in workerd', { timeout: 120_000 }, async () => {
  const jsonl = await archiveLake('edge.zjsonl', 'r2zjsonl', { SINK_COMPRESSION: 'zstd' }, '.jsonl.zst')
  const parquet = await archiveLake('edge.zparquet', 'r2zparquet', { SINK_FORMAT: 'parquet', SINK_COMPRESSION: 'zstd' }, '.parquet')
  for (const archive of [jsonl, parquet]) expect(archive.chain.every((m) => (m as { compression?: string }).compression === 'zstd')).toBe(true)
})

/** Pushes 60 frames over 4 partitions, runs scheduled() until the sink has them, and reads the lake back from R2. */
async function archiveLake(queue: string, sink: string, bindings: Record<string, string>, extension: string) {
  const lakeMf = worker({ SINK_QUEUES: queue, SINK_NAME: sink, ...bindings })
  lakes.push(lakeMf)
  await lakeMf.ready
  const source = databaseSource(db, loadConfig({ LOG_LEVEL: 'silent' }, 'node'), '')
  const sent = new Map<string, unknown[]>()
  for (let round = 0; round < 3; round++) {
    const items = Array.from({ length: 20 }, (_, i) => ({ queue: queue, partition: `p${i % 4}`, payload: { round, i } }))
    for (const item of items) sent.set(item.partition, [...(sent.get(item.partition) ?? []), item.payload])
    const res = await lakeMf.dispatchFetch('http://edge.test/api/v1/push', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ items }) })
    expect(res.status).toBe(201)
    await res.arrayBuffer()
    await sleep(400)
  }
  const [{ last }] = (await database.sql<{ last: Date }>(
    `select max(s.created_at) as last from queen.log_segments s join queen.log_partitions p on p.id = s.partition_id join queen.queues q on q.id = p.queue_id where q.name = $1`,
    [queue],
  )) as [{ last: Date }]
  const scheduled = await lakeMf.getWorker()
  const deadline = Date.now() + 30_000
  let pointer: string | null = null
  while (pointer === null || Date.parse(pointer) <= last.getTime()) {
    if (Date.now() > deadline) throw new Error(`the Worker's sink did not catch up (pointer ${pointer}):\n${output}`)
    await sleep(500)
    await scheduled.scheduled({ cron: '* * * * *' })
    await sleep(300)
    pointer = await source.readPointer(sink, queue)
  }
  const store = r2Store((await lakeMf.getR2Bucket('SINK_BUCKET')) as unknown as R2BucketLike)
  const archive = await readArchive(store, { prefix: 'archive', sink: sink, queue: queue, pointer })
  for (const [partition, payloads] of sent) {
    expect(archive.partitions.get(partition)!.map((l) => l.offset)).toEqual(payloads.map((_, i) => i))
    expect(archive.partitions.get(partition)!.map((l) => l.payload)).toEqual(payloads)
  }
  expect(archive.objects.length).toBeGreaterThan(0)
  expect(archive.objects.every((key) => key.startsWith(`archive/queue=${queue}/dt=`) && /\/hour=\d\d\/w-\d{16}-\d{16}-\d{4}\./.test(key) && key.endsWith(extension))).toBe(true)
  const report = await verifyArchive(source, store, { sink: sink, queue: queue, prefix: 'archive' })
  expect(report).toMatchObject({ ok: true, frames: 60, problems: [] })
  expect(output).not.toMatch(/sink failed|sink not run/)
  return archive
}
