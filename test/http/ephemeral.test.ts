// Ephemeral queues (docs/ephemeral.md): the eight routes and the kill switch, every ack verdict,
// per-group cursors, bounds and TTL, tenancy, role sets, and bad input answered 400
// ephemeral_bad_request with nothing written.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { testApp, type TestApp } from '../helpers/app.js'
import { recordingWaker } from '../helpers/recording-waker.js'
import { SECRET, bearer, token } from '../helpers/tokens.js'

let app: TestApp
const waker = recordingWaker()
const A = { 'x-queen-tenant': 'acme' }
const B = { 'x-queen-tenant': 'globex' }
beforeAll(async () => {
  app = await testApp({ env: { QUEEN_TENANCY_HEADER: 'X-Queen-Tenant' }, deps: { popWaker: waker.waker } })
})
afterAll(() => app.close())

const push = (queue: string, payloads: unknown[], extra: Record<string, unknown> = {}, h = A) =>
  app.json('POST', '/api/v1/ephemeral/push', { queue, ...extra, messages: payloads.map((payload) => ({ payload })) }, h)
const pop = (queue: string, params: Record<string, string | number | boolean> = {}, h = A) =>
  app.json('GET', `/api/v1/ephemeral/pop?${new URLSearchParams({ queue, ...Object.fromEntries(Object.entries(params).map(([k, v]) => [k, String(v)])) })}`, undefined, h)
const ack = (queue: string, acks: { id: string; status?: string }[], group?: string, h = A) =>
  app.json('POST', '/api/v1/ephemeral/ack', { queue, ...(group !== undefined ? { group } : {}), acks }, h)
const configure = (queue: string, options: Record<string, unknown>, h = A) => app.json('POST', '/api/v1/ephemeral/configure', { queue, options }, h)
const depth = (queue: string, group?: string, h = A) =>
  app.json('GET', `/api/v1/ephemeral/queues/${encodeURIComponent(queue)}/depth${group ? `?group=${group}` : ''}`, undefined, h)
const rows = async (sql: string) => (await app.database.sql<{ n: number }>(sql))[0]!.n
const payloadsOf = (body: { messages: { payload: unknown }[] }) => body.messages.map((m) => m.payload)

