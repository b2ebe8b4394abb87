// Chaos: the broker is SIGKILLed right after an ack commits, before its answer leaves (issue #20).
// The proxy in front of PostgreSQL holds the ack call's ReadyForQuery (sent only after the commit),
// kills the broker, then cuts the connection; the client sees no answer. It retries the same ack
// against the restarted broker, as Queen's SDKs do, and must be told success — alreadyAcked — never
// a false lease_invalid, with the cursor exactly where the first attempt left it.
import { afterAll, beforeAll, expect, inject, it } from 'vitest'
import { freshDatabase, type TestDatabase } from '../helpers/database.js'
import { startCommitDropProxy, type CommitDropProxy } from './commit-drop-proxy.js'
import { call, startBroker, type Broker } from './harness.js'

let database: TestDatabase
let proxy: CommitDropProxy
let broker: Broker
beforeAll(async () => {
  database = await freshDatabase()
  const server = new URL(inject('adminUrl'))
  proxy = await startCommitDropProxy({ host: server.hostname, port: Number(server.port) }, 0)
  const url = new URL(database.url)
  url.host = `127.0.0.1:${proxy.port}`
  broker = await startBroker(url.toString())
})
afterAll(async () => {
  await broker?.stop()
  await proxy?.close()
  await database?.drop()
})

const cursor = async () =>
  database.sql(`select c.committed_offset::int as committed, c.lease_id, c.batches_consumed::int as batches, c.total_consumed::int as consumed
                  from queen.log_consumers c join queen.log_partitions p on p.id = c.partition_id join queen.queues q on q.id = p.queue_id
                 where q.name = 'ack-kill' and c.consumer_group = '__QUEUE_MODE__'`)

it('answers the retry of an ack whose broker died after the commit with success', { timeout: 120_000 }, async () => {
  const pushed = await call(broker.base, 'POST', '/api/v1/push', { items: ['a', 'b', 'c'].map((payload) => ({ queue: 'ack-kill', payload })) })
  expect(pushed.status).toBe(201)
  const popped = await call(broker.base, 'GET', '/api/v1/pop/queue/ack-kill?batch=3&wait=false')
  expect(popped.status).toBe(200)
  const messages = popped.body.messages as { transactionId: string; partitionId: string; leaseId: string }[]
  expect(messages).toHaveLength(3)
  const body = { acknowledgments: messages.map((m) => ({ transactionId: m.transactionId, partitionId: m.partitionId, leaseId: m.leaseId, status: 'completed' })) }

  const sprung = proxy.trapNextCommit('log_ack_v1', () => broker.kill())
  const lost = await call(broker.base, 'POST', '/api/v1/ack/batch', body)
  await sprung
  expect(lost.status).toBe(0) // no answer: the broker died holding it
  // The first attempt committed: the round is settled and its lease ended.
  expect(await cursor()).toEqual([{ committed: 3, lease_id: null, batches: 1, consumed: 3 }])

  await broker.restart()
  const retried = await call(broker.base, 'POST', '/api/v1/ack/batch', body)
  expect(retried.status).toBe(200)
  expect(retried.body.map((r: { success: boolean; alreadyAcked?: boolean; code: string | null }) => [r.success, r.alreadyAcked, r.code])).toEqual(
    messages.map(() => [true, true, null]),
  )
  expect(await cursor()).toEqual([{ committed: 3, lease_id: null, batches: 1, consumed: 3 }])
  expect((await call(broker.base, 'GET', '/api/v1/pop/queue/ack-kill?wait=false')).status).toBe(204)
})
