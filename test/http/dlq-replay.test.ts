// POST /api/v1/dlq/:id/replay (the move of one dead-letter row by id, in place or to another
// queue or partition) and DELETE /api/v1/dlq (the bulk purge of one queue's rows), over rows that
// really went through push, pop and a failed ack.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { testApp, type TestApp } from '../helpers/app.js'
import { ack, acksOf, pop, push, writtenRows } from '../helpers/engine.js'

let app: TestApp
let tenanted: TestApp
beforeAll(async () => {
  app = await testApp()
  tenanted = await testApp({ database: app.database, env: { QUEEN_TENANCY_HEADER: 'X-Queen-Tenant' } })
})
afterAll(async () => {
  await tenanted.close()
  await app.close()
})

const dlqOf = async (queue: string) => (await app.json('GET', `/api/v1/dlq?queue=${queue}`)).body.messages as { id: string; consumerGroup: string; transactionId: string }[]

/** `n` messages of `queue` dead-lettered by each of `groups` (queue mode when none is named). */
async function deadLettered(queue: string, n: number, groups: (string | undefined)[] = [undefined]) {
  await app.json('POST', '/api/v1/configure', { queue, options: { retryLimit: 0 } })
  await push(app, Array.from({ length: n }, (_, i) => ({ queue, partition: 'p', payload: { i }, transactionId: `${queue}-${i}` })))
  for (const group of groups) {
    const popped = await pop(app, queue, { batch: n, wait: false, ...(group ? { consumerGroup: group, subscriptionMode: 'all' } : {}) })
    await ack(app, acksOf(popped.messages, 'failed', { error: 'boom' }), group)
  }
  return dlqOf(queue)
}

