// Request fusion on Node (ENGINE 12.1), for push: concurrent log_push_v1 calls of one tenant that
// arrive within `holdMs` of each other go out as one procedure call (up to maxItems items and
// maxBytes of item JSON), so a burst of small pushes pays one statement, one transaction and one
// commit instead of one each (BENCHMARKS.md: batch-1 pushes are bound by commits). Only Node fuses; a Worker serves one request per isolate.
//
// Members' items are concatenated in arrival order with `index` renumbered globally; each member's
// [start, count) is kept and its results are cut back out and renumbered to its own indexes.
// Failure isolation: a fused call that fails because the database is unavailable, timed out or in
// push maintenance fails every member with that error (nothing was written, and each alone would
// meet the same); any other error (a poison item, or QMENC from one member's stale encryption
// cache) retries each member alone, so only the member at fault sees it. A failed call wrote
// nothing, so the split is exact.
import { DbError } from './errors.js'
import type { ArgsOf, ResultOf } from './procedures.js'

type PushArgs = ArgsOf<'log_push_v1'>
type PushResult = ResultOf<'log_push_v1'>
type PushCall = (args: PushArgs) => Promise<PushResult>

/** What the Node runtime fuses with (ENGINE 12.1: hold 2 ms, 200 items, 4 MiB a call); tests use the same. */
export const NODE_FUSION: FusionOptions = { holdMs: 2, maxItems: 200, maxBytes: 4 * 1024 * 1024 }

export interface FusionOptions {
  /** How long the first member of a batch waits for company, in ms (ENGINE 12.1: 2). */
  holdMs: number
  /** A batch is sent as soon as it holds this many items (ENGINE 12.1: 200). */
  maxItems: number
  /**
   * A fused call carries at most this many bytes of item JSON (ENGINE 12.1: 4 MiB), so fusing
   * never builds a statement much larger than the pushes it merges would have sent one by one.
   */
  maxBytes: number
}

interface Member {
  args: PushArgs
  resolve: (result: PushResult) => void
  reject: (error: unknown) => void
}

interface Batch {
  members: Member[]
  items: number
  bytes: number
  timer: ReturnType<typeof setTimeout> | undefined
}

/** Errors every member of a fused call would meet alone: answer them all, retry nobody. */
function sharedFailure(error: unknown): boolean {
  if (!(error instanceof DbError)) return false
  if (error.kind === 'unavailable') return true
  const s = error.sqlstate
  return s === 'QMMNT' || s === '57014' || s === '53300' || s.startsWith('08')
}

export function fusePush(call: PushCall, options: FusionOptions): PushCall {
  const open = new Map<string, Batch>()

  const send = async (batch: Batch) => {
    const { members } = batch
    if (members.length === 1) {
      const [m] = members
      call(m!.args).then(m!.resolve, m!.reject)
      return
    }
    const items: PushArgs['items'] = []
    const starts: number[] = []
    for (const m of members) {
      starts.push(items.length)
      for (const item of m.args.items) items.push({ ...item, index: items.length })
    }
    let fused: PushResult
    try {
      fused = await call({ tenant: members[0]!.args.tenant, items })
    } catch (error) {
      if (sharedFailure(error)) {
        for (const m of members) m.reject(error)
      } else {
        for (const m of members) call(m.args).then(m.resolve, m.reject)
      }
      return
    }
    const byIndex = new Map(fused.items.map((r) => [r.index, r]))
    members.forEach((m, i) => {
      const start = starts[i]!
      const names = new Set(m.args.items.map((item) => item.queue))
      m.resolve({
        items: m.args.items.map((item, k) => ({ ...byIndex.get(start + k)!, index: item.index })),
        queues: fused.queues?.filter((q) => names.has(q.name)) ?? fused.queues,
      })
    })
  }

  const flush = (tenant: string) => {
    const batch = open.get(tenant)
    if (!batch) return
    open.delete(tenant)
    clearTimeout(batch.timer)
    void send(batch)
  }

  return (args) => {
    // A pinned clock (tests) or an empty push is not fused: it must stay exactly what was asked.
    if (args.now !== undefined || args.items.length === 0 || args.items.length >= options.maxItems) return call(args)
    // The size the call will carry: one serialisation more per fused push, small for the pushes
    // fusion is for (a push of maxItems or more is sent as it came, above).
    const bytes = JSON.stringify(args.items).length
    if (bytes >= options.maxBytes) return call(args)
    return new Promise<PushResult>((resolve, reject) => {
      let batch = open.get(args.tenant)
      if (batch && (batch.items + args.items.length > options.maxItems || batch.bytes + bytes > options.maxBytes)) {
        flush(args.tenant)
        batch = undefined
      }
      if (!batch) {
        batch = { members: [], items: 0, bytes: 0, timer: undefined }
        open.set(args.tenant, batch)
        batch.timer = setTimeout(() => flush(args.tenant), options.holdMs)
      }
      batch.members.push({ args, resolve, reject })
      batch.items += args.items.length
      batch.bytes += bytes
      if (batch.items >= options.maxItems) flush(args.tenant)
    })
  }
}
