// The archive sink on Node with the directory driver, end to end over a real broker database:
// every pushed frame lands exactly once, in offset order, decrypted; the pointer follows the
// manifests; a re-run from an older pointer rewrites the same objects byte for byte; verify holds
// the archive against fetch and notices damage.
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { gunzipSync, gzipSync } from 'node:zlib'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createSinkEngine, type SinkEngine } from '../../src/sink/engine.js'
import { sinkOptions, type SinkOptionsInput } from '../../src/sink/options.js'
import { databaseSource, pointerKey } from '../../src/sink/source.js'
import { directoryStore } from '../../src/sink/store-directory.js'
import { verifyArchive } from '../../src/sink/verify.js'
import { testApp, type TestApp } from '../helpers/app.js'
import { push } from '../helpers/engine.js'
import { newestFrameAt, pointerPath, putPointerValue, readArchive, runSinkUntilPast, sinkDatabase, sleep } from '../helpers/sink.js'

const KEY = 'b'.repeat(64)
let app: TestApp
let dir: string

beforeAll(async () => {
  app = await testApp({ database: await sinkDatabase(), env: { QUEEN_ENCRYPTION_KEY: KEY } })
  dir = mkdtempSync(join(tmpdir(), 'queen-sink-'))
})
afterAll(async () => {
  await app.close()
  await app.database.drop()
  rmSync(dir, { recursive: true, force: true })
})

const source = () => databaseSource(app.db, app.config, '')
// The legacy layout: this file pins the first layout, which stays readable and writable (--layout legacy).
const engineFor = (input: SinkOptionsInput) => createSinkEngine(source(), directoryStore(dir), sinkOptions.parse({ layout: 'legacy', ...input }))
const pointer = async (sink: string, queue: string) => source().readPointer(sink, queue)

/** Runs `engine` until its pointer is past `instant` (every frame created before it archived), then releases its lease. */
const archiveUntil = (engine: SinkEngine, sink: string, queue: string, instant: string) => runSinkUntilPast(engine, source(), sink, queue, instant, 20_000)
const lastCreatedAt = (queue: string) => newestFrameAt(app.database, queue)

