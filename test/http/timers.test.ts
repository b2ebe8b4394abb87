// Queen 1.6's timers over HTTP: the batch route's closed status set, cancel on its own route with
// the txn echoed, peek, list and count, the refusals, and the fire: a due timer becomes one ordinary
// push exactly once (never early), encrypted at schedule for an encrypting queue, and wakes a pop
// parked on its queue.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { runLane } from '../../cron/runner.js'
import { kvTimers } from '../../cron/kv-timers.js'
import { createPopWaker } from '../../src/pop-waker.js'
import { zstdCompress } from '../../src/zstd/index.js'
import { testApp, type TestApp } from '../helpers/app.js'
import { ack, acksOf, configureQueue, pop, writtenRows } from '../helpers/engine.js'

let app: TestApp
const waker = createPopWaker()
beforeAll(async () => {
  app = await testApp({ env: { QUEEN_ENCRYPTION_KEY: 'a'.repeat(64) }, deps: { popWaker: waker } })
})
afterAll(async () => {
  waker.close()
  await app.close()
})

const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64')
const zstdB64 = (bytes: Uint8Array) => Buffer.from(zstdCompress(bytes)).toString('base64')
const schedule = (op: Record<string, unknown>) =>
  app.json('POST', '/api/v1/timers', { operations: [{ op: 'schedule', delayMs: 60_000, txn: 't-1', payload: b64({ n: 1 }), ...op }] })
const fireAll = () => app.db.call('timers_fire_step_v1', { limit: 1000, now: new Date(Date.now() + 365 * 24 * 3600 * 1000) })