describe('ephemeral push, pop and ack', () => {
  it('delivers in push order with opaque ids, and answers acked then unknown for one id', async () => {
    expect(await push('rt', [{ n: 1 }, { n: 2 }, null])).toMatchObject({ status: 201, body: { pushed: 3 } })
    const popped = await pop('rt', { batch: 10 })
    expect(popped.status).toBe(200)
    expect(popped.body.queue).toBe('rt')
    expect(payloadsOf(popped.body)).toEqual([{ n: 1 }, { n: 2 }, null])
    for (const m of popped.body.messages) {
      expect(Object.keys(m)).toEqual(['id', 'partition', 'attempts', 'payload'])
      expect(m).toMatchObject({ partition: 'Default', attempts: 0 })
      expect(m.id).toMatch(/^e:[^:]+:Default:\d+$/)
    }
    const ids = popped.body.messages.map((m: { id: string }) => ({ id: m.id }))
    expect((await ack('rt', ids)).body.results).toEqual(ids.map(({ id }: { id: string }) => ({ id, outcome: 'acked' })))
    expect((await ack('rt', ids.slice(0, 1))).body.results).toEqual([{ id: ids[0].id, outcome: 'unknown' }])
  })

  it('answers an empty pop 200 with an empty array, and an empty push 201 pushed:0', async () => {
    expect(await pop('nothing-here')).toMatchObject({ status: 200, body: { queue: 'nothing-here', messages: [] } })
    expect(await push('nothing-here', [])).toMatchObject({ status: 201, body: { pushed: 0 } })
  })

  it('keeps FIFO per partition and scopes a pop to one partition when asked', async () => {
    await push('parts', ['a1', 'a2'], { partition: 'a' })
    await push('parts', ['b1'], { partition: 'b' })
    await push('parts', ['a3'], { partition: 'a' })
    const onlyB = await pop('parts', { partition: 'b', batch: 10, autoAck: true })
    expect(payloadsOf(onlyB.body)).toEqual(['b1'])
    expect(onlyB.body.messages[0].partition).toBe('b')
    expect(payloadsOf((await pop('parts', { batch: 10, autoAck: true })).body)).toEqual(['a1', 'a2', 'a3'])
  })

  it('pops queue-wide past what partition pops delivered, in number order, whatever the gaps', async () => {
    await push('gaps', ['a1', 'a2', 'a3', 'a4', 'a5'], { partition: 'a' })
    await push('gaps', ['b1'], { partition: 'b' })
    await push('gaps', ['a6'], { partition: 'a' })
    expect(payloadsOf((await pop('gaps', { partition: 'a', batch: 3, autoAck: true })).body)).toEqual(['a1', 'a2', 'a3'])
    expect(payloadsOf((await pop('gaps', { batch: 2, autoAck: true })).body)).toEqual(['a4', 'a5'])
    expect(payloadsOf((await pop('gaps', { batch: 1, autoAck: true })).body)).toEqual(['b1'])
    expect(payloadsOf((await pop('gaps', { partition: 'a', batch: 10, autoAck: true })).body)).toEqual(['a6'])
    expect(payloadsOf((await pop('gaps', { batch: 10, autoAck: true })).body)).toEqual([])
  })

  it('gives every group its own cursor and shares one between the consumers of a group', async () => {
    await push('fan', [1, 2, 3, 4])
    const a = await pop('fan', { group: 'a', batch: 10, autoAck: true })
    const b1 = await pop('fan', { group: 'b', batch: 2, autoAck: true })
    const b2 = await pop('fan', { group: 'b', batch: 10, autoAck: true })
    expect(payloadsOf(a.body)).toEqual([1, 2, 3, 4])
    expect(payloadsOf(b1.body)).toEqual([1, 2])
    expect(payloadsOf(b2.body)).toEqual([3, 4])
    // Queue mode is a cursor of its own too.
    expect(payloadsOf((await pop('fan', { batch: 10, autoAck: true })).body)).toEqual([1, 2, 3, 4])
  })

  it('redelivers a failed or retried message at once with attempts + 1, and drops it past retryLimit', async () => {
    expect((await configure('retry', { retryLimit: 1 })).status).toBe(201)
    await push('retry', ['x'])
    const first = (await pop('retry', { group: 'g' })).body.messages[0]
    expect((await ack('retry', [{ id: first.id, status: 'failed' }], 'g')).body.results).toEqual([{ id: first.id, outcome: 'redelivered' }])
    const second = (await pop('retry', { group: 'g' })).body.messages[0]
    expect(second).toMatchObject({ payload: 'x', attempts: 1 })
    expect(second.id).not.toBe(first.id)
    // The first delivery's id no longer names a lease.
    expect((await ack('retry', [{ id: first.id }], 'g')).body.results[0].outcome).toBe('unknown')
    expect((await ack('retry', [{ id: second.id, status: 'retry' }], 'g')).body.results[0].outcome).toBe('redelivered')
    // retryLimit 1: a second redelivery is a drop, counted.
    expect((await pop('retry', { group: 'g' })).body.messages).toEqual([])
    const listed = (await app.json('GET', '/api/v1/ephemeral/queues', undefined, A)).body.queues.find((q: { queue: string }) => q.queue === 'retry')
    expect(listed.drops).toEqual({ bounds: 0, ttl: 0, retry: 1 })
  })

  it('redelivers after the lease expires, and the late ack of the first delivery is unknown', async () => {
    await push('lease', ['y'])
    const first = (await pop('lease')).body.messages[0]
    await app.database.sql(`update queen.ephemeral_leases set lease_until = now() - interval '1 second' where queue = 'lease'`)
    const again = (await pop('lease')).body.messages[0]
    expect(again).toMatchObject({ payload: 'y', attempts: 1 })
    expect((await ack('lease', [{ id: first.id }, { id: again.id }, { id: again.id }])).body.results.map((r: { outcome: string }) => r.outcome)).toEqual([
      'unknown',
      'acked',
      'unknown',
    ])
  })

  it('leases a pop as one row that partial acks shrink, and redelivers only the members left in it', async () => {
    await push('partial', ['p0', 'p1', 'p2', 'p3', 'p4'])
    const got = (await pop('partial', { group: 'g', batch: 5 })).body.messages
    const leaseRows = () => rows(`select count(*)::int as n from queen.ephemeral_leases where queue = 'partial'`)
    const members = () => rows(`select coalesce(sum(cardinality(seqs)), 0)::int as n from queen.ephemeral_leases where queue = 'partial'`)
    expect(await leaseRows()).toBe(1)
    expect(await members()).toBe(5)
    const settled = await ack('partial', [{ id: got[0].id }, { id: got[3].id }, { id: got[1].id, status: 'failed' }], 'g')
    expect(settled.body.results.map((r: { outcome: string }) => r.outcome)).toEqual(['acked', 'acked', 'redelivered'])
    // The pop's row keeps p2 and p4; the handed-back p1 sits in a row of its own.
    expect(await leaseRows()).toBe(2)
    expect(await members()).toBe(3)
    expect((await depth('partial', 'g')).body.pending).toBe(3)
    const again = (await pop('partial', { group: 'g', batch: 5 })).body.messages
    expect(again.map((m: { payload: string; attempts: number }) => [m.payload, m.attempts])).toEqual([['p1', 1]])
    await app.database.sql(`update queen.ephemeral_leases set lease_until = now() - interval '1 second' where queue = 'partial'`)
    const expired = (await pop('partial', { group: 'g', batch: 5 })).body.messages
    expect(expired.map((m: { payload: string; attempts: number }) => [m.payload, m.attempts])).toEqual([
      ['p1', 2],
      ['p2', 1],
      ['p4', 1],
    ])
    // The original ids of p2 and p4 no longer name a lease; the redelivered ones settle everything.
    expect((await ack('partial', [{ id: got[2].id }, { id: got[4].id }], 'g')).body.results.map((r: { outcome: string }) => r.outcome)).toEqual([
      'unknown',
      'unknown',
    ])
    const all = await ack('partial', expired.map((m: { id: string }) => ({ id: m.id })), 'g')
    expect(all.body.results.every((r: { outcome: string }) => r.outcome === 'acked')).toBe(true)
    expect(await leaseRows()).toBe(0)
    expect((await depth('partial', 'g')).body.pending).toBe(0)
  })

  it("settles a whole pop's ack by deleting its lease row, and a whole pop's ids of an earlier attempt settle nothing", async () => {
    await push('whole', ['w0', 'w1', 'w2'])
    const leaseRows = () => rows(`select count(*)::int as n from queen.ephemeral_leases where queue = 'whole'`)
    const first = (await pop('whole', { group: 'g', batch: 3 })).body.messages
    await app.database.sql(`update queen.ephemeral_leases set lease_until = now() - interval '1 second' where queue = 'whole'`)
    const again = (await pop('whole', { group: 'g', batch: 3 })).body.messages
    expect(again.map((m: { attempts: number }) => m.attempts)).toEqual([1, 1, 1])
    // The same numbers at attempt 0: exactly the row's members, but not the deliveries it holds.
    const stale = await ack('whole', first.map((m: { id: string }) => ({ id: m.id })), 'g')
    expect(stale.body.results.map((r: { outcome: string }) => r.outcome)).toEqual(['unknown', 'unknown', 'unknown'])
    expect(await leaseRows()).toBe(1)
    // In another order, every id of the redelivery: each acked, the row gone.
    const settled = await ack('whole', [again[2], again[0], again[1]].map((m: { id: string }) => ({ id: m.id })), 'g')
    expect(settled.body.results).toEqual([again[2], again[0], again[1]].map((m: { id: string }) => ({ id: m.id, outcome: 'acked' })))
    expect(await leaseRows()).toBe(0)
    expect((await depth('whole', 'g')).body.pending).toBe(0)
  })

  it('answers stale for an id of an incarnation that is gone, and unknown for an id it never minted', async () => {
    await push('stale', ['z'])
    const m = (await pop('stale')).body.messages[0]
    // What crash recovery does to the unlogged tables (test/ephemeral-survival.test.ts does it for real).
    await app.database.sql(`truncate queen.ephemeral_incarnation, queen.ephemeral_leases, queen.ephemeral_messages`)
    const results = (await ack('stale', [{ id: m.id }, { id: 'not-an-id' }])).body.results
    expect(results).toEqual([
      { id: m.id, outcome: 'stale' },
      { id: 'not-an-id', outcome: 'unknown' },
    ])
  })

  it('settles ids of a partition holding : and ., and answers unknown for every malformed variant of a real id', async () => {
    await push('odd-ids', ['a', 'b'], { partition: 'p:1.2:x' })
    const [a, b] = (await pop('odd-ids', { batch: 2 })).body.messages as { id: string }[]
    expect(a!.id).toMatch(/^e:[^:]+:p:1\.2:x:\d+$/)
    const epoch = a!.id.split(':')[1]
    const seq = a!.id.split(':').at(-1)
    const malformed = [`${a!.id}.`, `${a!.id}.1.2`, `${a!.id}x`, `${a!.id}.x`, `e::p:${seq}`, `e:${epoch}:${seq}`, `x:${epoch}:p:${seq}`, `e:${epoch}:p:${'9'.repeat(19)}`]
    const results = (await ack('odd-ids', [...malformed.map((id) => ({ id })), { id: a!.id }, { id: a!.id }, { id: b!.id, status: 'retry' }])).body.results
    expect(results.map((r: { outcome: string }) => r.outcome)).toEqual([...malformed.map(() => 'unknown'), 'acked', 'unknown', 'redelivered'])
    // The redelivered one comes back with its attempt in its id; the id of its first delivery settles nothing.
    const again = (await pop('odd-ids')).body.messages[0] as { id: string; attempts: number }
    expect(again).toMatchObject({ id: `${b!.id}.1`, attempts: 1 })
    expect((await ack('odd-ids', [{ id: b!.id }, { id: again.id }])).body.results.map((r: { outcome: string }) => r.outcome)).toEqual(['unknown', 'acked'])
  })

  it("answers through ephemeral_ack_v1, which parses the ids in SQL for the previous release's brokers, as the route does", async () => {
    await push('v1-ids', ['a', 'b', 'c'], { partition: 'p:1.2:x' })
    const [a, b, c] = (await pop('v1-ids', { batch: 3 })).body.messages as { id: string }[]
    const epoch = a!.id.split(':')[1]
    const seq = a!.id.split(':').at(-1)
    const malformed = [`${a!.id}.`, `${a!.id}.1.2`, `${a!.id}x`, `${a!.id}.x`, `e::p:${seq}`, `e:${epoch}:${seq}`, `x:${epoch}:p:${seq}`, `e:${epoch}:p:${'9'.repeat(19)}`]
    const stale = `e:gone${epoch}:p:1`
    const acks = [...malformed.map((id) => ({ id })), { id: stale }, { id: a!.id }, { id: a!.id }, { id: b!.id, status: 'retry' }, { id: c!.id, status: 'failed' }]
    const [row] = await app.database.sql<{ r: { results: { id: string; outcome: string }[] } }>(
      `select queen.ephemeral_ack_v1('acme', 'v1-ids', '', $1::jsonb) as r`,
      [JSON.stringify(acks)],
    )
    expect(row!.r.results).toEqual(acks.map((x, i) => ({ id: x.id, outcome: [...malformed.map(() => 'unknown'), 'stale', 'acked', 'unknown', 'redelivered', 'redelivered'][i] })))
    expect(payloadsOf((await pop('v1-ids', { batch: 10 })).body)).toEqual(['b', 'c'])
  })

  it('wakes a parked pop when a push arrives', async () => {
    const parked = pop('wake', { wait: true, timeout: 20_000, group: 'w' })
    // The pop has parked once its first check found nothing.
    while (!waker.waits.some((w) => w.keys.includes('ephemeral:acme|wake') && w.outcome === undefined)) await new Promise((r) => setTimeout(r, 10))
    await push('wake', ['hello'])
    const answered = await parked
    expect(payloadsOf(answered.body)).toEqual(['hello'])
    expect(waker.waits.filter((w) => w.keys.includes('ephemeral:acme|wake')).map((w) => w.outcome)).toContain('woken')
  })
})

