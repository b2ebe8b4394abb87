// `queen-edge sink verify`: re-reads an archive and holds it against the broker. It walks the
// committed chain (the pointer's manifest back through previousWindowEnd), and for every object
// checks its sha256, count and first/last offset against the manifest, that offsets rise with no
// frame twice and no frame skipped (per partition, across objects and windows: a skipped offset is
// a problem unless fetch no longer has it either — an admin delete, or a recorded gap), and that
// each archived frame equals what fetch returns for that offset (transactionId, createdAt,
// payload) while the broker still retains it. Finally no retained frame created before the
// pointer may be missing from the archive. Manifests past the pointer are a crashed run's
// leftovers that the next run rewrites; they are counted, never trusted. Both layouts: the hive
// layout's objects (JSONL or Parquet, of the queue's window or a partition's) are read back with
// the format their manifest names, and checked partition by partition in the order they hold.
import { gunzip, parseLines, sha256Hex } from './codec.js'
import { jsonlFormat } from './format-jsonl.js'
import { parquetFormat } from './format-parquet.js'
import type { LakeRow } from './lake-row.js'
import { hiveLayout } from './layout-hive.js'
import { layout } from './layout.js'
import { parseLakeManifest, type LakeManifest } from './manifest-lake.js'
import { parseManifest, type Gap, type Manifest } from './manifest.js'
import type { FetchedFrame, SinkSource } from './source.js'
import type { ObjectStore } from './store.js'

export interface VerifyReport {
  queue: string
  ok: boolean
  pointer: string | null
  windows: number
  objects: number
  frames: number
  /** Archived frames compared field by field with fetch (the rest are no longer retained). */
  compared: number
  /** Manifests beyond the pointer (an interrupted run's; not part of the archive). */
  uncommitted: number
  problems: string[]
}

const MAX_PROBLEMS = 50

/** One committed window as verify sees it, whichever layout wrote it. */
interface Window {
  windowEnd: string
  previousWindowEnd: string | null
  gaps: Gap[]
  objects: { key: string; count: number; partition?: string; firstOffset?: number; lastOffset?: number; sha256: string }[]
}

export interface VerifyArgs {
  sink: string
  queue: string
  prefix: string
  tenant?: string
  /** Which layout to read; without it, the one that has a manifest for the pointer. */
  layout?: 'hive' | 'legacy'
}

