// Dead letters as Queen 1.6 handles them and the dashboard's analytics reads, through the real
// worker bundle in workerd (miniflare) over PostgreSQL through the WebSocket bridge: retry and
// replay move a row (moved, duplicate, gone, maintenance), purge and the message delete remove only
// dead-letter rows, and workload, dlq-signatures, partition-liveness, retention groupBy and
// /status answer as they do on Node.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startEdgeStack, type EdgeStack, type EdgeWorker } from './edge-stack.js'

let stack: EdgeStack
let worker: EdgeWorker
beforeAll(async () => {
  stack = await startEdgeStack()
  worker = await stack.worker({ QUEEN_ENCRYPTION_KEY: 'a'.repeat(64) })
}, 120_000)
afterAll(() => stack?.close())

const call = (method: string, path: string, body?: unknown) => worker.call(method, path, body)

/** `n` messages of `queue` in partition p, each dead-lettered by queue mode on its first failure. */
async function deadLettered(queue: string, n: number) {
  await call('POST', '/api/v1/configure', { queue, options: { retryLimit: 0 } })
  const pushed = await call('POST', '/api/v1/push', { items: Array.from({ length: n }, (_, i) => ({ queue, partition: 'p', payload: { i }, transactionId: `${queue}-${i}` })) })
  const popped = await call('GET', `/api/v1/pop/queue/${queue}?batch=${n}`)
  await call('POST', '/api/v1/ack/batch', {
    acknowledgments: popped.body.messages.map((m: Record<string, string>) => ({ transactionId: m.transactionId, partitionId: m.partitionId, leaseId: m.leaseId, status: 'failed', error: `job ${m.transactionId} failed` })),
  })
  const dlq = await call('GET', `/api/v1/dlq?queue=${queue}`)
  return { partitionId: pushed.body[0].partition_id as string, rows: dlq.body.messages as { id: string; transactionId: string }[] }
}

describe('dead letters in workerd', () => {
  it('retry moves the newest row under dlq:<row id>; a second retry is gone; a squatted id is a duplicate that keeps the row', async () => {
    const { partitionId, rows } = await deadLettered('wd-retry', 2)
    const first = rows.find((r) => r.transactionId === 'wd-retry-0')!
    const moved = await call('POST', `/api/v1/messages/${partitionId}/wd-retry-0/retry`, {})
    expect(moved).toMatchObject({
      status: 200,
      body: { success: true, result: 'moved', dlqId: first.id, consumerGroup: '__QUEUE_MODE__', originalTransactionId: 'wd-retry-0', dlqRowRemoved: true, replayedAs: { transaction_id: `dlq:${first.id}`, status: 'queued', offset: 2 } },
    })
    expect(await call('POST', `/api/v1/messages/${partitionId}/wd-retry-0/retry`, {})).toMatchObject({ status: 404, body: { result: 'gone', code: 'message_not_found' } })

    const second = rows.find((r) => r.transactionId === 'wd-retry-1')!
    await call('POST', '/api/v1/push', { items: [{ queue: 'wd-retry', partition: 'p', payload: 'squat', transactionId: `dlq:${second.id}` }] })
    expect(await call('POST', `/api/v1/dlq/${second.id}/replay`)).toMatchObject({ status: 200, body: { result: 'duplicate', dlqRowRemoved: false, replayedAs: { status: 'duplicate' } } })
    expect((await call('GET', '/api/v1/dlq?queue=wd-retry')).body.total).toBe(1)
  })

  it('replay moves to a new destination, refuses under push maintenance, and purge and delete remove dead-letter rows only', async () => {
    const { partitionId, rows } = await deadLettered('wd-replay', 3)
    expect(await call('POST', `/api/v1/dlq/${rows[0]!.id}/replay`, { queue: 'wd-elsewhere', partition: 'x' })).toMatchObject({
      status: 200,
      body: { result: 'moved', queue: 'wd-elsewhere', partition: 'x', replayedAs: { offset: 0 } },
    })
    await call('POST', '/api/v1/system/maintenance', { enabled: true })
    try {
      expect(await call('POST', `/api/v1/dlq/${rows[1]!.id}/replay`)).toMatchObject({ status: 503, body: { result: 'maintenance', dlqRowRemoved: false } })
    } finally {
      await call('POST', '/api/v1/system/maintenance', { enabled: false })
    }
    expect(await call('POST', `/api/v1/dlq/not-a-uuid/replay`)).toMatchObject({ status: 404, body: { result: 'gone' } })
    expect(await call('POST', `/api/v1/dlq/${rows[1]!.id}/replay`, { queue: ' ' })).toMatchObject({ status: 400, body: { code: 'invalid_request' } })
    const remaining = (await call('GET', '/api/v1/dlq?queue=wd-replay')).body.messages as { transactionId: string }[]
    const [deleteMe, purgeMe] = remaining
    expect(await call('DELETE', `/api/v1/messages/${partitionId}/${deleteMe!.transactionId}`)).toMatchObject({ status: 200, body: { success: true, deleted: 1 } })
    expect(await call('DELETE', `/api/v1/messages/${partitionId}/${deleteMe!.transactionId}`)).toMatchObject({ status: 404, body: { success: false } })
    expect(await call('DELETE', '/api/v1/dlq')).toMatchObject({ status: 400, body: { error: 'queue is required' } })
    expect(await call('DELETE', '/api/v1/dlq?queue=wd-replay')).toMatchObject({ status: 200, body: { deleted: 1, queue: 'wd-replay' } })
    expect(purgeMe).toBeDefined()
    expect((await call('GET', '/api/v1/dlq?queue=wd-replay')).body.total).toBe(0)
  })
})

