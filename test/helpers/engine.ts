// Small clients for the engine routes, so tests read as what a Queen SDK does: push, pop, ack.
import type { TestApp } from './app.js'

export interface Popped {
  id: string
  transactionId: string
  partitionId: string
  partition: string
  queue: string
  leaseId: string
  offset: number
  retryCount: number
  data: unknown
  createdAt: string
  [k: string]: unknown
}

export async function push(app: TestApp, items: Record<string, unknown>[], headers?: Record<string, string>) {
  const res = await app.json('POST', '/api/v1/push', { items }, headers)
  if (res.status !== 201) throw new Error(`push answered ${res.status}: ${JSON.stringify(res.body)}`)
  return res.body as { index: number; status: string; message_id: string; transaction_id: string; partition_id: string; offset: number }[]
}

export async function pop(app: TestApp, queue: string, params: Record<string, string | number | boolean> = {}, partition?: string) {
  const qs = new URLSearchParams(Object.entries(params).map(([k, v]) => [k, String(v)])).toString()
  const path = `/api/v1/pop/queue/${encodeURIComponent(queue)}${partition !== undefined ? `/partition/${encodeURIComponent(partition)}` : ''}${qs ? `?${qs}` : ''}`
  const res = await app.json('GET', path)
  if (res.status === 204) return { status: 204, messages: [] as Popped[], leaseId: '', body: null }
  if (res.status !== 200) throw new Error(`pop answered ${res.status}: ${JSON.stringify(res.body)}`)
  return { status: 200, messages: res.body.messages as Popped[], leaseId: res.body.leaseId as string, body: res.body }
}

export async function ack(app: TestApp, items: Record<string, unknown>[], consumerGroup?: string) {
  const res = await app.json('POST', '/api/v1/ack/batch', { acknowledgments: items, ...(consumerGroup ? { consumerGroup } : {}) })
  if (res.status !== 200) throw new Error(`ack answered ${res.status}: ${JSON.stringify(res.body)}`)
  return res.body as { index: number; success: boolean; error: string | null; code: string | null; leaseReleased: boolean; dlq: boolean; dropped: boolean; evicted: boolean; offset: number | null; alreadyAcked?: true }[]
}

/** Acks popped messages with a status (the fields a Queen client echoes back). */
export const acksOf = (messages: Popped[], status = 'completed', extra: Record<string, unknown> = {}) =>
  messages.map((m) => ({ transactionId: m.transactionId, partitionId: m.partitionId, leaseId: m.leaseId, status, ...extra }))

/**
 * Sets queue columns directly, as a configure on another broker instance would: this instance keeps
 * its (now stale) encryption-flag cache, which the QMENC retry tests rely on. Creates the queue first.
 */
export async function configureQueue(app: TestApp, queue: string, columns: Record<string, string | number | boolean>) {
  await app.database.sql(
    `insert into queen.queues (tenant_id, name) values ('', $1) on conflict (tenant_id, name) do nothing`,
    [queue],
  )
  const sets = Object.keys(columns).map((k, i) => `${k} = $${i + 2}`)
  await app.database.sql(`update queen.queues set ${sets.join(', ')} where tenant_id = '' and name = $1`, [queue, ...Object.values(columns)])
}

/** Row counts of every table a data route writes, to prove a refused request wrote nothing. */
export async function writtenRows(app: TestApp) {
  const [row] = await app.database.sql<Record<string, number>>(`
    select (select count(*) from queen.queues)::int as queues, (select count(*) from queen.log_partitions)::int as partitions,
           (select count(*) from queen.log_segments)::int as segments, (select count(*) from queen.log_txns)::int as txns,
           (select count(*) from queen.log_consumers)::int as consumers, (select count(*) from queen.consumer_groups)::int as groups,
           (select count(*) from queen.log_dlq)::int as dlq,
           (select coalesce(sum(committed_offset), 0) from queen.log_consumers)::int as committed,
           (select count(*) from queen.log_consumers where lease_id is not null)::int as leases,
           (select count(*) from queen.kv_entries)::int as kv, (select count(*) from queen.timers)::int as timers`)
  return row!
}
