// Message reads, the dead-letter delete and the DLQ listing, over messages that really went
// through push, pop, ack and the dead-letter path.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { testApp, type TestApp } from '../helpers/app.js'
import { ack, acksOf, pop, push, writtenRows } from '../helpers/engine.js'

let app: TestApp
beforeAll(async () => {
  app = await testApp({ env: { QUEEN_ENCRYPTION_KEY: 'c'.repeat(64) } })
})
afterAll(() => app.close())

const get = (path: string, headers?: Record<string, string>) => app.json('GET', path, undefined, headers)
const list = async (params: Record<string, string | number>) => get(`/api/v1/messages?${new URLSearchParams(Object.entries(params).map(([k, v]) => [k, String(v)]))}`)
const configure = (body: Record<string, unknown>) => app.json('POST', '/api/v1/configure', body)

/** A queue whose one failure dead-letters (retryLimit 0), with messages in three states. */
async function scenario(queue: string) {
  await configure({ queue, retryLimit: 0, namespace: 'shop', task: 'orders' })
  const pushed = await push(app, [0, 1, 2, 3].map((i) => ({ queue, partition: 'p', payload: { i }, transactionId: `${queue}-${i}` })))
  const first = await pop(app, queue, { batch: 2 }) // offsets 0, 1
  await ack(app, [acksOf(first.messages)[0]!, { ...acksOf(first.messages, 'failed')[1]!, error: 'boom' }])
  const second = await pop(app, queue, { batch: 1 }) // offset 2, left leased
  return { pushed, partitionId: pushed[0]!.partition_id, leaseId: second.leaseId }
}

describe('GET /api/v1/messages', () => {
  it('lists messages newest first with their state and no payload', async () => {
    const { partitionId } = await scenario('listed')
    const res = await list({ queue: 'listed' })
    expect(res.status).toBe(200)
    expect(res.body.messages.map((m: { offset: number }) => m.offset)).toEqual([3, 2, 1, 0])
    const byOffset = Object.fromEntries(res.body.messages.map((m: { offset: number }) => [m.offset, m]))
    expect(byOffset[0]).toEqual({
      id: expect.any(String),
      transactionId: 'listed-0',
      partitionId,
      queuePath: 'listed/p',
      queue: 'listed',
      partition: 'p',
      namespace: 'shop',
      task: 'orders',
      status: 'completed',
      queueStatus: 'completed',
      busStatus: { consumedBy: 0, totalGroups: 0 },
      traceId: null,
      producerSub: null,
      queuePriority: 0,
      createdAt: expect.stringMatching(/\.\d{6}Z$/),
      leaseExpiresAt: null,
      offset: 0,
    })
    expect(byOffset[1]).toMatchObject({ status: 'dead_letter', queueStatus: 'dead_letter' })
    expect(byOffset[2]).toMatchObject({ status: 'processing', queueStatus: 'processing', leaseExpiresAt: expect.any(String) })
    expect(byOffset[3]).toMatchObject({ status: 'pending', queueStatus: 'pending', leaseExpiresAt: null })
    expect(res.body.mode).toEqual({ hasQueueMode: true, busGroupsCount: 0, type: 'queue' })
    for (const m of res.body.messages) expect(m).not.toHaveProperty('payload')
  })

  it('filters by status, namespace or ns, task, partition and time, and pages', async () => {
    await scenario('filtered')
    const offsetsOf = async (params: Record<string, string | number>) => (await list({ queue: 'filtered', ...params })).body.messages.map((m: { offset: number }) => m.offset)
    expect(await offsetsOf({ status: 'pending' })).toEqual([3])
    expect(await offsetsOf({ status: 'dead_letter' })).toEqual([1])
    expect(await offsetsOf({ ns: 'shop', task: 'orders', limit: 2 })).toEqual([3, 2])
    expect(await offsetsOf({ namespace: 'shop', limit: 2, offset: 2 })).toEqual([1, 0])
    expect(await offsetsOf({ partition: 'other' })).toEqual([])
    expect(await offsetsOf({ namespace: 'elsewhere' })).toEqual([])
    expect(await offsetsOf({ from: new Date(Date.now() + 60_000).toISOString() })).toEqual([])
    expect(await offsetsOf({ from: '2000-01-01T00:00:00Z', to: '2000-01-02T00:00:00Z' })).toEqual([])
  })

  it('shows bus groups: who consumed a message and how many groups read the partition', async () => {
    await push(app, [{ queue: 'bus', payload: 1 }])
    const g1 = await pop(app, 'bus', { consumerGroup: 'g1', subscriptionMode: 'all' })
    await pop(app, 'bus', { consumerGroup: 'g2', subscriptionMode: 'all' })
    await ack(app, acksOf(g1.messages), 'g1')
    const [m] = (await list({ queue: 'bus' })).body.messages
    expect(m).toMatchObject({ busStatus: { consumedBy: 1, totalGroups: 2 }, status: 'processing', queueStatus: null })
    expect((await list({ queue: 'bus' })).body.mode).toEqual({ hasQueueMode: false, busGroupsCount: 2, type: 'bus' })
  })

  it('refuses bad parameters with 400', async () => {
    for (const query of ['status=lost', 'limit=abc', 'offset=-1', 'from=yesterday', 'to=12']) {
      const res = await get(`/api/v1/messages?${query}`)
      expect(res.status, query).toBe(400)
      expect(res.body.code).toBe('invalid_request')
    }
  })
})

