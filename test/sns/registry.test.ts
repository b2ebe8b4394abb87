import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createDatabase, type Database } from '../../src/db/database.js'
import { createNodePool } from '../../src/db/node-pool.js'
import { tenantDatabase } from '../../src/db/tenant-database.js'
import {
  createSubscription,
  createTopic,
  deleteSubscription,
  deleteTopic,
  getSubscription,
  getTopic,
  listSubscriptions,
  listTopics,
  replaceSubscription,
  replaceTopic,
  SNS_NAMESPACE,
  type SubscriptionRecord,
  type TopicRecord,
  topicSubscriptions,
} from '../../src/sns/registry.js'
import { freshDatabase, type TestDatabase } from '../helpers/database.js'

let database: TestDatabase
let db: Database

beforeAll(async () => {
  database = await freshDatabase()
  db = createDatabase(createNodePool({ connectionString: database.appUrl, max: 2 }), { longLived: true })
})
afterAll(async () => {
  await db.close()
  await database.drop()
})

const ARN = 'arn:aws:sns:us-east-1:000000000000'
const topic = (name: string): TopicRecord => ({
  name,
  arn: `${ARN}:${name}`,
  fifo: name.endsWith('.fifo'),
  attributes: {},
  tags: {},
  createdAt: '2026-12-07T00:00:00.000Z',
})
const subscription = (topicName: string, id: string, endpoint: string): SubscriptionRecord => ({
  id,
  arn: `${ARN}:${topicName}:${id}`,
  topicName,
  topicArn: `${ARN}:${topicName}`,
  protocol: 'sqs',
  endpoint,
  owner: '000000000000',
  attributes: {},
})

describe('the SNS registry in the KV store', () => {
  it('creates a topic once and answers the stored record to a second create', async () => {
    const t = tenantDatabase(db, '')
    const first = await createTopic(t, topic('orders'))
    expect(first.created).toBe(true)
    const second = await createTopic(t, { ...topic('orders'), attributes: { DisplayName: 'other' } })
    expect(second.created).toBe(false)
    expect(second.topic.record.attributes).toEqual({})
    const rows = await database.sql('select key from queen.kv_entries where ns = $1 order by key', [SNS_NAMESPACE])
    expect(rows.map((r) => r.key)).toEqual(['t:orders'])
  })

  it('keeps topics per tenant', async () => {
    await createTopic(tenantDatabase(db, 'acme'), topic('acme-only'))
    expect(await getTopic(tenantDatabase(db, 'acme'), 'acme-only')).not.toBeNull()
    expect(await getTopic(tenantDatabase(db, ''), 'acme-only')).toBeNull()
  })

  it('compare-and-set refuses a write based on a stale version', async () => {
    const t = tenantDatabase(db, '')
    const read = (await getTopic(t, 'orders'))!
    expect(await replaceTopic(t, { ...read, record: { ...read.record, tags: { a: '1' } } })).toBe(true)
    expect(await replaceTopic(t, { ...read, record: { ...read.record, tags: { b: '2' } } })).toBe(false)
    expect((await getTopic(t, 'orders'))!.record.tags).toEqual({ a: '1' })
  })

  it('subscribes once per endpoint and answers the existing subscription to a repeat', async () => {
    const t = tenantDatabase(db, '')
    const a = await createSubscription(t, subscription('orders', 'id-a', 'arn:aws:sqs:us-east-1:000000000000:q1'))
    expect(a.created).toBe(true)
    const again = await createSubscription(t, { ...subscription('orders', 'id-b', 'arn:aws:sqs:us-east-1:000000000000:q1'), attributes: { RawMessageDelivery: 'true' } })
    expect(again.created).toBe(false)
    expect(again.subscription.id).toBe('id-a')
    expect(again.subscription.attributes).toEqual({})
    await createSubscription(t, subscription('orders', 'id-c', 'arn:aws:sqs:us-east-1:000000000000:q2'))
    expect((await topicSubscriptions(t, 'orders')).map((s) => s.id).sort()).toEqual(['id-a', 'id-c'])
  })

  it('updates a subscription under its version and unsubscribes it with its index', async () => {
    const t = tenantDatabase(db, '')
    const read = (await getSubscription(t, 'orders', 'id-c'))!
    expect(await replaceSubscription(t, { ...read, record: { ...read.record, attributes: { RawMessageDelivery: 'true' } } })).toBe(true)
    expect(await replaceSubscription(t, read)).toBe(false)
    expect(await deleteSubscription(t, read.record)).toBe(true)
    expect(await deleteSubscription(t, read.record)).toBe(false)
    // The endpoint is free again: a new Subscribe creates a new subscription.
    const back = await createSubscription(t, subscription('orders', 'id-d', read.record.endpoint))
    expect(back.created).toBe(true)
  })

  it('pages topics and subscriptions in key order', async () => {
    const t = tenantDatabase(db, '')
    for (const name of ['p1', 'p2', 'p3']) await createTopic(t, topic(name))
    const first = await listTopics(t, undefined, 2)
    expect(first.records.map((r) => r.name)).toEqual(['orders', 'p1'])
    const second = await listTopics(t, first.next!, 2)
    expect(second.records.map((r) => r.name)).toEqual(['p2', 'p3'])
    expect(second.next).toBeNull()
    const subs = await listSubscriptions(t, 'orders', undefined, 1)
    expect(subs.records).toHaveLength(1)
    expect(subs.next).not.toBeNull()
    expect((await listSubscriptions(t, null, undefined, 100)).records).toHaveLength(2)
  })

  it('deleting a topic cascades to its subscriptions and endpoint indexes', async () => {
    const t = tenantDatabase(db, '')
    expect(await deleteTopic(t, 'orders')).toBe(true)
    expect(await deleteTopic(t, 'orders')).toBe(false)
    const rows = await database.sql(`select key from queen.kv_entries where ns = $1 and tenant_id = '' and key like '%orders%'`, [SNS_NAMESPACE])
    expect(rows).toEqual([])
  })

  it('stores a filter policy larger than a client KV value may be', async () => {
    const t = tenantDatabase(db, '')
    await createTopic(t, topic('big'))
    const policy = JSON.stringify({ k: ['x'.repeat(200 * 1024)] })
    const big = { ...subscription('big', 'id-big', 'arn:aws:sqs:us-east-1:000000000000:q9'), attributes: { FilterPolicy: policy } }
    expect((await createSubscription(t, big)).created).toBe(true)
    expect((await getSubscription(t, 'big', 'id-big'))!.record.attributes.FilterPolicy).toBe(policy)
  })
})
