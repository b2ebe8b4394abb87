// Clearing a queue or one partition (SDK-SURFACE A1), the partition listing (A2) and the status
// detail without partitions, over messages that really went through push, pop and ack.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { testApp, type TestApp } from '../helpers/app.js'
import { ack, acksOf, pop, push, writtenRows } from '../helpers/engine.js'

let app: TestApp
// The same database with tenancy on: the default tenant ('') is invisible to tenant "acme".
let tenanted: TestApp
beforeAll(async () => {
  app = await testApp()
  tenanted = await testApp({ database: app.database, env: { QUEEN_TENANCY_HEADER: 'X-Queen-Tenant' } })
})
afterAll(async () => {
  await tenanted.close()
  await app.close()
})

const call = (method: string, path: string, body?: unknown) => app.json(method, path, body)
const pushTo = (queue: string, partition: string, n: number) => push(app, Array.from({ length: n }, (_, i) => ({ queue, partition, payload: { i } })))
const bounds = async (queue: string) =>
  app.database.sql<{ name: string; log_start: string; last_offset: string }>(
    `select p.name, p.log_start, p.last_offset from queen.log_partitions p join queen.queues q on q.id = p.queue_id
      where q.tenant_id = '' and q.name = $1 order by p.name`,
    [queue],
  )

describe('DELETE /api/v1/queues/:queue/clear', () => {
  it('removes every retained message by advancing each log start, and the next push continues the offsets', async () => {
    await pushTo('cl-all', 'a', 3)
    await pushTo('cl-all', 'b', 2)
    const res = await call('DELETE', '/api/v1/queues/cl-all/clear')
    expect(res.status).toBe(200)
    expect(res.body).toEqual({ cleared: true, count: 5, queue: 'cl-all', partition: 'all' })
    expect(await bounds('cl-all')).toEqual([
      { name: 'a', log_start: '3', last_offset: '2' },
      { name: 'b', log_start: '2', last_offset: '1' },
    ])
    expect((await pop(app, 'cl-all', { wait: false }, undefined)).status).toBe(204)
    const [next] = await pushTo('cl-all', 'a', 1)
    expect(next!.offset).toBe(3)
    const popped = await pop(app, 'cl-all', { wait: false }, 'a')
    expect(popped.messages.map((m) => m.offset)).toEqual([3])
  })

  it('clears one partition and leaves the others alone', async () => {
    await pushTo('cl-one', 'a', 2)
    await pushTo('cl-one', 'b', 2)
    const res = await call('DELETE', '/api/v1/queues/cl-one/clear?partition=a')
    expect(res.body).toEqual({ cleared: true, count: 2, queue: 'cl-one', partition: 'a' })
    const depth = await call('GET', '/api/v1/resources/queues/cl-one/depth')
    expect(depth.body.pending).toBe(2)
    expect(await bounds('cl-one')).toEqual([
      { name: 'a', log_start: '2', last_offset: '1' },
      { name: 'b', log_start: '0', last_offset: '1' },
    ])
  })

  it('keeps a consumer cursor valid: a group that read part of the log resumes after the clear', async () => {
    await pushTo('cl-cursor', 'p', 4)
    const first = await pop(app, 'cl-cursor', { batch: 2, wait: false })
    await ack(app, acksOf(first.messages), undefined)
    await call('DELETE', '/api/v1/queues/cl-cursor/clear')
    await pushTo('cl-cursor', 'p', 1)
    const again = await pop(app, 'cl-cursor', { wait: false })
    expect(again.messages.map((m) => m.offset)).toEqual([4])
  })

  it('answers 404 for an unknown queue or partition, and another tenant cannot clear or see the queue', async () => {
    await pushTo('cl-known', 'p', 1)
    const before = await writtenRows(app)
    expect(await call('DELETE', '/api/v1/queues/cl-nope/clear')).toMatchObject({ status: 404, body: { error: 'Queue not found', code: 'queue_not_found' } })
    expect(await call('DELETE', '/api/v1/queues/cl-known/clear?partition=zz')).toMatchObject({ status: 404, body: { error: 'Partition not found', code: 'partition_not_found' } })
    expect(await tenanted.json('DELETE', '/api/v1/queues/cl-known/clear', undefined, { 'x-queen-tenant': 'acme' })).toMatchObject({ status: 404, body: { code: 'queue_not_found' } })
    expect(await writtenRows(app)).toEqual(before)
    expect((await bounds('cl-known'))[0]).toMatchObject({ log_start: '0' })
  })

  it('needs the tenant header like every tenant-scoped route', async () => {
    const res = await tenanted.json('DELETE', '/api/v1/queues/cl-known/clear')
    expect(res).toMatchObject({ status: 400, body: { code: 'tenant_required' } })
  })
})

