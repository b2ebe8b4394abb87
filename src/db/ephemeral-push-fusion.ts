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
import { sharedFailure } from './fusion.js'
import type { ArgsOf, ResultOf } from './procedures.js'

type PushArgs = ArgsOf<'ephemeral_push_v1'>
type PushResult = ResultOf<'ephemeral_push_v1'>
type ManyArgs = ArgsOf<'ephemeral_push_many_v1'>
type ManyResult = ResultOf<'ephemeral_push_many_v1'>

/** A fused call carries at most this many payloads (one push's own bound), so it is never larger than a call a client may send. */
export const EPHEMERAL_PUSH_FUSED_MAX = 10_000

interface Member {
  args: PushArgs
  /** The caller's tenant share; members of one key are one tenant's, so the first one's admits the fused call. */
  gate: CallGate | undefined
  resolve: (result: PushResult) => void
  reject: (error: unknown) => void
}

export function fuseEphemeralPushes(
  one: (args: PushArgs, gate?: CallGate) => Promise<PushResult>,
  many: (args: ManyArgs, gate?: CallGate) => Promise<ManyResult>,
): (args: PushArgs, gate?: CallGate) => Promise<PushResult> {
  // A key is present while a call of it is in flight; its list holds what waits for that call.
  const lanes = new Map<string, Member[]>()

  const alone = (m: Member) => one(m.args, m.gate).then(m.resolve, m.reject)

  const sendFused = async (members: Member[]) => {
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

  const send = (key: string, members: Member[]) => {
    const sent = members.length === 1 ? alone(members[0]!) : sendFused(members)
    void sent.finally(() => {
      const waiting = lanes.get(key)!
      if (waiting.length === 0) {
        lanes.delete(key)
        return
      }
      // The next chunk: members in arrival order while they fit (the first always goes).
      let total = 0
      let n = 0
      while (n < waiting.length && (n === 0 || total + waiting[n]!.args.payloads.length <= EPHEMERAL_PUSH_FUSED_MAX)) total += waiting[n++]!.args.payloads.length
      send(key, waiting.splice(0, n))
    })
  }

  return (args, gate) => {
    // A malformed or empty push is not fused: it must meet its own checks exactly as sent.
    if (!Array.isArray(args.payloads) || args.payloads.length === 0) return one(args, gate)
    return new Promise<PushResult>((resolve, reject) => {
      const key = JSON.stringify([args.tenant, args.queue])
      const waiting = lanes.get(key)
      if (waiting) {
        waiting.push({ args, gate, resolve, reject })
        return
      }
      lanes.set(key, [])
      send(key, [{ args, gate, resolve, reject }])
    })
  }
}
