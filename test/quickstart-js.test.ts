// docs/quickstart-js.md says what each Queen JS client call sends and what this broker answers.
// The client itself is not installable here, so these tests send the requests its source builds
// (smartpricing/queen client-js 0.12.2: QueueBuilder, ConsumerManager, TransactionBuilder, Queen.ack
// and renew), byte for byte where it matters (null namespace, the nine create() defaults, error:null,
// leaseId only when present, extend with {}), and assert the status and the fields the client reads.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { testApp, type TestApp } from './helpers/app.js'

let app: TestApp
beforeAll(async () => {
  // The 0.12 client names no subscriptionMode and predates the `new` default: a deployment that
  // serves it as before sets DEFAULT_SUBSCRIPTION_MODE=all (docs/compatibility.md).
  app = await testApp({ env: { DEFAULT_SUBSCRIPTION_MODE: 'all' } })
})
afterAll(() => app.close())

// HttpClient.executeRequest: every request carries this header, GETs and DELETEs included.
const send = (method: string, path: string, body?: unknown) => app.json(method, path, body)

// QUEUE_DEFAULTS, which config() merges under the caller's options and create() sends alone.
const CLIENT_QUEUE_DEFAULTS = {
  leaseTime: 300, retryLimit: 3, priority: 0, delayedProcessing: 0, windowBuffer: 0, maxSize: 0,
  retentionSeconds: 0, completedRetentionSeconds: 0, encryptionEnabled: false,
}

// ConsumerManager.buildParams / QueueBuilder.pop: batch, wait, timeout, then the group.
const popPath = (queue: string, group: string, extra = '', partition?: string) =>
  `/api/v1/pop/queue/${queue}${partition ? `/partition/${partition}` : ''}?` +
  new URLSearchParams({ batch: '10', wait: 'false', timeout: '30000', consumerGroup: group }).toString() + extra

