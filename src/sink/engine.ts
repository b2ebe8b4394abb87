// The archive sink's engine (docs/sink.md), one for both runtimes: for each queue, under the
// sink's lease, close windows of createdAt one at a time —
//   partitions/changed (its safeTime bounds what may be closed) -> fetch each changed partition
//   from its next offset -> one object per (partition, window), split into parts by frames/bytes
//   -> the window's manifest -> only then the kv pointer s3:<sink>:<queue>:committed, which the
//   retention hold trusts, so it never names a window whose objects are not all stored
//   (design decision 31).
// Windows are [k*w, (k+1)*w) aligned to the epoch, and a window is closed only when its end is at
// or below safeTime, when its frames can no longer change (docs/sink-protocol.md). So a window's
// content, and with it every object name and byte, is a function of the committed state alone: a
// run killed at any point is redone by the next run writing the same objects again. A stretch of
// windows without frames is crossed in one step (the pointer jumps), so an idle queue costs one
// commit per window at most.
import { frameLine, gzip, sha256Hex, utf8, type ArchivedFrame } from './codec.js'
import { layout, type Layout } from './layout.js'
import { parseManifest, type ArchivedObject, type Gap, type Manifest } from './manifest.js'
import type { SinkOptions } from './options.js'
import type { FetchedFrame, SinkSource } from './source.js'
import type { ObjectStore } from './store.js'

export interface QueueRun {
  queue: string
  /** False when another process holds this sink's lease (or it was lost mid-run). */
  leased: boolean
  windows: number
  frames: number
  objects: number
  /** Stored (gzip) bytes written. */
  bytes: number
  /** True when every window below safeTime is committed. */
  caughtUp: boolean
  windowEnd: string | null
}