describe('ephemeral metrics', () => {
  it('counts pushed and popped messages and ack verdicts on /metrics/prometheus', async () => {
    await push('counted', [1, 2])
    const popped = (await pop('counted', { batch: 10 })).body.messages
    await ack('counted', [{ id: popped[0].id }, { id: 'e:gone:Default:1' }])
    const text = (await app.json('GET', '/metrics/prometheus')).body as string
    const value = (line: string) => Number(text.split('\n').find((l) => l.startsWith(line + ' '))?.slice(line.length + 1))
    expect(value('queen_ephemeral_pushed_messages_total')).toBeGreaterThanOrEqual(2)
    expect(value('queen_ephemeral_popped_messages_total')).toBeGreaterThanOrEqual(2)
    expect(value('queen_ephemeral_acks_total{outcome="acked"}')).toBeGreaterThanOrEqual(1)
    expect(value('queen_ephemeral_acks_total{outcome="stale"}')).toBeGreaterThanOrEqual(1)
  })
})

describe('ephemeral configure, bounds and ttl', () => {
  it('stores the declaration as sent and echoes it 201', async () => {
    const options = { maxBytes: 1048576, maxLength: 1000, policy: 'dropOldest', ttlSeconds: 30, leaseSeconds: 15, retryLimit: 3, windowBuffer: { ms: 20, count: 50 } }
    expect(await configure('declared', options)).toMatchObject({ status: 201, body: { queue: 'declared', options } })
    const listed = (await app.json('GET', '/api/v1/ephemeral/queues', undefined, A)).body.queues.find((q: { queue: string }) => q.queue === 'declared')
    expect(listed).toMatchObject({ tier: 'declared', depth: 0, options })
  })

  it('refuses an unknown option naming the options that exist, and a non-integer bound, writing nothing', async () => {
    const unknown = await configure('bad-options', { ttlSecond: 30 })
    expect(unknown.status).toBe(400)
    expect(unknown.body.code).toBe('ephemeral_bad_request')
    expect(unknown.body.error).toMatch(/ttlSecond/)
    expect(unknown.body.error).toMatch(/ttlSeconds/)
    for (const options of [{ ttlSeconds: 1.5 }, { maxLength: -1 }, { policy: 'drop' }, { windowBuffer: { ms: 1 } }]) {
      const refused = await configure('bad-options', options)
      expect(refused.status, JSON.stringify(options)).toBe(400)
      expect(refused.body.code).toBe('ephemeral_bad_request')
    }
    expect(await rows(`select count(*)::int as n from queen.ephemeral_declarations where queue = 'bad-options'`)).toBe(0)
  })

  it('refuses a push past maxLength under reject with 429 queue_full and appends nothing', async () => {
    await configure('full', { maxLength: 3 })
    expect((await push('full', [1, 2])).status).toBe(201)
    const refused = await push('full', [3, 4])
    expect(refused.status).toBe(429)
    expect(refused.body.code).toBe('queue_full')
    expect(refused.headers.get('retry-after')).toBe('1')
    expect((await depth('full')).body.pending).toBe(2)
    // Once a consumer has taken them, the ring has room again.
    await pop('full', { batch: 10, autoAck: true })
    expect((await push('full', [3, 4, 5])).status).toBe(201)
  })

  it('drops the oldest under dropOldest and counts the drops', async () => {
    await configure('feed', { maxLength: 3, policy: 'dropOldest' })
    await push('feed', [1, 2, 3])
    await push('feed', [4, 5])
    expect(payloadsOf((await pop('feed', { batch: 10, autoAck: true })).body)).toEqual([3, 4, 5])
    const listed = (await app.json('GET', '/api/v1/ephemeral/queues', undefined, A)).body.queues.find((q: { queue: string }) => q.queue === 'feed')
    expect(listed.drops.bounds).toBe(2)
  })

  it('never delivers a message older than ttlSeconds, and drops it at the next push', async () => {
    await configure('ttl', { ttlSeconds: 60 })
    await push('ttl', ['old'])
    await app.database.sql(`update queen.ephemeral_messages set created_at = now() - interval '2 minutes' where queue = 'ttl'`)
    expect((await pop('ttl', { group: 'g' })).body.messages).toEqual([])
    await push('ttl', ['new'])
    expect(payloadsOf((await pop('ttl', { group: 'g' })).body)).toEqual(['new'])
    const listed = (await app.json('GET', '/api/v1/ephemeral/queues', undefined, A)).body.queues.find((q: { queue: string }) => q.queue === 'ttl')
    expect(listed.drops.ttl).toBe(1)
  })
})

