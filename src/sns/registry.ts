// SNS topics and subscriptions, kept in the tenant's key/value store under the namespace
// `queen.sns` (docs/sns.md). Nothing about SNS reaches the message engine: a topic is a key, a
// subscription is another, and every replica and Worker reads the same rows, so any of them can
// answer any SNS request. Writes that must not race (creating a topic, subscribing once per
// endpoint, editing attributes) use the store's version preconditions rather than a lock.
import type { TenantDatabase } from '../db/tenant-database.js'
import { KV_LIMITS } from '../kv/limits.js'

export const SNS_NAMESPACE = 'queen.sns'

/** A filter policy may be 256 KB at AWS, so records get a larger value ceiling than client KV calls. */
const SNS_KV_LIMITS = { ...KV_LIMITS, maxValueBytes: 320 * 1024 }

/** The smallest part of the database handle the registry needs (tests pass a real tenant handle). */
export type RegistryDb = Pick<TenantDatabase, 'call'>

export interface TopicRecord {
  name: string
  arn: string
  fifo: boolean
  /** Settable attributes as AWS names them (DisplayName, Policy, ContentBasedDeduplication…). */
  attributes: Record<string, string>
  tags: Record<string, string>
  createdAt: string
}

export interface SubscriptionRecord {
  id: string
  arn: string
  topicName: string
  topicArn: string
  protocol: 'sqs'
  /** The subscribed queue's ARN. */
  endpoint: string
  owner: string
  /** RawMessageDelivery, FilterPolicy, FilterPolicyScope, RedrivePolicy, as stored text. */
  attributes: Record<string, string>
}

/** A record with the store's version, for compare-and-set updates. */
export interface Versioned<T> {
  record: T
  version: number
}

interface KvRow {
  key: string
  value: unknown
  version: number
}

const topicKey = (name: string) => `t:${name}`
const subscriptionKey = (topicName: string, id: string) => `s:${topicName}:${id}`
/** One subscription per (topic, endpoint): the index key that makes Subscribe idempotent. */
const endpointKey = (topicName: string, endpointDigest: string) => `e:${topicName}:${endpointDigest}`

/** SHA-256 hex of an endpoint: a fixed-length key part whatever the endpoint's length. */
async function digest(endpoint: string): Promise<string> {
  const bytes = new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(endpoint)))
  return Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('')
}

async function apply(db: RegistryDb, ops: Record<string, unknown>[]) {
  const answer = await db.call('kv_apply_v1', { ops: ops.map((op) => ({ ns: SNS_NAMESPACE, ...op })), limits: SNS_KV_LIMITS })
  return answer
}

type ApplyAnswer = Awaited<ReturnType<typeof apply>>

function results(answer: ApplyAnswer): Record<string, unknown>[] {
  if (!('results' in answer)) throw new Error('kv precondition failed where none was required')
  return answer.results as Record<string, unknown>[]
}

async function getOne<T>(db: RegistryDb, key: string): Promise<Versioned<T> | null> {
  const [r] = results(await apply(db, [{ op: 'get', key }]))
  if (!r || r.found !== true) return null
  return { record: r.value as T, version: r.version as number }
}

/** One page of a prefix, in key order; `after` is the previous page's last key. */
async function page<T>(db: RegistryDb, prefix: string, after: string | undefined, limit: number): Promise<{ records: T[]; next: string | null }> {
  const [r] = results(await apply(db, [{ op: 'getPrefix', prefix, limit, ...(after ? { after } : {}) }]))
  const rows = (r?.rows ?? []) as KvRow[]
  return { records: rows.map((row) => row.value as T), next: r?.truncated ? ((r.nextAfter as string | null) ?? null) : null }
}

/** Every record under a prefix (a topic's subscriptions for a publish, a cascade on delete). */
async function all<T>(db: RegistryDb, prefix: string): Promise<T[]> {
  const out: T[] = []
  let after: string | undefined
  for (;;) {
    const { records, next } = await page<T>(db, prefix, after, 1000)
    out.push(...records)
    if (next === null) return out
    after = next
  }
}

export function getTopic(db: RegistryDb, name: string): Promise<Versioned<TopicRecord> | null> {
  return getOne<TopicRecord>(db, topicKey(name))
}

