// Each tenant's share of the database connections (docs/security.md). The pool is shared by every
// tenant, so a tenant flooding pushes, acks or polls could hold all of it and make everyone else wait
// (or time out as 503). With tenancy on, at most `concurrency` calls of one tenant are in flight per
// process or isolate; the rest wait in line, first come first served, behind that tenant's own
// calls, never behind another tenant's. A line longer than `queue` refuses the call with 429 and
// Retry-After, so a flood costs its sender retries rather than the broker memory.
import { HttpError } from '../errors.js'

export interface TenantCallLimiter {
  /** Runs `call` within `tenant`'s share: at once when a slot is free, else after that tenant's earlier calls. */
  run<T>(tenant: string, call: () => Promise<T>): Promise<T>
  /** Calls of `tenant` in flight and waiting, for tests and metrics. */
  load(tenant: string): { inFlight: number; waiting: number }
}

export interface LimiterOptions {
  /** Calls of one tenant in flight at once; 0 turns the limiter off. */
  concurrency: number
  /** Calls of one tenant that may wait for a slot; one more is refused with 429. */
  queue: number
}

interface Line {
  inFlight: number
  waiting: (() => void)[]
}

export const tenantBusy = () =>
  new HttpError(429, 'tenant_busy', "Too many concurrent requests for this tenant; retry shortly", {}, { 'Retry-After': '1' })

export function createTenantCallLimiter(options: LimiterOptions): TenantCallLimiter {
  const lines = new Map<string, Line>()

  const release = (tenant: string, line: Line) => {
    const next = line.waiting.shift()
    // The slot passes straight to the next in line, so inFlight stays as it is.
    if (next) return next()
    line.inFlight--
    if (line.inFlight === 0) lines.delete(tenant)
  }

  return {
    async run(tenant, call) {
      if (options.concurrency <= 0) return call()
      let line = lines.get(tenant)
      if (!line) lines.set(tenant, (line = { inFlight: 0, waiting: [] }))
      if (line.inFlight < options.concurrency) line.inFlight++
      else {
        if (line.waiting.length >= options.queue) throw tenantBusy()
        await new Promise<void>((resolve) => line!.waiting.push(resolve))
      }
      try {
        return await call()
      } finally {
        release(tenant, line)
      }
    },
    load(tenant) {
      const line = lines.get(tenant)
      return { inFlight: line?.inFlight ?? 0, waiting: line?.waiting.length ?? 0 }
    },
  }
}
