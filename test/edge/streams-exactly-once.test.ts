// Streams exactly once at any call latency (issue #34), against the real worker bundle in workerd
// (miniflare) over PostgreSQL through the WebSocket bridge: the seeded runs of
// test/chaos/streams-exactly-once.test.ts (test/helpers/stream-scenario.ts: tumbling, sliding and
// session windows, two competing runners, cycles held past a one-second lease) with every call taking
// 0, 20 or 50 ms plus jitter. Each run's sink and state must equal the offline fold of its source.
// No broker kills here: a Worker has no process to kill (each request is its own).
import { afterAll, beforeAll, expect, it } from 'vitest'
import type { Send } from '../helpers/stream-protocol.js'
import { runScenario, variantOf } from '../helpers/stream-scenario.js'
import { startEdgeStack, type EdgeStack, type EdgeWorker } from './edge-stack.js'

const RUNS = Number(process.env.QUEEN_STREAMS_RUNS ?? 3)
let stack: EdgeStack
let worker: EdgeWorker
beforeAll(async () => {
  stack = await startEdgeStack()
  worker = await stack.worker()
}, 120_000)
afterAll(() => stack?.close())

/** JSON over the worker's fetch; 5xx and network errors retried as the SDK's HTTP client does. */
const send: Send = async (method, path, body) => {
  for (let attempt = 0; ; attempt++) {
    try {
      const res = await worker.call(method, path, body)
      if (res.status < 500 || attempt >= 3) return { status: res.status, body: res.body }
    } catch (error) {
      if (attempt >= 3) throw error
    }
    await new Promise((r) => setTimeout(r, 100 * 2 ** attempt))
  }
}

for (const [step, latency] of [0, 20, 50].entries()) {
  it(`every event counts once in state and sink through the worker: ${RUNS} seeded runs at ${latency} ms per call with jitter and lease expiries`, { timeout: 240_000 }, async () => {
    // Two runs at a time: every request of a Worker opens its own database connection.
    const results: (Awaited<ReturnType<typeof runScenario>> & { label: string })[] = []
    for (let i = 0; i < RUNS; i += 2) {
      results.push(
        ...(await Promise.all(
          [i, i + 1].filter((j) => j < RUNS).map(async (j) => {
            const seed = 7000 + latency * 1000 + j
            // Over the three latencies, every window kind with one runner and with two.
            const { label, ...variant } = variantOf(j + RUNS * step, 0)
            const r = await runScenario({ send, name: `we${latency}.${j}`, seed, ...variant, events: 24, latencyMs: latency, jitterMs: latency / 2 })
            return { ...r, label: `seed ${seed} ${label}` }
          }),
        )),
      )
    }
    expect(results.filter((r) => r.failures.length > 0).map((r) => `${r.label}: ${r.failures.slice(0, 4).join('; ')}`)).toEqual([])
    const total = (k: keyof (typeof results)[number]['stats']) => results.reduce((a, r) => a + r.stats[k], 0)
    expect(total('cycles')).toBeGreaterThan(RUNS)
    expect(total('flushes')).toBeGreaterThan(0)
  })
}