describe('sink with the directory driver', () => {
  it('archives every frame of an encrypted queue once, in offset order, decrypted, with a manifest per window', async () => {
    expect((await app.json('POST', '/api/v1/configure', { queue: 'orders', options: { encryptionEnabled: true } })).status).toBe(200)
    const sent = new Map<string, unknown[]>()
    for (let round = 0; round < 4; round++) {
      const items = Array.from({ length: 40 }, (_, i) => {
        const partition = `p${i % 4}`
        const payload = { round, i, text: 'é'.repeat(i % 3) }
        sent.set(partition, [...(sent.get(partition) ?? []), payload])
        return { queue: 'orders', partition, payload }
      })
      await push(app, items)
      await sleep(350)
    }
    const engine = engineFor({ sink: 'lake', queues: ['orders'], windowSeconds: 1, maxFrames: 7 })
    const at = await archiveUntil(engine, 'lake', 'orders', await lastCreatedAt('orders'))

    const archive = await readArchive(directoryStore(dir), { sink: 'lake', queue: 'orders', pointer: at, layout: 'legacy' })
    expect([...archive.partitions.keys()].sort()).toEqual(['p0', 'p1', 'p2', 'p3'])
    for (const [partition, lines] of archive.partitions) {
      expect(lines.map((l) => l.offset)).toEqual(lines.map((_, i) => i))
      expect(lines.map((l) => l.payload)).toEqual(sent.get(partition))
    }
    expect(archive.gaps).toEqual([])
    // maxFrames splits a (partition, window) into parts named by their first offset.
    expect(archive.chain.flatMap((m) => m.objects).every((o) => o.count <= 7)).toBe(true)
    expect(archive.objects.every((k) => /^lake\/orders\/data\/p\d\/\d{8}T\d{6}\.000Z\/\d{20}\.ndjson\.gz$/.test(k))).toBe(true)
    // The kv pointer is exactly D2's shape, and the status row counts what was archived.
    // A client reads it in the broker's namespace (a read is allowed, a write is not).
    const kv = await app.json('GET', pointerPath('lake', 'orders'))
    expect(kv.body).toMatchObject({ found: true, value: { windowEnd: at }, expiresAt: null })
    const report = await verifyArchive(source(), directoryStore(dir), { sink: 'lake', queue: 'orders', prefix: '' })
    expect(report).toMatchObject({ ok: true, frames: 160, compared: 160, problems: [] })
  })

  it('rewrites the very same objects when re-run from an older pointer (a crash before the commit)', async () => {
    const store = directoryStore(dir)
    const before = new Map<string, string>()
    for (const key of await store.list('lake/orders/data/')) before.set(key, Buffer.from((await store.get(key))!).toString('base64'))
    const at = (await pointer('lake', 'orders'))!
    const chain = (await readArchive(store, { sink: 'lake', queue: 'orders', pointer: at, layout: 'legacy' })).chain
    // Back to the end of the first window that held frames, as if every later commit had been lost.
    const rewind = chain.find((m) => m.objects.length > 0)!.windowEnd
    await putPointerValue(app, pointerKey('lake', 'orders'), { windowEnd: rewind })
    const engine = engineFor({ sink: 'lake', queues: ['orders'], windowSeconds: 1, maxFrames: 7 })
    await archiveUntil(engine, 'lake', 'orders', await lastCreatedAt('orders'))
    const after = new Map<string, string>()
    for (const key of await store.list('lake/orders/data/')) after.set(key, Buffer.from((await store.get(key))!).toString('base64'))
    expect(after).toEqual(before)
    expect(readdirSync(join(dir, 'lake', 'orders', 'data', 'p0'), { recursive: true }).some((name) => String(name).endsWith('.tmp'))).toBe(false)
  })

  it('verify reports an object whose content no longer matches its manifest, and a frame left out', async () => {
    const store = directoryStore(dir)
    const at = (await pointer('lake', 'orders'))!
    const archive = await readArchive(store, { sink: 'lake', queue: 'orders', pointer: at, layout: 'legacy' })
    const victim = archive.chain.flatMap((m) => m.objects).find((o) => o.count >= 2)!
    const original = (await store.get(victim.key))!
    const lines = gunzipSync(original).toString('utf8').split('\n').filter(Boolean)
    // Drop the second frame of the object: a hole in the archive and a sha256 mismatch.
    writeFileSync(join(dir, ...victim.key.split('/')), gzipSync([lines[0], ...lines.slice(2)].map((l) => `${l}\n`).join('')))
    const report = await verifyArchive(source(), store, { sink: 'lake', queue: 'orders', prefix: '' })
    expect(report.ok).toBe(false)
    expect(report.problems).toEqual(
      expect.arrayContaining([
        `${victim.key}: sha256 differs from the manifest`,
        `${victim.partition}: frame ${victim.firstOffset + 1} is missing from the archive`,
      ]),
    )
    await store.put(victim.key, original, 'application/x-ndjson')
    expect((await verifyArchive(source(), store, { sink: 'lake', queue: 'orders', prefix: '' })).ok).toBe(true)
  })

  it('moves the pointer over idle windows without writing data, and records nothing for an unknown queue', async () => {
    const engine = engineFor({ sink: 'lake', queues: ['orders', 'never-pushed'], windowSeconds: 1 })
    const at = (await pointer('lake', 'orders'))!
    await sleep(1200)
    const [orders, unknown] = await engine.runOnce(5000)
    expect(orders).toMatchObject({ leased: true, caughtUp: true, frames: 0 })
    expect(Date.parse((await pointer('lake', 'orders'))!)).toBeGreaterThan(Date.parse(at))
    expect(unknown).toMatchObject({ caughtUp: true, windows: 0 })
    expect(await pointer('lake', 'never-pushed')).toBeNull()
    await engine.release()
  })
})
