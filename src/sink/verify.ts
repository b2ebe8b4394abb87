// `queen-edge sink verify`: re-reads an archive and holds it against the broker. It walks the
// committed chain (the pointer's manifest back through previousWindowEnd), and for every object
// checks its sha256, count and first/last offset against the manifest, that offsets rise with no
// frame twice and no frame skipped (per partition, across objects and windows: a skipped offset is
// a problem unless fetch no longer has it either — an admin delete, or a recorded gap), and that
// each archived frame equals what fetch returns for that offset (transactionId, createdAt,
// payload) while the broker still retains it. Finally no retained frame created before the
// pointer may be missing from the archive. Manifests past the pointer are a crashed run's
// leftovers that the next run rewrites; they are counted, never trusted.
import { gunzip, parseLines, sha256Hex } from './codec.js'
import { layout } from './layout.js'
import { parseManifest, type Manifest } from './manifest.js'
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

export async function verifyArchive(source: SinkSource, store: ObjectStore, args: { sink: string; queue: string; prefix: string }): Promise<VerifyReport> {
  const names = layout(args.prefix, args.sink, args.queue)
  const pointer = await source.readPointer(args.sink, args.queue)
  const report: VerifyReport = { queue: args.queue, ok: false, pointer, windows: 0, objects: 0, frames: 0, compared: 0, uncommitted: 0, problems: [] }
  const problem = (text: string) => {
    if (report.problems.length < MAX_PROBLEMS) report.problems.push(text)
  }

  const manifests = new Map<string, Manifest>()
  for (const key of await store.list(names.manifestPrefix)) {
    const bytes = await store.get(key)
    if (bytes) {
      const manifest = parseManifest(bytes, key)
      manifests.set(manifest.windowEnd, manifest)
    }
  }
  if (pointer === null) {
    if (manifests.size > 0) problem(`no pointer, yet ${manifests.size} manifests exist`)
    report.uncommitted = manifests.size
    report.ok = report.problems.length === 0
    return report
  }
  const chain: Manifest[] = []
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

  for (const manifest of chain) {
    for (const gap of manifest.gaps) {
      const at = expected.get(gap.partition) ?? 0
      if (gap.fromOffset !== at) problem(`${manifest.windowEnd}: gap of ${gap.partition} starts at ${gap.fromOffset}, archive is at ${at}`)
      expected.set(gap.partition, Math.max(at, gap.toOffset + 1))
    }
    for (const object of manifest.objects) {
      report.objects++
      const stored = await store.get(object.key)
      if (!stored) {
        problem(`${object.key}: missing`)
        continue
      }
      const ndjson = await gunzip(stored)
      if ((await sha256Hex(ndjson)) !== object.sha256) problem(`${object.key}: sha256 differs from the manifest`)
      const lines = parseLines(ndjson)
      report.frames += lines.length
      if (lines.length !== object.count) problem(`${object.key}: ${lines.length} frames, manifest says ${object.count}`)
      if (lines[0]?.offset !== object.firstOffset || lines.at(-1)?.offset !== object.lastOffset) problem(`${object.key}: offsets differ from the manifest`)

      let at = expected.get(object.partition) ?? 0
      for (const line of lines) {
        if (line.offset < at) problem(`${object.key}: offset ${line.offset} archived twice or out of order`)
        else if (line.offset > at) {
          // Skipped offsets are fine only when the broker has no frame there either.
          const there = await firstFrameAt(object.partition, at)
          if (there && there.offset < line.offset) problem(`${object.partition}: frame ${there.offset} is missing from the archive`)
        }
        at = Math.max(at, line.offset + 1)
      }
      expected.set(object.partition, at)

      // Field by field against fetch, for whatever part of the range the broker still retains.
      const byOffset = new Map(lines.map((l) => [l.offset, l]))
      let from = object.firstOffset
      while (from <= object.lastOffset) {
        const [answer] = await source.fetch(args.queue, [{ partition: object.partition, fromOffset: from, limit: Math.min(10_000, object.lastOffset - from + 1), maxBytes: 8 * 1024 * 1024 }])
        if (!answer || 'error' in answer || answer.frames.length === 0) break
        for (const frame of answer.frames) {
          if (frame.offset > object.lastOffset) break
          const line = byOffset.get(frame.offset)
          report.compared++
          if (!line) problem(`${object.key}: fetch has frame ${frame.offset}, the archive does not`)
          else if (line.transactionId !== frame.transactionId || line.createdAt !== frame.createdAt || JSON.stringify(line.payload) !== JSON.stringify(frame.data ?? null)) {
            problem(`${object.key}: frame ${frame.offset} differs from fetch`)
          }
        }
        from = answer.nextOffset
      }
    }
  }
  const last = chain.at(-1)
  if (last) {
    for (const [partition, offset] of expected) {
      if ((last.offsets[partition] ?? 0) !== offset) problem(`${partition}: the pointer's manifest resumes at ${last.offsets[partition]}, the archive ends at ${offset}`)
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
