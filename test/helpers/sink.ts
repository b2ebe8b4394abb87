// Helpers for the archive sink's tests: a database whose safeTime has no guard (so windows close
// within a second of a push, and a wrong order shows at once instead of hiding behind 5 s), and an
// archive reader written independently of src/sink/verify.ts, which is itself under test.
import { gunzipSync } from 'node:zlib'
import { layout } from '../../src/sink/layout.js'
import type { Manifest } from '../../src/sink/manifest.js'
import type { ObjectStore } from '../../src/sink/store.js'
import { freshDatabase, type TestDatabase } from './database.js'

export async function sinkDatabase(): Promise<TestDatabase> {
  const database = await freshDatabase()
  await database.sql(`alter database ${database.name} set queen.safe_time_guard_ms = 0`)
  return database
}

export interface ArchivedLine {
  offset: number
  transactionId: string
  createdAt: string
  payload: unknown
}

/** The committed archive as a reader sees it: the pointer's manifest chain, every object's lines per partition, in archive order. */
export async function readArchive(store: ObjectStore, args: { prefix?: string; sink: string; queue: string; pointer: string | null }) {
  const names = layout(args.prefix ?? '', args.sink, args.queue)
  const byEnd = new Map<string, Manifest>()
  for (const key of await store.list(names.manifestPrefix)) {
    const m = JSON.parse(Buffer.from((await store.get(key))!).toString('utf8')) as Manifest
    byEnd.set(m.windowEnd, m)
  }
  const chain: Manifest[] = []
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
      const lines = gunzipSync((await store.get(o.key))!)
        .toString('utf8')
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as ArchivedLine)
      partitions.set(o.partition, [...(partitions.get(o.partition) ?? []), ...lines])
    }
  }
  return { chain, partitions, objects, gaps: chain.flatMap((m) => m.gaps) }
}

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms))
