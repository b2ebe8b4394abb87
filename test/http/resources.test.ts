// The resource routes against ENGINE 4's worked example (q&r's numbers): a queue of 8 partitions
// built by real pushes, one retention cut, and cursors placed where the example has them. Depth,
// detail and list must reproduce the example exactly; list's cached numbers lag until the stats
// lane runs. Plus delete, the aggregate listings, ?stats=cached and 404s.
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { testApp, type TestApp } from '../helpers/app.js'
import { push } from '../helpers/engine.js'

let app: TestApp
beforeAll(async () => {
  app = await testApp()
})
afterAll(() => app.close())

const get = (path: string) => app.json('GET', path)

/** Pushes `count` frames to one partition in calls of `perCall`: one segment per call. */
async function fill(queue: string, partition: string, count: number, perCall: number) {
  for (let done = 0; done < count; done += perCall) {
    const n = Math.min(perCall, count - done)
    await push(app, Array.from({ length: n }, (_, i) => ({ queue, partition, payload: done + i })))
  }
}

/** Puts a group's cursor (and optionally a live lease) on a partition, as pops and acks would leave it. */
async function cursor(queue: string, partition: string, committed: number, lease?: [number, number], group = '__QUEUE_MODE__') {
  await app.database.sql(
    `insert into queen.consumer_groups (queue_id, consumer_group) select id, $2 from queen.queues where name = $1 on conflict do nothing`,
    [queue, group],
  )
  await app.database.sql(
    `insert into queen.log_consumers (partition_id, consumer_group, committed_offset, lease_id, lease_expires_at, lease_from, lease_to)
     select p.id, $3, $4, $5::uuid, case when $5::uuid is null then null else now() + interval '10 minutes' end, $6, $7
       from queen.log_partitions p join queen.queues q on q.id = p.queue_id where q.name = $1 and p.name = $2
     on conflict (partition_id, consumer_group) do update set committed_offset = excluded.committed_offset, lease_id = excluded.lease_id,
       lease_expires_at = excluded.lease_expires_at, lease_from = excluded.lease_from, lease_to = excluded.lease_to`,
    [queue, partition, group, committed, lease ? crypto.randomUUID() : null, lease?.[0] ?? null, lease?.[1] ?? null],
  )
}

/** ENGINE 4's worked example, 41 segments and 12 904 retained frames. */
async function orders(queue: string) {
  await app.json('POST', '/api/v1/configure', { queue, namespace: 'billing', task: 'invoice', leaseTime: 120 })
  await fill(queue, 'Default', 400, 400)
  await fill(queue, 'Default', 1600, 800)
  // Retention removed the first segment: logStart 400 (delete-and-advance, ENGINE 7.1).
  await app.database.sql(
    `with p as (select p.id from queen.log_partitions p join queen.queues q on q.id = p.queue_id where q.name = $1 and p.name = 'Default')
     , gone as (delete from queen.log_segments s using p where s.partition_id = p.id and s.base_offset = 0)
     update queen.log_partitions set log_start = 400 from p where log_partitions.id = p.id`,
    [queue],
  )
  await fill(queue, 'cust-a', 5000, 1000)
  await fill(queue, 'cust-b', 3000, 1000)
  await fill(queue, 'cust-c', 804, 804)
  for (const [name, calls] of [['other-1', 8], ['other-2', 8], ['other-3', 7], ['other-4', 7]] as const) {
    const count = name === 'other-1' ? 628 : 624
    await fill(queue, name, count, Math.ceil(count / calls))
  }
  await cursor(queue, 'Default', 1960, [1960, 1967])
  await cursor(queue, 'cust-a', 4800)
  await cursor(queue, 'cust-b', 2946)
  await cursor(queue, 'cust-c', 788, [788, 803])
  for (const [name, count] of [['other-1', 628], ['other-2', 624], ['other-3', 624], ['other-4', 624]] as const) await cursor(queue, name, count)
}

