// The operator's kill switches for the key/value store and timers (GET/POST
// /api/v1/system/kv-timers): a paused surface answers 503 with Retry-After on its own routes and 403
// inside a transaction; a timer cancel always works; a paused fire pushes nothing until resumed.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { testApp, type TestApp } from '../helpers/app.js'
import { pop } from '../helpers/engine.js'

let app: TestApp
beforeAll(async () => {
  app = await testApp()
})
afterAll(() => app.close())

const set = (body: unknown) => app.json('POST', '/api/v1/system/kv-timers', body)
const schedule = (timerKey: string, delayMs = 0) =>
  app.json('POST', '/api/v1/timers', { operations: [{ op: 'schedule', queue: 'sw.q', timerKey, delayMs, txn: timerKey, payload: 'e30=' }] })

describe('kv/timers kill switches', () => {
  it('start on, and echo the state they are switched to', async () => {
    expect((await app.json('GET', '/api/v1/system/kv-timers')).body).toEqual({ kvEnabled: true, timersScheduleEnabled: true, timersFireEnabled: true })
    expect((await set({ kv: false })).body).toEqual({ kvEnabled: false, timersScheduleEnabled: true, timersFireEnabled: true })
    expect((await set({ kv: true })).body.kvEnabled).toBe(true)
    expect(await set({ kvEnabled: false })).toMatchObject({ status: 400 })
  })

  it('a paused key/value store answers 503 on its routes and 403 in a transaction, and comes back', async () => {
    await set({ kv: false })
    const batch = await app.json('POST', '/api/v1/kv', { operations: [{ op: 'get', ns: 'n', key: 'k' }] })
    expect(batch).toMatchObject({ status: 503, body: { code: 'kv_disabled' } })
    expect(batch.headers.get('retry-after')).not.toBeNull()
    expect((await app.json('GET', '/api/v1/kv/n/k')).status).toBe(503)
    const rider = await app.json('POST', '/api/v1/transaction', { operations: [], kv: [{ op: 'put', ns: 'n', key: 'k', value: 1, forever: true }] })
    expect(rider).toMatchObject({ status: 403, body: { code: 'kv_disabled' } })
    await set({ kv: true })
    expect((await app.json('POST', '/api/v1/kv', { operations: [{ op: 'get', ns: 'n', key: 'k' }] })).status).toBe(200)
  })

  it('paused scheduling refuses schedules but never a cancel; a paused fire holds due timers until resumed', async () => {
    expect((await schedule('held')).status).toBe(200)
    await set({ timersSchedule: false, timersFire: false })
    expect(await schedule('refused')).toMatchObject({ status: 503, body: { code: 'timers_disabled' } })
    expect((await app.json('POST', '/api/v1/transaction', { operations: [], timers: [{ op: 'cancel', queue: 'sw.q', timerKey: 'x' }] })).status).toBe(403)
    expect((await app.json('DELETE', '/api/v1/timers/sw.q/none')).body).toMatchObject({ ok: false, status: 'absent' })
    expect((await app.db.call('timers_fire_step_v1', { limit: 100 })).processed).toBe(0)
    expect((await pop(app, 'sw.q')).status).toBe(204)
    await set({ timersSchedule: true, timersFire: true })
    expect((await app.db.call('timers_fire_step_v1', { limit: 100 })).processed).toBe(1)
    expect((await pop(app, 'sw.q')).messages.map((m) => m.transactionId)).toEqual(['held'])
  })
})
