// Two tenants, same queue names (issue #8 item 4, API §4): tenant B sees nothing of tenant A on
// any route family, pops nothing of it, cannot ack, extend, configure or delete A's things, and
// its sweeps and fetches never name A's partitions. A's state is read back after every attempt.
// Consumer groups and status have their own two-tenant tests (consumer-groups-tenancy.test.ts,
// status.test.ts); broker-wide routes are refused to tenant-bound tokens.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { testApp, type TestApp } from '../helpers/app.js'
import { writtenRows } from '../helpers/engine.js'
import { pointerPath, putPointerValue } from '../helpers/sink.js'
import { pointerKey } from '../../src/sink/source.js'

const A = { 'x-tenant': 'acme' }
const B = { 'x-tenant': 'globex' }

let app: TestApp
let aMessage: { transactionId: string; partitionId: string; leaseId: string }
beforeAll(async () => {
  app = await testApp({ env: { QUEEN_TENANCY_HEADER: 'X-Tenant' } })
  await app.json('POST', '/api/v1/configure', { queue: 'shared', leaseTime: 120, retryLimit: 0 }, A)
  await app.json('POST', '/api/v1/push', { items: [0, 1, 2].map((i) => ({ queue: 'shared', partition: 'a-secret', payload: { a: i }, transactionId: `a-${i}` })) }, A)
  const popped = await app.json('GET', '/api/v1/pop/queue/shared?batch=1', undefined, A)
  const m = popped.body.messages[0]
  aMessage = { transactionId: m.transactionId, partitionId: m.partitionId, leaseId: m.leaseId }
  // One dead-lettered message for A, so the DLQ has something to leak.
  await app.json('POST', '/api/v1/ack/batch', { acknowledgments: [{ ...aMessage, status: 'failed', error: 'a-only' }] }, A)
  const again = await app.json('GET', '/api/v1/pop/queue/shared?batch=1', undefined, A)
  aMessage = { transactionId: again.body.messages[0].transactionId, partitionId: again.body.messages[0].partitionId, leaseId: again.body.messages[0].leaseId }
})
afterAll(() => app.close())

const aState = async () =>
  app.database.sql(`
    select q.lease_time, q.retry_limit, p.name, p.last_offset, c.committed_offset, c.lease_id, c.lease_expires_at
      from queen.queues q join queen.log_partitions p on p.queue_id = q.id left join queen.log_consumers c on c.partition_id = p.id
     where q.tenant_id = 'acme' order by p.name`)

