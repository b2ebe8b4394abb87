// Subscription modes (issue #5 item 2, API 5.5, ENGINE 5.1-5.2, D7, D9): a named group's first
// contact fixes where every partition it meets starts, now or later, durably; queue mode always
// reads from the log start. Discovery pops (item 4, D17) register the group per matching queue.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { testApp, type TestApp } from '../helpers/app.js'
import { ack, acksOf, pop, push, writtenRows } from '../helpers/engine.js'

let app: TestApp
beforeAll(async () => {
  app = await testApp()
})
afterAll(() => app.close())

const fill = (queue: string, n: number, partition = 'Default', from = 0) =>
  push(app, Array.from({ length: n }, (_, i) => ({ queue, partition, payload: { v: from + i }, transactionId: `${queue}-${partition}-${from + i}` })))

async function drain(target: TestApp, queue: string, params: Record<string, string | number | boolean>) {
  const got: string[] = []
  for (;;) {
    const res = await pop(target, queue, { batch: 100, partitions: 10, ...params })
    if (res.status === 204) return got.sort()
    got.push(...res.messages.map((m) => `${m.partition}:${m.offset}`))
    await ack(target, acksOf(res.messages), params.consumerGroup as string | undefined)
  }
}

const mode = async (queue: string, group: string) =>
  (await app.database.sql<{ mode: string | null; at: Date | null }>(
    `select g.subscription_mode as mode, g.subscription_at as at from queen.consumer_groups g join queen.queues q on q.id = g.queue_id
      where q.name = $1 and g.consumer_group = $2`, [queue, group]))[0]

const segmentTime = async (partitionId: string, offset: number) =>
  (await app.database.sql<{ at: Date }>(
    `select created_at as at from queen.log_segments where partition_id = $1 and base_offset <= $2 and last_offset >= $2`, [partitionId, offset]))[0]!.at