/** Creates the topic unless it exists; answers the record that is stored either way. */
export async function createTopic(db: RegistryDb, record: TopicRecord): Promise<{ created: boolean; topic: Versioned<TopicRecord> }> {
  const [r] = results(await apply(db, [{ op: 'putIfAbsent', key: topicKey(record.name), value: record, forever: true }]))
  return { created: r?.applied === true, topic: { record: r?.value as TopicRecord, version: r?.version as number } }
}

/** Writes the topic if it is still at `version`; false when another writer got there first. */
export async function replaceTopic(db: RegistryDb, topic: Versioned<TopicRecord>): Promise<boolean> {
  const [r] = results(await apply(db, [{ op: 'put', key: topicKey(topic.record.name), value: topic.record, expect: topic.version, forever: true }]))
  return r?.applied === true
}

/** Deletes the topic and cascades to its subscriptions, as AWS does; true when the topic existed. */
export async function deleteTopic(db: RegistryDb, name: string): Promise<boolean> {
  const keys = [...(await keysUnder(db, `s:${name}:`)), ...(await keysUnder(db, `e:${name}:`))]
  for (let i = 0; i < keys.length; i += 200) {
    await apply(db, keys.slice(i, i + 200).map((key) => ({ op: 'delete', key })))
  }
  const [r] = results(await apply(db, [{ op: 'delete', key: topicKey(name) }]))
  return r?.applied === true
}

async function keysUnder(db: RegistryDb, prefix: string): Promise<string[]> {
  const out: string[] = []
  let after: string | undefined
  for (;;) {
    const [r] = results(await apply(db, [{ op: 'getPrefix', prefix, limit: 1000, keysOnly: true, ...(after ? { after } : {}) }]))
    const rows = (r?.rows ?? []) as { key: string }[]
    out.push(...rows.map((row) => row.key))
    if (!r?.truncated) return out
    after = r.nextAfter as string
  }
}

export function listTopics(db: RegistryDb, after: string | undefined, limit = 100): Promise<{ records: TopicRecord[]; next: string | null }> {
  return page<TopicRecord>(db, 't:', after, limit)
}

/**
 * Subscribes once per (topic, endpoint): the endpoint index and the record are written together or
 * not at all. A repeat answers the subscription already stored and leaves its attributes alone.
 */
export async function createSubscription(db: RegistryDb, record: SubscriptionRecord): Promise<{ created: boolean; subscription: SubscriptionRecord }> {
  const endpointDigest = await digest(record.endpoint)
  const answer = await apply(db, [
    { op: 'putIfAbsent', key: endpointKey(record.topicName, endpointDigest), value: record.id, forever: true, required: true },
    { op: 'putIfAbsent', key: subscriptionKey(record.topicName, record.id), value: record, forever: true, required: true },
  ])
  if ('results' in answer) return { created: true, subscription: record }
  const existingId = (await getOne<string>(db, endpointKey(record.topicName, endpointDigest)))?.record
  const existing = existingId ? await getSubscription(db, record.topicName, existingId) : null
  if (existing === null) throw new Error('subscription index names a missing subscription')
  return { created: false, subscription: existing.record }
}

export function getSubscription(db: RegistryDb, topicName: string, id: string): Promise<Versioned<SubscriptionRecord> | null> {
  return getOne<SubscriptionRecord>(db, subscriptionKey(topicName, id))
}

export async function replaceSubscription(db: RegistryDb, sub: Versioned<SubscriptionRecord>): Promise<boolean> {
  const key = subscriptionKey(sub.record.topicName, sub.record.id)
  const [r] = results(await apply(db, [{ op: 'put', key, value: sub.record, expect: sub.version, forever: true }]))
  return r?.applied === true
}

/** Removes the subscription and its endpoint index; true when it existed. */
export async function deleteSubscription(db: RegistryDb, sub: SubscriptionRecord): Promise<boolean> {
  const endpointDigest = await digest(sub.endpoint)
  const [r] = results(
    await apply(db, [
      { op: 'delete', key: subscriptionKey(sub.topicName, sub.id) },
      { op: 'delete', key: endpointKey(sub.topicName, endpointDigest) },
    ]),
  )
  return r?.applied === true
}

/** Every subscription of a topic, for a publish's fan-out. */
export function topicSubscriptions(db: RegistryDb, topicName: string): Promise<SubscriptionRecord[]> {
  return all<SubscriptionRecord>(db, `s:${topicName}:`)
}

export function listSubscriptions(db: RegistryDb, topicName: string | null, after: string | undefined, limit = 100) {
  return page<SubscriptionRecord>(db, topicName === null ? 's:' : `s:${topicName}:`, after, limit)
}