describe('ephemeral reset, delete, queues and depth', () => {
  it('reset drops the contents and keeps the declaration; delete removes both; neither answers 404', async () => {
    await configure('rd', { maxLength: 100 })
    await push('rd', [1, 2, 3])
    expect((await app.json('POST', '/api/v1/ephemeral/reset', { queue: 'rd' }, A)).body).toEqual({ queue: 'rd', dropped: 3 })
    expect((await pop('rd')).body.messages).toEqual([])
    expect((await depth('rd')).body.tier).toBe('declared')
    expect((await app.json('DELETE', '/api/v1/ephemeral/queue/rd', undefined, A)).body).toEqual({ queue: 'rd', deleted: true, declared: true })
    expect((await app.json('DELETE', '/api/v1/ephemeral/queue/rd', undefined, A)).body).toEqual({ queue: 'rd', deleted: false, declared: false })
    expect((await app.json('POST', '/api/v1/ephemeral/reset', { queue: 'never' }, A)).body).toEqual({ queue: 'never', dropped: 0 })
  })

  it('reads depth per partition and per group, and answers 404 ephemeral_queue_not_found for a missing queue', async () => {
    await push('deep', ['a', 'b'], { partition: 'p1' })
    await push('deep', ['c'], { partition: 'p2' })
    await pop('deep', { group: 'slow', batch: 1 })
    await pop('deep', { group: 'fast', batch: 10, autoAck: true })
    const all = await depth('deep')
    expect(all.body).toMatchObject({ queue: 'deep', group: null, tier: 'implicit', pending: 3, partitionsPending: 2 })
    expect(all.body.partitions.map((p: { partition: string; pending: number }) => [p.partition, p.pending])).toEqual([
      ['p1', 2],
      ['p2', 1],
    ])
    // slow holds a lease on one and has two undelivered: all three are pending for it.
    expect(all.body.groups).toEqual([
      { group: 'fast', pending: 0, skipped: 0 },
      { group: 'slow', pending: 3, skipped: 0 },
    ])
    expect((await depth('deep', 'fast')).body).toMatchObject({ group: 'fast', pending: 0, partitionsPending: 0 })
    const missing = await depth('no-such-queue')
    expect(missing.status).toBe(404)
    expect(missing.body.code).toBe('ephemeral_queue_not_found')
    const listed = (await app.json('GET', '/api/v1/ephemeral/queues', undefined, A)).body.queues.find((q: { queue: string }) => q.queue === 'deep')
    expect(listed).toMatchObject({ tier: 'implicit', depth: 3, partitions: 2, groups: 2 })
    expect(listed.groupDepths).toEqual([
      { group: 'fast', pending: 0 },
      { group: 'slow', pending: 3 },
    ])
  })
})

