// The front door under a hostile client (issue #37): every operation of /openapi.json, read at run
// time so routes added later are covered without a change here, gets requests that start from
// what its schemas accept and turn parts hostile (test/helpers/openapi-fuzz.ts). Seeded and
// reproducible: OPENAPI_FUZZ_SEED and OPENAPI_FUZZ_REQUESTS replay or resize a run, and a failure
// prints each offending request. Asserted for every answer: no 5xx but a 503 with Retry-After; the
// error envelope on every 4xx (405 with Allow); nothing stored by a refused request (a snapshot of
// every engine table, compared across each refusal that took a transaction id); the broker healthy after.
// Requests run one at a time so each refusal's snapshot pair brackets that request alone.
import fc from 'fast-check'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { testApp, type TestApp } from './helpers/app.js'
import { engineSnapshot, nextTransactionId, snapshotDiff } from './helpers/engine-snapshot.js'
import { operationsOf, requestArbitrary, type FuzzRequest } from './helpers/openapi-fuzz.js'

const REQUESTS = Number(process.env.OPENAPI_FUZZ_REQUESTS ?? 5_000)
const SEED = Number(process.env.OPENAPI_FUZZ_SEED ?? 20261206)
const TENANT_HEADER = 'x-queen-tenant'
const TENANT = 'fz'
const HANG_MS = 10_000
// Small limits so the caps are met often; no long-poll waiting, so a pop answers at once.
const ENV = {
  QUEEN_TENANCY_HEADER: TENANT_HEADER,
  MAX_BODY_BYTES: '262144',
  MAX_PUSH_ITEMS: '100',
  MAX_ACK_ITEMS: '100',
  MAX_POP_WAIT_MS: '0',
  POP_LINGER_MS: '0',
  POP_MAX_BYTES: '65536',
}

let app: TestApp
beforeAll(async () => {
  app = await testApp({ env: ENV })
})
afterAll(() => app.close())

interface Finding {
  request: FuzzRequest
  status: number
  text: string
  detail?: string
}

const show = (list: Finding[]) =>
  list
    .slice(0, 8)
    .map((f) => `${f.request.method} ${f.request.url.slice(0, 160)} [${f.request.operation}; ${f.request.notes.join('; ')}] -> ${f.status} ${f.text.slice(0, 160)}${f.detail ? ` (${f.detail})` : ''}`)
    .join('\n')

const tenantHeaders = { [TENANT_HEADER]: TENANT }

/** The broker-wide switches a fuzzed admin call may have turned on, turned off again so later requests still reach the engine. */
async function resetSwitches(): Promise<void> {
  for (const path of ['/api/v1/system/maintenance', '/api/v1/system/maintenance/pop']) {
    const res = await app.json('POST', path, { enabled: false }, tenantHeaders)
    if (res.status !== 200) throw new Error(`${path} answered ${res.status}: ${JSON.stringify(res.body)}`)
  }
}

