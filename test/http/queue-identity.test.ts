// Queue identity and visibility (issue #3 items 8-9, q&r, ENGINE 2.1, 10.5, 11.2, D11):
// auto-creation by push and pop with one derivation of namespace/task, partitions only from
// pushes that name them, and configure changes seen by the very next pop and push on another
// broker instance over the same database (no cache, no mesh).
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { testApp, type TestApp } from '../helpers/app.js'
import { pop, push } from '../helpers/engine.js'

const KEY = 'b'.repeat(64)

let a: TestApp
let b: TestApp
beforeAll(async () => {
  a = await testApp({ env: { QUEEN_ENCRYPTION_KEY: KEY } })
  b = await testApp({ database: a.database, env: { QUEEN_ENCRYPTION_KEY: KEY } })
})
afterAll(async () => {
  await b.close()
  await a.close()
})

const configure = (app: TestApp, body: Record<string, unknown>) => app.json('POST', '/api/v1/configure', body)
const options = async (queue: string) =>
  (await a.database.sql<{ o: Record<string, unknown> }>('select queen._queue_options(q) as o from queen.queues q where name = $1', [queue]))[0]?.o
const partitions = async (queue: string) =>
  (await a.database.sql<{ name: string }>('select p.name from queen.log_partitions p join queen.queues q on q.id = p.queue_id where q.name = $1 order by 1', [queue])).map((r) => r.name)

describe('auto-creation', () => {
  it('a first push creates the queue with column defaults and the derived namespace and task', async () => {
    await push(a, [{ queue: 'billing.invoice', payload: 1 }])
    await configure(a, { queue: 'reference.invoice', mode: 'replace' })
    expect(await options('billing.invoice')).toEqual({ ...(await options('reference.invoice')), namespace: 'billing', task: 'invoice' })
  })

  it('a queue-scoped pop on an unknown name creates the queue row, no partition, and answers 204', async () => {
    const res = await pop(a, 'consumer.first')
    expect(res.status).toBe(204)
    expect(await options('consumer.first')).toMatchObject({ namespace: 'consumer', task: 'first', leaseTime: 300 })
    expect(await partitions('consumer.first')).toEqual([])
  })

  it('a pop of a named partition never creates that partition; only a push naming it does', async () => {
    await pop(a, 'parts', {}, 'p-from-pop')
    expect(await partitions('parts')).toEqual([])
    await push(a, [{ queue: 'parts', partition: 'p-from-push', payload: 1 }])
    expect(await partitions('parts')).toEqual(['p-from-push'])
  })

  it('derives namespace and task the same way on every create path and on replace and null', async () => {
    await push(a, [{ queue: 'd.push.x', payload: 1 }])
    await pop(a, 'd.pop.x')
    await configure(a, { queue: 'd.configure.x' })
    await configure(a, { queue: 'd.replace.x', namespace: 'other', task: 'other' })
    await configure(a, { queue: 'd.replace.x', mode: 'replace' })
    await configure(a, { queue: 'd.null.x', namespace: 'other', task: 'other' })
    await configure(a, { queue: 'd.null.x', options: { namespace: null, task: null } })
    for (const queue of ['d.push.x', 'd.pop.x', 'd.configure.x', 'd.replace.x', 'd.null.x']) {
      expect(await options(queue), queue).toMatchObject({ namespace: 'd', task: queue.split('.')[1] })
    }
  })

  it('a configured queue that a push then uses keeps its configuration', async () => {
    await configure(a, { queue: 'preconfigured', leaseTime: 42, dedupWindowSeconds: 5 })
    await push(b, [{ queue: 'preconfigured', payload: 1 }])
    expect(await options('preconfigured')).toMatchObject({ leaseTime: 42, dedupWindowSeconds: 5 })
  })
})

describe('configure changes are visible at once on another instance', () => {
  it('a leaseTime change applies to the next pop on the other instance', async () => {
    const leaseSeconds = async (leaseId: string) =>
      (await a.database.sql<{ s: number }>('select extract(epoch from lease_expires_at - now())::float8 as s from queen.log_consumers where lease_id = $1', [leaseId]))[0]!.s
    await push(a, [{ queue: 'lease-vis', payload: 1 }, { queue: 'lease-vis', payload: 2 }])
    const first = await pop(b, 'lease-vis', { batch: 1 })
    expect(await leaseSeconds(first.leaseId)).toBeGreaterThan(290)
    await b.json('POST', '/api/v1/ack/batch', {
      acknowledgments: first.messages.map((m) => ({ transactionId: m.transactionId, partitionId: m.partitionId, leaseId: m.leaseId, status: 'completed' })),
    })
    await configure(a, { queue: 'lease-vis', leaseTime: 7 })
    const second = await pop(b, 'lease-vis', { batch: 1 })
    expect(second.messages.map((m) => m.data)).toEqual([2])
    const seconds = await leaseSeconds(second.leaseId)
    expect(seconds).toBeGreaterThan(0)
    expect(seconds).toBeLessThanOrEqual(7)
  })

  it('an encryptionEnabled change applies to the next push on the other instance, both ways', async () => {
    const stored = async () =>
      (await a.database.sql<{ enc: boolean; data: unknown }>(`
        select (f ->> 'enc')::boolean as enc, f -> 'data' as data
          from queen.log_segments s cross join lateral unnest(s.frames) with ordinality as u(f, n)
          join queen.log_partitions p on p.id = s.partition_id join queen.queues q on q.id = p.queue_id
         where q.name = 'enc-vis' order by s.base_offset, u.n`))
    await push(b, [{ queue: 'enc-vis', payload: { secret: 'one' } }]) // b now believes the queue is clear
    await configure(a, { queue: 'enc-vis', encryptionEnabled: true })
    await push(b, [{ queue: 'enc-vis', payload: { secret: 'two' } }])
    await configure(a, { queue: 'enc-vis', encryptionEnabled: false })
    await push(b, [{ queue: 'enc-vis', payload: { secret: 'three' } }])
    const frames = await stored()
    expect(frames.map((f) => f.enc)).toEqual([false, true, false])
    expect(JSON.stringify(frames[1]!.data)).not.toContain('two')
    // Every instance reads them back in plaintext, in order.
    const popped = await pop(a, 'enc-vis', { batch: 10 })
    expect(popped.messages.map((m) => m.data)).toEqual([{ secret: 'one' }, { secret: 'two' }, { secret: 'three' }])
  })
})
