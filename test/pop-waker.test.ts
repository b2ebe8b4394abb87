// The pop waker alone (src/pop-waker.ts): a push of n messages wakes at most n of each consumer
// group's parked queue-wide pops, the longest parked first; a wait without a group (a
// partition-scoped pop) and a push without counts wake every wait; a woken wait that will not check
// hands its wake-up to the next of its group; close() ends every wait.
import { describe, expect, it } from 'vitest'
import { createPopWaker, type WakeOutcome } from '../src/pop-waker.js'

/** Outcomes as they settle, so a test can read which waits have ended without waiting for the rest. */
function track(promises: Promise<WakeOutcome>[]) {
  const outcomes: (WakeOutcome | undefined)[] = promises.map(() => undefined)
  promises.forEach((p, i) => void p.then((o) => (outcomes[i] = o)))
  return outcomes
}
const settle = () => new Promise((r) => setImmediate(r))

describe('pop waker', () => {
  it('wakes at most as many of each group as the push brought messages, longest parked first, and every wait without a group', async () => {
    const waker = createPopWaker()
    const waits = [
      waker.wait(['t|q'], 60_000, undefined, 'g'),
      waker.wait(['t|q'], 60_000, undefined, 'g'),
      waker.wait(['t|q'], 60_000, undefined, 'g'),
      waker.wait(['t|q'], 60_000, undefined, 'h'),
      waker.wait(['t|q'], 60_000), // a partition-scoped pop
      waker.wait(['t|other'], 60_000, undefined, 'g'),
    ]
    const outcomes = track(waits)
    waker.notify(['t|q'], new Map([['t|q', 1]]))
    await settle()
    expect(outcomes).toEqual(['woken', undefined, undefined, 'woken', 'woken', undefined])
    waker.notify(['t|q'], new Map([['t|q', 5]]))
    await settle()
    expect(outcomes).toEqual(['woken', 'woken', 'woken', 'woken', 'woken', undefined])
    waker.close()
    await settle()
    expect(outcomes[5]).toBe('aborted')
  })

  it('wakes every wait of a key the push gave no count', async () => {
    const waker = createPopWaker()
    const outcomes = track([waker.wait(['t|q'], 60_000, undefined, 'g'), waker.wait(['t|q'], 60_000, undefined, 'g')])
    waker.notify(['t|q'])
    await settle()
    expect(outcomes).toEqual(['woken', 'woken'])
  })

  it('hands a wake-up on to one parked wait of the same group only', async () => {
    const waker = createPopWaker()
    const outcomes = track([
      waker.wait(['t|q'], 60_000, undefined, 'g'),
      waker.wait(['t|q'], 60_000, undefined, 'h'),
      waker.wait(['t|q'], 60_000, undefined, 'g'),
      waker.wait(['t|q'], 60_000, undefined, 'g'),
    ])
    waker.handOn(['t|q'], 'g')
    await settle()
    expect(outcomes).toEqual(['woken', undefined, undefined, undefined])
    waker.close()
    await settle()
    expect(outcomes).toEqual(['woken', 'aborted', 'aborted', 'aborted'])
  })
})