describe('ephemeral tenancy and input', () => {
  it("keeps tenants apart: another tenant's queue of the same name is its own", async () => {
    await push('mine', ['secret'])
    expect((await depth('mine', undefined, B)).status).toBe(404)
    expect((await app.json('GET', '/api/v1/ephemeral/queues', undefined, B)).body.queues.map((q: { queue: string }) => q.queue)).not.toContain('mine')
    // A pop creates the queue implicitly, for its own tenant.
    expect((await pop('mine', {}, B)).body.messages).toEqual([])
    expect((await depth('mine', undefined, B)).body.pending).toBe(0)
    expect((await depth('mine')).body.pending).toBe(1)
    expect(payloadsOf((await pop('mine')).body)).toEqual(['secret'])
  })

  it('refuses bad input 400 ephemeral_bad_request and writes nothing', async () => {
    const before = await rows(`select count(*)::int as n from queen.ephemeral_messages`)
    const refusals = [
      await app.json('POST', '/api/v1/ephemeral/push', { messages: [{ payload: 1 }] }, A),
      await app.json('POST', '/api/v1/ephemeral/push', { queue: 'bad', messages: [{ payload: 1, transactionId: 't' }] }, A),
      await app.json('POST', '/api/v1/ephemeral/push', { queue: 'bad', messages: [{ data: 1 }] }, A),
      await app.json('POST', '/api/v1/ephemeral/push', { queue: 'bad', messages: Array.from({ length: 10_001 }, () => ({ payload: 1 })) }, A),
      await app.json('POST', '/api/v1/ephemeral/push', { queue: 'x'.repeat(513), messages: [{ payload: 1 }] }, A),
      await app.json('POST', '/api/v1/ephemeral/push', { queue: 'é'.repeat(257), messages: [{ payload: 1 }] }, A),
      await app.json('POST', '/api/v1/ephemeral/push', { queue: 'bad', partition: 'a\tb', messages: [{ payload: 1 }] }, A),
      await pop('bad', { batch: 'many' }),
      await pop('bad', { wait: 'perhaps' }),
      await app.json('GET', '/api/v1/ephemeral/pop', undefined, A),
      await app.json('POST', '/api/v1/ephemeral/ack', { queue: 'bad', acks: [{ id: 'e:1:Default:1', status: 'done' }] }, A),
      await app.json('POST', '/api/v1/ephemeral/ack', { queue: 'bad', acks: [{ status: 'completed' }] }, A),
      await app.json('POST', '/api/v1/ephemeral/reset', {}, A),
    ]
    for (const [i, r] of refusals.entries()) {
      expect(r.status, `refusal ${i}`).toBe(400)
      expect(r.body.code, `refusal ${i}`).toBe('ephemeral_bad_request')
      expect(typeof r.body.error).toBe('string')
    }
    expect(await rows(`select count(*)::int as n from queen.ephemeral_messages`)).toBe(before)
    expect(await rows(`select count(*)::int as n from queen.ephemeral_rings where queue = 'bad'`)).toBe(0)
  })
})