describe('the worked example', () => {
  beforeAll(() => orders('orders'))

  it('depth: pending 310, processing 24, ready 286, 4 partitions pending, 3 ready', async () => {
    const res = await get('/api/v1/resources/queues/orders/depth')
    expect(res.status).toBe(200)
    expect(res.body).toMatchObject({
      queue: 'orders', group: null, pending: 310, processing: 24, ready: 286, partitionsPending: 4, partitionsReady: 3,
      conflation: false, effectivePending: 310, effectiveReady: 286,
    })
    const byName = Object.fromEntries(res.body.partitions.map((p: { partition: string }) => [p.partition, p]))
    expect(byName['Default']).toEqual({ partition: 'Default', pending: 40, processing: 8, ready: 32 })
    expect(byName['cust-c']).toEqual({ partition: 'cust-c', pending: 16, processing: 16, ready: 0 })
    expect(res.body.partitions).toHaveLength(8) // partitions with nothing pending are listed too (D19)
  })

  it('detail: totals 12904 / 310 / 24 / 12570, Default 1600 / 40 / 8 / 1552, 41 live segments, 21 options', async () => {
    const res = await get('/api/v1/resources/queues/orders')
    expect(res.status).toBe(200)
    expect(res.body.totals).toEqual({ total: 12904, pending: 310, processing: 24, completed: 12570, failed: null, deadLetter: 0 })
    const dflt = res.body.partitions.find((p: { name: string }) => p.name === 'Default')
    expect(dflt.stats).toEqual({ total: 1600, pending: 40, processing: 8, completed: 1552, failed: null, deadLetter: 0 })
    expect(dflt.oldestMessage).toEqual(expect.stringMatching(/Z$/))
    expect(Date.parse(dflt.newestMessage)).toBeGreaterThanOrEqual(Date.parse(dflt.oldestMessage))
    expect(res.body.segments).toEqual({ segments: 41, messages: 12904 })
    expect(res.body).toMatchObject({ name: 'orders', namespace: 'billing', task: 'invoice', retainedBytes: 0 })
    expect(Object.keys(res.body.options)).toHaveLength(21)
    expect(res.body.options).toMatchObject({ namespace: 'billing', task: 'invoice', leaseTime: 120 })
    // The detail's options round-trip through configure unchanged.
    const echo = await app.json('POST', '/api/v1/configure', { queue: 'orders', options: res.body.options })
    expect({ ...echo.body.options, namespace: echo.body.namespace, task: echo.body.task }).toEqual(res.body.options)
  })

  it('list: partitions and total live; pending and processing only after the stats lane ran', async () => {
    const before = (await get('/api/v1/resources/queues')).body
    const row = before.queues.find((q: { name: string }) => q.name === 'orders')
    expect(row).toMatchObject({ partitions: 8, messages: { total: 12904, pending: 0, processing: 0 }, segments: { segments: 0, messages: 12904 } })
    expect(before.statsAge).toBe(-1)

    const refresh = await app.json('POST', '/api/v1/stats/refresh')
    expect(refresh.body).toMatchObject({ success: true, queues: expect.any(Number) })
    const after = (await get('/api/v1/resources/queues')).body
    expect(after.queues.find((q: { name: string }) => q.name === 'orders')).toMatchObject({ messages: { total: 12904, pending: 310, processing: 24 } })
    expect(after.statsAge).toBeGreaterThanOrEqual(0)
    expect(after.statsAge).toBeLessThan(60)

    // segments and retainedBytes come from the retained-bytes lane, 0 until it passes.
    await app.db.call('log_retained_bytes_step_v1', { next: null, limit: 200_000 })
    const bytes = (await get('/api/v1/resources/queues')).body.queues.find((q: { name: string }) => q.name === 'orders')
    expect(bytes.segments).toEqual({ segments: 41, messages: 12904 })
    expect(bytes.retainedBytes).toBeGreaterThan(0)
    expect((await get('/api/v1/resources/queues/orders')).body.retainedBytes).toBe(bytes.retainedBytes)
  })
})

