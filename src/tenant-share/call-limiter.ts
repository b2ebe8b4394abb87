// Each tenant's share of the database connections (docs/security.md). The pool is shared by every
// tenant, so a tenant flooding pushes, acks or polls could hold all of it and make everyone else wait
// (or time out as 503). With tenancy on, at most `concurrency` calls of one tenant are in flight per
// process or isolate; the rest wait in line, first come first served, behind that tenant's own
// calls, never behind another tenant's. A line longer than `queue` refuses the call with 429 and
// Retry-After, so a flood costs its sender retries rather than the broker memory.
//
// Two counts, because push and ack fusion sits between requests and calls: `admit` holds a tenant's
// requests waiting on the database to `concurrency + queue` (what a line of single calls held
// before), and `run` holds the calls that reach the pool, fused or not, to `concurrency`. Limiting
// the fused calls rather than the requests lets one call carry many of a tenant's small pushes,
// instead of queueing them one by one where nothing can join them.
//
// A share while others are busy (`shared`): while another tenant has called within the last
// `activeMs`, a tenant runs at most `shared` calls at once, and its full `concurrency` only while
// it is alone. On a small machine the calls a flooding tenant keeps running are what a steady
// tenant's call competes with for the database's CPU (BENCHMARKS.md, "Tenant share"), so its
// share shrinks while someone else is being served and grows back once it is the only one.
//
// A heavy tenant's share (`heavy`): while another tenant is active, a tenant whose calls took more
// than `heavyShare` of the database time lately (database-time.ts) runs at most `heavy` calls at
// once. One call at a time for every tenant would serialise several steady tenants' work (the
// multitenant cell), so only the one taking most of the database is held to it. And its calls keep
// a duty cycle (`heavyDuty`): after a call that took d, its next waits d × (1 − duty) / duty (at
// most `activeMs`), so it holds the database (and, through the pace of its answers, the broker and
// its own client) at most that part of the time. One call in flight alone still kept a core busy
// with it on a small machine, fused pushes answered as fast as its client could send
// (BENCHMARKS.md, "Tenant share").
import { HttpError } from '../errors.js'
import { createDatabaseTime } from './database-time.js'

export interface TenantCallLimiter {
  /** Runs `call` within `tenant`'s share: at once when a slot is free, else after that tenant's earlier calls. */
  run<T>(tenant: string, call: () => Promise<T>): Promise<T>
  /**
   * Takes one of `tenant`'s request places (`concurrency + queue`) for the database work of one
   * request, or refuses with 429 tenant_busy when all are taken; the returned function gives it back.
   */
  admit(tenant: string): () => void
  /** Whether `tenant` is held to its heavy share now: another tenant is active and it takes most of the database time. */
  heavy(tenant: string): boolean
  /** Calls of `tenant` in flight and waiting, for tests and metrics. */
  load(tenant: string): { inFlight: number; waiting: number }
}

export interface LimiterOptions {
  /** Calls of one tenant in flight at once; 0 turns the limiter off. */
  concurrency: number
  /** Calls of one tenant that may wait for a slot; one more is refused with 429. */
  queue: number
  /** Calls of one tenant in flight at once while another tenant is active (at most `concurrency`; default: `concurrency`). */
  shared?: number
  /** How long after its last call a tenant counts as active, in ms (default 1000). */
  activeMs?: number
  /** Calls in flight at once of a tenant taking more than `heavyShare` of the database time while another is active (at most `shared`; default: `shared`). */
  heavy?: number
  /** The part of the database time (0 to 1) past which a tenant counts as heavy (default 0.6). */
  heavyShare?: number
  /** The part of the time (0 to 1] a heavy tenant's calls may run; each waits out its predecessor's pause (default 1: no pause). */
  heavyDuty?: number
}

interface Line {
  inFlight: number
  waiting: (() => void)[]
  /** While heavy, no call of the tenant starts before this (performance.now() ms). */
  pausedUntil: number
}

export const tenantBusy = () =>
  new HttpError(429, 'tenant_busy', "Too many concurrent requests for this tenant; retry shortly", {}, { 'Retry-After': '1' })