describe('subscription modes', () => {
  it('new before the first push: the queue exists from the pop and the group gets everything pushed after', async () => {
    expect((await pop(app, 'signup.events', { consumerGroup: 'early', subscriptionMode: 'new' })).status).toBe(204)
    expect(await mode('signup.events', 'early')).toMatchObject({ mode: 'new' })
    expect((await mode('signup.events', 'early'))!.at).not.toBeNull()
    await fill('signup.events', 3)
    expect(await drain(app, 'signup.events', { consumerGroup: 'early' })).toEqual(['Default:0', 'Default:1', 'Default:2'])
  })

  it('new on a partition that does not exist yet: first contact still subscribes, so the first push is delivered', async () => {
    // A consumer long-polling one partition before its first message: the 204 must fix the
    // subscription, or a later pop would subscribe after that message and skip it.
    await fill('signup.partitioned', 1, 'other')
    expect((await pop(app, 'signup.partitioned', { consumerGroup: 'watcher', subscriptionMode: 'new' }, 'tenant-7')).status).toBe(204)
    expect(await mode('signup.partitioned', 'watcher')).toMatchObject({ mode: 'new' })
    await new Promise((r) => setTimeout(r, 20))
    await fill('signup.partitioned', 2, 'tenant-7')
    const got = await pop(app, 'signup.partitioned', { consumerGroup: 'watcher', subscriptionMode: 'new', batch: 10 }, 'tenant-7')
    expect(got.messages.map((m) => m.offset)).toEqual([0, 1])
  })

  it('all / from_beginning start at the log start; new / new-only / subscriptionFrom=now at the head', async () => {
    await fill('modes', 2, 'a')
    await fill('modes', 2, 'b')
    const starts: Record<string, string[]> = {}
    for (const [group, params] of [
      ['g-all', { subscriptionMode: 'all' }],
      ['g-begin', { subscriptionMode: 'from_beginning' }],
      ['g-new', { subscriptionMode: 'new' }],
      ['g-new-only', { subscriptionMode: 'new-only' }],
      ['g-now', { subscriptionFrom: 'now' }],
    ] as const) {
      starts[group] = await drain(app, 'modes', { consumerGroup: group, ...params })
    }
    expect(starts).toEqual({ 'g-all': ['a:0', 'a:1', 'b:0', 'b:1'], 'g-begin': ['a:0', 'a:1', 'b:0', 'b:1'], 'g-new': [], 'g-new-only': [], 'g-now': [] })
    // new-only is stored as new, from_beginning as all.
    expect(await mode('modes', 'g-new-only')).toMatchObject({ mode: 'new' })
    expect(await mode('modes', 'g-begin')).toMatchObject({ mode: 'all', at: null })
    // After the subscription, the new groups see new frames, including on a partition created later.
    await fill('modes', 1, 'a', 2)
    await fill('modes', 2, 'c')
    for (const group of ['g-new', 'g-new-only', 'g-now']) {
      expect(await drain(app, 'modes', { consumerGroup: group }), group).toEqual(['a:2', 'c:0', 'c:1'])
    }
    // Queue mode ignores both parameters and reads from the log start.
    expect(await drain(app, 'modes', { subscriptionMode: 'new' })).toEqual(['a:0', 'a:1', 'a:2', 'b:0', 'b:1', 'c:0', 'c:1'])
  })

  it('subscriptionFrom=<ISO> starts every partition the group meets, later ones too, at the first frame written at or after it', async () => {
    await fill('from-ts', 2, 'x')
    const pushed = await fill('from-ts', 2, 'x', 2)
    await fill('from-ts', 2, 'y')
    const cut = await segmentTime(pushed[0]!.partition_id, 2)
    // First contact on partition x only: x starts at the cut. y is met later; all of its frames were
    // written after the cut, so it starts at its first frame (the next test has one that does not).
    const first = await pop(app, 'from-ts', { consumerGroup: 'ts', subscriptionFrom: cut.toISOString(), batch: 10 }, 'x')
    expect(first.messages.map((m) => m.offset)).toEqual([2, 3])
    await ack(app, acksOf(first.messages), 'ts')
    expect(await mode('from-ts', 'ts')).toMatchObject({ mode: 'timestamp', at: cut })
    expect(await drain(app, 'from-ts', { consumerGroup: 'ts' })).toEqual(['y:0', 'y:1'])
  })

  it('a partition holding frames older than the subscription instant starts at the instant when first met', async () => {
    await fill('met-late', 2, 'old')
    const later = await fill('met-late', 2, 'old', 2)
    const at = await segmentTime(later[0]!.partition_id, 2)
    await fill('met-late', 1, 'other')
    // First contact through the other partition: 'old' has no cursor yet.
    await drain(app, 'met-late', { consumerGroup: 'late-join', subscriptionFrom: at.toISOString(), partitions: 1, batch: 1 })
    const cursors = await app.database.sql<{ name: string; committed: number }>(
      `select p.name, c.committed_offset::int as committed from queen.log_consumers c join queen.log_partitions p on p.id = c.partition_id
         join queen.queues q on q.id = p.queue_id where q.name = 'met-late' and c.consumer_group = 'late-join' order by 1`)
    expect(cursors).toEqual([{ name: 'old', committed: 4 }, { name: 'other', committed: 1 }])
  })

  it('is durable: first contact wins over later parameters, and a broker restart changes nothing', async () => {
    await fill('durable', 2)
    expect(await drain(app, 'durable', { consumerGroup: 'keeper', subscriptionMode: 'new' })).toEqual([])
    const restarted = await testApp({ database: app.database })
    try {
      await fill('durable', 1, 'Default', 2)
      // A later pop asking for 'all' does not rewind the group, on the new broker either.
      expect(await drain(restarted, 'durable', { consumerGroup: 'keeper', subscriptionMode: 'all' })).toEqual(['Default:2'])
      await fill('durable', 1, 'late')
      expect(await drain(restarted, 'durable', { consumerGroup: 'keeper', subscriptionMode: 'all' })).toEqual(['late:0'])
    } finally {
      await restarted.close()
    }
    expect(await mode('durable', 'keeper')).toMatchObject({ mode: 'new' })
  })

  it('ack of a group with no cursor row initialises it by the subscription', async () => {
    await fill('d7', 3)
    await fill('d7', 1, 'other')
    // First contact through the partition route: only 'other' gets a cursor row.
    expect((await pop(app, 'd7', { consumerGroup: 'sub', subscriptionMode: 'new' }, 'other')).status).toBe(204)
    const [p] = await app.database.sql<{ id: string }>(`select p.id from queen.log_partitions p join queen.queues q on q.id = p.queue_id where q.name = 'd7' and p.name = 'Default'`)
    // An ack by a group that never popped this partition: its row starts at the head (new), so the
    // old frame is below the cursor and the ack is a settled no-op, not a jump from 0.
    const [r] = await ack(app, [{ transactionId: 'd7-Default-1', partitionId: p!.id, offset: 1 }], 'sub')
    expect(r).toMatchObject({ success: true })
    const [c] = await app.database.sql<{ committed: number }>(`select committed_offset::int as committed from queen.log_consumers where partition_id = $1 and consumer_group = 'sub'`, [p!.id])
    expect(c).toEqual({ committed: 3 })
  })

  it('refuses an unknown mode or an unparsable instant with a 4xx envelope and writes nothing', async () => {
    const before = await writtenRows(app)
    for (const [query, error] of [
      ['subscriptionMode=latest', 'subscriptionMode must be one of all, from_beginning, new, new-only'],
      ['subscriptionFrom=2026-13-45T00:00:00Z', 'subscriptionFrom must be an ISO-8601 timestamp'],
      ['subscriptionFrom=tomorrow', 'subscriptionFrom must be an ISO-8601 timestamp'],
    ]) {
      const res = await app.json('GET', `/api/v1/pop/queue/refused.sub?consumerGroup=g&${query}`)
      expect(res.status, query).toBe(400)
      expect(res.body).toMatchObject({ error, code: 'invalid_request' })
    }
    expect(await writtenRows(app)).toEqual(before)
  })
})