describe('POST /api/v1/timers and the per-key routes', () => {
  it('schedules, reschedules, peeks, lists, counts and cancels, each verdict from the closed set', async () => {
    const first = await schedule({ queue: 'tm.basic', timerKey: 'order/1' })
    expect(first).toMatchObject({ status: 200, body: { results: [{ index: 0, ok: true, status: 'scheduled', queue: 'tm.basic', timerKey: 'order/1', txn: 't-1' }] } })
    expect(first.body.results[0].deliverAt).toMatch(/Z$/)
    const again = await schedule({ queue: 'tm.basic', timerKey: 'order/1', txn: 't-2', partition: 'eu' })
    expect(again.body.results[0]).toMatchObject({ ok: true, status: 'rescheduled', txn: 't-2' })
    await schedule({ queue: 'tm.basic', timerKey: 'order/2' })
    await schedule({ queue: 'tm.basic', timerKey: 'other' })

    const peek = await app.json('GET', '/api/v1/timers/tm.basic/order%2F1')
    expect(peek.body).toMatchObject({ found: true, queue: 'tm.basic', timerKey: 'order/1', partition: 'eu', txn: 't-2', payload: b64({ n: 1 }), attempts: 0, claimed: false, encrypted: false })
    expect((await app.json('GET', '/api/v1/timers/tm.basic/nope')).body).toMatchObject({ found: false })

    const page = await app.json('GET', '/api/v1/timers/tm.basic?limit=2')
    expect(page.body).toMatchObject({ truncated: true, nextAfter: 'order/2' })
    expect(page.body.rows.map((r: { timerKey: string }) => r.timerKey)).toEqual(['order/1', 'order/2'])
    expect(page.body.rows[0].payload).toBeUndefined()
    // Queen 1.6's list row: no payload (the peek carries it), the schedule's instant and the message id.
    expect(Object.keys(page.body.rows[0]).sort()).toEqual(
      ['attempts', 'claimed', 'createdAt', 'deliverAt', 'encrypted', 'lastError', 'messageId', 'partition', 'queue', 'timerKey', 'txn'],
    )
    expect(page.body.rows[0]).toMatchObject({ createdAt: peek.body.createdAt, messageId: peek.body.messageId })
    expect((await app.json('GET', '/api/v1/timers/tm.basic?after=order%2F2')).body).toMatchObject({ truncated: false, nextAfter: null, rows: [{ timerKey: 'other' }] })
    expect((await app.json('GET', '/api/v1/timers/tm.basic?mode=count&prefix=order%2F')).body).toEqual({ count: 2 })

    const cancelled = await app.json('DELETE', '/api/v1/timers/tm.basic/order%2F1?txn=t-2')
    expect(cancelled.body).toEqual({ ok: true, status: 'cancelled', queue: 'tm.basic', timerKey: 'order/1', txn: 't-2' })
    // No tombstone: a second cancel answers absent with ok:false, echoing the txn to check the log with.
    const absent = await app.json('DELETE', '/api/v1/timers/tm.basic/order%2F1?txn=t-2')
    expect(absent).toMatchObject({ status: 200, body: { ok: false, status: 'absent', txn: 't-2' } })
    const batchCancel = await app.json('POST', '/api/v1/timers', { operations: [{ op: 'cancel', queue: 'tm.basic', timerKey: 'order/2' }] })
    expect(batchCancel.body.results[0]).toMatchObject({ ok: true, status: 'cancelled', txn: 't-1' })
  })

  it('refuses malformed operations and reads 400 (horizon 403, payload 413) and writes nothing', async () => {
    const before = await writtenRows(app)
    const cases: [Record<string, unknown>, number, string][] = [
      [{ queue: 'tm.bad', timerKey: 'k', messageId: 'forged' }, 400, 'timers_bad_request'],
      [{ queue: 'tm.bad', timerKey: 'k', encrypted: true }, 400, 'timers_bad_request'],
      [{ queue: 'tm.bad', timerKey: 'k', _internal: 1 }, 400, 'timers_bad_request'],
      [{ queue: 'tm.bad', timerKey: 'k', payload: '@@@@' }, 400, 'timers_bad_request'],
      [{ queue: 'tm.bad', timerKey: 'k', txn: '' }, 400, 'timers_bad_request'],
      [{ queue: 'tm.bad', timerKey: 'k', delayMs: 1.5 }, 400, 'timers_bad_request'],
      [{ queue: 'tm.bad', timerKey: 'k', deliverAt: '2030-01-01T00:00:00Z' }, 400, 'timers_bad_request'],
      [{ queue: 'tm.bad' }, 400, 'timers_bad_request'],
      [{ queue: 'tm.bad', timerKey: 'k', delayMs: 91 * 24 * 3600 * 1000 }, 403, 'timer_horizon_exceeded'],
      [{ queue: 'tm.bad', timerKey: 'k', payload: Buffer.alloc(1024 * 1024 + 1).toString('base64') }, 413, 'payload_too_large'],
      [{ queue: 'tm.bad', timerKey: 'k', payloadZstd: 'yes' }, 400, 'timers_bad_request'],
      // A payload that is not a zstd frame, and a small frame that would expand past the payload limit.
      [{ queue: 'tm.bad', timerKey: 'k', payloadZstd: true, payload: b64({ n: 1 }) }, 400, 'timers_bad_request'],
      [{ queue: 'tm.bad', timerKey: 'k', payloadZstd: true, payload: zstdB64(new Uint8Array(1024 * 1024 + 1)) }, 413, 'payload_too_large'],
    ]
    for (const [op, status, code] of cases) {
      const res = await schedule(op)
      expect(res.status, JSON.stringify(op).slice(0, 100)).toBe(status)
      expect(res.body.code).toBe(code)
    }
    const twice = await app.json('POST', '/api/v1/timers', { operations: [
      { op: 'schedule', queue: 'tm.bad', timerKey: 'k', delayMs: 1, txn: 't', payload: 'e30=' },
      { op: 'cancel', queue: 'tm.bad', timerKey: 'k' },
    ] })
    expect(twice).toMatchObject({ status: 400, body: { code: 'timers_bad_request' } })
    expect((await app.json('GET', '/api/v1/timers/tm.bad?mode=count')).body.code).toBe('timers_count_prefix')
    expect((await app.json('GET', '/api/v1/timers/tm.bad?mode=count&prefix=a&limit=3')).body.code).toBe('timers_count_paging')
    expect((await app.json('GET', '/api/v1/timers/tm.bad?mode=sum')).body.code).toBe('timers_read_mode_unknown')
    expect((await app.json('GET', '/api/v1/timers/tm.bad?cursor=a')).status).toBe(400)
    expect((await app.json('DELETE', '/api/v1/timers/tm.bad/k?force=1')).status).toBe(400)
    expect(await writtenRows(app)).toEqual(before)
  })
})

