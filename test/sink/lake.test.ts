// The sink as a data lake: a queue of 50 partitions archived in the hive layout as Parquet (Snappy
// and zstd pages) and as JSONL (gzip and zstd, the zstd by the sink's own encoder), and then queried with DuckDB exactly as a data team would (its npm package,
// read_parquet / read_json_auto with hive_partitioning over queue=*/dt=*/hour=*): the row count,
// each partition's highest offset and a payload field match the broker's own numbers, and the
// Hive levels come back as columns. Also: a window rewritten from an older pointer is
// byte-identical, per-partition windows, verify over both formats, and the window grid.
import { mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createSinkEngine, type SinkEngine } from '../../src/sink/engine.js'
import { hiveLayout } from '../../src/sink/layout-hive.js'
import { sinkOptions, type SinkOptionsInput } from '../../src/sink/options.js'
import { databaseSource, pointerKey } from '../../src/sink/source.js'
import { directoryStore } from '../../src/sink/store-directory.js'
import { verifyArchive } from '../../src/sink/verify.js'
import { windowGrid } from '../../src/sink/windows.js'
import { testApp, type TestApp } from '../helpers/app.js'
import { push } from '../helpers/engine.js'
import { newestFrameAt, pointerPath, putPointerValue, readArchive, runSinkUntilPast, sinkDatabase, sleep } from '../helpers/sink.js'

const QUEUE = 'lake.orders'
const PARTITIONS = 50
let app: TestApp
let duck: DuckDBConnection
const dirs: string[] = []
const scratch = () => {
  const dir = mkdtempSync(join(tmpdir(), 'queen-lake-'))
  dirs.push(dir)
  return dir
}
/** The four archives of one queue: sink name, options, DuckDB reader and glob of each. */
const VARIANTS = [
  { name: 'parquet', sink: 'pq', options: { format: 'parquet', maxFrames: 250 }, reader: 'read_parquet', glob: '*.parquet' },
  { name: 'jsonl', sink: 'js', options: { format: 'jsonl' }, reader: 'read_json_auto', glob: '*.jsonl.gz' },
  { name: 'parquet+zstd', sink: 'pz', options: { format: 'parquet', compression: 'zstd', maxFrames: 250 }, reader: 'read_parquet', glob: '*.parquet' },
  { name: 'jsonl+zstd', sink: 'jz', options: { format: 'jsonl', compression: 'zstd' }, reader: 'read_json_auto', glob: '*.jsonl.zst' },
] as const
const dirOf: Record<(typeof VARIANTS)[number]['name'], string> = { parquet: '', jsonl: '', 'parquet+zstd': '', 'jsonl+zstd': '' }

beforeAll(async () => {
  app = await testApp({ database: await sinkDatabase() })
  duck = await (await DuckDBInstance.create(':memory:')).connect()
})
afterAll(async () => {
  duck?.closeSync()
  await app?.close()
  await app?.database.drop()
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true })
})

const source = () => databaseSource(app.db, app.config, '')
const pointer = (sink: string, queue = QUEUE) => source().readPointer(sink, queue)

/** Runs `engine` until its pointer is past `instant` (every frame created before it archived), then releases its lease. */
const archiveUntil = (engine: SinkEngine, sink: string, queue: string, instant: string) => runSinkUntilPast(engine, source(), sink, queue, instant)
const lastCreatedAt = (queue: string) => newestFrameAt(app.database, queue)

/** The broker's own numbers: each partition's lastOffset, from partitions/changed. */
async function brokerLastOffsets(queue: string): Promise<Record<string, number>> {
  const res = await app.json('POST', '/api/v1/partitions/changed', { entries: [{ queue, limit: 1000 }] })
  expect(res.status).toBe(200)
  return Object.fromEntries((res.body.entries[0].partitions as { name: string; lastOffset: number }[]).map((p) => [p.name, p.lastOffset]))
}

