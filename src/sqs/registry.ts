// The SQS queue registry: one record per queue in the key/value store (namespace `queen.sqs`),
// holding what the engine's queue has no column for (the SQS attributes as set, tags, width, FIFO,
// the purge cooldown). Written only by the broker itself, through the store's procedure.
import type { Context } from 'hono'
import type { AppEnv } from '../http/env.js'
import { KV_LIMITS } from '../kv/limits.js'

export const NAMESPACE = 'queen.sqs'

export interface QueueRecord {
  name: string
  fifo: boolean
  /** Partitions of a standard queue, fixed at creation; 0 on a FIFO queue (a group is a partition). */
  width: number
  /** The SQS attributes as set (strings, as SQS keeps them), defaults filled at creation. */
  attributes: Record<string, string>
  tags: Record<string, string>
  /** Epoch seconds. */
  created: number
  modified: number
  /** Epoch milliseconds of the last PurgeQueue, for AWS's 60-second cooldown. */
  purgedAt?: number
}

export interface Stored {
  record: QueueRecord
  version: number
}

type Row = { found?: boolean; value?: unknown; version?: number; applied?: boolean; reason?: string; rows?: { key: string; value: unknown }[]; nextAfter?: string | null; truncated?: boolean }

async function apply(c: Context<AppEnv>, ops: Record<string, unknown>[]): Promise<Row[]> {
  const result = await c.get('db').call('kv_apply_v1', { ops: ops.map((op) => ({ ns: NAMESPACE, ...op })), limits: KV_LIMITS })
  if (!('results' in result)) throw new Error('registry write lost a required precondition')
  return result.results as Row[]
}

const queueKey = (name: string) => `q:${name}`
const tombstoneKey = (name: string) => `deleted:${name}`

export async function getQueue(c: Context<AppEnv>, name: string): Promise<Stored | null> {
  const [row] = await apply(c, [{ op: 'get', key: queueKey(name) }])
  if (!row?.found) return null
  return { record: row.value as QueueRecord, version: row.version as number }
}

/** Writes a new record unless one exists; answers the record that stands either way. */
export async function createQueueRecord(c: Context<AppEnv>, record: QueueRecord): Promise<{ created: boolean; stored: Stored }> {
  const [row] = await apply(c, [{ op: 'putIfAbsent', key: queueKey(record.name), value: record, forever: true }])
  if (row?.applied) return { created: true, stored: { record, version: row.version as number } }
  return { created: false, stored: { record: row?.value as QueueRecord, version: row?.version as number } }
}

/** A compare-and-set update; false when another writer got there first (the caller re-reads). */
export async function updateQueueRecord(c: Context<AppEnv>, stored: Stored, record: QueueRecord): Promise<boolean> {
  const [row] = await apply(c, [{ op: 'put', key: queueKey(record.name), value: record, forever: true, expect: stored.version }])
  return row?.applied === true
}

/** Applies `change` to the current record, retrying on a lost race; null when the queue is gone. */
export async function modifyQueue(c: Context<AppEnv>, name: string, change: (r: QueueRecord) => QueueRecord): Promise<QueueRecord | null> {
  for (let attempt = 0; attempt < 8; attempt++) {
    const stored = await getQueue(c, name)
    if (stored === null) return null
    const next = change(stored.record)
    if (await updateQueueRecord(c, stored, next)) return next
  }
  throw new Error(`registry record ${name} kept changing under an update`)
}

/** Removes the record and leaves AWS's 60-second tombstone against re-creating the name. */
export async function deleteQueueRecord(c: Context<AppEnv>, name: string): Promise<void> {
  await apply(c, [
    { op: 'delete', key: queueKey(name) },
    { op: 'put', key: tombstoneKey(name), value: true, ttlSeconds: 60 },
  ])
}

export async function recentlyDeleted(c: Context<AppEnv>, name: string): Promise<boolean> {
  const [row] = await apply(c, [{ op: 'get', key: tombstoneKey(name) }])
  return row?.found === true
}

/** Every record whose name starts with `prefix`, in name order, up to `limit` after `after`. */
export async function listQueues(c: Context<AppEnv>, prefix: string, after: string | undefined, limit: number): Promise<{ records: QueueRecord[]; next: string | null }> {
  const [row] = await apply(c, [{ op: 'getPrefix', prefix: queueKey(prefix), limit, ...(after !== undefined ? { after: queueKey(after) } : {}) }])
  const records = (row?.rows ?? []).map((r) => r.value as QueueRecord)
  const last = records[records.length - 1]
  return { records, next: row?.truncated && last ? last.name : null }
}