describe('two tenants', () => {
  it('own same-named queues independently: B pushes and pops only its own', async () => {
    const pushed = await app.json('POST', '/api/v1/push', { items: [{ queue: 'shared', partition: 'b-own', payload: { b: 0 } }] }, B)
    expect(pushed.body[0]).toMatchObject({ status: 'queued', offset: 0 })
    const popped = await app.json('GET', '/api/v1/pop/queue/shared?batch=10&partitions=10', undefined, B)
    expect(popped.body.messages.map((m: { data: unknown }) => m.data)).toEqual([{ b: 0 }])
    const direct = await app.json('GET', '/api/v1/pop/queue/shared/partition/a-secret', undefined, B)
    expect(direct.status).toBe(204)
    const configured = await app.json('POST', '/api/v1/configure', { queue: 'shared' }, B)
    expect(configured.body.options.leaseTime).toBe(300)
  })

  it("cannot ack, extend or transact on A's lease, and A's state does not move", async () => {
    const before = await aState()
    const acked = await app.json('POST', '/api/v1/ack/batch', { acknowledgments: [{ ...aMessage, status: 'completed' }] }, B)
    expect(acked.status).toBe(200)
    expect(acked.body[0].success).toBe(false)
    const single = await app.json('POST', '/api/v1/ack', { ...aMessage, status: 'completed' }, B)
    expect(single.body[0].success).toBe(false)
    const extended = await app.json('POST', `/api/v1/lease/${aMessage.leaseId}/extend`, { seconds: 3600 }, B)
    expect(extended.body[0]).toMatchObject({ success: false, code: 'lease_not_found' })
    const txn = await app.json('POST', '/api/v1/transaction', {
      operations: [{ type: 'ack', transactionId: aMessage.transactionId, partitionId: aMessage.partitionId, status: 'completed' }],
      requiredLeases: [aMessage.leaseId],
    }, B)
    expect(txn.status).toBe(200)
    expect(txn.body.success).toBe(false)
    expect(await aState()).toEqual(before)
  })

  it("never lists, fetches or shows A's partitions, messages or dead letters", async () => {
    const changed = await app.json('POST', '/api/v1/partitions/changed', { entries: [{ queue: 'shared' }, { queue: 'shared', since: '2000-01-01T00:00:00Z' }] }, B)
    for (const e of changed.body.entries) expect(e.partitions.map((p: { name: string }) => p.name)).not.toContain('a-secret')
    const fetched = await app.json('POST', '/api/v1/fetch', { entries: [{ queue: 'shared', partition: 'a-secret', fromOffset: 0 }] }, B)
    expect(fetched.body.entries[0]).toMatchObject({ error: 'PARTITION_NOT_FOUND' })
    const listed = await app.json('GET', '/api/v1/messages?queue=shared', undefined, B)
    expect(listed.body.messages.map((m: { partition: string }) => m.partition)).not.toContain('a-secret')
    const detail = await app.json('GET', `/api/v1/messages/${aMessage.partitionId}/${aMessage.transactionId}`, undefined, B)
    expect(detail.status).toBe(404)
    const dlq = await app.json('GET', '/api/v1/dlq', undefined, B)
    expect(dlq.body.total).toBe(0)
    // A sees its own, so the checks above are not vacuous.
    expect((await app.json('GET', '/api/v1/dlq', undefined, A)).body.total).toBe(1)
    expect((await app.json('GET', `/api/v1/messages/${aMessage.partitionId}/${aMessage.transactionId}`, undefined, A)).status).toBe(200)
  })

  it("sees only its own queue in the resource routes and stats, and its delete leaves A's queue", async () => {
    await app.json('POST', '/api/v1/stats/refresh', undefined, B)
    const aQueue = (await app.database.sql<{ id: string }>(`select id from queen.queues where tenant_id = 'acme' and name = 'shared'`))[0]!.id
    const list = await app.json('GET', '/api/v1/resources/queues', undefined, B)
    expect(list.body.queues.map((q: { id: string }) => q.id)).not.toContain(aQueue)
    const detail = await app.json('GET', '/api/v1/resources/queues/shared', undefined, B)
    expect(detail.body.partitions.map((p: { name: string }) => p.name)).not.toContain('a-secret')
    const depth = await app.json('GET', '/api/v1/resources/queues/shared/depth', undefined, B)
    expect(depth.body.partitions.map((p: { partition: string }) => p.partition)).not.toContain('a-secret')
    expect((await app.json('GET', '/api/v1/resources/overview', undefined, B)).body.queues).toBe(1)
    const before = await aState()
    expect((await app.json('DELETE', '/api/v1/resources/queues/shared', undefined, B)).body).toMatchObject({ deleted: true })
    expect(await aState()).toEqual(before)
    expect((await app.json('GET', '/api/v1/resources/queues/shared', undefined, A)).status).toBe(200)
  })

  it("cannot trace A's messages or read A's traces", async () => {
    const created = await app.json('POST', '/api/v1/traces', { ...aMessage, data: { step: 'a' }, traceNames: ['a-flow'] }, A)
    expect(created.status).toBe(201)
    const theirs = await app.json('POST', '/api/v1/traces', { ...aMessage, data: { step: 'b' } }, B)
    expect(theirs.status).toBe(404)
    expect((await app.json('GET', `/api/v1/traces/${aMessage.partitionId}/${aMessage.transactionId}`, undefined, B)).body.traces).toEqual([])
    expect((await app.json('GET', '/api/v1/traces/by-name/a-flow', undefined, B)).body.traces).toEqual([])
    expect((await app.json('GET', '/api/v1/traces/names', undefined, B)).body.trace_names).toEqual([])
    expect((await app.json('GET', '/api/v1/traces/by-name/a-flow', undefined, A)).body.traces).toHaveLength(1)
  })

  it("cannot read, overwrite or delete A's kv entries, such as a sink's committed pointer", async () => {
    // The pointer is the broker's to write (namespace queen.sink); a client may only read its own tenant's.
    await putPointerValue(app, pointerKey('lake', 'shared'), { windowEnd: '2026-01-01T00:00:00Z' }, 'acme')
    const path = pointerPath('lake', 'shared')
    expect((await app.json('GET', path, undefined, B)).body).toMatchObject({ found: false })
    expect((await app.json('PUT', path, { value: { windowEnd: '2030-01-01T00:00:00Z' }, forever: true }, B)).status).toBe(400)
    expect((await app.json('DELETE', path, undefined, B)).status).toBe(400)
    const mine = await app.json('GET', path, undefined, A)
    expect(mine.body).toMatchObject({ found: true, value: { windowEnd: '2026-01-01T00:00:00Z' } })
    // The same key in an ordinary namespace is two values, one per tenant.
    await app.json('PUT', '/api/v1/kv/notes/k', { value: 'acme', forever: true }, A)
    expect((await app.json('GET', '/api/v1/kv/notes/k', undefined, B)).body).toMatchObject({ found: false })
    await app.json('PUT', '/api/v1/kv/notes/k', { value: 'globex', forever: true }, B)
    await app.json('DELETE', '/api/v1/kv/notes/k', undefined, B)
    expect((await app.json('GET', '/api/v1/kv/notes/k', undefined, A)).body).toMatchObject({ found: true, value: 'acme' })
  })

  it("cannot delete A's messages", async () => {
    const before = await writtenRows(app)
    const res = await app.json('DELETE', `/api/v1/messages/${aMessage.partitionId}/${aMessage.transactionId}`, undefined, B)
    expect(res).toMatchObject({ status: 404, body: { success: false, code: 'message_not_found' } })
    expect(await writtenRows(app)).toEqual(before)
    expect(await app.database.sql('select * from queen.log_tombstones')).toEqual([])
  })

  it("names none of A's queues in its status and analytics once its own 'shared' is gone", async () => {
    // B deleted its own 'shared' above; A's queue of the same name must not show through.
    await app.json('POST', '/api/v1/stats/refresh', undefined, A)
    const names = (body: unknown) => JSON.stringify(body).includes('"shared"')
    for (const path of ['/api/v1/status/queues', '/api/v1/analytics/queue-lag', '/api/v1/analytics/retention', '/api/v1/analytics/queue-ops']) {
      const mine = await app.json('GET', path, undefined, A)
      const theirs = await app.json('GET', path, undefined, B)
      expect(theirs.status, path).toBe(200)
      expect(names(theirs.body), path).toBe(false)
      if (path !== '/api/v1/analytics/queue-ops') expect(names(mine.body), path).toBe(true)
    }
    expect((await app.json('GET', '/api/v1/status/queues/shared', undefined, B)).status).toBe(404)
  })
})