describe('depth with ?group=', () => {
  it("reports one group's own backlog; a group that never registered owes everything", async () => {
    await fill('grouped', 'a', 10, 10)
    await cursor('grouped', 'a', 4, undefined, 'fast')
    await cursor('grouped', 'a', 1, undefined, 'slow')
    expect((await get('/api/v1/resources/queues/grouped/depth?group=fast')).body).toMatchObject({ group: 'fast', pending: 6 })
    expect((await get('/api/v1/resources/queues/grouped/depth?group=slow')).body).toMatchObject({ pending: 9 })
    expect((await get('/api/v1/resources/queues/grouped/depth')).body).toMatchObject({ pending: 9 }) // worst cursor
    expect((await get('/api/v1/resources/queues/grouped/depth?group=never')).body).toMatchObject({ pending: 10, partitionsPending: 1 })
  })

  it('without a group, a tie on the worst cursor takes the consumer with work ready, not another group\'s lease', async () => {
    // What the console showed: group `analytics` leased the partition's only message while queue
    // mode, at the same cursor, had it ready (a queue-mode pop delivers it at once).
    await fill('tied', 'asia', 1, 1)
    await cursor('tied', 'asia', 0, [0, 0], 'analytics')
    await cursor('tied', 'asia', 0)
    expect((await get('/api/v1/resources/queues/tied/depth?group=analytics')).body).toMatchObject({ pending: 1, processing: 1, ready: 0 })
    expect((await get('/api/v1/resources/queues/tied/depth?group=__QUEUE_MODE__')).body).toMatchObject({ pending: 1, processing: 0, ready: 1 })
    expect((await get('/api/v1/resources/queues/tied/depth')).body).toMatchObject({ pending: 1, processing: 0, ready: 1, partitionsReady: 1 })
    const popped = await app.json('GET', '/api/v1/pop/queue/tied?batch=1')
    expect(popped.status).toBe(200)
  })

  it('reports conflation as work depth for a conflating group', async () => {
    await fill('conflated', 'a', 5, 5)
    await fill('conflated', 'b', 3, 3)
    await cursor('conflated', 'a', 0, undefined, 'latest')
    await app.database.sql(`update queen.consumer_groups set delivery = 'conflate' where consumer_group = 'latest'`)
    expect((await get('/api/v1/resources/queues/conflated/depth?group=latest')).body).toMatchObject({
      conflation: true, pending: 8, effectivePending: 2, ready: 8, effectiveReady: 2,
    })
  })
})

