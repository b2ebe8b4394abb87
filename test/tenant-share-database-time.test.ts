// Each tenant's part of the database time (src/tenant-share/database-time.ts): the signal that holds
// a tenant flooding the database to its heavy share while leaving several steady tenants alone.
import { describe, expect, it } from 'vitest'
import { createDatabaseTime } from '../src/tenant-share/database-time.js'

describe('database time per tenant', () => {
  it("gives each tenant its part of the calls' time, over the current window and the one before", () => {
    const t0 = performance.now()
    const time = createDatabaseTime(1000)
    expect(time.share('a', t0)).toBe(0)
    time.add('a', 90, t0 + 100)
    time.add('b', 10, t0 + 200)
    expect(time.share('a', t0 + 300)).toBeCloseTo(0.9)
    expect(time.share('b', t0 + 300)).toBeCloseTo(0.1)
    // The next window still counts the one before, so a share never starts from nothing at its edge.
    time.add('b', 100, t0 + 1100)
    expect(time.share('a', t0 + 1200)).toBeCloseTo(90 / 200)
    expect(time.share('b', t0 + 1200)).toBeCloseTo(110 / 200)
    // Two windows on, the first is forgotten.
    expect(time.share('a', t0 + 2100)).toBe(0)
    expect(time.share('b', t0 + 2100)).toBe(1)
  })

  it('forgets everything after a whole window without a call', () => {
    const t0 = performance.now()
    const time = createDatabaseTime(1000)
    time.add('a', 500, t0 + 10)
    time.add('b', 5, t0 + 2500)
    expect(time.share('a', t0 + 2600)).toBe(0)
    expect(time.share('b', t0 + 2600)).toBe(1)
  })

  it('keeps four tenants taking a quarter each below any heavy mark', () => {
    const t0 = performance.now()
    const time = createDatabaseTime(1000)
    for (let i = 0; i < 100; i++) time.add(`t${i % 4}`, 3 + (i % 3), t0 + i * 5)
    for (const tenant of ['t0', 't1', 't2', 't3']) expect(time.share(tenant, t0 + 600)).toBeLessThan(0.3)
  })
})