describe('a move across encryption in workerd', () => {
  it('decrypts a sealed dead letter with WebCrypto for a plain destination', async () => {
    await call('POST', '/api/v1/configure', { queue: 'wd-sealed', options: { retryLimit: 0, encryptionEnabled: true } })
    await call('POST', '/api/v1/push', { items: [{ queue: 'wd-sealed', payload: { secret: 7 } }] })
    const popped = await call('GET', '/api/v1/pop/queue/wd-sealed')
    const m = popped.body.messages[0]
    await call('POST', '/api/v1/ack', { transactionId: m.transactionId, partitionId: m.partitionId, leaseId: m.leaseId, status: 'failed' })
    const [row] = (await call('GET', '/api/v1/dlq?queue=wd-sealed')).body.messages
    expect(await call('POST', `/api/v1/dlq/${row.id}/replay`, { queue: 'wd-open' })).toMatchObject({ status: 200, body: { result: 'moved', queue: 'wd-open' } })
    const [stored] = await stack.database.sql<{ enc: boolean; data: unknown }>(
      `select (f ->> 'enc')::boolean as enc, f -> 'data' as data from queen.log_segments s join queen.log_partitions p on p.id = s.partition_id
         join queen.queues q on q.id = p.queue_id, unnest(s.frames) f where q.name = 'wd-open'`,
    )
    expect(stored).toEqual({ enc: false, data: { secret: 7 } })
  })
})

describe("the dashboard's reads in workerd", () => {
  it('answers workload, dlq-signatures, partition-liveness, retention groupBy and /status', async () => {
    await deadLettered('wd.analytics', 2)
    await call('POST', '/api/v1/stats/refresh')
    const workload = await call('GET', '/api/v1/analytics/workload?groupBy=queue&queue=wd.analytics')
    expect(workload).toMatchObject({ status: 200, body: { groupBy: 'queue', bucketMinutes: 1, rows: [{ key: 'wd.analytics', namespace: 'wd', task: 'analytics', queues: 1, window: { pushMessages: 2 } }] } })
    expect(await call('GET', '/api/v1/analytics/workload?groupBy=x')).toMatchObject({ status: 400 })
    expect(await call('GET', '/api/v1/analytics/dlq-signatures?queue=wd.analytics')).toMatchObject({
      status: 200,
      body: { rowsNow: 2, sample: 2, signatures: [{ text: 'job wd.analytics-<n> failed', n: 2, share: 1 }] },
    })
    expect(await call('GET', '/api/v1/analytics/dlq-signatures')).toMatchObject({ status: 400, body: { error: 'queue is required' } })
    expect(await call('GET', '/api/v1/analytics/partition-liveness?queue=wd.analytics')).toMatchObject({ status: 200, body: { rows: [{ queue: 'wd.analytics', partitions: 1, live1h: 1 }] } })
    const plain = await call('GET', '/api/v1/analytics/retention?queue=wd.analytics')
    const grouped = await call('GET', '/api/v1/analytics/retention?queue=wd.analytics&groupBy=namespace')
    expect(grouped.body).toEqual({ ...plain.body, rows: [expect.objectContaining({ key: 'wd', queues: ['wd.analytics'] })] })
    expect(await call('GET', '/status')).toMatchObject({ status: 200, body: { status: 'ok', engine: 'queen-edge' } })
  })
})
