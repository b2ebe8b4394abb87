// The archive sink's engine (docs/sink.md), one for both runtimes: for each queue, under the
// sink's lease, close windows of createdAt one at a time —
//   partitions/changed (its safeTime bounds what may be closed) -> the first unarchived frame of
//   each changed partition picks the window -> the window's rows, partition by partition in name
//   and offset order, into objects (one series per window for the queue, or per partition; parts
//   bounded by frames and bytes) -> the window's checkpoint and manifest -> only then the kv
//   pointer s3:<sink>:<queue>:committed (namespace queen.sink of the key/value store, moved by a
//   compare-and-set on its version), which the retention hold trusts, so it never names a
//   window whose objects are not all stored.
// A window is closed only when its end is at or below safeTime, when its frames can no longer
// change (docs/sink-protocol.md). So a window's content, and with it every object name and byte, is
// a function of the committed state alone: a run killed at any point is redone by the next run
// writing the same objects again. A stretch of windows without frames is crossed in one step (the
// pointer jumps), so an idle queue costs one commit per window at most.
// Memory is bounded whatever the window holds: partitions are read a batch at a time (one fetch
// call of at most FETCH_MAX_BYTES each), their buffers dropped once written, and an object is cut
// into parts of at most maxFrames rows / maxBytes bytes; a queue of 10 000 partitions keeps one
// probed frame per partition between batches.
import { frameLine, gzip, sha256Hex, utf8, type ArchivedFrame } from './codec.js'
import { jsonlFormat } from './format-jsonl.js'
import { parquetFormat } from './format-parquet.js'
import { hiveLayout, type HiveLayout } from './layout-hive.js'
import { layout, type Layout } from './layout.js'
import type { LakeFormat, LakeRow, ObjectEncoder } from './lake-row.js'
import { parseCheckpoint, parseLakeManifest, type LakeCheckpoint, type LakeManifest, type LakeObject } from './manifest-lake.js'
import { parseManifest, type ArchivedObject, type Gap, type Manifest } from './manifest.js'
import type { SinkOptions } from './options.js'
import type { FetchedFrame, SinkSource } from './source.js'
import type { ObjectStore } from './store.js'
import { windowGrid } from './windows.js'

export interface QueueRun {
  queue: string
  /** False when another process holds this sink's lease (or it was lost mid-run). */
  leased: boolean
  windows: number
  frames: number
  objects: number
  /** Stored (compressed) bytes written. */
  bytes: number
  /** True when every window below safeTime is committed. */
  caughtUp: boolean
  windowEnd: string | null
}

interface QueueState {
  windowEnd: string | null
  /** The pointer row's version this state was read at: the next commit must still find it. */
  version: number
  offsets: Record<string, number>
  lastObject?: string
}

// Fetch's own default page: log_fetch_v1 costs linearly in the frames it answers (about 20 µs of
// backend CPU a frame, bench/micro.ts MICRO_ONLY=fetch), so a larger page only saves round trips.
const FETCH_LIMIT = 1000
const FETCH_MAX_BYTES = 4 * 1024 * 1024
const MAX_FETCH_ENTRIES = 100
const WRITE_CONCURRENCY = 8
// partitions/changed is asked from a little before the pointer: `since` is truncated to the
// second and compared with last_write_at, itself truncated; a minute of margin costs only re-reads of bounds.
const SINCE_MARGIN_MS = 60_000

export interface SinkEngine {
  /** The holder token of this process: its lease rows carry it. */
  readonly token: string
  /** Archives every configured queue until caught up or the budget is spent. */
  runOnce(budgetMs: number): Promise<QueueRun[]>
  /** Lets another process take the leases at once instead of after they expire. */
  release(): Promise<void>
}

/** The format objects of the hive layout are written in. */
export function lakeFormat(options: Pick<SinkOptions, 'format' | 'compression'>): LakeFormat {
  return options.format === 'parquet' ? parquetFormat(options.compression === 'zstd' ? 'zstd' : 'snappy') : jsonlFormat(options.compression)
}

