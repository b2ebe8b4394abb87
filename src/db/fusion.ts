// Request fusion on Node (design decision 45), for push and ack: concurrent calls of one procedure and
// tenant that arrive within `holdMs` of each other (acks: while others are in flight) go out as one
// procedure call (up to maxItems items and maxBytes of item JSON), so a burst of small calls pays
// one statement, one transaction and one commit instead of one each (BENCHMARKS.md: small pushes
// and acks are bound by commits). Only Node fuses; a Worker serves one request per isolate.
//
// Members' items are concatenated in arrival order with `index` renumbered globally; each member's
// [start, count) is kept and its results are cut back out and renumbered to its own indexes.
// Failure isolation: a fused call that fails because the database is unavailable, timed out or in
// push maintenance fails every member with that error (nothing was written, and each alone would
// meet the same); any other error (a poison item, or QMENC from one member's stale encryption
// cache) retries each member alone, so only the member at fault sees it. A failed call wrote
// nothing, so the split is exact. A fused call runs within its first member's share of the
// connections (src/tenant-share/): a batch holds one tenant's calls, so that is every member's. Per-item verdicts are results, not errors (design decision 6), so one
// member's failed ack never fails its neighbours.
import { DbError } from './errors.js'
import { HttpError } from '../errors.js'
import type { CallGate } from './database.js'
import type { AckItemResult, ArgsOf, ResultOf } from './procedures.js'

type PushArgs = ArgsOf<'log_push_v1'>
type PushResult = ResultOf<'log_push_v1'>
type AckArgs = ArgsOf<'log_ack_v1'>

export interface FusionOptions {
  /** How long the first member of a batch waits for company, in ms (2 on Node). */
  holdMs: number
  /** A batch is sent as soon as it holds this many items, and a call this large is sent alone (200 on Node). */
  maxItems: number
  /**
   * A fused call carries at most this many bytes of item JSON (4 MiB on Node), so fusing
   * never builds a statement much larger than the calls it merges would have sent one by one.
   */
  maxBytes: number
  /**
   * Without it, every call waits up to holdMs for company. With it, a call goes out at once while
   * fewer than this many of its kind are in flight, and otherwise waits for the next to return
   * (or holdMs): fusion only under load, with no added latency when there is none.
   */
  maxInFlight?: number
  /**
   * Fusion under load: a batch whose hold is over while `inFlight` calls of its kind are already
   * in flight waits on for one of them to return (in all at most `maxHoldMs` from its first
   * member), gathering the calls that arrive meanwhile. A call would wait for the database then
   * anyway, in the pool's queue, where nothing can join it; one slot freed sends the batch due
   * longest, so the calls in flight stay near `inFlight` whatever the number of tenants.
   */
  busy?: { inFlight: number; maxHoldMs: number }
}

/**
 * What the Node runtime fuses with (hold 2 ms, 200 items, 4 MiB a call; ephemeral pops of one
 * group while one is in flight, src/db/ephemeral-fusion.ts); tests use the same.
 */
export const NODE_FUSION: { push: FusionOptions; ack: FusionOptions; ephemeral: boolean } = {
  // Single-message pushes of several tenants at a few hundred a second each met company within 2 ms
  // only 1.5 to 2 times a call: the rest queued for a pool connection one call each. Under load they
  // now queue in the batch instead (BENCHMARKS.md, issue #33).
  push: { holdMs: 2, maxItems: 200, maxBytes: 4 * 1024 * 1024, busy: { inFlight: 3, maxHoldMs: 20 } },
  // A fused call of several leases still settles each lease set-based (_log_ack_leases), so acks of
  // any size up to the preferred 200 items share a commit (BENCHMARKS.md). Only under load: a
  // consumer waits for its ack before its next pop, so a 2 ms hold on every ack cost a quarter of the
  // batch-1 pop + ack rate where eight consumers share two partitions.
  ack: { holdMs: 2, maxItems: 200, maxBytes: 4 * 1024 * 1024, maxInFlight: 2 },
  ephemeral: true,
}