type Archive = Awaited<ReturnType<typeof readArchive>>
const rows = async (sql: string) => (await duck.runAndReadAll(sql)).getRowObjectsJS() as Record<string, unknown>[]

function run(sink: string, dir: string, input: Partial<SinkOptionsInput>) {
  return createSinkEngine(source(), directoryStore(dir), sinkOptions.parse({ sink, queues: [QUEUE], windowSeconds: 1, ...input }))
}

describe('the sink as a data lake', () => {
  let amountSum = 0
  let pushed = 0

  it('archives 50 partitions as Parquet and as JSONL in the hive layout', { timeout: 120_000 }, async () => {
    for (let round = 0; round < 3; round++) {
      const items = Array.from({ length: 200 }, (_, i) => {
        const amount = round * 1000 + i
        amountSum += amount
        return { queue: QUEUE, partition: `customer-${String(i % PARTITIONS).padStart(2, '0')}`, payload: { orderId: `o-${round}-${i}`, amount, note: 'line\nbreak' } }
      })
      await push(app, items)
      pushed += items.length
      await sleep(300)
    }
    const last = await lastCreatedAt(QUEUE)
    for (const variant of VARIANTS) {
      dirOf[variant.name] = scratch()
      await archiveUntil(run(variant.sink, dirOf[variant.name], variant.options), variant.sink, QUEUE, last)
    }

    const archives = await Promise.all(VARIANTS.map(async (v) => readArchive(directoryStore(dirOf[v.name]), { sink: v.sink, queue: QUEUE, pointer: await pointer(v.sink) })))
    const [parquet, jsonl, parquetZstd, jsonlZstd] = archives as [Archive, Archive, Archive, Archive]
    for (const archive of archives) {
      expect(archive.partitions.size).toBe(PARTITIONS)
      for (const lines of archive.partitions.values()) expect(lines.map((l) => l.offset)).toEqual(lines.map((_, i) => i))
      expect(archive.gaps).toEqual([])
    }
    // One object series per window for the whole queue, cut into parts of at most maxFrames rows.
    expect(parquet.objects.every((k) => /^queue=lake\.orders\/dt=\d{4}-\d\d-\d\d\/hour=\d\d\/w-\d{16}-\d{16}-\d{4}\.parquet$/.test(k))).toBe(true)
    expect(parquet.chain.flatMap((m) => m.objects).every((o) => o.count <= 250)).toBe(true)
    expect(parquet.objects.length).toBeLessThan(20)
    expect(jsonl.objects.every((k) => /^queue=lake\.orders\/dt=[\d-]+\/hour=\d\d\/w-\d{16}-\d{16}-0000\.jsonl\.gz$/.test(k))).toBe(true)
    expect(jsonlZstd.objects.every((k) => /^queue=lake\.orders\/dt=[\d-]+\/hour=\d\d\/w-\d{16}-\d{16}-0000\.jsonl\.zst$/.test(k))).toBe(true)
    expect(parquetZstd.objects).toEqual(parquet.objects)
    expect(parquetZstd.chain.map((m) => (m as { compression?: string }).compression)).toContain('zstd')
    // The zstd archive's pages are zstd, and DuckDB's reading of them is checked below.
    const codecs = await rows(`select distinct compression from parquet_metadata('${dirOf['parquet+zstd']}/queue=*/dt=*/hour=*/*.parquet')`)
    expect(codecs.map((r) => r.compression)).toEqual(['ZSTD'])
    // Sidecars under _queen/, beside (not inside) the queue=... levels.
    expect(readdirSync(join(dirOf.parquet, '_queen', 'queue=lake.orders')).sort()).toEqual(['checkpoint', 'windows'])
    const kv = await app.json('GET', pointerPath('pq', QUEUE))
    expect(kv.body).toMatchObject({ found: true, value: { windowEnd: await pointer('pq') } })

    for (const { sink, name } of VARIANTS) {
      const report = await verifyArchive(source(), directoryStore(dirOf[name]), { sink, queue: QUEUE, prefix: '' })
      expect(report, JSON.stringify(report.problems)).toMatchObject({ ok: true, frames: pushed, compared: pushed, problems: [] })
    }
  })

  it('answers DuckDB with the broker numbers, the Hive levels as columns', async () => {
    const broker = await brokerLastOffsets(QUEUE)
    expect(Object.keys(broker)).toHaveLength(PARTITIONS)
    for (const { name: format, reader, glob } of VARIANTS) {
      const from = `${reader}('${dirOf[format]}/queue=*/dt=*/hour=*/${glob}', hive_partitioning = true)`
      const parquet = reader === 'read_parquet'
      const amount = parquet ? `json_extract(payload, '$.amount')::bigint` : `payload.amount`
      const [total] = await rows(`select count(*)::int as n, sum(${amount})::bigint as amount, count(distinct queue)::int as queues, min(queue) as queue, min(dt)::varchar as dt, min(hour)::int as hour from ${from}`)
      const today = new Date().toISOString().slice(0, 10)
      expect(total, format).toMatchObject({ n: pushed, amount: BigInt(amountSum), queues: 1, queue: QUEUE })
      // dt and hour are the window's start, within a day of now.
      expect(Math.abs(Date.parse(String(total!.dt).slice(0, 10)) - Date.parse(today))).toBeLessThanOrEqual(86_400_000)
      expect(Number(total!.hour)).toBeGreaterThanOrEqual(0)
      const perPartition = await rows(`select partition, max("offset")::int as last from ${from} group by partition order by partition`)
      expect(Object.fromEntries(perPartition.map((r) => [r.partition, r.last])), format).toEqual(broker)
      // (partition, offset, ts) identifies a row: no duplicate in the lake.
      const [dupes] = await rows(`select count(*)::int as n from (select partition, "offset", ts from ${from} group by all having count(*) > 1)`)
      expect(dupes!.n).toBe(0)
      // A payload field, and the raw line break of a string value kept escaped.
      const [one] = await rows(`select ${parquet ? `json_extract_string(payload, '$.note')` : 'payload.note'} as note from ${from} where partition = 'customer-07' and "offset" = 0`)
      expect(one!.note).toBe('line\nbreak')
    }
  })

  it('rewrites a window byte for byte from an older pointer, in both formats', { timeout: 120_000 }, async () => {
    for (const { sink, name, options } of VARIANTS) {
      const dir = dirOf[name]
      const store = directoryStore(dir)
      const before = new Map<string, string>()
      for (const key of await store.list('queue=')) before.set(key, Buffer.from((await store.get(key))!).toString('base64'))
      const at = (await pointer(sink))!
      const chain = (await readArchive(store, { sink, queue: QUEUE, pointer: at })).chain
      const rewind = chain.find((m) => m.objects.length > 0)!.windowEnd
      await putPointerValue(app, pointerKey(sink, QUEUE), { windowEnd: rewind })
      await archiveUntil(run(sink, dir, options), sink, QUEUE, await lastCreatedAt(QUEUE))
      const after = new Map<string, string>()
      for (const key of await store.list('queue=')) after.set(key, Buffer.from((await store.get(key))!).toString('base64'))
      expect(after).toEqual(before)
    }
  })

  it('writes one object series per partition under windows=partition, named by its offsets', { timeout: 60_000 }, async () => {
    const dir = scratch()
    await archiveUntil(run('pp', dir, { format: 'parquet', windows: 'partition', align: 'day' }), 'pp', QUEUE, await lastCreatedAt(QUEUE))
    const archive = await readArchive(directoryStore(dir), { sink: 'pp', queue: QUEUE, pointer: await pointer('pp') })
    expect(archive.objects.every((k) => /^queue=lake\.orders\/dt=[\d-]+\/w-\d{16}-\d{16}-p-customer-\d\d-\d{12}-\d{12}\.parquet$/.test(k))).toBe(true)
    expect([...archive.partitions.values()].reduce((n, lines) => n + lines.length, 0)).toBe(pushed)
    const report = await verifyArchive(source(), directoryStore(dir), { sink: 'pp', queue: QUEUE, prefix: '' })
    expect(report).toMatchObject({ ok: true, frames: pushed, problems: [] })
  })

  it('renews the lease while a window outlasts it, so a long window still commits', { timeout: 60_000 }, async () => {
    const queue = 'lake.slow'
    await push(app, Array.from({ length: 12 }, (_, i) => ({ queue, partition: 'only', payload: { i } })))
    const dir = scratch()
    const inner = directoryStore(dir)
    // Every put takes 400 ms: six parts of two rows take 2.4 s, more than twice the 1 s lease.
    const slow = { ...inner, put: async (key: string, body: Uint8Array, type: string) => (await sleep(400), inner.put(key, body, type)) }
    const engine = createSinkEngine(source(), slow, sinkOptions.parse({ sink: 'slow', queues: [queue], windowSeconds: 1, maxFrames: 2, leaseSeconds: 1, format: 'parquet' }))
    const last = await lastCreatedAt(queue)
    const deadline = Date.now() + 30_000
    let at: string | null = null
    while (at === null || Date.parse(at) <= Date.parse(last)) {
      if (Date.now() > deadline) throw new Error(`pointer stuck at ${at}`)
      const [run] = await engine.runOnce(10_000)
      expect(run!.leased).toBe(true)
      at = await pointer('slow', queue)
      await sleep(200)
    }
    await engine.release()
    const archive = await readArchive(inner, { sink: 'slow', queue, pointer: at })
    expect(archive.partitions.get('only')!.map((l) => l.offset)).toEqual(Array.from({ length: 12 }, (_, i) => i))
    expect(archive.objects).toHaveLength(6)
  })

  it('tells which layout a pointer belongs to when the target holds the other one', async () => {
    const engine = run('pq', dirOf.parquet, { layout: 'legacy' })
    await expect(engine.runOnce(2000)).rejects.toThrow(/run with --layout hive/)
    await engine.release()
  })
})