describe('POST /api/v1/dlq/:id/replay', () => {
  it('moves the row in place with no body: the same answer fields as retry, and only that row goes', async () => {
    const rows = await deadLettered('rp-place', 1, ['a', 'b'])
    const target = rows.find((r) => r.consumerGroup === 'a')!
    const res = await app.json('POST', `/api/v1/dlq/${target.id}/replay`)
    expect(res.status).toBe(200)
    expect(res.body).toMatchObject({
      success: true,
      result: 'moved',
      queue: 'rp-place',
      partition: 'p',
      consumerGroup: 'a',
      dlqId: target.id,
      originalTransactionId: 'rp-place-0',
      replayedAs: { index: 0, transaction_id: `dlq:${target.id}`, queueName: 'rp-place', status: 'queued', offset: 1 },
      dlqRowRemoved: true,
    })
    expect((await dlqOf('rp-place')).map((r) => r.consumerGroup)).toEqual(['b'])
    expect(await app.json('POST', `/api/v1/dlq/${target.id}/replay`, {})).toMatchObject({
      status: 404,
      body: { success: false, result: 'gone', dlqId: target.id, error: 'Message not found', code: 'message_not_found' },
    })
  })

  it('serialises two concurrent replays of one row on its lock: one moves, the other finds it gone, one frame is written', async () => {
    const [row] = await deadLettered('rp-race', 1)
    const answers = await Promise.all([app.json('POST', `/api/v1/dlq/${row!.id}/replay`), app.json('POST', `/api/v1/dlq/${row!.id}/replay`)])
    expect(answers.map((a) => a.status).sort()).toEqual([200, 404])
    expect(answers.map((a) => a.body.result).sort()).toEqual(['gone', 'moved'])
    const popped = await pop(app, 'rp-race', { batch: 10, wait: false })
    expect(popped.messages.map((m) => m.transactionId)).toEqual([`dlq:${row!.id}`])
  })

  it('moves to another queue and partition, creating them, and keeps the partition name when only the queue is named', async () => {
    const rows = await deadLettered('rp-src', 2)
    // Both failed in one ack, so their failure times may tie: pick them by message.
    const first = rows.find((r) => r.transactionId === 'rp-src-0')
    const second = rows.find((r) => r.transactionId === 'rp-src-1')
    const moved = await app.json('POST', `/api/v1/dlq/${first!.id}/replay`, { queue: ' rp-dest ', partition: 'p9' })
    expect(moved).toMatchObject({ status: 200, body: { result: 'moved', queue: 'rp-dest', partition: 'p9', replayedAs: { queueName: 'rp-dest', offset: 0 } } })
    const kept = await app.json('POST', `/api/v1/dlq/${second!.id}/replay`, { queue: 'rp-dest' })
    expect(kept).toMatchObject({ status: 200, body: { queue: 'rp-dest', partition: 'p' } })
    const popped = await pop(app, 'rp-dest', { batch: 10, wait: false }, 'p9')
    expect(popped.messages.map((m) => [m.transactionId, m.data])).toEqual([[`dlq:${first!.id}`, { i: 0 }]])
    expect(await dlqOf('rp-src')).toEqual([])
  })

  it('re-encodes for the destination: a sealed dead letter lands as plaintext in a plain queue and the reverse; without the key it is refused 409, writing nothing', async () => {
    const enc = await testApp({ database: app.database, env: { QUEEN_ENCRYPTION_KEY: 'e'.repeat(64) } })
    try {
      await enc.json('POST', '/api/v1/configure', { queue: 'rp-sealed', options: { retryLimit: 0, encryptionEnabled: true } })
      await enc.json('POST', '/api/v1/push', { items: [{ queue: 'rp-sealed', payload: { s: 1 } }, { queue: 'rp-sealed', payload: { s: 2 } }] })
      const popped = await pop(enc, 'rp-sealed', { batch: 2, wait: false })
      await ack(enc, acksOf(popped.messages, 'failed'))
      const rows = (await enc.json('GET', '/api/v1/dlq?queue=rp-sealed')).body.messages as { id: string; data: { s: number } }[]
      const one = rows.find((r) => r.data.s === 1)!
      const two = rows.find((r) => r.data.s === 2)!

      // A broker without the key cannot open the copy, so it refuses rather than store the envelope as plaintext.
      const before = await writtenRows(app)
      expect(await app.json('POST', `/api/v1/dlq/${one.id}/replay`, { queue: 'rp-plain' })).toMatchObject({
        status: 409,
        body: { code: 'decrypt_failed', result: 'encryption_mismatch', dlqRowRemoved: false },
      })
      expect(await writtenRows(app)).toEqual(before)

      // With the key: sealed → plain queue, stored as plaintext (read back by a broker without the key).
      expect(await enc.json('POST', `/api/v1/dlq/${one.id}/replay`, { queue: 'rp-plain' })).toMatchObject({ status: 200, body: { result: 'moved', queue: 'rp-plain' } })
      expect((await pop(app, 'rp-plain', { wait: false })).messages.map((m) => m.data)).toEqual([{ s: 1 }])
      // In place the flags agree and the copy goes back as it was stored.
      expect(await enc.json('POST', `/api/v1/dlq/${two.id}/replay`)).toMatchObject({ status: 200, body: { result: 'moved', queue: 'rp-sealed' } })
      expect((await pop(enc, 'rp-sealed', { wait: false })).messages.map((m) => m.data)).toEqual([{ s: 2 }])

      // Plain → sealed queue: stored encrypted, so only a broker with the key reads it.
      const [plainRow] = await deadLettered('rp-open', 1)
      expect(await enc.json('POST', `/api/v1/dlq/${plainRow!.id}/replay`, { queue: 'rp-sealed' })).toMatchObject({ status: 200, body: { result: 'moved' } })
      const [stored] = await app.database.sql<{ enc: boolean }>(
        `select (f ->> 'enc')::boolean as enc from queen.log_segments s join queen.log_partitions p on p.id = s.partition_id join queen.queues q on q.id = p.queue_id,
                unnest(s.frames) f where q.name = 'rp-sealed' and f ->> 'txn' = $1`,
        [`dlq:${plainRow!.id}`],
      )
      expect(stored).toEqual({ enc: true })
      expect((await pop(enc, 'rp-sealed', { wait: false })).messages.map((m) => m.data)).toEqual([{ i: 0 }])

      // Sealed → another sealed queue and partition: a sealed payload is bound to where it was
      // pushed, so it is opened and sealed again for the destination, and reads back there.
      await enc.json('POST', '/api/v1/configure', { queue: 'rp-sealed-src', options: { retryLimit: 0, encryptionEnabled: true } })
      await enc.json('POST', '/api/v1/configure', { queue: 'rp-sealed-too', options: { encryptionEnabled: true } })
      await enc.json('POST', '/api/v1/push', { items: [{ queue: 'rp-sealed-src', payload: { s: 3 } }] })
      await ack(enc, acksOf((await pop(enc, 'rp-sealed-src', { wait: false })).messages, 'failed'))
      const [three] = (await enc.json('GET', '/api/v1/dlq?queue=rp-sealed-src')).body.messages as { id: string }[]
      expect(await enc.json('POST', `/api/v1/dlq/${three!.id}/replay`, { queue: 'rp-sealed-too', partition: 'elsewhere' })).toMatchObject({
        status: 200,
        body: { result: 'moved', queue: 'rp-sealed-too', partition: 'elsewhere' },
      })
      expect((await pop(enc, 'rp-sealed-too', { wait: false }, 'elsewhere')).messages.map((m) => m.data)).toEqual([{ s: 3 }])
    } finally {
      await enc.close()
    }
  })

  it('answers 503 under push maintenance and 404 for an unknown, malformed or foreign id; bad bodies are 400; nothing is written', async () => {
    const [row] = await deadLettered('rp-refuse', 1)
    const before = await writtenRows(app)
    await app.json('POST', '/api/v1/system/maintenance', { enabled: true })
    try {
      expect(await app.json('POST', `/api/v1/dlq/${row!.id}/replay`)).toMatchObject({ status: 503, body: { result: 'maintenance', code: 'maintenance', dlqRowRemoved: false } })
    } finally {
      await app.json('POST', '/api/v1/system/maintenance', { enabled: false })
    }
    for (const id of ['00000000-0000-4000-8000-000000000000', 'not-a-uuid']) {
      expect(await app.json('POST', `/api/v1/dlq/${id}/replay`)).toMatchObject({ status: 404, body: { result: 'gone', dlqId: id } })
    }
    expect(await tenanted.json('POST', `/api/v1/dlq/${row!.id}/replay`, {}, { 'x-queen-tenant': 'acme' })).toMatchObject({ status: 404, body: { result: 'gone' } })
    for (const body of [{ queue: '   ' }, { partition: '' }, { queue: 7 }, { queue: 'x'.repeat(256) }]) {
      expect(await app.json('POST', `/api/v1/dlq/${row!.id}/replay`, body), JSON.stringify(body)).toMatchObject({ status: 400, body: { code: 'invalid_request' } })
    }
    expect(await writtenRows(app)).toEqual(before)
    expect(await dlqOf('rp-refuse')).toHaveLength(1)
  })
})