/** How to read, merge and split the calls of one fusable procedure. */
interface Fusable<A, R, I> {
  items(args: A): readonly I[]
  /** The one call carrying every member's items, renumbered in arrival order. */
  merged(first: A, items: I[]): A
  renumbered(item: I, index: number): I
  /** A member's own answer out of the fused one: its items from start, with its own indexes. */
  share(fused: R, member: A, start: number): R
}

interface Member<A, R> {
  args: A
  /** The caller's share of the connections: a fused call runs within its first member's. */
  gate: CallGate | undefined
  resolve: (result: R) => void
  reject: (error: unknown) => void
}

interface Batch<A, R> {
  members: Member<A, R>[]
  items: number
  bytes: number
  timer: ReturnType<typeof setTimeout> | undefined
  /** When the first member arrived (performance.now()), for the busy wait's bound. */
  firstAt: number
  /** Its hold is over and it waits for a call in flight to return (options.busy). */
  due: boolean
}

/** Errors every member of a fused call would meet alone: answer them all, retry nobody. */
export function sharedFailure(error: unknown): boolean {
  // The tenant's line of calls is full: each member alone would join the same line.
  if (error instanceof HttpError) return error.code === 'tenant_busy'
  if (!(error instanceof DbError)) return false
  if (error.kind === 'unavailable') return true
  const s = error.sqlstate
  return s === 'QMMNT' || s === '57014' || s === '53300' || s.startsWith('08')
}

type Call<A, R> = (args: A, gate?: CallGate) => Promise<R>
type FusableArgs = { tenant: string; now?: Date }

