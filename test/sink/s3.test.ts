// The S3-compatible driver (aws4fetch) against a fake S3 that checks SigV4 itself
// (test/helpers/fake-s3.ts; no real S3-compatible server can run here): the sink archives through
// it from an s3://bucket/prefix target, verify passes on what the bucket holds, and wrong
// credentials fail with S3's error code and nothing secret in the message.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createSinkEngine } from '../../src/sink/engine.js'
import { sinkOptions } from '../../src/sink/options.js'
import { databaseSource } from '../../src/sink/source.js'
import { openTarget } from '../../src/sink/target.js'
import { verifyArchive } from '../../src/sink/verify.js'
import { testApp, type TestApp } from '../helpers/app.js'
import { push } from '../helpers/engine.js'
import { startFakeS3, type FakeS3 } from '../helpers/fake-s3.js'
import { readArchive, sinkDatabase, sleep } from '../helpers/sink.js'

const CREDENTIALS = { accessKeyId: 'AKIDSINKTEST', secretAccessKey: 'sink-test-secret-key', region: 'eu-test-1' }
let app: TestApp
let s3: FakeS3
beforeAll(async () => {
  app = await testApp({ database: await sinkDatabase() })
  s3 = await startFakeS3(CREDENTIALS)
})
afterAll(async () => {
  await app.close()
  await app.database.drop()
  await s3.close()
})

const env = (secret = CREDENTIALS.secretAccessKey) => ({
  S3_ENDPOINT: s3.endpoint,
  S3_REGION: CREDENTIALS.region,
  S3_ACCESS_KEY_ID: CREDENTIALS.accessKeyId,
  S3_SECRET_ACCESS_KEY: secret,
})

describe('sink with the S3-compatible driver', () => {
  it('archives into s3://bucket/prefix with signed requests, and verify passes on the bucket', async () => {
    const target = openTarget('s3://archive/queen edge/', env())
    expect(target.prefix).toBe('queen edge/')
    await push(app, Array.from({ length: 30 }, (_, i) => ({ queue: 'bills/2026', partition: `p ${i % 3}`, payload: { i } })))
    const source = databaseSource(app.db, app.config, '')
    const engine = createSinkEngine(source, target.store, sinkOptions.parse({ sink: 's3lake', queues: ['bills/2026'], windowSeconds: 1, prefix: target.prefix, maxFrames: 4, layout: 'legacy' }))
    let pointer: string | null = null
    for (let i = 0; i < 50; i++) {
      const [run] = await engine.runOnce(3000)
      pointer = run!.windowEnd
      if (run!.frames > 0 || (pointer && (await readArchive(target.store, { prefix: target.prefix, sink: 's3lake', queue: 'bills/2026', pointer, layout: 'legacy' })).objects.length > 0)) break
      await sleep(200)
    }
    await engine.release()
    expect(s3.refused).toBe(0)
    // Names with '/' and spaces stay one path segment each.
    expect([...s3.objects.keys()].some((k) => k.startsWith('archive/queen edge/s3lake/bills%2F2026/data/p%202/'))).toBe(true)
    const archive = await readArchive(target.store, { prefix: target.prefix, sink: 's3lake', queue: 'bills/2026', pointer, layout: 'legacy' })
    expect([...archive.partitions.values()].flat().length).toBe(30)
    expect(await verifyArchive(source, target.store, { sink: 's3lake', queue: 'bills/2026', prefix: target.prefix })).toMatchObject({ ok: true, frames: 30 })
  })

  it('fails with S3\'s error code, and never the secret, when the credentials are wrong', async () => {
    const wrong = openTarget('s3://archive/x', env('not-the-secret'))
    const error = await wrong.store.put('x/y', new Uint8Array([1]), 'application/octet-stream').catch((e: Error) => e)
    expect(error).toBeInstanceOf(Error)
    expect((error as Error).message).toBe('S3 PUT x/y answered 403 SignatureDoesNotMatch')
    expect(s3.objects.has('archive/x/y')).toBe(false)
    expect(() => openTarget('s3://archive/x', { S3_ENDPOINT: s3.endpoint })).toThrow('S3_ACCESS_KEY_ID is required for an s3:// target')
  })
})
