// Ephemeral pop fusion on Node (docs/ephemeral.md). Pops of one group of one ephemeral queue
// serialise on the group's row in PostgreSQL, so while one is in flight the next ones would only
// queue for that lock, each holding a pool connection. They queue here instead, and when the call in
// flight returns, everything that queued meanwhile goes out as one call: one statement, one lock and
// one commit for many consumers. A pop that finds nothing in flight goes out at once, so fusion adds
// no latency without contention. Only Node fuses; a Worker serves one request per isolate.
//
// A fused pop asks for the sum of its members' batches (at most 10 000) and hands each member, in
// arrival order, the next `batch` messages of the answer: what the members would have received had
// their calls reached the group's row one after the other. An error fails every member: they share
// the queue, group, kill switch and database, so each alone would meet it too.
//
// Acks are not fused this way: acks of one group settle different leases and run side by side in
// PostgreSQL, and queuing them behind each other took the pop+ack benchmark from 1.47× durable
// to 0.82× on a busy machine (BENCHMARKS.md).
import type { CallGate } from './database.js'
import type { ArgsOf, ResultOf } from './procedures.js'

/** ephemeral_pop_v1 and ephemeral_pop_v2 take the same arguments. */
type PopArgs = ArgsOf<'ephemeral_pop_v1'>

/** The most a pop may ask for (the route's own bound), so a fused call never exceeds one a client may send. */
export const EPHEMERAL_FUSED_MAX = 10_000

export interface Member<A, R> {
  args: A
  /** The caller's tenant share; members of one key are one tenant's, so the first one's admits the fused call. */
  gate: CallGate | undefined
  resolve: (result: R) => void
  reject: (error: unknown) => void
}

/**
 * Calls with the same key go out one at a time; those that arrive while one is in flight go out
 * together when it returns, through `send`, in chunks of at most `max` by `size` (the first always
 * goes). `send` settles every member it is given and resolves once its database work is over.
 */
export function serialLanes<A, R>(options: {
  key: (args: A) => string
  size: (args: A) => number
  max: number
  send: (members: Member<A, R>[]) => Promise<void>
}): (args: A, gate?: CallGate) => Promise<R> {
  // A key is present while a call of it is in flight; its list holds what waits for that call.
  const lanes = new Map<string, Member<A, R>[]>()

  const send = (key: string, members: Member<A, R>[]) => {
    void options.send(members).finally(() => {
      const waiting = lanes.get(key)!
      if (waiting.length === 0) {
        lanes.delete(key)
        return
      }
      let total = 0
      let n = 0
      while (n < waiting.length && (n === 0 || total + options.size(waiting[n]!.args) <= options.max)) total += options.size(waiting[n++]!.args)
      send(key, waiting.splice(0, n))
    })
  }

  return (args, gate) =>
    new Promise<R>((resolve, reject) => {
      const key = options.key(args)
      const waiting = lanes.get(key)
      if (waiting) {
        waiting.push({ args, gate, resolve, reject })
        return
      }
      lanes.set(key, [])
      send(key, [{ args, gate, resolve, reject }])
    })
}

/**
 * Pops of one tenant's group of one queue (and partition, and autoAck) fused while one is in flight.
 * `slice` cuts a member's share out of the fused answer (ephemeral_pop_v1's messages, or
 * ephemeral_pop_v2's parallel arrays); `fused` makes the fused call's arguments from the first
 * member's and every member's batch (by default the first's with the batches' sum).
 */
export const fuseEphemeralPops = <A extends PopArgs, R>(
  call: (args: A, gate?: CallGate) => Promise<R>,
  slice: (fused: R, from: number, to: number) => R,
  fused: (first: A, batches: number[]) => A = (first, batches) => ({ ...first, batch: batches.reduce((sum, b) => sum + b, 0) }),
) =>
  serialLanes<A, R>({
    key: (a) => JSON.stringify([a.tenant, a.queue, a.partition, a.group, a.autoAck]),
    size: (a) => a.batch,
    max: EPHEMERAL_FUSED_MAX,
    async send(members) {
      const gate = members[0]!.gate
      if (members.length === 1) return call(members[0]!.args, gate).then(members[0]!.resolve, members[0]!.reject)
      // The sum of the members' batches; each member then takes, in arrival order, the next `batch` messages.
      try {
        const answer = await call(fused(members[0]!.args, members.map((m) => m.args.batch)), gate)
        let at = 0
        for (const m of members) {
          m.resolve(slice(answer, at, at + m.args.batch))
          at += m.args.batch
        }
      } catch (error) {
        for (const m of members) m.reject(error)
      }
    },
  })

/** A member's share of a fused ephemeral_pop_v1 answer. */
export const sliceMessages = (fused: ResultOf<'ephemeral_pop_v1'>, from: number, to: number): ResultOf<'ephemeral_pop_v1'> => ({
  ...fused,
  messages: fused.messages.slice(from, to),
})
