// Which parked long polls a push wakes (src/pop-waker.ts, docs/long-poll.md): as many of each
// consumer group's queue-wide pops as the push brought messages, so one message no longer makes
// every consumer of a group check and find nothing. Each group still gets every message. A waker
// wrapper records how every wait ended; nothing here asserts on time.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { testApp, type TestApp } from '../helpers/app.js'
import { push } from '../helpers/engine.js'
import { parkedOn, recordingWaker, waitedFor } from '../helpers/recording-waker.js'

let app: TestApp
let recorded: ReturnType<typeof recordingWaker>
beforeAll(async () => {
  recorded = recordingWaker()
  app = await testApp({ deps: { popWaker: recorded.waker } })
})
afterAll(async () => {
  await app.close()
})

/** A long poll of `group` on `queue` that the test can end. */
function parkPop(queue: string, group: string) {
  const abort = new AbortController()
  const answer = app
    .request(`/api/v1/pop/queue/${queue}?consumerGroup=${group}&wait=true&timeout=20000&batch=10`, { signal: abort.signal })
    .then(async (res) => ({ status: res.status, data: res.status === 200 ? ((await res.json()) as { messages: { data: unknown }[] }).messages.map((m) => m.data) : [] }))
  return { abort, answer }
}

describe('a push wakes parked long polls', () => {
  it("wakes as many of a group's parked pops as it brought messages, and each group its own", async () => {
    const from = recorded.waits.length
    const queue = 'wake-count'
    const pops = [parkPop(queue, 'g'), parkPop(queue, 'g'), parkPop(queue, 'g'), parkPop(queue, 'h')]
    // All four parked at once (a parked pop re-checks now and then, and parks again).
    const parked = (group: string) => recorded.waits.slice(from).filter((w) => parkedOn(queue)(w) && w.group === group && w.outcome === undefined).length
    await waitedFor(recorded.waits, from, () => parked('g') === 3 && parked('h') === 1)

    await push(app, [{ queue, payload: 'one' }])
    expect(await pops[3]!.answer).toEqual({ status: 200, data: ['one'] })
    // One of g's three answers the message; the others are still parked.
    const g = await Promise.race(pops.slice(0, 3).map((p) => p.answer))
    expect(g).toEqual({ status: 200, data: ['one'] })
    const woken = (group: string) => recorded.waits.slice(from).filter((w) => parkedOn(queue)(w) && w.group === group && w.outcome === 'woken').length
    expect(woken('g')).toBe(1)
    expect(woken('h')).toBe(1)

    for (const p of pops) p.abort.abort()
    const answers = await Promise.all(pops.map((p) => p.answer))
    expect(answers.filter((a) => a.status === 200)).toHaveLength(2)
  })
})