function fuse<A extends FusableArgs, R, I>(call: Call<A, R>, kind: Fusable<A, R, I>, options: FusionOptions): Call<A, R> {
  const open = new Map<string, Batch<A, R>>()

  let inFlight = 0
  // Calls in flight of tenants held to their heavy share (src/tenant-share/): a batch of another
  // tenant does not wait for them, so a flood's calls never hold a steady tenant's call in a batch.
  let heavyInFlight = 0
  /** The calls in flight a call of `gate`'s tenant counts before it: every one for a heavy tenant, else the others'. */
  const ahead = (gate: CallGate | undefined) => (gate?.heavy?.() === true ? inFlight : inFlight - heavyInFlight)

  /** Settles once the batch's database work, retries included, is over. */
  const send = async ({ members }: Batch<A, R>) => {
    if (members.length === 1) {
      const [m] = members
      await call(m!.args, m!.gate).then(m!.resolve, m!.reject)
      return
    }
    const items: I[] = []
    const starts: number[] = []
    for (const m of members) {
      starts.push(items.length)
      for (const item of kind.items(m.args)) items.push(kind.renumbered(item, items.length))
    }
    let fused: R
    try {
      fused = await call(kind.merged(members[0]!.args, items), members[0]!.gate)
    } catch (error) {
      if (sharedFailure(error)) {
        for (const m of members) m.reject(error)
      } else {
        await Promise.all(members.map((m) => call(m.args, m.gate).then(m.resolve, m.reject)))
      }
      return
    }
    members.forEach((m, i) => m.resolve(kind.share(fused, m.args, starts[i]!)))
  }

  const dispatch = (batch: Batch<A, R>) => {
    const heavy = batch.members[0]!.gate?.heavy?.() === true
    inFlight++
    if (heavy) heavyInFlight++
    void send(batch).finally(() => {
      inFlight--
      if (heavy) heavyInFlight--
      // A slot is free: what waited for one goes out now.
      if (options.maxInFlight !== undefined) for (const tenant of [...open.keys()]) flush(tenant)
      else if (options.busy) flushLongestDue()
    })
  }

  const flush = (tenant: string) => {
    const batch = open.get(tenant)
    if (!batch) return
    open.delete(tenant)
    clearTimeout(batch.timer)
    dispatch(batch)
  }

  /** The hold is over: send now, or under load wait for a slot (options.busy) until its bound. */
  const holdOver = (tenant: string) => {
    const batch = open.get(tenant)
    if (!batch) return
    const busy = options.busy
    const left = busy ? batch.firstAt + busy.maxHoldMs - performance.now() : 0
    if (!busy || ahead(batch.members[0]!.gate) < busy.inFlight || left <= 0) return flush(tenant)
    batch.due = true
    batch.timer = setTimeout(() => flush(tenant), left)
  }

  const flushLongestDue = () => {
    let longest: [string, Batch<A, R>] | undefined
    for (const entry of open) if (entry[1].due && (!longest || entry[1].firstAt < longest[1].firstAt)) longest = entry
    if (longest) flush(longest[0])
  }

  return (args, gate) => {
    const items = kind.items(args)
    const count = items.length
    // A pinned clock (tests) or an empty call is not fused: it must stay exactly what was asked; a
    // call already of the preferred size gains nothing from company.
    if (args.now !== undefined || count === 0 || count >= options.maxItems) return call(args, gate)
    if (options.maxInFlight !== undefined && ahead(gate) < options.maxInFlight && !open.has(args.tenant)) {
      // A free slot: sent alone at once, so its size does not matter (and is not measured).
      return new Promise<R>((resolve, reject) =>
        dispatch({ members: [{ args, gate, resolve, reject }], items: count, bytes: 0, timer: undefined, firstAt: 0, due: false }),
      )
    }
    // The size the call will carry: one serialisation more per fused call, small for the calls
    // fusion is for (larger ones are sent as they came, above).
    const bytes = JSON.stringify(items).length
    if (bytes >= options.maxBytes) return call(args, gate)
    return new Promise<R>((resolve, reject) => {
      let batch = open.get(args.tenant)
      if (batch && (batch.items + count > options.maxItems || batch.bytes + bytes > options.maxBytes)) {
        flush(args.tenant)
        batch = undefined
      }
      if (!batch) {
        batch = { members: [], items: 0, bytes: 0, timer: undefined, firstAt: performance.now(), due: false }
        open.set(args.tenant, batch)
        const tenant = args.tenant
        batch.timer = setTimeout(() => holdOver(tenant), options.holdMs)
      }
      batch.members.push({ args, gate, resolve, reject })
      batch.items += count
      batch.bytes += bytes
      if (batch.items >= options.maxItems) flush(args.tenant)
    })
  }
}

const pushes: Fusable<PushArgs, PushResult, PushArgs['items'][number]> = {
  items: (args) => args.items,
  merged: (first, items) => ({ tenant: first.tenant, items }),
  renumbered: (item, index) => ({ ...item, index }),
  share(fused, member, start) {
    const byIndex = new Map(fused.items.map((r) => [r.index, r]))
    const names = new Set(member.items.map((item) => item.queue))
    return {
      items: member.items.map((item, k) => ({ ...byIndex.get(start + k)!, index: item.index })),
      queues: fused.queues?.filter((q) => names.has(q.name)) ?? fused.queues,
    }
  },
}

const acks: Fusable<AckArgs, AckItemResult[], AckArgs['acks'][number]> = {
  items: (args) => args.acks,
  merged: (first, items) => ({ tenant: first.tenant, acks: items }),
  renumbered: (item, index) => ({ ...item, index }),
  share(fused, member, start) {
    const byIndex = new Map(fused.map((r) => [r.index, r]))
    return member.acks.map((item, k) => ({ ...byIndex.get(start + k)!, index: item.index }))
  },
}

export const fusePush = (call: Call<PushArgs, PushResult>, options: FusionOptions) => fuse(call, pushes, options)
export const fuseAck = (call: Call<AckArgs, AckItemResult[]>, options: FusionOptions) => fuse(call, acks, options)
