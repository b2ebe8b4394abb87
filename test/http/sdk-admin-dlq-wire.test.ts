// Queen's 1.x JS client (client-js client-v2: admin/Admin.js and http/HttpClient.js, read with the
// search tool) against the dead-letter routes, on the wire exactly as that code sends it: every
// request carries `Content-Type: application/json`; retryMessage POSTs the body `{}`; deleteMessage
// sends DELETE with no body; a 2xx body is parsed as JSON and handed back as it is; a non-2xx
// becomes an error whose `status` is the HTTP status, `message` the body's `error` and `code` the
// body's `code`, and 4xx is never retried. The fields read back are the ones the client's callers
// and queenctl read: result, replayedAs (a push result), dlqRowRemoved, dlqId, consumerGroup,
// originalTransactionId. The dashboard's Replay and Purge calls are driven the same way.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { testApp, type TestApp } from '../helpers/app.js'
import { ack, acksOf, pop, push } from '../helpers/engine.js'

let app: TestApp
beforeAll(async () => {
  app = await testApp()
})
afterAll(() => app.close())

class ClientError extends Error {
  constructor(
    message: string,
    readonly status: number,
    readonly code: string | undefined,
  ) {
    super(message)
  }
}

/** The client's request: the JSON content type always, a body only when one is given. */
async function send(method: string, path: string, body: unknown = null): Promise<any> {
  const init: RequestInit = { method, headers: { 'Content-Type': 'application/json' } }
  if (body) init.body = JSON.stringify(body)
  const res = await app.request(path, init)
  if (res.status === 204) return null
  if (!res.ok) {
    const text = await res.text()
    const parsed = text ? JSON.parse(text) : {}
    throw new ClientError(parsed.error || `HTTP ${res.status}`, res.status, parsed.code)
  }
  return res.json()
}

const admin = {
  retryMessage: (partitionId: string, transactionId: string) => send('POST', `/api/v1/messages/${partitionId}/${transactionId}/retry`, {}),
  deleteMessage: (partitionId: string, transactionId: string) => send('DELETE', `/api/v1/messages/${partitionId}/${transactionId}`),
}
// The 1.6 dashboard's calls: Replay sends the destination pair, Purge a query string.
const dashboard = {
  replay: (id: string, queue: string, partition: string) => send('POST', `/api/v1/dlq/${id}/replay`, { queue, partition }),
  purge: (queue: string, consumerGroup?: string) =>
    send('DELETE', `/api/v1/dlq?${new URLSearchParams({ queue, ...(consumerGroup ? { consumerGroup } : {}) })}`),
  signatures: (queue: string) => send('GET', `/api/v1/analytics/dlq-signatures?queue=${encodeURIComponent(queue)}`),
  workload: (groupBy: string) => send('GET', `/api/v1/analytics/workload?groupBy=${groupBy}`),
}

async function deadLettered(queue: string, n: number) {
  await app.json('POST', '/api/v1/configure', { queue, options: { retryLimit: 0 } })
  const pushed = await push(app, Array.from({ length: n }, (_, i) => ({ queue, partition: 'p', payload: { i }, transactionId: `${queue}-${i}` })))
  const popped = await pop(app, queue, { batch: n, wait: false })
  await ack(app, acksOf(popped.messages, 'failed', { error: 'boom' }))
  return pushed[0]!.partition_id
}

describe("Queen's 1.x JS Admin against the dead-letter routes", () => {
  it('retryMessage gets the move verdict with every field its callers read, then an error with status 404 once the row is gone', async () => {
    const partitionId = await deadLettered('sdk-retry', 1)
    const result = await admin.retryMessage(partitionId, 'sdk-retry-0')
    expect(result.success).toBe(true)
    expect(result.result).toBe('moved')
    expect(result.dlqRowRemoved).toBe(true)
    expect(result.consumerGroup).toBe('__QUEUE_MODE__')
    expect(result.originalTransactionId).toBe('sdk-retry-0')
    expect(result.dlqId).toMatch(/^[0-9a-f-]{36}$/)
    // replayedAs is a push result, spelled as /api/v1/push spells its items.
    expect(Object.keys(result.replayedAs).sort()).toEqual(['index', 'message_id', 'offset', 'queueName', 'status', 'transaction_id'])
    expect(result.replayedAs).toMatchObject({ index: 0, status: 'queued', transaction_id: `dlq:${result.dlqId}`, queueName: 'sdk-retry', offset: 1 })
    const error = await admin.retryMessage(partitionId, 'sdk-retry-0').catch((e: unknown) => e)
    expect(error).toBeInstanceOf(ClientError)
    expect(error).toMatchObject({ status: 404, message: 'Message not found', code: 'message_not_found' })
  })

  it('deleteMessage (no body, JSON content type) deletes a dead letter, and is a 404 error for a live message', async () => {
    const partitionId = await deadLettered('sdk-delete', 2)
    await admin.retryMessage(partitionId, 'sdk-delete-0')
    const deleted = await admin.deleteMessage(partitionId, 'sdk-delete-1')
    expect(deleted).toMatchObject({ success: true, partitionId, transactionId: 'sdk-delete-1' })
    // sdk-delete-0 is a live message now that its row moved: nothing to delete.
    await expect(admin.deleteMessage(partitionId, 'sdk-delete-0')).rejects.toMatchObject({ status: 404, code: 'message_not_found' })
  })

  it("the dashboard's Replay (both halves of the destination) and Purge, and the reads on its Dead Letter and Workload pages", async () => {
    await deadLettered('sdk-dash', 3)
    const rows = (await send('GET', '/api/v1/dlq?queue=sdk-dash')).messages as { id: string }[]
    expect(await dashboard.replay(rows[0]!.id, 'sdk-dash.retry', 'p')).toMatchObject({ result: 'moved', queue: 'sdk-dash.retry', dlqRowRemoved: true })
    await expect(dashboard.replay(rows[0]!.id, 'sdk-dash.retry', 'p')).rejects.toMatchObject({ status: 404, code: 'message_not_found' })
    expect((await dashboard.signatures('sdk-dash')).signatures).toEqual([{ text: 'boom', n: 2, share: 1 }])
    expect(await dashboard.purge('sdk-dash')).toEqual({ success: true, deleted: 2, queue: 'sdk-dash', consumerGroup: null })
    await expect(send('DELETE', '/api/v1/dlq')).rejects.toMatchObject({ status: 400, message: 'queue is required' })
    expect((await dashboard.workload('queue')).rows.map((r: { key: string }) => r.key)).toEqual(expect.arrayContaining(['sdk-dash', 'sdk-dash.retry']))
  })
})
