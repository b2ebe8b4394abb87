// GET /api/v1/sinks: each archive sink of the tenant with its pointer, lag, last object and hold
// state, and the holds that name a sink which never ran. The sink itself runs for real (the engine
// over the same database and a temporary directory).
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createSinkEngine } from '../../src/sink/engine.js'
import { sinkOptions } from '../../src/sink/options.js'
import { databaseSource } from '../../src/sink/source.js'
import { directoryStore } from '../../src/sink/store-directory.js'
import { testApp, type TestApp } from '../helpers/app.js'
import { push } from '../helpers/engine.js'
import { sinkDatabase, sleep } from '../helpers/sink.js'

let app: TestApp
let dir: string
beforeAll(async () => {
  app = await testApp({ database: await sinkDatabase() })
  dir = mkdtempSync(join(tmpdir(), 'queen-sinks-'))
})
afterAll(async () => {
  await app.close()
  await app.database.drop()
  rmSync(dir, { recursive: true, force: true })
})

const sinks = async () => {
  const res = await app.json('GET', '/api/v1/sinks')
  expect(res.status).toBe(200)
  return res.body.sinks as Record<string, unknown>[]
}

describe('GET /api/v1/sinks', () => {
  it('lists a hold whose sink never ran, then the sink with its pointer, lag, last object and hold state', async () => {
    expect(await sinks()).toEqual([])
    const configured = await app.json('POST', '/api/v1/configure', {
      queue: 'held',
      options: { retentionEnabled: true, retentionSeconds: 1, retentionSinkHold: 'lake' },
    })
    expect(configured.status).toBe(200)
    expect(await sinks()).toEqual([
      expect.objectContaining({ sink: 'lake', queue: 'held', ran: false, running: false, windowEnd: null, lagFrames: 0, holdNamesSink: true }),
    ])

    await push(app, Array.from({ length: 10 }, (_, i) => ({ queue: 'held', partition: `p${i % 2}`, payload: { i } })))
    const engine = createSinkEngine(databaseSource(app.db, app.config, ''), directoryStore(dir), sinkOptions.parse({ sink: 'lake', queues: ['held'], windowSeconds: 1, layout: 'legacy' }))
    let row: Record<string, unknown> | undefined
    for (let i = 0; i < 40; i++) {
      await engine.runOnce(3000)
      row = (await sinks())[0]
      if (row?.framesArchived === 10) break
      await sleep(200)
    }
    expect(row).toMatchObject({ sink: 'lake', queue: 'held', ran: true, running: true, lagFrames: 0, lagSeconds: 0, framesArchived: 10, holdNamesSink: true })
    expect(row!.windowEnd).toBe((await databaseSource(app.db, app.config, '').readPointer('lake', 'held'))!.replace(/(\.\d{3})\d*Z$/, '$1Z'))
    expect(row).toMatchObject({ format: 'jsonl', compression: 'gzip', layout: 'legacy', lastWindow: { end: expect.any(String), frames: 10 } })
    expect(row!.lastObject).toMatch(/^lake\/held\/data\/p1\/\d{8}T\d{6}\.000Z\/0{20}\.ndjson\.gz$/)
    // The hold keeps everything younger than the pointer minus 60 s; retention alone would keep 1 s.
    expect(row!.holdingRetention).toBe(true)

    await push(app, Array.from({ length: 5 }, (_, i) => ({ queue: 'held', partition: 'p0', payload: { late: i } })))
    const [behind] = await sinks()
    expect(behind).toMatchObject({ lagFrames: 5, framesArchived: 10 })
    expect(behind!.lagSeconds).toBeGreaterThanOrEqual(0)

    await engine.release()
    expect((await sinks())[0]).toMatchObject({ running: false })
  })

  it('names the format, the layout and the last closed window of a lake sink, which an idle jump leaves alone', async () => {
    await push(app, Array.from({ length: 6 }, (_, i) => ({ queue: 'lake.q', partition: `p${i % 3}`, payload: { i } })))
    const engine = createSinkEngine(databaseSource(app.db, app.config, ''), directoryStore(dir), sinkOptions.parse({ sink: 'pq', queues: ['lake.q'], windowSeconds: 1, format: 'parquet' }))
    let row: Record<string, unknown> | undefined
    for (let i = 0; i < 40; i++) {
      await engine.runOnce(3000)
      row = (await sinks()).find((s) => s.sink === 'pq')
      if (row?.framesArchived === 6) break
      await sleep(200)
    }
    expect(row).toMatchObject({ format: 'parquet', compression: 'snappy', layout: 'hive/queue', framesArchived: 6, lastWindow: { frames: 6, objects: 1 } })
    const window = row!.lastWindow as { start: string; end: string }
    expect(Date.parse(window.end) - Date.parse(window.start)).toBe(1000)
    expect(row!.lastObject).toMatch(/^queue=lake\.q\/dt=\d{4}-\d\d-\d\d\/hour=\d\d\/w-\d{16}-\d{16}-0000\.parquet$/)
    // Idle windows move the pointer past the last window with frames, and leave that window shown.
    await sleep(1500)
    await engine.runOnce(3000)
    const idle = (await sinks()).find((s) => s.sink === 'pq')!
    expect(Date.parse(String(idle.windowEnd))).toBeGreaterThan(Date.parse(window.end))
    expect(idle.lastWindow).toEqual(row!.lastWindow)
    await engine.release()
  })

  it('does not call a hold on a queue without age retention a hold that holds anything back', async () => {
    await app.json('POST', '/api/v1/configure', { queue: 'kept', options: { retentionSinkHold: 'lake' } })
    expect((await sinks()).find((s) => s.queue === 'kept')).toMatchObject({ ran: false, holdingRetention: false })
  })
})
