// Same-process wake-ups of parked long-polls (design decision 35): a push answered by this process wakes
// the pops parked on this process for that queue at once. It is an optimisation only: pops parked
// on other replicas (or any pop on Workers, which gets no waker) see the push at their next backoff
// re-check. Keyed tenant|queue; a discovery pop has no queue key and simply polls.
//
// A push of n messages wakes at most n of each consumer group's parked queue-wide pops, the longest
// parked first (docs/long-poll.md): one pop's claim takes what the push brought to a partition, and
// waking every consumer of the group for one message made the others check, find nothing and park
// again, three or four pop calls a message where consumers outnumber the pushes (issue #33). A
// partition-scoped pop, and a wait that names no group, is woken by every push to its queue.

export type WakeOutcome = 'woken' | 'timeout' | 'aborted'

export interface PopWaker {
  /**
   * Resolves when a push to one of `keys` is reported, after `ms`, or when `signal` aborts. `group`:
   * the wait is one of that consumer group's queue-wide pops, woken only as the push's count allows.
   */
  wait(keys: readonly string[], ms: number, signal?: AbortSignal, group?: string): Promise<WakeOutcome>
  /**
   * A push to `keys`: per key, at most `counts.get(key)` waits of each group (every one when the key
   * has no count), and every wait without a group.
   */
  notify(keys: Iterable<string>, counts?: ReadonlyMap<string, number>): void
  /** A woken wait of `group` that will not check after all (its client went away) hands its wake-up on. */
  handOn(keys: readonly string[], group: string): void
  /** Graceful shutdown: every parked and every later wait resolves 'aborted', so polls answer 204. */
  close(): void
  /** How many of `group`'s queue-wide pops are parked on `key` in this process (pop autopilot's share). */
  parked(key: string, group: string): number
}

export const wakeKey = (tenant: string, queue: string) => `${tenant}|${queue}`

interface Parked {
  wake: () => void
  group: string | undefined
}

export function createPopWaker(): PopWaker {
  // Insertion order is parking order, so the longest parked of a group is woken first.
  const parked = new Map<string, Set<Parked>>()
  const closers = new Set<() => void>()
  let closed = false
  const wakeOn = (key: string, limit: number | undefined, only?: string) => {
    const woken = new Map<string, number>()
    for (const p of [...(parked.get(key) ?? [])]) {
      if (only !== undefined && p.group !== only) continue
      if (p.group !== undefined && limit !== undefined) {
        const n = woken.get(p.group) ?? 0
        if (n >= limit) continue
        woken.set(p.group, n + 1)
      }
      p.wake()
    }
  }
  return {
    wait(keys, ms, signal, group) {
      return new Promise<WakeOutcome>((resolve) => {
        if (closed || signal?.aborted) return resolve('aborted')
        const done = (outcome: WakeOutcome) => {
          clearTimeout(timer)
          signal?.removeEventListener('abort', onAbort)
          closers.delete(onAbort)
          for (const key of keys) {
            const set = parked.get(key)
            set?.delete(entry)
            if (set?.size === 0) parked.delete(key)
          }
          resolve(outcome)
        }
        const entry: Parked = { wake: () => done('woken'), group }
        const onAbort = () => done('aborted')
        const timer = setTimeout(() => done('timeout'), Math.max(0, ms))
        signal?.addEventListener('abort', onAbort, { once: true })
        closers.add(onAbort)
        for (const key of keys) {
          let set = parked.get(key)
          if (!set) parked.set(key, (set = new Set()))
          set.add(entry)
        }
      })
    },
    notify(keys, counts) {
      for (const key of keys) wakeOn(key, counts?.get(key))
    },
    handOn(keys, group) {
      for (const key of keys) wakeOn(key, 1, group)
    },
    parked(key, group) {
      let n = 0
      for (const p of parked.get(key) ?? []) if (p.group === group) n++
      return n
    },
    close() {
      closed = true
      for (const abort of [...closers]) abort()
    },
  }
}

/** The Workers stand-in: no wake-ups, only the timer and the request's abort signal. */
export function sleepOnly(ms: number, signal?: AbortSignal): Promise<WakeOutcome> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve('aborted')
    const onAbort = () => {
      clearTimeout(timer)
      resolve('aborted')
    }
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort)
      resolve('timeout')
    }, Math.max(0, ms))
    signal?.addEventListener('abort', onAbort, { once: true })
  })
}