interface QueueState {
  windowEnd: string | null
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

export function createSinkEngine(source: SinkSource, store: ObjectStore, options: SinkOptions): SinkEngine {
  const token = crypto.randomUUID()
  // The committed state per queue, valid only while the pointer still says the same windowEnd.
  const states = new Map<string, QueueState>()
  const windowMs = options.windowSeconds * 1000
  const grid = (ms: number) => Math.floor(ms / windowMs) * windowMs

  async function loadState(queue: string, names: Layout): Promise<QueueState> {
    const pointer = await source.readPointer(options.sink, queue)
    const cached = states.get(queue)
    if (cached && cached.windowEnd === pointer) return cached
    if (pointer === null) return { windowEnd: null, offsets: {} }
    const bytes = await store.get(names.manifestKey(pointer))
    if (!bytes) {
      throw new Error(
        `the pointer of sink ${options.sink} for queue ${queue} says ${pointer}, but ${store.describe} has no manifest ${names.manifestKey(pointer)}: ` +
          'is this the target the sink archived to?',
      )
    }
    const manifest = parseManifest(bytes, names.manifestKey(pointer))
    return { windowEnd: manifest.windowEnd, offsets: { ...manifest.offsets } }
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

  /** A reader of one partition from an offset, paging through fetch; `first` is an already fetched page. */
  function partitionReader(queue: string, partition: string, from: number, gaps: Gap[]) {
    let buffer: FetchedFrame[] = []
    let next = from
    let ended = false
    let vanished = false
    const absorb = (answer: Awaited<ReturnType<SinkSource['fetch']>>[number]) => {
      if ('error' in answer) {
        // The partition (or queue) went away between the calls: nothing more to copy from it.
        ended = vanished = true
        return
      }
      if (answer.fromOffset > next) gaps.push({ partition, fromOffset: next, toOffset: answer.fromOffset - 1 })
      buffer = answer.frames
      next = answer.nextOffset
      // An answer cut by the call's byte budget has no frames yet nextOffset = fromOffset: ask again.
      ended = answer.frames.length === 0 && answer.nextOffset > answer.lastOffset
    }
    return {
      absorb,
      get next() {
        return next
      },
      get vanished() {
        return vanished
      },
      /** The next frame without consuming it; null at the end of the log. */
      async peek(): Promise<FetchedFrame | null> {
        while (buffer.length === 0 && !ended) {
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
    }
  }
  type Reader = ReturnType<typeof partitionReader>

  /** Writes one partition's frames of the window [start, end) as parts of at most maxFrames / maxBytes. */
  async function writePartition(names: Layout, reader: Reader, partition: string, start: string, endMs: number): Promise<ArchivedObject[]> {
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
      await store.put(key, body, 'application/x-ndjson')
      objects.push({ key, partition, firstOffset: first, lastOffset: last, count: lines.length, bytes: body.byteLength, ndjsonBytes: ndjson.byteLength, sha256 })
      lines = []
      size = 0
    }
    for (;;) {
      const frame = await reader.peek()
      if (!frame || Date.parse(frame.createdAt) >= endMs) break
      reader.take()
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

  async function archiveQueue(queue: string, deadline: number): Promise<QueueRun> {
    const names = layout(options.prefix, options.sink, queue)
    const run: QueueRun = { queue, leased: true, windows: 0, frames: 0, objects: 0, bytes: 0, caughtUp: false, windowEnd: null }
    let state = await loadState(queue, names)
    run.windowEnd = state.windowEnd
    for (;;) {
      // Claimed (or renewed) before every window, so a window's writes start under a live lease;
      // the commit checks the lease again, so a process that stalls past it cannot move the pointer.
      if (!(await source.claim(options.sink, queue, token, options.leaseSeconds))) {
        run.leased = false
        return run
      }
      const since = state.windowEnd === null ? undefined : new Date(Date.parse(state.windowEnd) - SINCE_MARGIN_MS).toISOString()
      const found = await discover(queue, since)
      if (found.missing) {
        run.caughtUp = true
        return run
      }
      const closable = grid(Date.parse(found.safeTime!))
      const offsets = { ...state.offsets }
      const gaps: Gap[] = []
      const readers = new Map<string, Reader>()
      for (const [partition, lastOffset] of [...found.partitions].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
        offsets[partition] ??= 0
        if (lastOffset >= offsets[partition]!) readers.set(partition, partitionReader(queue, partition, offsets[partition]!, gaps))
      }
      // First pages in batched calls; they also tell where the earliest unarchived frame lies.
      const pending = [...readers.entries()]
      for (let i = 0; i < pending.length; i += MAX_FETCH_ENTRIES) {
        const batch = pending.slice(i, i + MAX_FETCH_ENTRIES)
        const answers = await source.fetch(
          queue,
          batch.map(([partition, reader]) => ({ partition, fromOffset: reader.next, limit: FETCH_LIMIT, maxBytes: FETCH_MAX_BYTES })),
        )
        answers.forEach((answer, j) => batch[j]![1].absorb(answer))
      }
      let earliest = Infinity
      for (const reader of readers.values()) {
        const frame = await reader.peek()
        if (frame) earliest = Math.min(earliest, Date.parse(frame.createdAt))
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
        const startMs = grid(earliest)
        windowStart = new Date(startMs).toISOString()
        windowEndMs = startMs + windowMs
      }
      const windowEnd = new Date(windowEndMs).toISOString()

      const objects: ArchivedObject[] = []
      if (windowStart !== null) {
        const work = [...readers.entries()]
        const written: ArchivedObject[][] = new Array(work.length)
        let nextIndex = 0
        await Promise.all(
          Array.from({ length: Math.min(WRITE_CONCURRENCY, work.length) }, async () => {
            while (nextIndex < work.length) {
              const index = nextIndex++
              const [partition, reader] = work[index]!
              written[index] = await writePartition(names, reader, partition, windowStart!, windowEndMs)
            }
          }),
        )
        objects.push(...written.flat())
      }
      for (const [partition, reader] of readers) offsets[partition] = reader.position

      const manifest: Manifest = {
        version: 1,
        sink: options.sink,
        queue,
        windowStart,
        windowEnd,
        previousWindowEnd: state.windowEnd,
        windowSeconds: options.windowSeconds,
        objects,
        gaps,
        offsets,
      }
      await store.put(names.manifestKey(windowEnd), utf8(JSON.stringify(manifest)), 'application/json')
      const frames = objects.reduce((n, o) => n + o.count, 0)
      const lastObject = objects.at(-1)?.key
      const answer = await source.commit(options.sink, queue, token, options.leaseSeconds, windowEnd, {
        frames,
        windowEnd,
        ...(lastObject ? { lastObject } : {}),
      })
      if (!answer.committed) {
        // lease_lost: another process owns the sink now. behind: one already committed past this
        // window (it wrote the same objects); either way this process's picture is stale.
        states.delete(queue)
        run.leased = answer.reason !== 'lease_lost'
        return run
      }
      state = { windowEnd, offsets, lastObject: lastObject ?? state.lastObject }
      states.set(queue, state)
      run.windows++
      run.frames += frames
      run.objects += objects.length
      run.bytes += objects.reduce((n, o) => n + o.bytes, 0)
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