it(`answers ${REQUESTS} hostile requests over every /openapi.json operation with no 5xx, envelopes on 4xx and no writes by refusals`, { timeout: 240_000 }, async () => {
  const document = await (await app.request('/openapi.json')).json()
  const operations = operationsOf(document)
  const methodsOf = (path: string) => Object.keys(document.paths[path] ?? {}).map((m) => m.toUpperCase())
  const options = { tenantHeader: TENANT_HEADER, tenant: TENANT, methodsOf }
  const requests = Array.from({ length: REQUESTS }, (_, i) => fc.sample(requestArbitrary(operations[i % operations.length]!, options), { numRuns: 1, seed: SEED + i })[0]!)

  const started = performance.now()
  const byStatus: Record<number, number> = {}
  const serverErrors: Finding[] = []
  const badEnvelopes: Finding[] = []
  const refusedWrites: Finding[] = []
  const hangs: FuzzRequest[] = []
  let fullSnapshots = 0
  let [before, beforeXid] = [await engineSnapshot(app.database), await nextTransactionId(app.database)]
  for (const request of requests) {
    const call = (async () => {
      const res = await app.request(request.url, { method: request.method, headers: request.headers, body: request.body as BodyInit | undefined })
      return { res, text: await res.text() }
    })()
    const answer = await Promise.race([call, new Promise<'hang'>((done) => setTimeout(() => done('hang'), HANG_MS).unref())])
    if (answer === 'hang') {
      hangs.push(request)
      continue
    }
    const { res, text } = answer
    byStatus[res.status] = (byStatus[res.status] ?? 0) + 1
    const finding = { request, status: res.status, text }
    if (res.status >= 500 && !(res.status === 503 && res.headers.get('retry-after'))) serverErrors.push(finding)
    if (res.status >= 400 && res.status < 500 && request.method !== 'HEAD') {
      let body: unknown
      try {
        body = JSON.parse(text)
      } catch {}
      const b = body as Record<string, unknown> | undefined
      if (!b || typeof b.error !== 'string' || typeof b.code !== 'string') badEnvelopes.push(finding)
      else if (res.status === 405 && !res.headers.get('allow')) badEnvelopes.push({ ...finding, detail: 'no Allow header' })
    }
    // No transaction id taken: nothing stored, and `before` still describes the database.
    const xid = await nextTransactionId(app.database)
    if (xid !== beforeXid) {
      fullSnapshots++
      const after = await engineSnapshot(app.database)
      if (res.status >= 400) {
        const diff = snapshotDiff(before, after)
        if (diff.length) refusedWrites.push({ ...finding, detail: diff.join(', ') })
      }
      ;[before, beforeXid] = [after, xid]
    }
    if (res.status < 300 && request.url.startsWith('/api/v1/system/')) {
      await resetSwitches()
      ;[before, beforeXid] = [await engineSnapshot(app.database), await nextTransactionId(app.database)]
    }
  }
  const seconds = (performance.now() - started) / 1000

  // Healthy after: liveness, and a message pushed, popped and acked on the fuzzed tenant.
  const health = await app.json('GET', '/health')
  const pushed = await app.json('POST', '/api/v1/push', { items: [{ queue: 'fz-after', payload: { ok: true } }] }, tenantHeaders)
  const popped = await app.json('GET', '/api/v1/pop/queue/fz-after', undefined, tenantHeaders)
  const message = popped.body?.messages?.[0]
  const acked = await app.json('POST', '/api/v1/ack', { transactionId: message?.transactionId, partitionId: message?.partitionId, leaseId: popped.body?.leaseId }, tenantHeaders)

  const perOperation = new Set(requests.map((r) => r.operation)).size
  console.log(
    `[openapi-fuzz] ${requests.length} requests over ${perOperation} of ${operations.length} operations (seed ${SEED}) in ${seconds.toFixed(1)} s; ` +
      `statuses ${JSON.stringify(byStatus)}; ${serverErrors.length} 5xx, ${badEnvelopes.length} bad envelopes, ${refusedWrites.length} refusals that wrote, ${hangs.length} hangs; ${fullSnapshots} full snapshots`,
  )
  expect(requests.length).toBeGreaterThanOrEqual(5_000)
  expect(perOperation).toBe(operations.length)
  expect(hangs.map((r) => `${r.method} ${r.url.slice(0, 200)}`)).toEqual([])
  expect(serverErrors.length, show(serverErrors)).toBe(0)
  expect(badEnvelopes.length, show(badEnvelopes)).toBe(0)
  expect(refusedWrites.length, show(refusedWrites)).toBe(0)
  // The run met the refusals it exists for, and some requests got through to the engine.
  for (const status of [400, 405, 413, 414]) expect(byStatus[status] ?? 0, `answers ${status}`).toBeGreaterThan(0)
  expect(Object.entries(byStatus).filter(([s]) => Number(s) < 300).reduce((n, [, c]) => n + c, 0)).toBeGreaterThan(REQUESTS / 20)
  expect(health.status).toBe(200)
  expect(pushed.status).toBe(201)
  expect(popped.status).toBe(200)
  expect(acked.status).toBe(200)
  expect(acked.body[0].success).toBe(true)
})