describe('discovery pop with groups', () => {
  it('finds a push-only queue by its derived namespace and subscribes the group per matching queue', async () => {
    await push(app, [{ queue: 'crm.contacts.v1', payload: 'c0' }, { queue: 'crm.deals', payload: 'd0' }, { queue: 'erp.deals', payload: 'e0' }])
    const byNamespace = await app.json('GET', '/api/v1/pop?namespace=crm&consumerGroup=sync&subscriptionMode=all&batch=10&partitions=10')
    expect(byNamespace.status).toBe(200)
    expect(byNamespace.body.messages.map((m: { data: string }) => m.data).sort()).toEqual(['c0', 'd0'])
    const registered = await app.database.sql<{ name: string }>(
      `select q.name from queen.consumer_groups g join queen.queues q on q.id = g.queue_id where g.consumer_group = 'sync' order by 1`)
    expect(registered.map((r) => r.name)).toEqual(['crm.contacts.v1', 'crm.deals'])
    // Task only (D17), with another group: both deals queues, across namespaces.
    const byTask = await app.json('GET', '/api/v1/pop?task=deals&consumerGroup=report&subscriptionMode=all&batch=10&partitions=10')
    expect(byTask.body.messages.map((m: { data: string }) => m.data).sort()).toEqual(['d0', 'e0'])
    // The same lease and ack semantics as the queue routes.
    const results = await ack(app, acksOf(byTask.body.messages), 'report')
    expect(results.every((r) => r.success && r.leaseReleased)).toBe(true)
    expect((await app.request('/api/v1/pop?task=deals&consumerGroup=report&subscriptionMode=all&partitions=10')).status).toBe(204)
  })
})