describe('DELETE /api/v1/dlq', () => {
  it("purges one queue's rows, or one group's of it, and no other queue's", async () => {
    await deadLettered('pg-a', 2, ['x', 'y'])
    await deadLettered('pg-b', 1)
    expect(await app.json('DELETE', '/api/v1/dlq?queue=pg-a&consumerGroup=x')).toMatchObject({
      status: 200,
      body: { success: true, deleted: 2, queue: 'pg-a', consumerGroup: 'x' },
    })
    expect((await dlqOf('pg-a')).map((r) => r.consumerGroup)).toEqual(['y', 'y'])
    expect(await app.json('DELETE', '/api/v1/dlq?queue=pg-a')).toMatchObject({ status: 200, body: { deleted: 2, consumerGroup: null } })
    expect(await app.json('DELETE', '/api/v1/dlq?queue=pg-a')).toMatchObject({ status: 200, body: { deleted: 0 } })
    expect(await dlqOf('pg-b')).toHaveLength(1)
  })

  it('requires the queue (400, nothing deleted) and stays inside the tenant', async () => {
    await deadLettered('pg-keep', 1)
    const before = await writtenRows(app)
    for (const path of ['/api/v1/dlq', '/api/v1/dlq?queue=', '/api/v1/dlq?consumerGroup=x']) {
      expect(await app.json('DELETE', path), path).toMatchObject({ status: 400, body: { error: 'queue is required', code: 'invalid_request' } })
    }
    expect(await tenanted.json('DELETE', '/api/v1/dlq?queue=pg-keep', undefined, { 'x-queen-tenant': 'acme' })).toMatchObject({ status: 200, body: { deleted: 0 } })
    expect(await writtenRows(app)).toEqual(before)
  })
})