describe('GET /api/v1/messages/:partitionId/:transactionId', () => {
  it('answers the newest retained message of the key with payload, config, groups and retry count', async () => {
    const { partitionId } = await scenario('detail')
    const res = await get(`/api/v1/messages/${partitionId}/detail-1`)
    expect(res.status).toBe(200)
    expect(res.body).toMatchObject({
      transactionId: 'detail-1',
      partitionId,
      queuePath: 'detail/p',
      status: 'dead_letter',
      payload: { i: 1 },
      isEncrypted: false,
      errorMessage: 'boom',
      retryCount: expect.any(Number),
      offset: 1,
      queueConfig: { leaseTime: 300, retryLimit: 0, retryDelay: 1000, ttl: 3600, priority: 0 },
      mode: { hasQueueMode: true, busGroupsCount: 0, type: 'queue', consumedByGroups: 0 },
      consumerGroups: [],
    })
    expect((await get(`/api/v1/messages/${partitionId}/detail-3`)).body).toMatchObject({ status: 'pending', errorMessage: null, retryCount: 0 })
  })

  it('decrypts an encrypted payload', async () => {
    await configure({ queue: 'sealed', encryptionEnabled: true })
    const [p] = await push(app, [{ queue: 'sealed', payload: { pin: '1234' }, transactionId: 'k' }])
    expect((await get(`/api/v1/messages/${p!.partition_id}/k`)).body).toMatchObject({ payload: { pin: '1234' }, isEncrypted: true })
  })

  it('answers 404 message_not_found for an unknown key, a malformed partition id and another tenant', async () => {
    const [p] = await push(app, [{ queue: 'mine', payload: 1, transactionId: 'known' }])
    for (const path of [`/api/v1/messages/${p!.partition_id}/unknown`, '/api/v1/messages/not-a-uuid/known', `/api/v1/messages/00000000-0000-4000-8000-000000000000/known`]) {
      const res = await get(path)
      expect(res.status, path).toBe(404)
      expect(res.body).toEqual({ error: 'Message not found', code: 'message_not_found' })
    }
    const tenants = await testApp({ database: app.database, env: { QUEEN_TENANCY_HEADER: 'X-Tenant' } })
    try {
      const [theirs] = (await tenants.json('POST', '/api/v1/push', { items: [{ queue: 'q', payload: 1, transactionId: 't' }] }, { 'x-tenant': 'acme' })).body
      const other = await tenants.json('GET', `/api/v1/messages/${theirs.partition_id}/t`, undefined, { 'x-tenant': 'globex' })
      expect(other.status).toBe(404)
      expect((await tenants.json('GET', `/api/v1/messages/${theirs.partition_id}/t`, undefined, { 'x-tenant': 'acme' })).status).toBe(200)
      expect((await tenants.json('GET', '/api/v1/messages?queue=q', undefined, { 'x-tenant': 'globex' })).body.messages).toEqual([])
      expect(await tenants.json('DELETE', `/api/v1/messages/${theirs.partition_id}/t`, undefined, { 'x-tenant': 'globex' })).toMatchObject({ status: 404, body: { success: false, code: 'message_not_found' } })
    } finally {
      await tenants.close()
    }
  })
})

