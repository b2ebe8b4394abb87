// Queen 1.6's pop wire in workerd: the scenarios of test/helpers/pop-queen16.ts against the real
// worker bundle (miniflare) over PostgreSQL through the WebSocket bridge, and a worker started with
// QUEEN_POP_AUTOPILOT=off. A Worker has no pop waker, so autopilot shares nothing with parked pops.
import { afterAll, beforeAll, describe, it } from 'vitest'
import { autopilotSwitchedOff, scenarios, type Send } from '../helpers/pop-queen16.js'
import { startEdgeStack, type EdgeStack } from './edge-stack.js'

let stack: EdgeStack
const worker = async (bindings: Record<string, string> = {}): Promise<Send> => (await stack.worker(bindings)).call
let send: Send
beforeAll(async () => {
  stack = await startEdgeStack()
  send = await worker()
}, 120_000)
afterAll(() => stack?.close())

describe("Queen 1.6's pop wire in workerd", () => {
  it.each(Object.entries(scenarios))('%s', async (name, scenario) => {
    await scenario(send, `q16-${name}`)
  }, 120_000)

  it('QUEEN_POP_AUTOPILOT=off answers autopilot=true with the defaults and no echo', async () => {
    await autopilotSwitchedOff(await worker({ QUEEN_POP_AUTOPILOT: 'off' }), 'q16-autopilot-off')
  }, 60_000)
})
