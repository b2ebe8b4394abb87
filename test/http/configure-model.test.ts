// Model-based check of the four merge rules (ENGINE 10.2): random sequences of configure calls
// (merge or replace, options at the top level or nested, nulls, top-level namespace/task in every
// form) against a small reference model. After each call the echo and the stored row must match
// the model. FC_RUNS raises the number of runs (default 25).
import fc from 'fast-check'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { QUEUE_OPTIONS, QUEUE_OPTION_KEYS, type QueueOptionKey } from '../../src/queue-options.js'
import { testApp, type TestApp } from '../helpers/app.js'

type Options = Record<QueueOptionKey, unknown>

const derive = (name: string, at: 0 | 1) => (name.includes('.') ? name.split('.')[at]! : '')
function defaults(name: string): Options {
  return {
    namespace: derive(name, 0), task: derive(name, 1), priority: 0, leaseTime: 300, retryLimit: 3, retryDelay: 1000,
    maxSize: 0, ttl: 3600, deadLetterQueue: true, dlqAfterMaxRetries: true, delayedProcessing: 0, windowBuffer: 0,
    retentionSeconds: 0, completedRetentionSeconds: 0, retentionEnabled: false, encryptionEnabled: false,
    maxWaitTimeSeconds: 0, minPopWaitTime: 0, dedupWindowSeconds: 3600, retentionSinkHold: '', retentionSinkHoldMaxSeconds: 604800,
  }
}

/** The reference: one option at a time, the four rules, then the two clamps. */
function model(stored: Options | undefined, name: string, bag: Record<string, unknown>, replace: boolean): Options {
  const fresh = replace || stored === undefined
  const base = defaults(name)
  const next = {} as Options
  for (const key of QUEUE_OPTION_KEYS) {
    next[key] = !(key in bag) ? (fresh ? base[key] : stored![key]) : bag[key] === null ? base[key] : bag[key]
  }
  next.minPopWaitTime = Math.min(Math.max(next.minPopWaitTime as number, 0), 30000)
  next.dedupWindowSeconds = Math.max(next.dedupWindowSeconds as number, 0)
  return next
}

const valueOf = (key: QueueOptionKey): fc.Arbitrary<unknown> => {
  if (key === 'retentionSinkHold') return fc.constantFrom('', 'lake', 'a.b-c_d')
  if (key === 'retentionSinkHoldMaxSeconds') return fc.integer({ min: 60, max: 31536000 })
  const kind = QUEUE_OPTIONS[key]
  if (kind === 'bool') return fc.boolean()
  if (kind === 'text') return fc.constantFrom('', 'p', 'q')
  return fc.constantFrom(-5, 0, 1, 60, 30001, 99999)
}
const optionValue = (key: QueueOptionKey) => fc.oneof({ weight: 4, arbitrary: valueOf(key) }, { weight: 1, arbitrary: fc.constant(null) })
const bagArb = fc.record(Object.fromEntries(QUEUE_OPTION_KEYS.map((k) => [k, optionValue(k)])) as Record<QueueOptionKey, fc.Arbitrary<unknown>>, { requiredKeys: [] })
const topLevel = fc.option(fc.constantFrom('', null, 7, 'top'), { nil: undefined })

const callArb = fc.record({
  name: fc.constantFrom('plain', 'dotted.name'),
  mode: fc.constantFrom(undefined, 'merge', 'replace'),
  nested: bagArb,
  top: bagArb,
  namespace: topLevel,
  task: topLevel,
})

let app: TestApp
beforeAll(async () => {
  app = await testApp()
})
afterAll(() => app.close())

describe('configure against a reference model', () => {
  it('applies the four merge rules to every option in any sequence of calls', async () => {
    let run = 0
    await fc.assert(
      fc.asyncProperty(fc.array(callArb, { minLength: 1, maxLength: 6 }), async (calls) => {
        run += 1
        const state = new Map<string, Options>()
        for (const call of calls) {
          const queue = `${call.name}-${run}`
          const { namespace: _n, task: _t, ...top } = call.top
          const body: Record<string, unknown> = { queue, ...top, options: call.nested }
          if (call.mode !== undefined) body.mode = call.mode
          if (call.namespace !== undefined) body.namespace = call.namespace
          if (call.task !== undefined) body.task = call.task
          // What the route's normalisation must produce (ENGINE 10.1).
          const bag: Record<string, unknown> = { ...top, ...call.nested }
          for (const key of ['namespace', 'task'] as const) {
            if (typeof call[key] === 'string' && call[key] !== '') bag[key] = call[key]
          }
          const want = model(state.get(queue), queue, bag, call.mode === 'replace')
          state.set(queue, want)

          const res = await app.json('POST', '/api/v1/configure', body)
          expect(res.status).toBe(200)
          const { namespace, task, ...echo } = want
          expect(res.body).toMatchObject({ queue, namespace, task })
          expect(res.body.options).toEqual(echo)
        }
      }),
      { numRuns: Number(process.env.FC_RUNS ?? 25) },
    )
  })
})
