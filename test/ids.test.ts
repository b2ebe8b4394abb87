import { describe, expect, it } from 'vitest'
import { isUuid, uuidv7 } from '../src/ids.js'

const V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/

describe('uuidv7', () => {
  it('puts the milliseconds first, then version 7 and the RFC 9562 variant', () => {
    expect(uuidv7(0x0123456789ab)).toMatch(/^01234567-89ab-7[0-9a-f]{3}-[89ab]/)
    expect(uuidv7(0)).toMatch(/^00000000-0000-7/)
    expect(uuidv7(2 ** 48 - 1)).toMatch(/^ffffffff-ffff-7/)
  })

  it('stays distinct and well-formed across many refills of its random pool', () => {
    // The random bytes come from a pool of 512 ids; 5 000 ids in one millisecond cross it often.
    const ids = Array.from({ length: 5000 }, () => uuidv7(1_700_000_000_000))
    expect(new Set(ids).size).toBe(ids.length)
    for (const id of ids) {
      expect(id).toMatch(V7)
      expect(isUuid(id)).toBe(true)
    }
    // Random bits, not a counter: every hex digit of the random tail occurs.
    expect(new Set(ids.map((id) => id.at(-1))).size).toBe(16)
  })
})
