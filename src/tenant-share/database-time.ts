// How much of the database time this process spent lately went to each tenant: the signal that
// tells a tenant flooding the database from several tenants each taking its part. Counting calls
// in flight or waiting cannot: four open-loop producers of the multitenant cell keep as many
// requests waiting as a flood does (BENCHMARKS.md, "Tenant share"), but each takes about a
// quarter of the time, where a flooding tenant takes most of it.
//
// Time is summed in windows of `windowMs`; a share reads the current window and the one before, so
// it always covers between one and two windows and never starts from nothing at a window's edge.

export interface DatabaseTime {
  /** A call of `tenant` took `ms` from its start to its answer. */
  add(tenant: string, ms: number, now: number): void
  /** `tenant`'s part (0 to 1) of all the calls' time in the last one to two windows; 0 when none ran. */
  share(tenant: string, now: number): number
}

export function createDatabaseTime(windowMs: number): DatabaseTime {
  let windowStart = performance.now()
  let current = new Map<string, number>()
  let previous = new Map<string, number>()
  let currentTotal = 0
  let previousTotal = 0

  const roll = (now: number) => {
    const elapsed = now - windowStart
    if (elapsed < windowMs) return
    // The window just ended becomes the previous one, unless a whole window passed with no call.
    previous = elapsed < 2 * windowMs ? current : new Map()
    previousTotal = elapsed < 2 * windowMs ? currentTotal : 0
    current = new Map()
    currentTotal = 0
    windowStart = now - (elapsed % windowMs)
  }

  return {
    add(tenant, ms, now) {
      roll(now)
      current.set(tenant, (current.get(tenant) ?? 0) + ms)
      currentTotal += ms
    },
    share(tenant, now) {
      roll(now)
      const total = currentTotal + previousTotal
      if (total === 0) return 0
      return ((current.get(tenant) ?? 0) + (previous.get(tenant) ?? 0)) / total
    },
  }
}