describe('the requests the Queen JS client builds, against this broker', () => {
  it('create() with config(): null namespace and task derive from the name; the nine defaults are stored', async () => {
    const res = await send('POST', '/api/v1/configure', {
      queue: 'billing.invoices', namespace: null, task: null,
      options: { ...CLIENT_QUEUE_DEFAULTS, leaseTime: 30, retryLimit: 2 },
    })
    expect(res.status).toBe(200)
    expect('error' in res.body).toBe(false) // OperationBuilder throws when the answer has an error key
    expect(res.body).toMatchObject({ configured: true, namespace: 'billing', task: 'invoices', options: { leaseTime: 30, retryLimit: 2 } })
    // A later bare create() sends the defaults again, and they are present, so they are stored (D12).
    const again = await send('POST', '/api/v1/configure', { queue: 'billing.invoices', namespace: null, task: null, options: CLIENT_QUEUE_DEFAULTS })
    expect(again.body.options).toMatchObject({ leaseTime: 300, retryLimit: 3 })
    await send('POST', '/api/v1/configure', { queue: 'billing.invoices', leaseTime: 30, retryLimit: 2 })
  })

  it('push(): 201 array in item order with the status the PushBuilder sorts by', async () => {
    const res = await send('POST', '/api/v1/push', {
      items: [
        { queue: 'billing.invoices', partition: 'customer-42', payload: { amount: 120 }, transactionId: 'inv-1' },
        { queue: 'billing.invoices', partition: 'customer-42', payload: { amount: 80 }, transactionId: 'inv-2' },
      ],
    })
    expect(res.status).toBe(201)
    expect(res.body.map((r: any) => r.status)).toEqual(['queued', 'queued'])
    // The client's retry of the same items (same transactionIds) is reported duplicate.
    const retry = await send('POST', '/api/v1/push', { items: [{ queue: 'billing.invoices', partition: 'customer-42', payload: { amount: 120 }, transactionId: 'inv-1' }] })
    expect(retry.body[0]).toMatchObject({ status: 'duplicate', message_id: res.body[0].message_id })
  })

  it('consume(): the pop carries data, partitionId and leaseId per message, and the batch ack settles them', async () => {
    const popped = await send('GET', popPath('billing.invoices', 'mailer'))
    expect(popped.status).toBe(200)
    const messages = popped.body.messages
    expect(messages.map((m: any) => [m.transactionId, m.data])).toEqual([['inv-1', { amount: 120 }], ['inv-2', { amount: 80 }]])
    // Queen.ack(messages, true, { group }) → /ack/batch; leaseId only when the message has one.
    const ack = await send('POST', '/api/v1/ack/batch', {
      acknowledgments: messages.map((m: any) => ({ transactionId: m.transactionId, partitionId: m.partitionId, status: 'completed', error: null, leaseId: m.leaseId })),
      consumerGroup: 'mailer',
    })
    expect(ack.status).toBe(200)
    expect(ack.body.map((r: any) => r.success)).toEqual([true, true])
    expect(ack.body[1].leaseReleased).toBe(true)
    // An empty long-poll round is a 204 the HttpClient turns into null.
    const empty = await app.request(popPath('billing.invoices', 'mailer').replace('wait=false', 'wait=true').replace('timeout=30000', 'timeout=100'))
    expect(empty.status).toBe(204)
    expect(await empty.text()).toBe('')
  })

  it('ack() without { group }: the lease is not the default group’s, so nothing changes', async () => {
    await send('POST', '/api/v1/push', { items: [{ queue: 'billing.invoices', partition: 'customer-42', payload: { amount: 45 }, transactionId: 'inv-3' }] })
    const [m] = (await send('GET', popPath('billing.invoices', 'mailer'))).body.messages
    const wrong = await send('POST', '/api/v1/ack', { transactionId: m.transactionId, partitionId: m.partitionId, status: 'completed', error: null, consumerGroup: null, leaseId: m.leaseId })
    expect(wrong.status).toBe(200)
    expect(wrong.body[0]).toMatchObject({ success: false, code: 'lease_invalid' })
    const right = await send('POST', '/api/v1/ack', { transactionId: m.transactionId, partitionId: m.partitionId, status: 'completed', error: null, consumerGroup: 'mailer', leaseId: m.leaseId })
    expect(right.body[0]).toMatchObject({ success: true, leaseReleased: true })
  })

  it('renew(): extend with {} answers 2xx with an array, also for a released lease', async () => {
    await send('POST', '/api/v1/push', { items: [{ queue: 'billing.invoices', partition: 'customer-42', payload: 1, transactionId: 'inv-4' }] })
    const [m] = (await send('GET', popPath('billing.invoices', 'mailer'))).body.messages
    const live = await send('POST', `/api/v1/lease/${m.leaseId}/extend`, {})
    expect(live.status).toBe(200)
    expect(live.body).toEqual([expect.objectContaining({ success: true, partitionsExtended: 1 })])
    await send('POST', '/api/v1/ack', { transactionId: m.transactionId, partitionId: m.partitionId, status: 'completed', error: null, consumerGroup: 'mailer', leaseId: m.leaseId })
    const gone = await send('POST', `/api/v1/lease/${m.leaseId}/extend`, {})
    expect(gone.status).toBe(200) // so renew() reports success: true
    expect(gone.body[0]).toMatchObject({ success: false, code: 'lease_not_found' })
  })

  it('transaction(): ack + push with requiredLeases commits; a repeat throws the lease error', async () => {
    await send('POST', '/api/v1/push', { items: [{ queue: 'billing.invoices', partition: 'customer-42', payload: 5, transactionId: 'inv-5' }] })
    const popped = (await send('GET', popPath('billing.invoices', 'mailer'))).body
    const m = popped.messages[0]
    // TransactionBuilder: the ack op has no leaseId (it goes to requiredLeases); push items have no transactionId.
    const body = {
      operations: [
        { type: 'ack', transactionId: m.transactionId, partitionId: m.partitionId, status: 'completed', consumerGroup: 'mailer' },
        { type: 'push', items: [{ queue: 'billing.receipts', payload: { invoice: m.transactionId } }] },
      ],
      requiredLeases: [m.leaseId],
    }
    const ok = await send('POST', '/api/v1/transaction', body)
    expect(ok.status).toBe(200)
    expect(ok.body).toMatchObject({ success: true })
    expect(ok.body.results.map((r: any) => r.type)).toEqual(['ack', 'push'])
    const repeat = await send('POST', '/api/v1/transaction', body)
    expect(repeat.status).toBe(200)
    expect(repeat.body).toMatchObject({ success: false, code: 'lease_invalid', error: `Lease expired or not held: ${m.leaseId}` })
  })

  it('transaction() ack with { group } instead of { consumerGroup }: commits for __QUEUE_MODE__, mailer keeps its lease', async () => {
    await send('POST', '/api/v1/push', { items: [{ queue: 'billing.invoices', partition: 'customer-42', payload: 6, transactionId: 'inv-6' }] })
    const m = (await send('GET', popPath('billing.invoices', 'mailer'))).body.messages[0]
    const res = await send('POST', '/api/v1/transaction', {
      operations: [{ type: 'ack', transactionId: m.transactionId, partitionId: m.partitionId, status: 'completed' }],
      requiredLeases: [m.leaseId],
    })
    expect(res.body).toMatchObject({ success: true })
    const extend = await send('POST', `/api/v1/lease/${m.leaseId}/extend`, {})
    expect(extend.body[0]).toMatchObject({ success: true }) // mailer's round is still open
  })

  it('dlq().get(), trace(), delete(), deleteConsumerGroup() are served with the shapes the client reads', async () => {
    const dlq = await send('GET', '/api/v1/dlq?queue=billing.invoices&limit=10&offset=0&consumerGroup=mailer')
    expect(dlq.status).toBe(200)
    expect(dlq.body).toMatchObject({ messages: [], total: 0 })
    const partitionId = (await send('GET', popPath('billing.receipts', 'audit'))).body.messages[0].partitionId
    const listed = await send('GET', '/api/v1/messages?queue=billing.receipts')
    const trace = await send('POST', '/api/v1/traces', {
      transactionId: listed.body.messages[0].transactionId, partitionId, consumerGroup: 'audit',
      traceNames: null, eventType: 'info', data: { text: 'seen' },
    })
    expect(trace.status).toBe(201)
    expect(trace.body).toMatchObject({ success: true, traceId: expect.any(String) })
    const del = await send('DELETE', `/api/v1/resources/queues/${encodeURIComponent('billing.receipts')}`)
    expect(del.body).toMatchObject({ deleted: true })
    const group = await send('DELETE', '/api/v1/consumer-groups/mailer?deleteMetadata=true')
    expect(group.body).toMatchObject({ success: true, consumerGroup: 'mailer' })
  })
})
