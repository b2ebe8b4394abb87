// Two processes of one sink name, and a push transaction left open across partitions/changed calls.
// The lease (one maintenance_leases row per tenant, sink and queue) lets one process write at a
// time; a process that stalls past its lease may still finish writing a window, but the window's
// content is a function of the committed state, so it writes the same bytes under the same names,
// and the fenced commit keeps it from moving the pointer. The safe-time contract keeps a frame of a
// transaction that commits late out of windows closed before it, instead of skipping it.
import { createHash } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createSinkEngine } from '../../src/sink/engine.js'
import { sinkOptions } from '../../src/sink/options.js'
import { databaseSource } from '../../src/sink/source.js'
import { directoryStore } from '../../src/sink/store-directory.js'
import type { ObjectStore } from '../../src/sink/store.js'
import { verifyArchive } from '../../src/sink/verify.js'
import { testApp, type TestApp } from '../helpers/app.js'
import { push } from '../helpers/engine.js'
import { readArchive, sinkDatabase, sleep } from '../helpers/sink.js'

let app: TestApp
const dirs: string[] = []
beforeAll(async () => {
  app = await testApp({ database: await sinkDatabase() })
})
afterAll(async () => {
  await app.close()
  await app.database.drop()
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true })
})

const scratch = () => {
  const dir = mkdtempSync(join(tmpdir(), 'queen-sink-'))
  dirs.push(dir)
  return dir
}
const source = () => databaseSource(app.db, app.config, '')

/** A store that records every put's content hash, and can be made to stall (a long GC pause, a slow disk). */
function recording(inner: ObjectStore, puts: Map<string, Set<string>>, stallMs: () => number): ObjectStore {
  return {
    ...inner,
    async put(key, body, type) {
      const pause = stallMs()
      if (pause > 0) await sleep(pause)
      const hashes = puts.get(key) ?? new Set<string>()
      hashes.add(createHash('sha256').update(body).digest('hex'))
      puts.set(key, hashes)
      await inner.put(key, body, type)
    },
  }
}

describe('sink concurrency', () => {
  it('two processes of one sink name never write conflicting objects, and the pointer never moves back', async () => {
    const dir = scratch()
    const puts = new Map<string, Set<string>>()
    // Parquet, the format with the most settings that could move a byte between two writers.
    const options = sinkOptions.parse({ sink: 'twin', queues: ['twins'], windowSeconds: 1, maxFrames: 5, leaseSeconds: 1, format: 'parquet' })
    // Process a starts first and stalls on its 4th put for longer than its lease, so b (which never
    // stalls) takes over mid-window while a is still going to write that window's objects.
    let aPuts = 0
    const a = createSinkEngine(source(), recording(directoryStore(dir), puts, () => (++aPuts === 4 ? 1300 : 0)), options)
    const b = createSinkEngine(source(), recording(directoryStore(dir), puts, () => 0), options)
    const commits = { a: 0, b: 0 }
    const pointers: string[] = []
    let pushing = true
    const loop = async (engine: typeof a, name: 'a' | 'b') => {
      while (pushing) {
        for (const run of await engine.runOnce(2000)) commits[name] += run.windows
        const at = await source().readPointer('twin', 'twins')
        if (at) pointers.push(at)
        await sleep(50)
      }
    }
    const running = [loop(a, 'a')]
    for (let i = 0; i < 100 && commits.a === 0; i++) await push(app, [{ queue: 'twins', partition: 'warm', payload: { warmup: i } }]).then(() => sleep(100))
    running.push(loop(b, 'b'))
    for (let round = 0; round < 25; round++) {
      await push(app, Array.from({ length: 12 }, (_, i) => ({ queue: 'twins', partition: `p${i % 3}`, payload: { round, i } })))
      await sleep(150)
    }
    await sleep(2500)
    pushing = false
    await Promise.all(running)
    // Both held the sink at some point (the stalls hand it over), so the test exercised a takeover.
    expect(commits.a).toBeGreaterThan(0)
    expect(commits.b).toBeGreaterThan(0)
    for (const [key, hashes] of puts) expect(hashes.size, key).toBe(1)
    const sorted = [...pointers].sort((x, y) => Date.parse(x) - Date.parse(y))
    expect(pointers.filter((p, i) => i > 0 && Date.parse(p) < Date.parse(pointers[i - 1]!))).toEqual([])
    expect(sorted.length).toBeGreaterThan(0)

    // Drain with one process and check the archive as a whole.
    await a.release()
    await b.release()
    const c = createSinkEngine(source(), directoryStore(dir), options)
    for (let i = 0; i < 20 && (await c.runOnce(3000)).some((r) => !r.caughtUp); i++) await sleep(100)
    await sleep(1100)
    await c.runOnce(3000)
    await c.release()
    const archive = await readArchive(directoryStore(dir), { sink: 'twin', queue: 'twins', pointer: await source().readPointer('twin', 'twins') })
    for (const partition of ['p0', 'p1', 'p2']) expect(archive.partitions.get(partition)!.map((l) => l.offset)).toEqual(Array.from({ length: 100 }, (_, i) => i))
    expect((await verifyArchive(source(), directoryStore(dir), { sink: 'twin', queue: 'twins', prefix: '' })).problems).toEqual([])
  })

  it('a push transaction open across partitions/changed calls is archived once it commits, never skipped', async () => {
    const dir = scratch()
    const engine = createSinkEngine(source(), directoryStore(dir), sinkOptions.parse({ sink: 'late', queues: ['late'], windowSeconds: 1 }))
    await push(app, [{ queue: 'late', partition: 'p', payload: { before: true } }])
    const writer = new pg.Client({ connectionString: app.database.url })
    await writer.connect()
    try {
      await writer.query('begin')
      await writer.query(`select queen.log_push_v1(p_tenant => '', p_items => $1::jsonb)`, [
        JSON.stringify([{ index: 0, queue: 'late', partition: 'p', transactionId: 'late-1', data: { late: true } }]),
      ])
      // Frames pushed after the open transaction, in other partitions, in later windows.
      for (let i = 0; i < 3; i++) {
        await sleep(700)
        await push(app, [{ queue: 'late', partition: `q${i}`, payload: { after: i } }])
        await engine.runOnce(3000)
      }
      const held = await source().readPointer('late', 'late')
      const [{ started }] = (await writer.query<{ started: Date }>('select now() as started')).rows as [{ started: Date }]
      // The open transaction pins safeTime: no window past its start may close while it is open.
      expect(held === null || Date.parse(held) <= started.getTime()).toBe(true)
      await writer.query('commit')
    } finally {
      await writer.end()
    }
    await sleep(1100)
    for (let i = 0; i < 10 && (await engine.runOnce(3000)).some((r) => !r.caughtUp); i++) await sleep(100)
    await engine.release()
    const at = await source().readPointer('late', 'late')
    const archive = await readArchive(directoryStore(dir), { sink: 'late', queue: 'late', pointer: at })
    expect(archive.partitions.get('p')!.map((l) => [l.offset, l.payload])).toEqual([
      [0, { before: true }],
      [1, { late: true }],
    ])
    expect([...archive.partitions.keys()].sort()).toEqual(['p', 'q0', 'q1', 'q2'])
    expect((await verifyArchive(source(), directoryStore(dir), { sink: 'late', queue: 'late', prefix: '' })).ok).toBe(true)
  })
})
