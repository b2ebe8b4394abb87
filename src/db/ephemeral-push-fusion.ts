// Ephemeral push fusion on Node (docs/ephemeral.md). Pushes to one queue serialise on the queue's
// ring row in PostgreSQL (it hands out the numbers), so while one is in flight the next ones would
// only wait for that lock, each holding a pool connection and paying its own commit. They queue here
// instead, and when the call in flight returns, everything that queued meanwhile goes out as one
// ephemeral_push_many_v1 call: one lock and one commit for many producers, whatever partition each
// pushes to. A push that finds nothing in flight goes out at once as ephemeral_push_v1, so fusion
// adds no latency without contention. Only Node fuses; a Worker serves one request per isolate.
//
// The fused call applies the members' pushes in arrival order, exactly as they would have applied
// one after the other, and is all or nothing. When it fails for a reason every member shares (the
// database unavailable, a timeout, the tenant's line full) each member gets that error; otherwise
// (one member's bounds refusal, a bad partition name) each member is retried alone, in arrival
// order, so only the one at fault sees its error and the others get what they would have got alone.
import type { CallGate } from './database.js'
import { serialLanes, type Member } from './ephemeral-fusion.js'
import { sharedFailure } from './fusion.js'
import type { ArgsOf, ResultOf } from './procedures.js'

type PushArgs = ArgsOf<'ephemeral_push_v1'>
type PushResult = ResultOf<'ephemeral_push_v1'>
type ManyArgs = ArgsOf<'ephemeral_push_many_v1'>
type ManyResult = ResultOf<'ephemeral_push_many_v1'>

/** A fused call carries at most this many payloads (one push's own bound), so it is never larger than a call a client may send. */
export const EPHEMERAL_PUSH_FUSED_MAX = 10_000

export function fuseEphemeralPushes(
  one: (args: PushArgs, gate?: CallGate) => Promise<PushResult>,
  many: (args: ManyArgs, gate?: CallGate) => Promise<ManyResult>,
): (args: PushArgs, gate?: CallGate) => Promise<PushResult> {
  type Push = Member<PushArgs, PushResult>
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

  const fused = serialLanes<PushArgs, PushResult>({
    key: (a) => JSON.stringify([a.tenant, a.queue]),
    size: (a) => a.payloads.length,
    max: EPHEMERAL_PUSH_FUSED_MAX,
    send: (members) => (members.length === 1 ? alone(members[0]!) : sendFused(members)),
  })

  return (args, gate) => {
    // A malformed or empty push is not fused: it must meet its own checks exactly as sent.
    if (!Array.isArray(args.payloads) || args.payloads.length === 0) return one(args, gate)
    return fused(args, gate)
  }
}