describe('unknown queues, delete, aggregates', () => {
  it('answers 404 Queue not found on detail and depth', async () => {
    for (const path of ['/api/v1/resources/queues/nope', '/api/v1/resources/queues/nope/depth']) {
      const res = await get(path)
      expect(res.status, path).toBe(404)
      expect(res.body).toEqual({ error: 'Queue not found', code: 'queue_not_found' })
    }
  })

  it('deletes a queue with everything under it in one call, keeping traces; an unknown one is 200 too', async () => {
    await app.json('POST', '/api/v1/configure', { queue: 'doomed', retryLimit: 0, dedupWindowSeconds: 600 })
    await push(app, [{ queue: 'doomed', partition: 'p', payload: 1, transactionId: 'dedup-me' }])
    const popped = await app.json('GET', '/api/v1/pop/queue/doomed')
    const m = popped.body.messages[0]
    await app.json('POST', '/api/v1/ack', { transactionId: m.transactionId, partitionId: m.partitionId, leaseId: m.leaseId, status: 'failed' })
    await app.database.sql(`insert into queen.message_traces (tenant_id, queue_name, partition_id, partition_name, transaction_id, data)
                            values ('', 'doomed', $1, 'p', 'dedup-me', '{}')`, [m.partitionId])
    await app.json('POST', '/api/v1/stats/refresh')
    const counts = async () =>
      (await app.database.sql<Record<string, number>>(`select
        (select count(*) from queen.queues where name = 'doomed')::int as queues,
        (select count(*) from queen.log_partitions where id = $1)::int as partitions,
        (select count(*) from queen.log_segments where partition_id = $1)::int as segments,
        (select count(*) from queen.log_consumers where partition_id = $1)::int as consumers,
        (select count(*) from queen.log_txns where partition_id = $1)::int as txns,
        (select count(*) from queen.log_dlq where partition_id = $1)::int as dlq,
        (select count(*) from queen.stats s join queen.queues q on q.id = s.queue_id where q.name = 'doomed')::int as stats,
        (select count(*) from queen.message_traces where partition_id = $1)::int as traces`, [m.partitionId]))[0]
    expect(await counts()).toEqual({ queues: 1, partitions: 1, segments: 1, consumers: 1, txns: 1, dlq: 1, stats: 1, traces: 1 })
    const res = await app.json('DELETE', '/api/v1/resources/queues/doomed')
    expect(res.status).toBe(200)
    expect(res.body).toEqual({ deleted: true, queue: 'doomed', existed: true })
    expect(await counts()).toEqual({ queues: 0, partitions: 0, segments: 0, consumers: 0, txns: 0, dlq: 0, stats: 0, traces: 1 })
    const again = await app.json('DELETE', '/api/v1/resources/queues/doomed')
    expect(again.status).toBe(200)
    expect(again.body).toEqual({ deleted: false, queue: 'doomed', existed: false, message: 'Queue not found, nothing was deleted' })
  })

  it('does not error when a queue is deleted while consumers pop and producers push', async () => {
    await fill('busy', 'p', 50, 50)
    const traffic = Array.from({ length: 10 }, (_, i) =>
      i % 2 ? app.json('GET', '/api/v1/pop/queue/busy?batch=5') : app.json('POST', '/api/v1/push', { items: [{ queue: 'busy', payload: i }] }),
    )
    const [deleted, ...others] = await Promise.all([app.json('DELETE', '/api/v1/resources/queues/busy'), ...traffic])
    expect(deleted.status).toBe(200)
    for (const o of others) expect([200, 201, 204], JSON.stringify(o.body)).toContain(o.status)
  })

  it('serves ?stats=cached from queen.stats alone, and refuses an unknown stats value', async () => {
    await fill('cached', 'p', 3, 3)
    const cachedBefore = (await get('/api/v1/resources/queues?stats=cached')).body.queues.find((q: { name: string }) => q.name === 'cached')
    expect(cachedBefore).toMatchObject({ partitions: 0, messages: { total: 0 } })
    await app.json('POST', '/api/v1/stats/refresh')
    const cachedAfter = (await get('/api/v1/resources/queues?stats=cached')).body.queues.find((q: { name: string }) => q.name === 'cached')
    expect(cachedAfter).toMatchObject({ partitions: 1, messages: { total: 3, pending: 3 } })
    expect((await get('/api/v1/resources/queues?stats=stale')).status).toBe(400)
  })

  it('computes nothing per queue with ?stats=cached: the call reads no partition, consumer or segment row', async () => {
    await fill('untouched', 'p', 3, 3)
    const client = new pg.Client({ connectionString: app.database.url })
    await client.connect()
    try {
      // pg_stat_xact_user_tables counts this transaction's own scans, exactly and at once.
      const scans = async (call: string) => {
        await client.query('begin')
        await client.query(`select ${call}`)
        const { rows } = await client.query(`select relname, coalesce(seq_scan, 0) + coalesce(idx_scan, 0) as n from pg_stat_xact_user_tables
                                              where schemaname = 'queen' and relname in ('log_partitions', 'log_consumers', 'log_segments')`)
        await client.query('rollback')
        return Object.fromEntries(rows.map((r) => [r.relname, Number(r.n)]))
      }
      const none = { log_partitions: 0, log_consumers: 0, log_segments: 0 }
      expect(await scans(`queen.log_queue_stats_cached_v1('')`)).toEqual(none) // what the route calls
      expect(await scans(`queen.log_queue_stats_all_v1(p_tenant => '', p_cached => true)`)).toEqual(none) // brokers mid-deploy
      expect((await scans(`queen.log_queue_stats_all_v1(p_tenant => '', p_cached => false)`)).log_partitions).toBeGreaterThan(0) // the live list does read them
    } finally {
      await client.end()
    }
  })

  it('aggregates namespaces, tasks and the overview from the stats, with statsAge', async () => {
    await app.json('POST', '/api/v1/configure', { queue: 'agg.one' })
    await fill('agg.one', 'p', 2, 2)
    await fill('agg.two', 'p', 3, 3)
    await app.json('POST', '/api/v1/stats/refresh')
    const ns = (await get('/api/v1/resources/namespaces')).body
    expect(ns.namespaces.find((n: { namespace: string }) => n.namespace === 'agg')).toEqual({
      namespace: 'agg', queues: 2, partitions: 2, messages: { total: 5, pending: 5, processing: 0 },
    })
    expect(ns.statsAge).toBeGreaterThanOrEqual(0)
    const tasks = (await get('/api/v1/resources/tasks')).body
    expect(tasks.tasks.map((t: { task: string }) => t.task)).toEqual(expect.arrayContaining(['one', 'two', 'invoice']))
    const overview = (await get('/api/v1/resources/overview')).body
    expect(overview).toMatchObject({ queues: expect.any(Number), partitions: expect.any(Number), namespaces: expect.any(Number), statsAge: expect.any(Number) })
    expect(overview.messages).toMatchObject({ failed: null })
  })
})
