// A tenant's budget of database time while another tenant is active (docs/security.md). Holding a
// flooding tenant to one call at a time still lets it keep one of a small machine's cores busy
// without a break, and a steady tenant's calls run beside it at up to twice their time. The budget
// is a bucket of milliseconds: it fills at `fraction` of wall time up to `burstMs`, and each call
// of a tenant that was not alone takes its duration out. A tenant whose bucket is in debt waits
// until it is repaid before its next call starts, so on average it occupies the database at most
// `fraction` of the time, leaving the rest of that core to the others. A tenant below that rate
// (every tenant in a cell of several steady producers) never waits; a short burst is covered by
// `burstMs`. The debt is bounded by `burstMs` too, so the longest pause is `burstMs / fraction`.

export interface DbTimeBudget {
  /** How long `tenant`'s next call waits before it starts, in ms (0 while its bucket is not in debt). */
  delay(tenant: string, now: number): number
  /** Takes a finished call's `ms` of database time out of `tenant`'s bucket. */
  charge(tenant: string, ms: number, now: number): void
}

export interface BudgetOptions {
  /** Share of wall time a tenant's calls may occupy the database while others are active, in (0, 1]; 1 turns the budget off. */
  fraction: number
  /** Database time a tenant may spend at once beyond its rate, and the most debt it can run up, in ms. */
  burstMs: number
}

interface Bucket {
  balance: number
  at: number
}

/** Buckets kept before full ones are swept, so tenants that called once do not stay in memory. */
const SWEEP_ABOVE = 1024

export function createDbTimeBudget(options: BudgetOptions): DbTimeBudget {
  const buckets = new Map<string, Bucket>()
  const refill = (bucket: Bucket, now: number) => {
    bucket.balance = Math.min(options.burstMs, bucket.balance + Math.max(0, now - bucket.at) * options.fraction)
    bucket.at = now
  }
  const sweep = (now: number) => {
    for (const [tenant, bucket] of buckets) {
      refill(bucket, now)
      if (bucket.balance >= options.burstMs) buckets.delete(tenant)
    }
  }
  return {
    delay(tenant, now) {
      if (options.fraction >= 1) return 0
      const bucket = buckets.get(tenant)
      if (!bucket) return 0
      refill(bucket, now)
      if (bucket.balance >= options.burstMs) buckets.delete(tenant)
      return bucket.balance >= 0 ? 0 : -bucket.balance / options.fraction
    },
    charge(tenant, ms, now) {
      if (options.fraction >= 1) return
      let bucket = buckets.get(tenant)
      if (!bucket) {
        if (buckets.size >= SWEEP_ABOVE) sweep(now)
        buckets.set(tenant, (bucket = { balance: options.burstMs, at: now }))
      }
      refill(bucket, now)
      bucket.balance = Math.max(-options.burstMs, bucket.balance - ms)
    },
  }
}
