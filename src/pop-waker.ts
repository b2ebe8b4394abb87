// Same-process wake-ups of parked long-polls (design decision 35): a push answered by this process wakes
// the pops parked on this process for that queue at once. It is an optimisation only: pops parked
// on other replicas (or any pop on Workers, which gets no waker) see the push at their next backoff
// re-check. Keyed tenant|queue; a discovery pop has no queue key and simply polls.

export type WakeOutcome = 'woken' | 'timeout' | 'aborted'

export interface PopWaker {
  /** Resolves when a push to one of `keys` is reported, after `ms`, or when `signal` aborts. */
  wait(keys: readonly string[], ms: number, signal?: AbortSignal): Promise<WakeOutcome>
  notify(keys: Iterable<string>): void
  /** Graceful shutdown: every parked and every later wait resolves 'aborted', so polls answer 204. */
  close(): void
}

export const wakeKey = (tenant: string, queue: string) => `${tenant}|${queue}`

export function createPopWaker(): PopWaker {
  const parked = new Map<string, Set<() => void>>()
  const closers = new Set<() => void>()
  let closed = false
  return {
    wait(keys, ms, signal) {
      return new Promise<WakeOutcome>((resolve) => {
        if (closed || signal?.aborted) return resolve('aborted')
        const done = (outcome: WakeOutcome) => {
          clearTimeout(timer)
          signal?.removeEventListener('abort', onAbort)
          closers.delete(onAbort)
          for (const key of keys) {
            const set = parked.get(key)
            set?.delete(onWake)
            if (set?.size === 0) parked.delete(key)
          }
          resolve(outcome)
        }
        const onWake = () => done('woken')
        const onAbort = () => done('aborted')
        const timer = setTimeout(() => done('timeout'), Math.max(0, ms))
        signal?.addEventListener('abort', onAbort, { once: true })
        closers.add(onAbort)
        for (const key of keys) {
          let set = parked.get(key)
          if (!set) parked.set(key, (set = new Set()))
          set.add(onWake)
        }
      })
    },
    notify(keys) {
      for (const key of keys) for (const wake of [...(parked.get(key) ?? [])]) wake()
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