export function createTenantCallLimiter(options: LimiterOptions): TenantCallLimiter {
  const lines = new Map<string, Line>()
  const admitted = new Map<string, number>()
  const places = options.concurrency + options.queue
  const shared = Math.max(1, Math.min(options.shared ?? options.concurrency, options.concurrency))
  const activeMs = options.activeMs ?? 1000
  const heavy = Math.max(1, Math.min(options.heavy ?? shared, shared))
  const heavyShare = options.heavyShare ?? 0.6
  const heavyDuty = Math.min(1, Math.max(0.001, options.heavyDuty ?? 1))
  const databaseTime = createDatabaseTime(activeMs)
  // The two tenants that called last, always two different ones: whether anyone but `tenant` was
  // active lately is then a constant-time question, however many tenants there are.
  let last = { tenant: '', at: -Infinity }
  let before = { tenant: '', at: -Infinity }
  const seen = (tenant: string, now: number) => {
    if (last.tenant === tenant) last.at = now
    else {
      before = last
      last = { tenant, at: now }
    }
  }
  const othersActive = (tenant: string, now: number) =>
    (last.tenant !== tenant && now - last.at < activeMs) || (before.tenant !== tenant && now - before.at < activeMs)
  const isHeavy = (tenant: string, now: number) =>
    heavy < shared && othersActive(tenant, now) && databaseTime.share(tenant, now) > heavyShare
  const cap = (tenant: string) => {
    if (heavy === options.concurrency) return options.concurrency
    const now = performance.now()
    if (!othersActive(tenant, now)) return options.concurrency
    return isHeavy(tenant, now) ? heavy : shared
  }

  /** Alone again, a tenant's share grows back: start what waits, first come first served, up to it. */
  const refill = (tenant: string, line: Line) => {
    while (line.waiting.length > 0 && line.inFlight < cap(tenant)) {
      line.inFlight++
      line.waiting.shift()!()
    }
  }

  const release = (tenant: string, line: Line) => {
    // The slot passes straight to the next in line (inFlight stays as it is) unless the tenant is
    // above its share while another tenant is active; then it is given back.
    if (line.waiting.length > 0 && line.inFlight <= cap(tenant)) return line.waiting.shift()!()
    line.inFlight--
    refill(tenant, line)
    // A line still owed a pause stays, or the tenant's next call would start a fresh one without it.
    if (line.inFlight === 0 && line.pausedUntil <= performance.now()) lines.delete(tenant)
  }

  /** A heavy tenant's call starts only once its predecessor's pause is over. */
  const waitOutPause = async (tenant: string, line: Line) => {
    const pause = line.pausedUntil - performance.now()
    if (pause > 0 && isHeavy(tenant, performance.now())) await new Promise((resolve) => setTimeout(resolve, pause))
  }

  /** A call that started at `started` has ended: its time counts to the tenant's, and a heavy tenant owes a pause. */
  const account = (tenant: string, line: Line, started: number) => {
    const now = performance.now()
    databaseTime.add(tenant, now - started, now)
    if (heavyDuty === 1 || !isHeavy(tenant, now)) return
    // At most one activity window: a long call (a big batch, a slow disk) must not park the tenant's
    // next request longer than its heavy status itself is judged over.
    const pause = Math.min(((now - started) * (1 - heavyDuty)) / heavyDuty, activeMs)
    line.pausedUntil = Math.max(line.pausedUntil, now + pause)
  }

  return {
    async run(tenant, call) {
      if (options.concurrency <= 0) return call()
      seen(tenant, performance.now())
      let line = lines.get(tenant)
      if (!line) lines.set(tenant, (line = { inFlight: 0, waiting: [], pausedUntil: 0 }))
      refill(tenant, line)
      if (line.inFlight < cap(tenant) && line.waiting.length === 0) line.inFlight++
      else {
        if (line.waiting.length >= options.queue) throw tenantBusy()
        await new Promise<void>((resolve) => line!.waiting.push(resolve))
      }
      let started = performance.now()
      try {
        await waitOutPause(tenant, line)
        started = performance.now()
        return await call()
      } finally {
        account(tenant, line, started)
        release(tenant, line)
      }
    },
    admit(tenant) {
      if (options.concurrency <= 0) return () => {}
      const held = admitted.get(tenant) ?? 0
      if (held >= places) throw tenantBusy()
      admitted.set(tenant, held + 1)
      let given = false
      return () => {
        if (given) return
        given = true
        const left = admitted.get(tenant)! - 1
        if (left === 0) admitted.delete(tenant)
        else admitted.set(tenant, left)
      }
    },
    heavy(tenant) {
      return options.concurrency > 0 && isHeavy(tenant, performance.now())
    },
    load(tenant) {
      const line = lines.get(tenant)
      return { inFlight: line?.inFlight ?? 0, waiting: line?.waiting.length ?? 0 }
    },
  }
}
