// Queen 1.6's pop wire on Node: the scenarios of test/helpers/pop-queen16.ts against the app, and
// autopilot switched off or to shadow by QUEEN_POP_AUTOPILOT.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { testApp, type TestApp } from '../helpers/app.js'
import { createPopWaker } from '../../src/pop-waker.js'
import { autopilotSwitchedOff, scenarios, type Send } from '../helpers/pop-queen16.js'

let app: TestApp
beforeAll(async () => {
  app = await testApp()
})
afterAll(() => app.close())

const sendTo = (target: TestApp): Send => (method, path, body) => target.json(method, path, body)

describe("Queen 1.6's pop wire", () => {
  it.each(Object.entries(scenarios))('%s', async (name, scenario) => {
    await scenario(sendTo(app), `q16-${name}`)
  })

  it.each(['off', 'shadow'])('QUEEN_POP_AUTOPILOT=%s answers autopilot=true with the defaults and no echo', async (mode) => {
    const own = await testApp({ database: app.database, env: { QUEEN_POP_AUTOPILOT: mode } })
    try {
      await autopilotSwitchedOff(sendTo(own), `q16-autopilot-${mode}`)
    } finally {
      await own.close()
    }
  })

  it("asks the process's waker how many pops of the group are parked, and sizes the sweep by it", async () => {
    // A waker that reports three other pops of the group parked on the queue (real parked pops would
    // claim at their own re-checks and move the backlog under the assertion).
    const waker = createPopWaker()
    const asked: [string, string][] = []
    const own = await testApp({
      database: app.database,
      deps: { popWaker: { ...waker, parked: (key: string, group: string) => (asked.push([key, group]), group === 'crowd' ? 3 : 0) } },
    })
    try {
      const items = ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h'].flatMap((partition) => Array.from({ length: 10 }, (_, i) => ({ queue: 'q16-crowd', partition, payload: i })))
      expect((await own.json('POST', '/api/v1/push', { items })).status).toBe(201)
      const crowded = await own.json('GET', '/api/v1/pop/queue/q16-crowd?autopilot=true&consumerGroup=crowd&subscriptionMode=all')
      expect(crowded.body.autopilot).toEqual({ partitions: 2, batch: 20, waitMs: 0 })
      expect(crowded.body.messages).toHaveLength(20)
      expect(asked).toContainEqual(['|q16-crowd', 'crowd'])
      const alone = await own.json('GET', '/api/v1/pop/queue/q16-crowd?autopilot=true&consumerGroup=alone&subscriptionMode=all')
      expect(alone.body.autopilot).toEqual({ partitions: 8, batch: 80, waitMs: 0 })
    } finally {
      await own.close()
    }
  })

  it('shares the sweep among the pops of a group parked on this process', async () => {
    const request = { queue: 'q16-share', group: 'g', batch: 200, partitions: 1, autoAck: false, subscriptionMode: 'all', maxBytes: 1 << 20 } as const
    const items = ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h'].flatMap((partition) => Array.from({ length: 10 }, (_, i) => ({ queue: 'q16-share', partition, payload: i })))
    expect((await app.json('POST', '/api/v1/push', { items })).status).toBe(201)
    const alone = await app.db.call('log_pop_v1', { tenant: '', request: { ...request, autopilot: { batch: true, partitions: true, waiters: 0, apply: false } } })
    expect(alone.autopilot).toMatchObject({ partitions: 8, batch: 80, ready: 8, backlog: 80, applied: false })
    // Shadow: the choice is reported, the claim uses the defaults (one partition, batch 200).
    expect(alone.messages).toHaveLength(10)
    const shared = await app.db.call('log_pop_v1', { tenant: '', request: { ...request, autopilot: { batch: true, partitions: true, waiters: 3, apply: true } } })
    // Seven partitions left ready, shared by four pops: two each, and their average backlog.
    expect(shared.autopilot).toMatchObject({ partitions: 2, batch: 20, ready: 7, backlog: 70, applied: true })
    expect(shared.messages).toHaveLength(20)
    expect(shared.partitionsClaimed).toBe(2)
  })
})