export async function verifyArchive(source: SinkSource, store: ObjectStore, args: VerifyArgs): Promise<VerifyReport> {
  const legacyNames = layout(args.prefix, args.sink, args.queue)
  // The sidecar keys of the hive layout do not depend on the alignment.
  const hiveNames = hiveLayout({ prefix: args.prefix, tenant: args.tenant ?? '', queue: args.queue, align: 'hour' })
  const pointer = await source.readPointer(args.sink, args.queue)
  let kind = args.layout
  if (kind === undefined) kind = pointer !== null && (await store.get(legacyNames.manifestKey(pointer))) && !(await store.get(hiveNames.manifestKey(pointer))) ? 'legacy' : 'hive'
  const names = kind === 'legacy' ? legacyNames : hiveNames
  const report: VerifyReport = { queue: args.queue, ok: false, pointer, windows: 0, objects: 0, frames: 0, compared: 0, uncommitted: 0, problems: [] }
  const problem = (text: string) => {
    if (report.problems.length < MAX_PROBLEMS) report.problems.push(text)
  }

  const manifests = new Map<string, Window>()
  const lakeManifests = new Map<string, LakeManifest>()
  for (const key of await store.list(names.manifestPrefix)) {
    const bytes = await store.get(key)
    if (!bytes) continue
    if (kind === 'legacy') {
      const manifest: Manifest = parseManifest(bytes, key)
      manifests.set(manifest.windowEnd, manifest)
    } else {
      const manifest = parseLakeManifest(bytes, key)
      // Two sinks sharing one prefix would share these keys: the manifest says whose it is.
      if (manifest.sink !== args.sink) {
        problem(`${key} belongs to sink ${manifest.sink}: give each sink its own prefix`)
        continue
      }
      manifests.set(manifest.windowEnd, manifest)
      lakeManifests.set(manifest.windowEnd, manifest)
    }
  }
  if (pointer === null) {
    if (manifests.size > 0) problem(`no pointer, yet ${manifests.size} manifests exist`)
    report.uncommitted = manifests.size
    report.ok = report.problems.length === 0
    return report
  }
  const chain: Window[] = []
  for (let at: string | null = pointer; at !== null; ) {
    const manifest = manifests.get(at)
    if (!manifest) {
      problem(`the chain breaks: no manifest for window end ${at}`)
      break
    }
    chain.unshift(manifest)
    at = manifest.previousWindowEnd
  }
  report.windows = chain.length
  report.uncommitted = [...manifests.keys()].filter((end) => Date.parse(end) > Date.parse(pointer)).length

  const expected = new Map<string, number>()
  const firstFrameAt = async (partition: string, from: number): Promise<FetchedFrame | null> => {
    const [answer] = await source.fetch(args.queue, [{ partition, fromOffset: from, limit: 1, maxBytes: 8 * 1024 * 1024 }])
    return answer && !('error' in answer) ? (answer.frames[0] ?? null) : null
  }

  /** One partition's rows of one object: in offset order after what came before, nothing skipped that fetch has, and equal to fetch. */
  const checkRun = async (key: string, partition: string, lines: LakeRow[]) => {
    let at = expected.get(partition) ?? 0
    for (const line of lines) {
      if (line.offset < at) problem(`${key}: offset ${line.offset} of ${partition} archived twice or out of order`)
      else if (line.offset > at) {
        // Skipped offsets are fine only when the broker has no frame there either.
        const there = await firstFrameAt(partition, at)
        if (there && there.offset < line.offset) problem(`${partition}: frame ${there.offset} is missing from the archive`)
      }
      at = Math.max(at, line.offset + 1)
    }
    expected.set(partition, at)

    // Field by field against fetch, for whatever part of the range the broker still retains.
    const byOffset = new Map(lines.map((l) => [l.offset, l]))
    const lastOffset = lines.at(-1)!.offset
    let from = lines[0]!.offset
    while (from <= lastOffset) {
      const [answer] = await source.fetch(args.queue, [{ partition, fromOffset: from, limit: Math.min(10_000, lastOffset - from + 1), maxBytes: 8 * 1024 * 1024 }])
      if (!answer || 'error' in answer || answer.frames.length === 0) break
      for (const frame of answer.frames) {
        if (frame.offset > lastOffset) break
        const line = byOffset.get(frame.offset)
        report.compared++
        if (!line) problem(`${key}: fetch has frame ${frame.offset} of ${partition}, the archive does not`)
        else if (line.transactionId !== frame.transactionId || line.ts !== frame.createdAt || JSON.stringify(line.payload ?? null) !== JSON.stringify(frame.data ?? null)) {
          problem(`${key}: frame ${frame.offset} of ${partition} differs from fetch`)
        }
      }
      from = answer.nextOffset
    }
  }

  for (const manifest of chain) {
    for (const gap of manifest.gaps) {
      const at = expected.get(gap.partition) ?? 0
      if (gap.fromOffset !== at) problem(`${manifest.windowEnd}: gap of ${gap.partition} starts at ${gap.fromOffset}, archive is at ${at}`)
      expected.set(gap.partition, Math.max(at, gap.toOffset + 1))
    }
    const lake = lakeManifests.get(manifest.windowEnd)
    const format = lake ? (lake.format === 'parquet' ? parquetFormat(lake.compression === 'zstd' ? 'zstd' : 'snappy') : jsonlFormat(jsonlCompression(lake.compression))) : null
    for (const object of manifest.objects) {
      report.objects++
      const stored = await store.get(object.key)
      if (!stored) {
        problem(`${object.key}: missing`)
        continue
      }
      let lines: LakeRow[]
      if (format) {
        if ((await sha256Hex(stored)) !== object.sha256) problem(`${object.key}: sha256 differs from the manifest`)
        try {
          lines = await format.decode(stored)
        } catch (error) {
          problem(`${object.key}: unreadable as ${lake!.format}: ${error instanceof Error ? error.message : String(error)}`)
          continue
        }
      } else {
        const ndjson = await gunzip(stored)
        if ((await sha256Hex(ndjson)) !== object.sha256) problem(`${object.key}: sha256 differs from the manifest`)
        lines = parseLines(ndjson).map((l) => ({ partition: object.partition!, offset: l.offset, transactionId: l.transactionId, ts: l.createdAt, payload: l.payload }))
      }
      report.frames += lines.length
      if (lines.length !== object.count) problem(`${object.key}: ${lines.length} frames, manifest says ${object.count}`)
      if (object.partition !== undefined && (lines.some((l) => l.partition !== object.partition) || lines[0]?.offset !== object.firstOffset || lines.at(-1)?.offset !== object.lastOffset)) {
        problem(`${object.key}: offsets differ from the manifest`)
      }
      // The object's rows partition by partition, in the order it holds them.
      const runs: LakeRow[][] = []
      for (const line of lines) {
        if (runs.at(-1)?.[0]?.partition === line.partition) runs.at(-1)!.push(line)
        else runs.push([line])
      }
      for (const run of runs) await checkRun(object.key, run[0]!.partition, run)
    }
  }
  const last = chain.at(-1)
  if (last) {
    let offsets: Record<string, number> | undefined
    if ('offsets' in last) offsets = (last as Manifest).offsets
    else {
      const key = (last as LakeManifest).checkpoint
      const bytes = await store.get(key)
      if (!bytes) problem(`${key}: the pointer's checkpoint is missing`)
      else offsets = (JSON.parse(new TextDecoder().decode(bytes)) as { offsets: Record<string, number> }).offsets
    }
    for (const [partition, offset] of offsets ? expected : []) {
      if ((offsets![partition] ?? 0) !== offset) problem(`${partition}: the pointer's checkpoint resumes at ${offsets![partition]}, the archive ends at ${offset}`)
    }
  }

  // Nothing created before the pointer may still be waiting outside the archive.
  for (let after: string | undefined; ; ) {
    const page = await source.changed(args.queue, undefined, after)
    if (page.error) break
    for (const p of page.partitions) {
      const next = await firstFrameAt(p.name, expected.get(p.name) ?? 0)
      if (next && Date.parse(next.createdAt) < Date.parse(pointer)) problem(`${p.name}: frame ${next.offset} was created before the pointer but is not archived`)
    }
    if (!page.next) break
    after = page.next
  }
  report.ok = report.problems.length === 0
  return report
}

/** The JSONL codec a manifest names; anything else was written plain. */
function jsonlCompression(named: string): 'gzip' | 'zstd' | 'none' {
  return named === 'gzip' || named === 'zstd' ? named : 'none'
}