describe('DELETE /api/v1/messages/:partitionId/:transactionId', () => {
  it("deletes the address's dead-letter rows and nothing else: the message itself stays in the log", async () => {
    const { partitionId } = await scenario('deleted')
    const res = await app.json('DELETE', `/api/v1/messages/${partitionId}/deleted-1`)
    expect(res.status).toBe(200)
    expect(res.body).toEqual({ success: true, partitionId, transactionId: 'deleted-1', deleted: 1, message: 'Message deleted successfully' })
    expect((await get(`/api/v1/messages/${partitionId}/deleted-1`)).body).toMatchObject({ status: 'completed' })
    expect((await list({ queue: 'deleted' })).body.messages.map((m: { offset: number }) => m.offset)).toEqual([3, 2, 1, 0])
    expect((await get('/api/v1/dlq?queue=deleted')).body.total).toBe(0)
    const [fetched] = (await app.json('POST', '/api/v1/fetch', { entries: [{ queue: 'deleted', partition: 'p', fromOffset: 0 }] })).body.entries
    expect(fetched.frames.map((f: { offset: number }) => f.offset)).toEqual([0, 1, 2, 3])
    // Deleted once, there is nothing left to delete.
    expect((await app.json('DELETE', `/api/v1/messages/${partitionId}/deleted-1`)).status).toBe(404)
  })

  it("deletes every consumer group's dead-letter row of the address", async () => {
    await configure({ queue: 'dl-groups', retryLimit: 0 })
    const [pushed] = await push(app, [{ queue: 'dl-groups', partition: 'p', payload: 1, transactionId: 'dg-0' }])
    for (const group of ['a', 'b']) {
      const popped = await pop(app, 'dl-groups', { consumerGroup: group, subscriptionMode: 'all' })
      await ack(app, acksOf(popped.messages, 'failed'), group)
    }
    expect((await get('/api/v1/dlq?queue=dl-groups')).body.total).toBe(2)
    expect((await app.json('DELETE', `/api/v1/messages/${pushed!.partition_id}/dg-0`)).body).toMatchObject({ success: true, deleted: 2 })
    expect((await get('/api/v1/dlq?queue=dl-groups')).body.total).toBe(0)
  })

  it('never deletes a live message: 404, and pop still delivers it', async () => {
    const pushed = await push(app, [0, 1, 2].map((i) => ({ queue: 'skipped', partition: 'p', payload: i, transactionId: `sk-${i}` })))
    const partitionId = pushed[0]!.partition_id
    const res = await app.json('DELETE', `/api/v1/messages/${partitionId}/sk-1`)
    expect(res.status).toBe(404)
    expect(res.body).toMatchObject({ success: false, error: 'Message not found', code: 'message_not_found', partitionId, transactionId: 'sk-1' })
    const popped = await pop(app, 'skipped', { batch: 10 })
    expect(popped.messages.map((m) => m.data)).toEqual([0, 1, 2])
  })

  it('answers 404 for an unknown or malformed key, deleting nothing', async () => {
    const [p] = await push(app, [{ queue: 'keep', payload: 1, transactionId: 'stay' }])
    const before = await writtenRows(app)
    for (const path of [`/api/v1/messages/${p!.partition_id}/gone`, '/api/v1/messages/not-a-uuid/stay']) {
      const res = await app.json('DELETE', path)
      expect(res.status).toBe(404)
      expect(res.body).toMatchObject({ success: false, error: 'Message not found', code: 'message_not_found' })
    }
    expect(await writtenRows(app)).toEqual(before)
    expect((await get(`/api/v1/messages/${p!.partition_id}/stay`)).status).toBe(200)
  })
})