const byName = <T>([a]: [string, T], [b]: [string, T]) => (a < b ? -1 : a > b ? 1 : 0)

export function createSinkEngine(source: SinkSource, store: ObjectStore, options: SinkOptions): SinkEngine {
  const token = crypto.randomUUID()
  // The committed state per queue, valid only while the pointer still says the same windowEnd.
  const states = new Map<string, QueueState>()
  const legacy = options.layout === 'legacy'
  // The legacy layout's windows are the epoch grid it always used; the hive layout's restart at each alignment boundary.
  const grid = windowGrid(options.windowSeconds, legacy ? 'none' : options.align)
  const format = legacy ? null : lakeFormat(options)

  /** Thrown when a renewal finds another process holding the lease: the window is abandoned, never committed. */
  class LeaseLost extends Error {}
  // A window of a large queue takes longer than a lease lives, so the lease is renewed while it is
  // written (before fetches, at most every third of its life), not only before each window: a
  // lease that expired mid-window would make the commit fail and the next attempt redo it forever.
  const renewals = new Map<string, number>()
  async function keepLease(queue: string) {
    if (Date.now() - (renewals.get(queue) ?? 0) < (options.leaseSeconds * 1000) / 3) return
    if (!(await source.claim(options.sink, queue, token, options.leaseSeconds))) throw new LeaseLost()
    renewals.set(queue, Date.now())
  }

  type Names = { kind: 'legacy'; names: Layout } | { kind: 'hive'; names: HiveLayout }
  const namesFor = (queue: string): Names =>
    legacy
      ? { kind: 'legacy', names: layout(options.prefix, options.sink, queue) }
      : { kind: 'hive', names: hiveLayout({ prefix: options.prefix, tenant: options.tenant, queue, align: options.align }) }

  async function loadState(queue: string, names: Names): Promise<QueueState> {
    const { windowEnd: pointer, version } = await source.pointer(options.sink, queue)
    const cached = states.get(queue)
    if (cached && cached.windowEnd === pointer && cached.version === version) return cached
    if (pointer === null) return { windowEnd: null, version, offsets: {} }
    const key = names.names.manifestKey(pointer)
    const bytes = await store.get(key)
    if (!bytes) {
      // The most likely cause after an upgrade: the archive was written in the other layout.
      const other = legacy
        ? hiveLayout({ prefix: options.prefix, tenant: options.tenant, queue, align: options.align }).manifestKey(pointer)
        : layout(options.prefix, options.sink, queue).manifestKey(pointer)
      const hint = (await store.get(other)) ? ` (it has ${other}: run with --layout ${legacy ? 'hive' : 'legacy'})` : ': is this the target the sink archived to?'
      throw new Error(`the pointer of sink ${options.sink} for queue ${queue} says ${pointer}, but ${store.describe} has no manifest ${key}${hint}`)
    }
    if (names.kind === 'legacy') {
      const manifest = parseManifest(bytes, key)
      return { windowEnd: manifest.windowEnd, version, offsets: { ...manifest.offsets } }
    }
    const manifest = parseLakeManifest(bytes, key)
    const checkpoint = await store.get(manifest.checkpoint)
    if (!checkpoint) throw new Error(`the manifest ${key} names the checkpoint ${manifest.checkpoint}, which ${store.describe} does not have`)
    return { windowEnd: manifest.windowEnd, version, offsets: { ...parseCheckpoint(checkpoint, manifest.checkpoint).offsets } }
  }

  /** Every partition the queue lists as changed since `since` (all of them without it), and the first page's safeTime. */
  async function discover(queue: string, since: string | undefined) {
    let after: string | undefined
    let safeTime: string | undefined
    const partitions = new Map<string, number>()
    for (;;) {
      const page = await source.changed(queue, since, after)
      // The first page's safeTime is the smallest: every later page is a later statement.
      safeTime ??= page.safeTime
      if (page.error) return { safeTime, partitions, missing: true }
      for (const p of page.partitions) partitions.set(p.name, Math.max(partitions.get(p.name) ?? -1, p.lastOffset))
      if (!page.next) return { safeTime, partitions, missing: false }
      after = page.next
    }
  }

  /** A reader of one partition from an offset, paging through fetch. */
  function partitionReader(queue: string, partition: string, from: number, gaps: Gap[]) {
    let buffer: FetchedFrame[] = []
    let next = from
    let ended = false
    const absorb = (answer: Awaited<ReturnType<SinkSource['fetch']>>[number]) => {
      if ('error' in answer) {
        // The partition (or queue) went away between the calls: nothing more to copy from it.
        ended = true
        return
      }
      if (answer.fromOffset > next) gaps.push({ partition, fromOffset: next, toOffset: answer.fromOffset - 1 })
      buffer.push(...answer.frames)
      next = answer.nextOffset
      // Past the answer's lastOffset there is nothing this window can need: a frame committed after
      // the fetch was still open at discovery, so it is created after safeTime, past any window
      // closable now. (An answer cut by the call's byte budget has nextOffset <= lastOffset: ask again.)
      ended = answer.nextOffset > answer.lastOffset
    }
    return {
      absorb,
      get next() {
        return next
      },
      get ended() {
        return ended
      },
      /** The next frame without consuming it; null at the end of the log. */
      async peek(): Promise<FetchedFrame | null> {
        while (buffer.length === 0 && !ended) {
          await keepLease(queue)
          const [answer] = await source.fetch(queue, [{ partition, fromOffset: next, limit: FETCH_LIMIT, maxBytes: FETCH_MAX_BYTES }])
          absorb(answer!)
        }
        return buffer[0] ?? null
      },
      take(): FetchedFrame {
        return buffer.shift()!
      },
      /** The first offset not taken yet. */
      get position() {
        return buffer[0]?.offset ?? next
      },
      /** Drops what was read past the window, keeping the position: the next window reads it again. */
      drop() {
        next = buffer[0]?.offset ?? next
        buffer = []
        ended = false
      },
    }
  }
  type Reader = ReturnType<typeof partitionReader>

  /** One batched fetch call: the next page of each reader (at most MAX_FETCH_ENTRIES). */
  async function fetchBatch(queue: string, all: [string, Reader][], limit: number) {
    const batch = all.filter(([, reader]) => !reader.ended)
    if (batch.length === 0) return
    await keepLease(queue)
    const answers = await source.fetch(
      queue,
      batch.map(([partition, reader]) => ({ partition, fromOffset: reader.next, limit, maxBytes: FETCH_MAX_BYTES })),
    )
    answers.forEach((answer, j) => batch[j]![1].absorb(answer))
  }

  /** Takes the reader's frames created before endMs, in offset order. */
  async function* framesBefore(reader: Reader, endMs: number) {
    for (;;) {
      const frame = await reader.peek()
      if (!frame || Date.parse(frame.createdAt) >= endMs) return
      reader.take()
      yield frame
    }
  }

  const rowOf = (partition: string, frame: FetchedFrame): LakeRow => {
    const row: LakeRow = { partition, offset: frame.offset, transactionId: frame.transactionId, ts: frame.createdAt, payload: frame.data ?? null }
    if (frame.decryptError !== undefined) row.decryptError = frame.decryptError
    return row
  }

  /** The legacy layout: one partition's frames of the window as gzip NDJSON parts of at most maxFrames / maxBytes. */
  async function writeLegacyPartition(queue: string, names: Layout, reader: Reader, partition: string, start: string, endMs: number): Promise<ArchivedObject[]> {
    const objects: ArchivedObject[] = []
    let lines: string[] = []
    let size = 0
    let first = -1
    let last = -1
    const flush = async () => {
      if (lines.length === 0) return
      const ndjson = utf8(lines.join(''))
      const [body, sha256] = await Promise.all([gzip(ndjson), sha256Hex(ndjson)])
      const key = names.dataKey(partition, start, first)
      await keepLease(queue)
      await store.put(key, body, 'application/x-ndjson')
      objects.push({ key, partition, firstOffset: first, lastOffset: last, count: lines.length, bytes: body.byteLength, ndjsonBytes: ndjson.byteLength, sha256 })
      lines = []
      size = 0
    }
    for await (const frame of framesBefore(reader, endMs)) {
      const archived: ArchivedFrame = { offset: frame.offset, transactionId: frame.transactionId, createdAt: frame.createdAt, payload: frame.data }
      if (frame.decryptError !== undefined) archived.decryptError = frame.decryptError
      const line = frameLine(archived)
      const lineBytes = utf8(line).byteLength
      if (lines.length > 0 && (lines.length >= options.maxFrames || size + lineBytes > options.maxBytes)) await flush()
      if (lines.length === 0) first = frame.offset
      lines.push(line)
      size += lineBytes
      last = frame.offset
    }
    await flush()
    return objects
  }

  /** A series of hive objects (of the queue's window, or of one partition's), cut into parts by maxFrames / maxBytes. */
  function lakeSeries(queue: string, names: HiveLayout, startMs: number, endMs: number, partition: string | null) {
    const objects: LakeObject[] = []
    let encoder: ObjectEncoder | null = null
    let first = -1
    let last = -1
    const flush = async () => {
      if (!encoder || encoder.rows === 0) return
      const body = await encoder.finish()
      await keepLease(queue)
      const key =
        partition === null
          ? names.dataKey({ startMs, endMs, extension: format!.extension, part: objects.length })
          : names.dataKey({ startMs, endMs, extension: format!.extension, partition, firstOffset: first, lastOffset: last })
      await store.put(key, body, format!.contentType)
      const object: LakeObject = { key, count: encoder.rows, bytes: body.byteLength, sha256: await sha256Hex(body) }
      if (partition !== null) Object.assign(object, { partition, firstOffset: first, lastOffset: last })
      objects.push(object)
      encoder = null
    }
    return {
      objects,
      async add(row: LakeRow) {
        if (encoder && encoder.rows > 0 && (encoder.rows >= options.maxFrames || encoder.size >= options.maxBytes)) await flush()
        if (!encoder) {
          encoder = format!.encoder({ queue, tenant: options.tenant })
          first = row.offset
        }
        encoder.add(row)
        last = row.offset
      },
      flush,
    }
  }

  /** Writes the window [startMs, endMs) of the readers that have frames in it, a batch of partitions at a time. */
  async function writeWindow(queue: string, names: Names, inWindow: [string, Reader][], startMs: number, endMs: number) {
    const batches: [string, Reader][][] = []
    for (let i = 0; i < inWindow.length; i += MAX_FETCH_ENTRIES) batches.push(inWindow.slice(i, i + MAX_FETCH_ENTRIES))
    const merged = names.kind === 'hive' && options.windows === 'queue' ? lakeSeries(queue, names.names, startMs, endMs, null) : null
    const legacyObjects: ArchivedObject[] = []
    const lakeObjects: LakeObject[] = []
    const partitionsWithRows = new Set<string>()
    // The next batch's first pages are fetched while this batch is written.
    const prefetch = (batch: [string, Reader][] | undefined) => {
      if (!batch) return null
      const fetching = fetchBatch(queue, batch, FETCH_LIMIT)
      // Awaited below; until then a failure (a lost lease) must not count as unhandled.
      fetching.catch(() => {})
      return fetching
    }
    let prefetched = prefetch(batches[0])
    for (let b = 0; b < batches.length; b++) {
      await prefetched
      prefetched = prefetch(batches[b + 1])
      const batch = batches[b]!
      if (merged) {
        // One object series for the queue: rows in partition name order, then offset order.
        for (const [partition, reader] of batch) {
          for await (const frame of framesBefore(reader, endMs)) {
            partitionsWithRows.add(partition)
            await merged.add(rowOf(partition, frame))
          }
        }
      } else {
        const written: unknown[][] = new Array(batch.length)
        let nextIndex = 0
        await Promise.all(
          Array.from({ length: Math.min(WRITE_CONCURRENCY, batch.length) }, async () => {
            while (nextIndex < batch.length) {
              const index = nextIndex++
              const [partition, reader] = batch[index]!
              if (names.kind === 'legacy') {
                written[index] = await writeLegacyPartition(queue, names.names, reader, partition, new Date(startMs).toISOString(), endMs)
              } else {
                const series = lakeSeries(queue, names.names, startMs, endMs, partition)
                for await (const frame of framesBefore(reader, endMs)) await series.add(rowOf(partition, frame))
                await series.flush()
                written[index] = series.objects
              }
              if (written[index]!.length > 0) partitionsWithRows.add(partition)
            }
          }),
        )
        for (const objects of written) {
          if (names.kind === 'legacy') legacyObjects.push(...(objects as ArchivedObject[]))
          else lakeObjects.push(...(objects as LakeObject[]))
        }
      }
      for (const [, reader] of batch) reader.drop()
    }
    await prefetched
    if (merged) {
      await merged.flush()
      lakeObjects.push(...merged.objects)
    }
    return { legacyObjects, lakeObjects, partitions: partitionsWithRows.size }
  }

  async function archiveQueue(queue: string, deadline: number): Promise<QueueRun> {
    const names = namesFor(queue)
    const run: QueueRun = { queue, leased: true, windows: 0, frames: 0, objects: 0, bytes: 0, caughtUp: false, windowEnd: null }
    try {
      return await archiveWindows(queue, names, run, deadline)
    } catch (error) {
      if (!(error instanceof LeaseLost)) throw error
      states.delete(queue)
      run.leased = false
      return run
    }
  }

  async function archiveWindows(queue: string, names: Names, run: QueueRun, deadline: number): Promise<QueueRun> {
    let state = await loadState(queue, names)
    run.windowEnd = state.windowEnd
    for (;;) {
      // Claimed (or renewed) before every window, so a window's writes start under a live lease;
      // the commit checks the lease again, so a process that stalls past it cannot move the pointer.
      if (!(await source.claim(options.sink, queue, token, options.leaseSeconds))) {
        run.leased = false
        return run
      }
      renewals.set(queue, Date.now())
      const since = state.windowEnd === null ? undefined : new Date(Date.parse(state.windowEnd) - SINCE_MARGIN_MS).toISOString()
      const found = await discover(queue, since)
      if (found.missing) {
        run.caughtUp = true
        return run
      }
      const closable = grid.startOf(Date.parse(found.safeTime!))
      const offsets = { ...state.offsets }
      const gaps: Gap[] = []
      const readers = new Map<string, Reader>()
      for (const [partition, lastOffset] of [...found.partitions].sort(byName)) {
        offsets[partition] ??= 0
        if (lastOffset >= offsets[partition]!) readers.set(partition, partitionReader(queue, partition, offsets[partition]!, gaps))
      }
      // Each partition's first unarchived frame, in batched calls of one frame per partition: the
      // earliest picks the window, and only partitions with a frame in it are read further.
      const pending = [...readers.entries()]
      for (let i = 0; i < pending.length; i += MAX_FETCH_ENTRIES) await fetchBatch(queue, pending.slice(i, i + MAX_FETCH_ENTRIES), 1)
      const firstAt = new Map<string, number>()
      let earliest = Infinity
      for (const [partition, reader] of readers) {
        const frame = await reader.peek()
        if (!frame) continue
        const at = Date.parse(frame.createdAt)
        firstAt.set(partition, at)
        earliest = Math.min(earliest, at)
      }

      let windowStart: string | null = null
      let windowEndMs: number
      if (earliest >= closable) {
        // No frame below the closable bound: the pointer may jump there without writing data.
        windowEndMs = closable
        if (state.windowEnd !== null && windowEndMs <= Date.parse(state.windowEnd)) {
          run.caughtUp = true
          return run
        }
      } else {
        const startMs = grid.startOf(earliest)
        windowStart = new Date(startMs).toISOString()
        windowEndMs = grid.endOf(startMs)
      }
      const windowEnd = new Date(windowEndMs).toISOString()

      let legacyObjects: ArchivedObject[] = []
      let lakeObjects: LakeObject[] = []
      let partitionsWithRows = 0
      if (windowStart !== null) {
        const inWindow = [...readers].filter(([partition]) => (firstAt.get(partition) ?? Infinity) < windowEndMs)
        ;({ legacyObjects, lakeObjects, partitions: partitionsWithRows } = await writeWindow(queue, names, inWindow, Date.parse(windowStart), windowEndMs))
      }
      for (const [partition, reader] of readers) offsets[partition] = reader.position

      const objects: { key: string; count: number; bytes: number }[] = names.kind === 'legacy' ? legacyObjects : lakeObjects
      const frames = objects.reduce((n, o) => n + o.count, 0)
      const bytes = objects.reduce((n, o) => n + o.bytes, 0)
      if (names.kind === 'legacy') {
        const manifest: Manifest = {
          version: 1,
          sink: options.sink,
          queue,
          windowStart,
          windowEnd,
          previousWindowEnd: state.windowEnd,
          windowSeconds: options.windowSeconds,
          objects: legacyObjects,
          gaps,
          offsets,
        }
        await keepLease(queue)
        await store.put(names.names.manifestKey(windowEnd), utf8(JSON.stringify(manifest)), 'application/json')
      } else {
        // Offsets sorted by name, so the same state always encodes to the same checkpoint.
        const checkpoint: LakeCheckpoint = { windowEnd, offsets: Object.fromEntries(Object.entries(offsets).sort(byName)) }
        const checkpointKey = names.names.checkpointKey(windowEnd)
        await keepLease(queue)
        await store.put(checkpointKey, utf8(JSON.stringify(checkpoint)), 'application/json')
        const manifest: LakeManifest = {
          version: 2,
          sink: options.sink,
          tenant: options.tenant,
          queue,
          layout: 'hive',
          windows: options.windows,
          align: options.align,
          format: options.format,
          compression: format!.compression,
          writer: format!.writer,
          windowStart,
          windowEnd,
          previousWindowEnd: state.windowEnd,
          windowSeconds: options.windowSeconds,
          objects: lakeObjects,
          records: frames,
          bytes,
          partitions: partitionsWithRows,
          gaps,
          checkpoint: checkpointKey,
        }
        await keepLease(queue)
        await store.put(names.names.manifestKey(windowEnd), utf8(JSON.stringify(manifest)), 'application/json')
      }
      const lastObject = objects.at(-1)?.key
      await keepLease(queue)
      const answer = await source.commit(options.sink, queue, token, options.leaseSeconds, windowEnd, {
        frames,
        windowEnd,
        format: legacy ? 'jsonl' : options.format,
        compression: legacy ? 'gzip' : format!.compression,
        layout: legacy ? 'legacy' : `hive/${options.windows}`,
        ...(windowStart !== null ? { lastWindow: { start: windowStart, end: windowEnd, frames, objects: objects.length } } : {}),
        ...(lastObject ? { lastObject } : {}),
      }, state.version)
      if (!answer.committed) {
        // lease_lost: another process owns the sink now. version: the pointer was written since this
        // process read it. behind: one already committed past this window (it wrote the same
        // objects). Either way this process's picture is stale: the next run reads the pointer again.
        states.delete(queue)
        run.leased = answer.reason !== 'lease_lost'
        return run
      }
      state = { windowEnd, version: answer.version, offsets, lastObject: lastObject ?? state.lastObject }
      states.set(queue, state)
      run.windows++
      run.frames += frames
      run.objects += objects.length
      run.bytes += bytes
      run.windowEnd = windowEnd
      if (Date.now() >= deadline) return run
    }
  }

  return {
    token,
    async runOnce(budgetMs) {
      const deadline = Date.now() + budgetMs
      const runs: QueueRun[] = []
      for (const queue of options.queues) runs.push(await archiveQueue(queue, deadline))
      return runs
    },
    async release() {
      // A claim with a zero lifetime leaves the row expired: free for the next claimer at once.
      for (const queue of options.queues) await source.claim(options.sink, queue, token, 0).catch(() => false)
    },
  }
}
