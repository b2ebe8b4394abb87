// A transaction's ack as Queen's JS client sends it: the ack operation names no leaseId, the lease
// travels in requiredLeases (TransactionBuilder.ack). Every status × queue mode / named group ×
// retryLimit 0 and > 0 must commit the ack and the push together (issue #20): the ack acts for the
// lease the transaction proved it holds, so D5's "never touch another consumer's lease" does not
// refuse it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { testApp, type TestApp } from '../helpers/app.js'
import { pop, push } from '../helpers/engine.js'

let app: TestApp
beforeAll(async () => {
  app = await testApp()
})
afterAll(() => app.close())

const statuses = ['completed', 'failed', 'retry', 'dlq'] as const
const groups = [undefined, 'billing'] as const
const retryLimits = [0, 2] as const
const cases = statuses.flatMap((status) => groups.flatMap((group) => retryLimits.map((retryLimit) => ({ status, group, retryLimit }))))

const dlqRows = async (queue: string, group: string) =>
  app.database.sql(`select d.error from queen.log_dlq d join queen.queues q on q.id = d.queue_id
                     where q.name = $1 and d.consumer_group = $2`, [queue, group])

describe('POST /api/v1/transaction: an ack that names no lease, the lease in requiredLeases', () => {
  it.each(cases)('$status ack for group $group with retryLimit $retryLimit commits with the push', async ({ status, group, retryLimit }) => {
    const name = `tx-${status}-${group ?? 'qm'}-${retryLimit}`
    for (const queue of [`${name}.in`, `${name}.out`]) {
      const res = await app.json('POST', '/api/v1/configure', { queue, options: { retryLimit } })
      expect(res.status).toBe(200)
    }
    await push(app, [{ queue: `${name}.in`, payload: { n: 1 } }])
    const popParams = { wait: false, ...(group ? { consumerGroup: group, subscriptionMode: 'all' } : {}) }
    const first = await pop(app, `${name}.in`, popParams)
    const m = first.messages[0]!

    const res = await app.json('POST', '/api/v1/transaction', {
      operations: [
        { type: 'ack', transactionId: m.transactionId, partitionId: m.partitionId, status, ...(group ? { consumerGroup: group } : {}) },
        { type: 'push', items: [{ queue: `${name}.out`, payload: { from: m.transactionId } }] },
      ],
      requiredLeases: [m.leaseId],
    })
    expect(res.status).toBe(200)
    expect(res.body).toMatchObject({ success: true })
    expect(res.body.results[0]).toMatchObject({ type: 'ack', success: true, leaseReleased: true, dlq: status === 'failed' || status === 'dlq' })

    // The push landed.
    expect((await pop(app, `${name}.out`, { wait: false })).messages.map((x) => x.data)).toEqual([{ from: m.transactionId }])
    // A transaction's failed and dlq are terminal (ENGINE 6.4): dead-lettered whatever retryLimit;
    // retry hands the message back at once; completed settles it.
    const again = await pop(app, `${name}.in`, popParams)
    if (status === 'retry') expect(again.messages.map((x) => x.transactionId)).toEqual([m.transactionId])
    else expect(again.status).toBe(204)
    expect(await dlqRows(`${name}.in`, group ?? '__QUEUE_MODE__')).toHaveLength(status === 'failed' || status === 'dlq' ? 1 : 0)
  })

  it('still refuses a failed ack for a lease the transaction does not hold', async () => {
    await push(app, [{ queue: 'tx-foreign', payload: 1 }])
    const holder = await pop(app, 'tx-foreign', { wait: false })
    const m = holder.messages[0]!
    const res = await app.json('POST', '/api/v1/transaction', {
      operations: [
        { type: 'push', items: [{ queue: 'tx-foreign.out', payload: 'never' }] },
        { type: 'ack', transactionId: m.transactionId, partitionId: m.partitionId, status: 'failed' },
      ],
    })
    expect(res.body).toMatchObject({ success: false, code: 'lease_invalid' })
    expect((await pop(app, 'tx-foreign.out', { wait: false })).status).toBe(204)
    expect(await dlqRows('tx-foreign', '__QUEUE_MODE__')).toHaveLength(0)
  })
})