describe('ephemeral kill switch', () => {
  it('answers every ephemeral route 503 ephemeral_disabled with Retry-After while off, and serves again when on', async () => {
    const state = await app.json('GET', '/api/v1/system/ephemeral', undefined, A)
    expect(state.body).toMatchObject({ ephemeralEnabled: true, cellMaxBytes: null, grantedTenants: 0, requireGrant: false })
    expect(typeof state.body.epoch).toBe('string')
    expect((await app.json('POST', '/api/v1/system/ephemeral', { enabled: false }, A)).body.ephemeralEnabled).toBe(false)
    try {
      const answers = [
        await push('off', [1]),
        await pop('off'),
        await ack('off', [{ id: 'e:x:Default:1' }]),
        await configure('off', {}),
        await app.json('POST', '/api/v1/ephemeral/reset', { queue: 'off' }, A),
        await app.json('DELETE', '/api/v1/ephemeral/queue/off', undefined, A),
        await app.json('GET', '/api/v1/ephemeral/queues', undefined, A),
        await depth('off'),
      ]
      for (const a of answers) {
        expect(a.status).toBe(503)
        expect(a.body.code).toBe('ephemeral_disabled')
        expect(a.headers.get('retry-after')).toBe('5')
      }
      expect((await app.json('GET', '/api/v1/system/ephemeral', undefined, A)).body.ephemeralEnabled).toBe(false)
    } finally {
      expect((await app.json('POST', '/api/v1/system/ephemeral', { enabled: true }, A)).body.ephemeralEnabled).toBe(true)
    }
    expect((await push('off', [1])).status).toBe(201)
    expect((await app.json('POST', '/api/v1/system/ephemeral', {}, A)).status).toBe(400)
  })
})

