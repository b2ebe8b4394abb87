// Tenancy on the data path (ENGINE 1.7): names resolve within the tenant, and another tenant's
// partition or lease id behaves exactly like an unknown one.
import { afterAll, beforeAll, expect, it } from 'vitest'
import { testApp, type TestApp } from '../helpers/app.js'

let app: TestApp
beforeAll(async () => {
  app = await testApp({ env: { QUEEN_TENANCY_HEADER: 'X-Tenant' } })
})
afterAll(() => app.close())

const as = (tenant: string) => ({ 'x-tenant': tenant })

it('keeps queues, cursors and leases of one tenant out of another tenant’s reach', async () => {
  const pushed = await app.json('POST', '/api/v1/push', { items: [{ queue: 'shared-name', payload: 'acme only', transactionId: 't1' }] }, as('acme'))
  expect(pushed.status).toBe(201)
  // Same queue name, other tenant: a different (empty) queue.
  expect((await app.request('/api/v1/pop/queue/shared-name', { headers: as('globex') })).status).toBe(204)
  const popped = await app.json('GET', '/api/v1/pop/queue/shared-name', undefined, as('acme'))
  const m = popped.body.messages[0]
  expect(m.data).toBe('acme only')

  const foreignAck = await app.json('POST', '/api/v1/ack', { transactionId: 't1', partitionId: m.partitionId }, as('globex'))
  expect(foreignAck.body[0]).toMatchObject({ success: false, code: 'message_not_found' })
  const foreignExtend = await app.json('POST', `/api/v1/lease/${m.leaseId}/extend`, {}, as('globex'))
  expect(foreignExtend.body[0]).toMatchObject({ success: false, code: 'lease_not_found' })
  const foreignTxn = await app.json('POST', '/api/v1/transaction', { operations: [{ type: 'ack', transactionId: 't1', partitionId: m.partitionId }], requiredLeases: [m.leaseId] }, as('globex'))
  expect(foreignTxn.body).toMatchObject({ success: false, code: 'lease_invalid' })

  const [cursor] = await app.database.sql(`select committed_offset::int as c, lease_id::text as lease from queen.log_consumers`)
  expect(cursor).toEqual({ c: 0, lease: m.leaseId })
  const ownAck = await app.json('POST', '/api/v1/ack', { transactionId: 't1', partitionId: m.partitionId, leaseId: m.leaseId }, as('acme'))
  expect(ownAck.body[0]).toMatchObject({ success: true, leaseReleased: true })
  expect(await app.database.sql(`select tenant_id from queen.queues order by tenant_id`)).toEqual([{ tenant_id: 'acme' }, { tenant_id: 'globex' }])
})