describe('GET /api/v1/dlq', () => {
  it('lists dead-lettered copies with every field, decrypted, newest failure first', async () => {
    await configure({ queue: 'dlq.sealed', retryLimit: 0, encryptionEnabled: true })
    await push(app, [0, 1].map((i) => ({ queue: 'dlq.sealed', partition: 'z', payload: { secret: i }, transactionId: `s-${i}` })))
    for (let i = 0; i < 2; i++) {
      const popped = await pop(app, 'dlq.sealed', { batch: 1 })
      await ack(app, acksOf(popped.messages, 'failed', { error: `bad ${i}` }))
    }
    const res = await get('/api/v1/dlq?queue=dlq.sealed')
    expect(res.status).toBe(200)
    expect(res.body.total).toBe(2)
    expect(res.body.pagination).toEqual({ limit: 100, offset: 0, total: 2 })
    expect(res.body.messages.map((m: { errorMessage: string }) => m.errorMessage)).toEqual(['bad 1', 'bad 0'])
    expect(res.body.messages[1]).toEqual({
      id: expect.any(String),
      messageId: expect.any(String),
      transactionId: 's-0',
      partitionId: expect.any(String),
      queue: 'dlq.sealed',
      partition: 'z',
      consumerGroup: '__QUEUE_MODE__',
      errorMessage: 'bad 0',
      retryCount: expect.any(Number),
      data: { secret: 0 },
      producerSub: null,
      createdAt: expect.stringMatching(/\.\d{6}Z$/),
      failedAt: expect.stringMatching(/\.\d{3}Z$/),
      offset: 0,
    })
    // id is the dead-letter row's, the one the replay route takes; messageId is the message's.
    const [row] = await app.database.sql<{ id: string; message_id: string }>(`select id::text, message_id::text from queen.log_dlq where transaction_id = 's-0'`)
    expect(res.body.messages[1]).toMatchObject({ id: row!.id, messageId: row!.message_id })
  })

  it('honours every filter, pages with a total, and answers an unknown queue with an empty list', async () => {
    await scenario('dlq-filters')
    const total = async (query: string) => (await get(`/api/v1/dlq?queue=dlq-filters&${query}`)).body.total
    expect(await total('')).toBe(1)
    expect(await total('consumerGroup=__QUEUE_MODE__')).toBe(1)
    expect(await total('consumerGroup=other')).toBe(0)
    expect(await total('partition=p')).toBe(1)
    expect(await total('partition=q')).toBe(0)
    expect(await total(`from=${new Date(Date.now() + 60_000).toISOString()}`)).toBe(0)
    expect(await total('to=2000-01-01T00:00:00Z')).toBe(0)
    const page = await get('/api/v1/dlq?queue=dlq-filters&limit=1&offset=1')
    expect(page.body).toMatchObject({ messages: [], total: 1, pagination: { limit: 1, offset: 1, total: 1 } })
    expect((await get('/api/v1/dlq?queue=no-such-queue')).body).toMatchObject({ messages: [], total: 0 })
    expect((await get('/api/v1/dlq?limit=x')).status).toBe(400)
  })

  it('keeps its copy after retention removes the source segment', async () => {
    await scenario('dlq-retained')
    await app.database.sql(`
      with p as (select p.id, p.last_offset from queen.log_partitions p join queen.queues q on q.id = p.queue_id where q.name = 'dlq-retained')
      , gone as (delete from queen.log_segments s using p where s.partition_id = p.id)
      update queen.log_partitions lp set log_start = p.last_offset + 1 from p where lp.id = p.id`)
    const res = await get('/api/v1/dlq?queue=dlq-retained')
    expect(res.body.messages).toHaveLength(1)
    expect(res.body.messages[0]).toMatchObject({ transactionId: 'dlq-retained-1', data: { i: 1 }, errorMessage: 'boom' })
  })
})