describe('hive keys and windows', () => {
  it('puts tenant= first when the sink runs for a tenant, and escapes every name', () => {
    const names = hiveLayout({ prefix: 'lake', tenant: 'acme', queue: 'a/b c', align: 'hour' })
    expect(names.dataKey({ startMs: Date.parse('2026-12-06T21:59:00Z'), endMs: Date.parse('2026-12-06T22:00:00Z'), extension: 'parquet', part: 0 })).toBe(
      'lake/tenant=acme/queue=a%2Fb%20c/dt=2026-12-06/hour=21/w-1796594340000000-1796594400000000-0000.parquet',
    )
    expect(names.manifestKey('2026-12-06T22:00:00.000Z')).toBe('lake/_queen/tenant=acme/queue=a%2Fb%20c/windows/1796594400000000.json')
  })

  it('restarts windows at each alignment boundary, so none straddles it', () => {
    const hour = windowGrid(7 * 60, 'hour')
    const at = Date.parse('2026-12-06T21:58:00Z')
    expect(new Date(hour.startOf(at)).toISOString()).toBe('2026-12-06T21:56:00.000Z')
    expect(new Date(hour.endOf(hour.startOf(at))).toISOString()).toBe('2026-12-06T22:00:00.000Z')
    const none = windowGrid(7 * 60, 'none')
    expect(none.endOf(none.startOf(at)) - none.startOf(at)).toBe(7 * 60_000)
    const day = windowGrid(3600, 'day')
    expect(new Date(day.startOf(at)).toISOString()).toBe('2026-12-06T21:00:00.000Z')
  })
})
