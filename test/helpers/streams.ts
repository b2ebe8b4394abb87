// Small clients for /streams/v1/*, shaped like the bodies Queen's streams SDK sends (STREAMS 3.4):
// register, state/get and cycle, plus the runner's pop (group streams.<name>, partitions=4).
import type { TestApp } from './app.js'
import { pop, type Popped } from './engine.js'

export type Headers = Record<string, string>

export async function register(app: TestApp, body: Record<string, unknown>, headers?: Headers) {
  return app.json('POST', '/streams/v1/queries', { reset: false, ...body }, headers)
}

/** Registers and returns the server's query id, failing the test on anything but 200. */
export async function queryId(app: TestApp, name: string, source: string, sink: string | null = null, headers?: Headers): Promise<string> {
  const res = await register(app, { name, source_queue: source, config_hash: 'h1', ...(sink ? { sink_queue: sink } : {}) }, headers)
  if (res.status !== 200) throw new Error(`register answered ${res.status}: ${JSON.stringify(res.body)}`)
  return res.body.query_id as string
}

export async function stateGet(app: TestApp, body: Record<string, unknown>, headers?: Headers) {
  return app.json('POST', '/streams/v1/state/get', { keys: [], ...body }, headers)
}

/** The state of one shard as a plain object key -> value. */
export async function stateOf(app: TestApp, query: string, partitionId: string, headers?: Headers): Promise<Record<string, unknown>> {
  const res = await stateGet(app, { query_id: query, partition_id: partitionId }, headers)
  if (res.status !== 200) throw new Error(`state/get answered ${res.status}: ${JSON.stringify(res.body)}`)
  return Object.fromEntries((res.body.rows as { key: string; value: unknown }[]).map((r) => [r.key, r.value]))
}

export async function cycle(app: TestApp, body: Record<string, unknown>, headers?: Headers) {
  return app.json('POST', '/streams/v1/cycle', { state_ops: [], push_items: [], ack: null, ...body }, headers)
}

/** The runner's pop: batch, group streams.<name>, up to 4 partitions, no wait (tests drive time). */
export async function runnerPop(app: TestApp, queue: string, name: string, batch = 200) {
  return pop(app, queue, { batch, consumerGroup: `streams.${name}`, partitions: 4, wait: false, subscriptionMode: 'all' })
}

/** The runner's grouping: by partitionId, each group sorted by (createdAt, id) as the SDK does. */
export function byPartition(messages: Popped[]): { partitionId: string; partition: string; leaseId: string; messages: Popped[] }[] {
  const groups = new Map<string, { partitionId: string; partition: string; leaseId: string; messages: Popped[] }>()
  for (const m of messages) {
    let g = groups.get(m.partitionId)
    if (!g) groups.set(m.partitionId, (g = { partitionId: m.partitionId, partition: m.partition, leaseId: m.leaseId, messages: [] }))
    g.messages.push(m)
  }
  for (const g of groups.values()) {
    g.messages.sort((a, b) => Date.parse(a.createdAt) - Date.parse(b.createdAt) || a.id.localeCompare(b.id))
  }
  return [...groups.values()]
}

/** The ack a runner cycle sends: the batch's last message, with the batch's length as count. */
export function batchAck(messages: Popped[], status = 'completed') {
  const last = messages[messages.length - 1]!
  return { transactionId: last.transactionId, leaseId: last.leaseId, status, count: messages.length }
}
