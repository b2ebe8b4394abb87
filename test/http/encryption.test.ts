import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { testApp, type TestApp } from '../helpers/app.js'
import { configureQueue, pop, push, writtenRows } from '../helpers/engine.js'

const KEY_A = 'a'.repeat(64)
const KEY_B = Buffer.from('b'.repeat(32)).toString('base64')

let app: TestApp
beforeAll(async () => {
  app = await testApp({ env: { QUEEN_ENCRYPTION_KEY: KEY_A } })
})
afterAll(() => app.close())

const stored = (queue: string) =>
  app.database.sql<{ enc: boolean; data: Record<string, unknown> }>(`
    select (f->>'enc')::boolean as enc, f->'data' as data from queen.log_segments s
      join queen.log_partitions p on p.id = s.partition_id join queen.queues q on q.id = p.queue_id
      cross join lateral unnest(s.frames) with ordinality o(f, i)
     where q.name = $1 order by s.base_offset, o.i`, [queue])

describe('encryption at rest', () => {
  it('stores AES-256-GCM ciphertext for an encrypted queue and pops plaintext, even from a cold flag cache', async () => {
    await configureQueue(app, 'secret', { encryption_enabled: true })
    // This process has never seen the queue: it sends clear, is refused (QMENC), re-encrypts once.
    await push(app, [{ queue: 'secret', payload: { card: '4111 1111' } }, { queue: 'secret', payload: null }])
    const rows = await stored('secret')
    expect(rows.map((r) => r.enc)).toEqual([true, true])
    expect(Object.keys(rows[0]!.data).sort()).toEqual(['authTag', 'encrypted', 'iv', 'kid'])
    expect(JSON.stringify(rows)).not.toContain('4111')
    const { messages } = await pop(app, 'secret', { batch: 10 })
    expect(messages.map((m) => m.data)).toEqual([{ card: '4111 1111' }, null])
    expect(messages[0]).not.toHaveProperty('decryptError')
    // A decrypted message keeps a clear one's keys, in the same wire order.
    expect(Object.keys(messages[0]!)).toEqual(['id', 'transactionId', 'traceId', 'data', 'producerSub', 'createdAt', 'queue', 'partition', 'partitionId', 'leaseId', 'consumerGroup', 'offset', 'retryCount'])
  })

  it('stores clear frames again after the flag is turned off, and still decrypts the older ones', async () => {
    await configureQueue(app, 'flip', { encryption_enabled: true })
    await push(app, [{ queue: 'flip', payload: 'sealed' }])
    await configureQueue(app, 'flip', { encryption_enabled: false })
    await push(app, [{ queue: 'flip', payload: 'open' }])
    expect((await stored('flip')).map((r) => r.enc)).toEqual([true, false])
    expect((await pop(app, 'flip', { batch: 10 })).messages.map((m) => m.data)).toEqual(['sealed', 'open'])
  })

  it('decrypts frames written under QUEEN_ENCRYPTION_KEY_PREVIOUS after a rotation, and flags a tampered one', async () => {
    await configureQueue(app, 'rotate', { encryption_enabled: true })
    await push(app, [{ queue: 'rotate', payload: 'under A' }, { queue: 'rotate', payload: 'tampered' }])
    await app.database.sql(`
      update queen.log_segments s set frames[2] = jsonb_set(frames[2], '{data,encrypted}', '"AAAA"')
        from queen.log_partitions p join queen.queues q on q.id = p.queue_id
       where p.id = s.partition_id and q.name = 'rotate'`)
    const rotated = await testApp({ database: app.database, env: { QUEEN_ENCRYPTION_KEY: KEY_B, QUEEN_ENCRYPTION_KEY_PREVIOUS: KEY_A } })
    try {
      const { messages } = await pop(rotated, 'rotate', { batch: 10 })
      expect(messages[0]!.data).toBe('under A')
      expect(messages[1]).toMatchObject({ data: null, decryptError: 'decryption failed' })
    } finally {
      await rotated.close()
    }
  })

  it('refuses a push to an encrypted queue without a key: 500 encryption_key_missing, nothing stored', async () => {
    await configureQueue(app, 'nokey', { encryption_enabled: true })
    const keyless = await testApp({ database: app.database })
    try {
      const before = await writtenRows(app)
      const res = await keyless.json('POST', '/api/v1/push', { items: [{ queue: 'nokey', payload: 'plain' }] })
      expect(res.status).toBe(500)
      expect(res.body).toEqual({ error: 'Queue nokey has encryptionEnabled but QUEEN_ENCRYPTION_KEY is not configured', code: 'encryption_key_missing' })
      expect(await writtenRows(app)).toEqual(before)
    } finally {
      await keyless.close()
    }
  })

  it('never stores plaintext for an encrypted queue under concurrent flips and pushes', async () => {
    await configureQueue(app, 'racing', { encryption_enabled: false })
    const flips = (async () => {
      for (let i = 0; i < 10; i++) await configureQueue(app, 'racing', { encryption_enabled: i % 2 === 0 })
    })()
    const pushers = Array.from({ length: 4 }, async (_, w) => {
      for (let k = 0; k < 6; k++) {
        const res = await app.json('POST', '/api/v1/push', { items: [{ queue: 'racing', payload: `w${w}-${k}` }] })
        // Two flips inside one push may give 503 encryption_changed; never anything else.
        expect([201, 503]).toContain(res.status)
      }
    })
    await Promise.all([flips, ...pushers])
    // Every frame's envelope state matches its own enc flag, and every one pops back as plaintext.
    const rows = await stored('racing')
    for (const r of rows) expect(r.enc).toBe(typeof r.data === 'object' && r.data !== null && 'encrypted' in r.data)
    const { messages } = await pop(app, 'racing', { batch: 100 })
    expect(messages.every((m) => typeof m.data === 'string' && /^w\d-\d$/.test(m.data))).toBe(true)
  })
})
