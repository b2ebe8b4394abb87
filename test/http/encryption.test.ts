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
    expect(Object.keys(rows[0]!.data).sort()).toEqual(['authTag', 'encrypted', 'iv', 'kid', 'v'])
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

  // Frame format 2 binds tenant, queue and partition as associated data: a ciphertext copied to
  // another place (by anyone who can write the tables) fails there instead of being served.
  const setData = (queue: string, partition: string, data: unknown) =>
    app.database.sql(
      `update queen.log_segments s set frames[1] = jsonb_set(frames[1], '{data}', $3::jsonb)
         from queen.log_partitions p join queen.queues q on q.id = p.queue_id
        where p.id = s.partition_id and q.name = $1 and p.name = $2`,
      [queue, partition, JSON.stringify(data)],
    )
  const dataOf = async (queue: string, partition: string) =>
    (
      await app.database.sql<{ data: unknown }>(
        `select s.frames[1]->'data' as data from queen.log_segments s join queen.log_partitions p on p.id = s.partition_id
           join queen.queues q on q.id = p.queue_id where q.name = $1 and p.name = $2`,
        [queue, partition],
      )
    )[0]!.data

  it('binds a frame to its partition and queue: a copied ciphertext answers decryptError, the original still opens', async () => {
    await configureQueue(app, 'bound', { encryption_enabled: true })
    await configureQueue(app, 'bound2', { encryption_enabled: true })
    await push(app, [{ queue: 'bound', partition: 'a', payload: 'for a' }, { queue: 'bound', partition: 'b', payload: 'for b' }, { queue: 'bound2', partition: 'a', payload: 'other queue' }])
    const sealedA = await dataOf('bound', 'a')
    await setData('bound', 'b', sealedA)
    await setData('bound2', 'a', sealedA)
    const a = await pop(app, 'bound', { batch: 10 }, 'a')
    expect(a.messages[0]!.data).toBe('for a')
    const b = await pop(app, 'bound', { batch: 10 }, 'b')
    expect(b.messages[0]).toMatchObject({ data: null, decryptError: 'decryption failed' })
    const other = await pop(app, 'bound2', { batch: 10 }, 'a')
    expect(other.messages[0]).toMatchObject({ data: null, decryptError: 'decryption failed' })
  })

  it('binds a frame to its tenant: the same queue and partition of another tenant does not open it', async () => {
    const tenancy = await testApp({ database: app.database, env: { QUEEN_ENCRYPTION_KEY: KEY_A, QUEEN_TENANCY_HEADER: 'X-Queen-Tenant' } })
    try {
      const as = (tenant: string) => ({ 'x-queen-tenant': tenant })
      for (const tenant of ['acme', 'globex']) {
        expect((await tenancy.json('POST', '/api/v1/configure', { queue: 'tb', options: { encryptionEnabled: true } }, as(tenant))).status).toBe(200)
        expect((await tenancy.json('POST', '/api/v1/push', { items: [{ queue: 'tb', partition: 'p', payload: tenant }] }, as(tenant))).status).toBe(201)
      }
      const frame = (tenant: string) =>
        app.database.sql<{ data: unknown }>(
          `select s.frames[1]->'data' as data from queen.log_segments s join queen.log_partitions p on p.id = s.partition_id
             join queen.queues q on q.id = p.queue_id where q.name = 'tb' and q.tenant_id = $1`,
          [tenant],
        )
      const acme = (await frame('acme'))[0]!.data
      await app.database.sql(
        `update queen.log_segments s set frames[1] = jsonb_set(frames[1], '{data}', $1::jsonb)
           from queen.log_partitions p join queen.queues q on q.id = p.queue_id
          where p.id = s.partition_id and q.name = 'tb' and q.tenant_id = 'globex'`,
        [JSON.stringify(acme)],
      )
      const popped = await tenancy.json('GET', '/api/v1/pop/queue/tb?batch=10', undefined, as('globex'))
      expect(popped.body.messages[0]).toMatchObject({ data: null, decryptError: 'decryption failed' })
      expect((await tenancy.json('GET', '/api/v1/pop/queue/tb?batch=10', undefined, as('acme'))).body.messages[0].data).toBe('acme')
    } finally {
      await tenancy.close()
    }
  })

  it('still opens frames written before the format carried a binding (no `v`, no associated data)', async () => {
    await configureQueue(app, 'legacy', { encryption_enabled: true })
    await push(app, [{ queue: 'legacy', partition: 'p', payload: 'placeholder' }])
    // A format-1 envelope as the broker wrote it before: AES-256-GCM under KEY_A, no associated data.
    const { createCipheriv, createHash } = await import('node:crypto')
    const key = Buffer.from(KEY_A, 'hex')
    const iv = Buffer.alloc(12, 7)
    const cipher = createCipheriv('aes-256-gcm', key, iv)
    const encrypted = Buffer.concat([cipher.update(JSON.stringify({ written: 'before' })), cipher.final()])
    const legacy = {
      encrypted: encrypted.toString('base64'),
      iv: iv.toString('base64'),
      authTag: cipher.getAuthTag().toString('base64'),
      kid: createHash('sha256').update(key).digest('hex').slice(0, 8),
    }
    await setData('legacy', 'p', legacy)
    const { messages } = await pop(app, 'legacy', { batch: 10 }, 'p')
    expect(messages[0]!.data).toEqual({ written: 'before' })
    expect(messages[0]).not.toHaveProperty('decryptError')
    // The same envelope marked as format 2 must carry the binding, so it does not open.
    await push(app, [{ queue: 'legacy', partition: 'q', payload: 'placeholder' }])
    await setData('legacy', 'q', { ...legacy, v: 2 })
    expect((await pop(app, 'legacy', { batch: 10 }, 'q')).messages[0]).toMatchObject({ data: null, decryptError: 'decryption failed' })
  })
})