describe('the fire', () => {
  it('pushes a due timer once, as an ordinary message carrying its txn, and never one not yet due', async () => {
    await schedule({ queue: 'tm.fire', timerKey: 'due', delayMs: -5, txn: 'fire-1', payload: b64({ hello: 'world' }) })
    await schedule({ queue: 'tm.fire', timerKey: 'later', delayMs: 3_600_000, txn: 'fire-2' })
    const fired = await app.db.call('timers_fire_step_v1', { limit: 1000 })
    expect(fired.processed).toBeGreaterThanOrEqual(1)
    const popped = await pop(app, 'tm.fire', { batch: 10 })
    expect(popped.messages.map((m) => [m.transactionId, m.data])).toEqual([['fire-1', { hello: 'world' }]])
    expect((await app.json('GET', '/api/v1/timers/tm.fire/due')).body.found).toBe(false)
    expect((await app.json('GET', '/api/v1/timers/tm.fire/later')).body.found).toBe(true)
    await app.db.call('timers_fire_step_v1', { limit: 1000 })
    expect((await pop(app, 'tm.fire', { batch: 10 })).status).toBe(204)
  })

  it('delivers each timer under the messageId its schedule answered, a reschedule minting a new one', async () => {
    const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/
    const first = (await schedule({ queue: 'tm.ids', timerKey: 'moved', delayMs: 60_000, txn: 'ids-moved' })).body.results[0]
    expect(first.messageId).toMatch(uuid)
    expect((await app.json('GET', '/api/v1/timers/tm.ids/moved')).body.messageId).toBe(first.messageId)
    // A reschedule is a new message under an old name: a new id, and the peek shows it.
    const moved = (await schedule({ queue: 'tm.ids', timerKey: 'moved', delayMs: -1, txn: 'ids-moved' })).body.results[0]
    expect(moved).toMatchObject({ status: 'rescheduled', messageId: expect.stringMatching(uuid) })
    expect(moved.messageId).not.toBe(first.messageId)
    expect((await app.json('GET', '/api/v1/timers/tm.ids/moved')).body.messageId).toBe(moved.messageId)
    // Scheduled out of due order into one partition, and one through a transaction's rider.
    const ids = new Map<string, string>([['ids-moved', moved.messageId]])
    for (const [key, delayMs] of [['c', -30], ['a', -90], ['d', -10], ['b', -60]] as const) {
      ids.set(`ids-${key}`, (await schedule({ queue: 'tm.ids', timerKey: key, delayMs, txn: `ids-${key}` })).body.results[0].messageId)
    }
    const rider = await app.json('POST', '/api/v1/transaction', { operations: [], timers: [{ op: 'schedule', queue: 'tm.ids', timerKey: 'e', delayMs: -5, txn: 'ids-e', payload: b64(5) }] })
    const riderResult = rider.body.results.find((r: { type: string }) => r.type === 'timer')
    expect(riderResult.messageId).toMatch(uuid)
    ids.set('ids-e', riderResult.messageId)
    expect(new Set(ids.values()).size).toBe(6)

    await app.db.call('timers_fire_step_v1', { limit: 1000 })
    const popped = await pop(app, 'tm.ids', { batch: 10 })
    expect(popped.messages.map((m) => [m.transactionId, m.id])).toEqual(
      // One fire, so one segment, in id order (due order to the millisecond), which is offset order.
      ['ids-a', 'ids-b', 'ids-c', 'ids-d', 'ids-e', 'ids-moved'].map((txn) => [txn, ids.get(txn)]).sort((x, y) => (x[1]! < y[1]! ? -1 : 1)),
    )
    // The order a client restores by sorting on (createdAt, id) is the log's.
    const sorted = [...popped.messages].sort((a, b) => Date.parse(a.createdAt) - Date.parse(b.createdAt) || a.id.localeCompare(b.id))
    expect(sorted.map((m) => m.id)).toEqual(popped.messages.map((m) => m.id))
  })

  it('fires each of many timers exactly once under concurrent firers', async () => {
    const queues = ['tm.par.a', 'tm.par.b', 'tm.par.c', 'tm.par.d']
    for (const queue of queues) {
      const operations = Array.from({ length: 50 }, (_, i) => ({ op: 'schedule', queue, timerKey: `k${i}`, delayMs: 0, txn: `${queue}-${i}`, payload: b64(i) }))
      expect((await app.json('POST', '/api/v1/timers', { operations })).status).toBe(200)
    }
    const firer = async () => {
      for (;;) {
        const step = await app.db.call('timers_fire_step_v1', { limit: 17 })
        if (step.processed === 0 && step.next === null) return
      }
    }
    await Promise.all([firer(), firer(), firer(), firer()])
    // Every message popped and acked, counted by transaction id: 200 timers, 200 distinct messages.
    const seen: string[] = []
    for (const queue of queues) {
      for (;;) {
        const p = await pop(app, queue, { batch: 100 })
        if (p.status === 204) break
        seen.push(...p.messages.map((m) => m.transactionId))
        await ack(app, acksOf(p.messages))
      }
    }
    expect(seen).toHaveLength(200)
    expect(new Set(seen).size).toBe(200)
    const [left] = await app.database.sql<{ n: number }>(`select count(*)::int as n from queen.timers where queue like 'tm.par.%'`)
    expect(left!.n).toBe(0)
  })

  it('encrypts the payload at schedule for an encrypting queue and delivers it decrypted', async () => {
    await configureQueue(app, 'tm.secret', { encryption_enabled: true })
    const res = await schedule({ queue: 'tm.secret', timerKey: 's', delayMs: 0, txn: 'secret-1', payload: b64({ card: '4242' }) })
    expect(res.status).toBe(200)
    const [row] = await app.database.sql<{ enc: boolean; data: string }>(`select enc, data::text as data from queen.timers where queue = 'tm.secret'`)
    expect(row!.enc).toBe(true)
    expect(row!.data).not.toContain('4242')
    await app.db.call('timers_fire_step_v1', { limit: 1000 })
    expect((await pop(app, 'tm.secret')).messages.map((m) => m.data)).toEqual([{ card: '4242' }])
  })

  it('fires the rest of a batch when one timer cannot be pushed, and backs that one off with its error', async () => {
    await schedule({ queue: 'tm.flip', timerKey: 'f', delayMs: 0, txn: 'flip-1' })
    await schedule({ queue: 'tm.fine', timerKey: 'g', delayMs: 0, txn: 'fine-1' })
    // Another broker turns encryption on after the schedule: this timer's cleartext body no longer fits.
    await configureQueue(app, 'tm.flip', { encryption_enabled: true })
    await fireAll()
    expect((await pop(app, 'tm.fine')).messages.map((m) => m.transactionId)).toEqual(['fine-1'])
    const held = (await app.json('GET', '/api/v1/timers/tm.flip/f')).body
    expect(held).toMatchObject({ found: true, attempts: 1, lastError: expect.stringMatching(/encryption/) })
    expect(Date.parse(held.deliverAt)).toBeGreaterThan(Date.now())
    expect((await app.json('DELETE', '/api/v1/timers/tm.flip/f')).body.status).toBe('cancelled')
  })

  it('wakes a pop parked on the queue when the lane fires a timer', async () => {
    const parked = pop(app, 'tm.wake', { wait: true, timeout: 20_000 })
    await schedule({ queue: 'tm.wake', timerKey: 'w', delayMs: 200, txn: 'wake-1', payload: b64('ring') })
    let delivered: Awaited<typeof parked> | undefined
    void parked.then((p) => (delivered = p))
    while (delivered === undefined) {
      await runLane(app.db, kvTimers, { config: app.config, budgetMs: 1000, popWaker: waker, force: true })
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
    expect(delivered.messages.map((m) => [m.transactionId, m.data])).toEqual([['wake-1', 'ring']])
  })

  it('delivers a payload sent zstd-compressed (payloadZstd) as the JSON it decompresses to', async () => {
    const body = { order: 7, lines: Array.from({ length: 50 }, (_, i) => ({ sku: `sku-${i}`, qty: 1 })) }
    const res = await schedule({ queue: 'tm.zstd', timerKey: 'z', delayMs: 0, txn: 'zstd-1', payloadZstd: true, payload: zstdB64(Buffer.from(JSON.stringify(body))) })
    expect(res.status).toBe(200)
    await fireAll()
    expect((await pop(app, 'tm.zstd')).messages.map((m) => [m.transactionId, m.data])).toEqual([['zstd-1', body]])
  })

  it('delivers a payload that is not JSON as its base64 text', async () => {
    const raw = Buffer.from([0xff, 0x00, 0x01]).toString('base64')
    await schedule({ queue: 'tm.raw', timerKey: 'r', delayMs: 0, txn: 'raw-1', payload: raw })
    await fireAll()
    expect((await pop(app, 'tm.raw')).messages.map((m) => m.data)).toEqual([raw])
  })
})