describe('ephemeral role sets', () => {
  let authed: TestApp
  beforeAll(async () => {
    authed = await testApp({ database: app.database, env: { JWT_ENABLED: 'true', JWT_SECRET: SECRET } })
  })
  afterAll(() => authed.close())

  it('lets write-only push, read-write pop and ack, read-only read, and only admin flip the switch', async () => {
    const as = async (role: string) => bearer(await token({ role }))
    const pushBody = { queue: 'roles', messages: [{ payload: 1 }] }
    expect((await authed.json('POST', '/api/v1/ephemeral/push', pushBody, await as('write-only'))).status).toBe(201)
    expect((await authed.json('POST', '/api/v1/ephemeral/push', pushBody, await as('read-only'))).status).toBe(403)
    expect((await authed.json('GET', '/api/v1/ephemeral/pop?queue=roles', undefined, await as('write-only'))).status).toBe(403)
    expect((await authed.json('GET', '/api/v1/ephemeral/pop?queue=roles', undefined, await as('read-only'))).status).toBe(403)
    expect((await authed.json('GET', '/api/v1/ephemeral/pop?queue=roles', undefined, await as('read-write'))).status).toBe(200)
    expect((await authed.json('POST', '/api/v1/ephemeral/configure', { queue: 'roles', options: {} }, await as('read-only'))).status).toBe(403)
    expect((await authed.json('GET', '/api/v1/ephemeral/queues', undefined, await as('read-only'))).status).toBe(200)
    expect((await authed.json('GET', '/api/v1/ephemeral/queues/roles/depth', undefined, await as('read-only'))).status).toBe(200)
    expect((await authed.json('POST', '/api/v1/system/ephemeral', { enabled: true }, await as('read-write'))).status).toBe(403)
    expect((await authed.json('GET', '/api/v1/system/ephemeral', undefined, await as('admin'))).status).toBe(200)
  })
})
