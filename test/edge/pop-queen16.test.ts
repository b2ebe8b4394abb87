// Queen 1.6's pop wire in workerd: the scenarios of test/helpers/pop-queen16.ts against the real
// worker bundle (miniflare) over PostgreSQL through the WebSocket bridge, and a worker started with
// QUEEN_POP_AUTOPILOT=off. A Worker has no pop waker, so autopilot shares nothing with parked pops.
import { rmSync } from 'node:fs'
import { dirname } from 'node:path'
import { Miniflare } from 'miniflare'
import { afterAll, beforeAll, describe, it } from 'vitest'
import { startWsBridge, type WsBridge } from '../../scripts/ws-bridge.js'
import { freshDatabase, type TestDatabase } from '../helpers/database.js'
import { autopilotSwitchedOff, scenarios, type Send } from '../helpers/pop-queen16.js'
import { buildWorker, type WorkerBundle } from './build-worker.js'

let bundle: WorkerBundle
let database: TestDatabase
let bridge: WsBridge
const workers: Miniflare[] = []

async function worker(bindings: Record<string, string> = {}): Promise<Send> {
  const mf = new Miniflare({
    modules: true,
    scriptPath: bundle.scriptPath,
    modulesRoot: dirname(bundle.scriptPath),
    compatibilityDate: bundle.compatibilityDate,
    compatibilityFlags: bundle.compatibilityFlags,
    bindings: { LOG_LEVEL: 'warn', DATABASE_URL: database.url, NEON_WS_PROXY: bridge.url, ...bindings },
  })
  await mf.ready
  workers.push(mf)
  return async (method, path, body) => {
    const res = await mf.dispatchFetch(`http://edge.test${path}`, {
      method,
      headers: body === undefined ? {} : { 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    })
    const text = await res.text()
    return { status: res.status, body: text === '' ? null : JSON.parse(text) }
  }
}

let send: Send
beforeAll(async () => {
  bundle = buildWorker()
  ;[database, bridge] = await Promise.all([freshDatabase(), startWsBridge()])
  send = await worker()
}, 120_000)

afterAll(async () => {
  await Promise.all(workers.map((mf) => mf.dispose()))
  await bridge?.close()
  await database?.drop()
  if (bundle) rmSync(bundle.outdir, { recursive: true, force: true })
})

describe("Queen 1.6's pop wire in workerd", () => {
  it.each(Object.entries(scenarios))('%s', async (name, scenario) => {
    await scenario(send, `q16-${name}`)
  }, 120_000)

  it('QUEEN_POP_AUTOPILOT=off answers autopilot=true with the defaults and no echo', async () => {
    await autopilotSwitchedOff(await worker({ QUEEN_POP_AUTOPILOT: 'off' }), 'q16-autopilot-off')
  }, 60_000)
})