describe('GET /api/v1/resources/partitions', () => {
  it("lists the tenant's partitions with depth, processing and total, filtered by queue and minDepth, paged", async () => {
    await pushTo('pl-q', 'x', 3)
    await pushTo('pl-q', 'y', 1)
    await pop(app, 'pl-q', { batch: 2, wait: false }, 'x') // two of x's three frames leased
    await push(tenanted, [{ queue: 'pl-q', partition: 'z', payload: 1 }], { 'x-queen-tenant': 'acme' })

    const res = await call('GET', '/api/v1/resources/partitions?queue=pl-q')
    expect(res.status).toBe(200)
    expect(res.body.partitions).toEqual([
      { id: expect.any(String), name: 'x', queue: 'pl-q', namespace: '', task: '', queuePriority: 0, createdAt: expect.stringMatching(/Z$/), depth: 3, processing: 2, total: 3 },
      { id: expect.any(String), name: 'y', queue: 'pl-q', namespace: '', task: '', queuePriority: 0, createdAt: expect.stringMatching(/Z$/), depth: 1, processing: 0, total: 1 },
    ])
    expect(res.body.pagination).toEqual({ limit: 100, offset: 0, total: 2 })
    expect((await call('GET', '/api/v1/resources/partitions?queue=pl-q&minDepth=2')).body.partitions.map((p: { name: string }) => p.name)).toEqual(['x'])
    const page = await call('GET', '/api/v1/resources/partitions?queue=pl-q&limit=1&offset=1')
    expect(page.body).toMatchObject({ partitions: [{ name: 'y' }], pagination: { limit: 1, offset: 1, total: 2 } })
    expect((await call('GET', '/api/v1/resources/partitions?queue=pl-unknown')).body).toEqual({ partitions: [], pagination: { limit: 100, offset: 0, total: 0 } })
    const acme = await tenanted.json('GET', '/api/v1/resources/partitions?queue=pl-q', undefined, { 'x-queen-tenant': 'acme' })
    expect(acme.body.partitions.map((p: { name: string }) => p.name)).toEqual(['z'])
  })

  it('refuses a bad minDepth or limit with 400 naming the field', async () => {
    for (const q of ['minDepth=-1', 'minDepth=abc', 'limit=x']) {
      const res = await call('GET', `/api/v1/resources/partitions?${q}`)
      expect(res.status, q).toBe(400)
      expect(res.body.code, q).toBe('invalid_request')
      expect(res.body.error, q).toContain(q.split('=')[0])
    }
  })
})

describe('GET /api/v1/status/queues/:queue?includePartitions=', () => {
  it('leaves partitions out when false and keeps the same totals', async () => {
    await pushTo('st-inc', 'p', 2)
    const full = await call('GET', '/api/v1/status/queues/st-inc')
    const lean = await call('GET', '/api/v1/status/queues/st-inc?includePartitions=false')
    expect(full.body.partitions).toHaveLength(1)
    expect(lean.status).toBe(200)
    expect(lean.body).not.toHaveProperty('partitions')
    expect(lean.body.totals).toEqual(full.body.totals)
    expect(lean.body.queue).toEqual(full.body.queue)
    expect((await call('GET', '/api/v1/status/queues/st-inc?includePartitions=maybe')).status).toBe(400)
  })
})
