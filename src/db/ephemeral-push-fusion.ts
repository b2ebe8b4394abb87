// Ephemeral push fusion on Node (docs/ephemeral.md). A push to one partition of a queue holds that
// partition's row in PostgreSQL from numbering its messages to its commit, so while one is in flight
// the next push to the same partition would only wait for that lock, holding a pool connection and
// paying its own commit. Pushes to one queue queue here instead: up to EPHEMERAL_PUSH_CALLS_IN_FLIGHT
// calls per queue go out at once, each over partitions no other call in flight writes to (so they
// run side by side in PostgreSQL, one per core), and when a call returns, the pushes that queued
// meanwhile go out together as one ephemeral_push_many_v1 call: one commit for many producers,
// whatever partition each pushes to. A push that finds a call free and its partition idle goes out
// at once as ephemeral_push_v1, so fusion adds no latency without contention. Only Node fuses; a
// Worker serves one request per isolate.
//
// Per partition, pushes go out in arrival order: a push waits while an earlier push to its
// partition is in flight or waiting, and a fused call applies its members in arrival order, exactly
// as they would have applied one after the other, all or nothing. When it fails for a reason every
// member shares (the database unavailable, a timeout, the tenant's line full) each member gets that
// error; otherwise (one member's bounds refusal, a bad partition name) each member is retried alone,
// in arrival order, so only the one at fault sees its error and the others get what they would have
// got alone.
import type { CallGate } from './database.js'
import type { Member } from './ephemeral-fusion.js'
import { sharedFailure } from './fusion.js'
import type { ArgsOf, ResultOf } from './procedures.js'

type PushArgs = ArgsOf<'ephemeral_push_v1'>
type PushResult = ResultOf<'ephemeral_push_v1'>
type ManyArgs = ArgsOf<'ephemeral_push_many_v1'>
type ManyResult = ResultOf<'ephemeral_push_many_v1'>
type Push = Member<PushArgs, PushResult>

/** A fused call carries at most this many payloads (one push's own bound), so it is never larger than a call a client may send. */
export const EPHEMERAL_PUSH_FUSED_MAX = 10_000

/** Calls in flight per queue: as many as PostgreSQL runs side by side on this project's 2 cores. */
export const EPHEMERAL_PUSH_CALLS_IN_FLIGHT = 2

/** A queue's pushes: the partitions written by its calls in flight, and the pushes waiting, in arrival order. */
interface Lane {
  busy: Set<string>
  calls: number
  waiting: Push[]
}

export function fuseEphemeralPushes(
  one: (args: PushArgs, gate?: CallGate) => Promise<PushResult>,
  many: (args: ManyArgs, gate?: CallGate) => Promise<ManyResult>,
): (args: PushArgs, gate?: CallGate) => Promise<PushResult> {
  const alone = (m: Push) => one(m.args, m.gate).then(m.resolve, m.reject)

  const sendFused = async (members: Push[]) => {
    const first = members[0]!.args
    let fused: ManyResult
    try {
      fused = await many({ tenant: first.tenant, queue: first.queue, groups: members.map((m) => ({ partition: m.args.partition, payloads: m.args.payloads })) }, members[0]!.gate)
    } catch (error) {
      if (sharedFailure(error)) for (const m of members) m.reject(error)
      // One after the other, as they arrived: a bounds refusal depends on what went before.
      else for (const m of members) await alone(m)
      return
    }
    members.forEach((m, i) => m.resolve({ pushed: fused.pushed[i]! }))
  }

  const lanes = new Map<string, Lane>()

  /**
   * The waiting pushes that may go out now as one call, in arrival order: those whose partition no
   * call in flight writes to and no earlier waiting push targets, at most EPHEMERAL_PUSH_FUSED_MAX
   * payloads (the first always goes).
   */
  const next = (lane: Lane): Push[] => {
    const held = new Set(lane.busy)
    const taken: Push[] = []
    let total = 0
    for (const m of lane.waiting) {
      const partition = m.args.partition
      const size = m.args.payloads.length
      if (!held.has(partition) && (taken.length === 0 || total + size <= EPHEMERAL_PUSH_FUSED_MAX)) {
        taken.push(m)
        total += size
      } else {
        // A later push to this partition must not overtake this one.
        held.add(partition)
      }
    }
    return taken
  }

  const dispatch = (key: string, lane: Lane) => {
    while (lane.calls < EPHEMERAL_PUSH_CALLS_IN_FLIGHT && lane.waiting.length > 0) {
      const members = next(lane)
      if (members.length === 0) return
      const sent = new Set(members)
      lane.waiting = lane.waiting.filter((m) => !sent.has(m))
      const partitions = new Set(members.map((m) => m.args.partition))
      for (const p of partitions) lane.busy.add(p)
      lane.calls++
      void (members.length === 1 ? alone(members[0]!) : sendFused(members)).finally(() => {
        for (const p of partitions) lane.busy.delete(p)
        lane.calls--
        if (lane.calls === 0 && lane.waiting.length === 0) lanes.delete(key)
        else dispatch(key, lane)
      })
    }
  }

  return (args, gate) => {
    // A malformed or empty push is not fused: it must meet its own checks exactly as sent.
    if (!Array.isArray(args.payloads) || args.payloads.length === 0) return one(args, gate)
    return new Promise<PushResult>((resolve, reject) => {
      const key = JSON.stringify([args.tenant, args.queue])
      let lane = lanes.get(key)
      if (!lane) lanes.set(key, (lane = { busy: new Set(), calls: 0, waiting: [] }))
      lane.waiting.push({ args, gate, resolve, reject })
      dispatch(key, lane)
    })
  }
}
