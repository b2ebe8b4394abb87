// Helpers for the archive sink's tests: a database whose safeTime has no guard (so windows close
// within a second of a push, and a wrong order shows at once instead of hiding behind 5 s), and an
// archive reader written independently of src/sink/verify.ts, which is itself under test (it reads
// Parquet with hyparquet's reader, and zstd with fzstd, not the sink's own decoders).
import { gunzipSync } from 'node:zlib'
import { decompress as unzstd } from 'fzstd'
import { parquetReadObjects } from 'hyparquet'
import { hiveLayout } from '../../src/sink/layout-hive.js'
import { layout } from '../../src/sink/layout.js'
import type { LakeManifest } from '../../src/sink/manifest-lake.js'
import type { Manifest } from '../../src/sink/manifest.js'
import type { ObjectStore } from '../../src/sink/store.js'
import type { SinkEngine } from '../../src/sink/engine.js'
import { POINTER_NAMESPACE, pointerKey, type SinkSource } from '../../src/sink/source.js'
import { freshDatabase, type TestDatabase } from './database.js'

export async function sinkDatabase(): Promise<TestDatabase> {
  const database = await freshDatabase()
  await database.sql(`alter database ${database.name} set queen.safe_time_guard_ms = 0`)
  return database
}

/**
 * Runs `engine` until `source`'s pointer for (sink, queue) is past `instant` (every frame created
 * before it is archived), then releases the engine's lease: the next test's engine is another
 * process as far as the lease knows.
 */
export async function runSinkUntilPast(engine: SinkEngine, source: SinkSource, sink: string, queue: string, instant: string, timeoutMs = 30_000): Promise<string> {
  const deadline = Date.now() + timeoutMs
  try {
    for (;;) {
      await engine.runOnce(5000)
      const at = await source.readPointer(sink, queue)
      if (at !== null && Date.parse(at) > Date.parse(instant)) return at
      if (Date.now() > deadline) throw new Error(`pointer stuck at ${at}, waiting for ${instant}`)
      await sleep(200)
    }
  } finally {
    await engine.release()
  }
}

/** When the newest frame of `queue` was stored. */
export async function newestFrameAt(database: TestDatabase, queue: string): Promise<string> {
  const [row] = await database.sql<{ at: Date }>(
    `select max(s.created_at) as at from queen.log_segments s join queen.log_partitions p on p.id = s.partition_id join queen.queues q on q.id = p.queue_id where q.name = $1`,
    [queue],
  )
  return row!.at.toISOString()
}

export interface ArchivedLine {
  offset: number
  transactionId: string
  createdAt: string
  payload: unknown
}

type AnyManifest = (Manifest | LakeManifest) & { objects: { key: string; partition: string; count: number; firstOffset: number; lastOffset: number }[] }

/** One hive object's rows, read with the reader a data team would use for the format. */
async function lakeRows(key: string, bytes: Buffer): Promise<(ArchivedLine & { partition: string })[]> {
  if (key.endsWith('.parquet')) {
    const file = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer
    const rows = await parquetReadObjects({ file, compressors: { ZSTD: (input: Uint8Array) => unzstd(input) }, parsers: { timestampFromMicroseconds: (v: bigint | number) => BigInt(v) as never } })
    return rows.map((r) => {
      const us = r.ts as bigint
      const createdAt = `${new Date(Number(us / 1000n)).toISOString().slice(0, 19)}.${String(us % 1_000_000n).padStart(6, '0')}Z`
      return { partition: String(r.partition), offset: Number(r.offset), transactionId: String(r.transaction_id), createdAt, payload: r.payload === null ? null : JSON.parse(String(r.payload)) }
    })
  }
  const text = (key.endsWith('.gz') ? gunzipSync(bytes) : key.endsWith('.zst') ? Buffer.from(unzstd(bytes)) : bytes).toString('utf8')
  return text
    .split('\n')
    .filter(Boolean)
    .map((l) => {
      const row = JSON.parse(l) as { partition: string; offset: number; transactionId: string; ts: string; payload: unknown }
      return { partition: row.partition, offset: row.offset, transactionId: row.transactionId, createdAt: row.ts, payload: row.payload }
    })
}

/**
 * The committed archive as a reader sees it: the pointer's manifest chain, every object's lines per
 * partition, in archive order. `layout` hive reads the queue=/dt=/hour= layout (the default), legacy the first one.
 */
export async function readArchive(store: ObjectStore, args: { prefix?: string; sink: string; queue: string; pointer: string | null; layout?: 'hive' | 'legacy'; tenant?: string }) {
  const legacy = args.layout === 'legacy'
  const manifestPrefix = legacy
    ? layout(args.prefix ?? '', args.sink, args.queue).manifestPrefix
    : hiveLayout({ prefix: args.prefix ?? '', tenant: args.tenant ?? '', queue: args.queue, align: 'hour' }).manifestPrefix
  const byEnd = new Map<string, AnyManifest>()
  for (const key of await store.list(manifestPrefix)) {
    const m = JSON.parse(Buffer.from((await store.get(key))!).toString('utf8')) as AnyManifest
    byEnd.set(m.windowEnd, m)
  }
  const chain: AnyManifest[] = []
  for (let at = args.pointer; at !== null; ) {
    const m = byEnd.get(at)
    if (!m) throw new Error(`no manifest for ${at}`)
    chain.unshift(m)
    at = m.previousWindowEnd
  }
  const partitions = new Map<string, ArchivedLine[]>()
  const objects: string[] = []
  for (const m of chain) {
    for (const o of m.objects) {
      objects.push(o.key)
      const bytes = Buffer.from((await store.get(o.key))!)
      const rows = legacy
        ? gunzipSync(bytes)
            .toString('utf8')
            .split('\n')
            .filter(Boolean)
            .map((l) => ({ ...(JSON.parse(l) as ArchivedLine), partition: o.partition! }))
        : await lakeRows(o.key, bytes)
      for (const { partition, ...line } of rows) {
        if (!partitions.has(partition)) partitions.set(partition, [])
        partitions.get(partition)!.push(line)
      }
    }
  }
  return { chain, partitions, objects, gaps: chain.flatMap((m) => m.gaps) }
}

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms))

/**
 * Writes a raw value under the sink's pointer key, as only broker code can (namespace queen.sink
 * is refused to client writes): tests use it to rewind a pointer or to plant a malformed one. A
 * fresh version from the store's sequence, as every write of the store stamps.
 */
export async function putPointerValue(app: { database: TestDatabase }, key: string, value: unknown, tenant = ''): Promise<void> {
  await app.database.sql(
    `insert into queen.kv_entries (tenant_id, ns, key, value, version, expires_at, updated_at)
     values ($1, $2, $3, $4::jsonb, nextval('queen.kv_version_seq'), null, now())
     on conflict (tenant_id, ns, key) do update set value = excluded.value, version = excluded.version, updated_at = excluded.updated_at`,
    [tenant, POINTER_NAMESPACE, key, JSON.stringify(value)],
  )
}

/** The stored pointer row as a client reads it through the 1.6 single-key route (reads of queen.* are allowed). */
export const pointerPath = (sink: string, queue: string) => `/api/v1/kv/${POINTER_NAMESPACE}/${encodeURIComponent(pointerKey(sink, queue))}`
