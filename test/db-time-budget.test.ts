// A tenant's budget of database time while it is not alone (src/tenant-share/db-time-budget.ts),
// on an injected clock: the bucket fills at its fraction of wall time up to the burst, a call takes
// its duration out, and a tenant in debt waits until it is repaid, never longer than the bounded debt.
import { describe, expect, it } from 'vitest'
import { createDbTimeBudget } from '../src/tenant-share/db-time-budget.js'

describe('a tenant budget of database time', () => {
  it('lets a burst through free, then makes the excess wait at the fraction of wall time', () => {
    const budget = createDbTimeBudget({ fraction: 0.5, burstMs: 100 })
    expect(budget.delay('a', 0)).toBe(0)
    budget.charge('a', 100, 0)
    expect(budget.delay('a', 0)).toBe(0)
    budget.charge('a', 40, 0)
    // 40 ms in debt at half of wall time is 80 ms of waiting; half of it is repaid after 40 ms.
    expect(budget.delay('a', 0)).toBe(80)
    expect(budget.delay('a', 40)).toBe(40)
    expect(budget.delay('a', 80)).toBe(0)
    // Another tenant's bucket is its own.
    expect(budget.delay('b', 0)).toBe(0)
  })

  it('bounds the debt at the burst, so the longest wait is burst / fraction', () => {
    const budget = createDbTimeBudget({ fraction: 0.5, burstMs: 100 })
    budget.charge('a', 10_000, 0)
    expect(budget.delay('a', 0)).toBe(200)
  })

  it('fills up to the burst and no further, however long the tenant was quiet', () => {
    const budget = createDbTimeBudget({ fraction: 0.5, burstMs: 100 })
    budget.charge('a', 10, 0)
    budget.charge('a', 150, 1_000_000)
    expect(budget.delay('a', 1_000_000)).toBe(100)
  })

  it('never holds anyone at a fraction of 1', () => {
    const budget = createDbTimeBudget({ fraction: 1, burstMs: 100 })
    budget.charge('a', 10_000, 0)
    expect(budget.delay('a', 0)).toBe(0)
  })
})
