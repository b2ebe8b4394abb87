// POST /api/v1/configure as q&r and ENGINE 10 specify it: body normalisation, the four merge
// rules for all 21 options, clamps, sink-hold refusals, every failure shape, the echo.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createDatabase } from '../../src/db/database.js'
import { freePort } from '../../src/db/embedded.js'
import { createNodePool } from '../../src/db/node-pool.js'
import { createLogger } from '../../src/log.js'
import { QUEUE_OPTION_KEYS } from '../../src/queue-options.js'
import { testApp, type TestApp } from '../helpers/app.js'

/** The 21 defaults of an undotted name (ENGINE 2.1). */
const DEFAULTS = {
  namespace: '',
  task: '',
  priority: 0,
  leaseTime: 300,
  retryLimit: 3,
  retryDelay: 1000,
  maxSize: 0,
  ttl: 3600,
  deadLetterQueue: true,
  dlqAfterMaxRetries: true,
  delayedProcessing: 0,
  windowBuffer: 0,
  retentionSeconds: 0,
  completedRetentionSeconds: 0,
  retentionEnabled: false,
  encryptionEnabled: false,
  maxWaitTimeSeconds: 0,
  minPopWaitTime: 0,
  dedupWindowSeconds: 3600,
  retentionSinkHold: '',
  retentionSinkHoldMaxSeconds: 604800,
}
/** A value different from the default for every option. */
const CHANGED = {
  namespace: 'ns',
  task: 'tk',
  priority: 7,
  leaseTime: 45,
  retryLimit: 9,
  retryDelay: 250,
  maxSize: 1000,
  ttl: 60,
  deadLetterQueue: false,
  dlqAfterMaxRetries: false,
  delayedProcessing: 5,
  windowBuffer: 2,
  retentionSeconds: 86400,
  completedRetentionSeconds: 3600,
  retentionEnabled: true,
  encryptionEnabled: true,
  maxWaitTimeSeconds: 120,
  minPopWaitTime: 1500,
  dedupWindowSeconds: 600,
  retentionSinkHold: 'lake-1',
  retentionSinkHoldMaxSeconds: 86400,
}
const echoOf = (all: Record<string, unknown>) => {
  const { namespace, task, ...options } = all
  return { namespace, task, options }
}

let app: TestApp
let logged: string[] = []
beforeAll(async () => {
  app = await testApp({ deps: { log: createLogger('warn', (line) => logged.push(line)) } })
})
afterAll(() => app.close())

const configure = (body: unknown) => app.json('POST', '/api/v1/configure', body)

/** The stored row, as configure spells it, read straight from PostgreSQL. */
async function stored(queue: string, tenant = ''): Promise<Record<string, unknown> | undefined> {
  const rows = await app.database.sql<{ o: Record<string, unknown> }>(
    'select queen._queue_options(q) as o from queen.queues q where tenant_id = $1 and name = $2',
    [tenant, queue],
  )
  return rows[0]?.o
}
const queueCount = async () => Number((await app.database.sql<{ n: string }>('select count(*) as n from queen.queues'))[0]!.n)

describe('configure creates', () => {
  it('creates a queue from defaults and echoes all 19 options, never creating a partition', async () => {
    const res = await configure({ queue: 'orders-created' })
    expect(res.status).toBe(200)
    expect(res.body).toEqual({
      configured: true,
      queueId: expect.stringMatching(/^[0-9a-f-]{36}$/),
      partitionId: null,
      queue: 'orders-created',
      namespace: '',
      task: '',
      storage: 'segments',
      options: echoOf(DEFAULTS).options,
    })
    expect(Object.keys(res.body.options)).toHaveLength(19)
    expect(await stored('orders-created')).toEqual(DEFAULTS)
    const partitions = await app.database.sql('select 1 from queen.log_partitions p join queen.queues q on q.id = p.queue_id where q.name = $1', ['orders-created'])
    expect(partitions).toEqual([])
  })

  it('accepts the empty string as a queue name', async () => {
    const res = await configure({ queue: '', leaseTime: 11 })
    expect(res.status).toBe(200)
    expect(res.body.queue).toBe('')
    expect(await stored('')).toMatchObject({ leaseTime: 11 })
  })

  it('derives namespace and task from a dotted name', async () => {
    expect((await configure({ queue: 'billing.invoice.v2' })).body).toMatchObject({ namespace: 'billing', task: 'invoice' })
    expect((await configure({ queue: '.lonely' })).body).toMatchObject({ namespace: '', task: 'lonely' })
  })

  it('answers the design document example', async () => {
    const res = await configure({
      queue: 'orders',
      namespace: 'billing',
      task: 'invoice',
      options: { leaseTime: 120, retryLimit: 5, dedupWindowSeconds: 600 },
    })
    expect(res.status).toBe(200)
    expect(res.body).toMatchObject({ queue: 'orders', namespace: 'billing', task: 'invoice', storage: 'segments', partitionId: null })
    expect(res.body.options).toEqual({ ...echoOf(DEFAULTS).options, leaseTime: 120, retryLimit: 5, dedupWindowSeconds: 600 })
    for (const key of ['mode', 'replace', 'invalid']) {
      expect(res.body).not.toHaveProperty(key)
      expect(res.body.options).not.toHaveProperty(key)
    }
  })

  it('creates from defaults in replace mode too', async () => {
    const res = await configure({ queue: 'created-by-replace', mode: 'replace', retryLimit: 1 })
    expect(await stored('created-by-replace')).toEqual({ ...DEFAULTS, retryLimit: 1 })
    expect(res.body.options.retryLimit).toBe(1)
  })

  it('writes the column defaults of queen.queues, so every create path agrees', async () => {
    await app.database.sql(`insert into queen.queues (name) values ('column-defaults')`)
    await configure({ queue: 'configure-defaults' })
    expect(await stored('configure-defaults')).toEqual(await stored('column-defaults'))
  })

  it('spells the same 21 keys in SQL and TypeScript', async () => {
    expect(Object.keys((await stored('configure-defaults'))!).sort()).toEqual([...QUEUE_OPTION_KEYS].sort())
    expect(Object.keys(DEFAULTS).sort()).toEqual([...QUEUE_OPTION_KEYS].sort())
  })
})

describe('configure normalises the body into one bag', () => {
  it('takes options at the top level, nested, or both with nested winning', async () => {
    await configure({ queue: 'bag', leaseTime: 10, retryLimit: 4, options: { leaseTime: 20 } })
    expect(await stored('bag')).toMatchObject({ leaseTime: 20, retryLimit: 4 })
  })

  it('folds top-level namespace and task in only when they are non-empty strings', async () => {
    await configure({ queue: 'fold', namespace: 'keep', task: 'keep' })
    for (const absent of ['', null, 5, true]) {
      await configure({ queue: 'fold', namespace: absent, task: absent })
      expect(await stored('fold'), String(absent)).toMatchObject({ namespace: 'keep', task: 'keep' })
    }
    // Under options an '' is a present value; a top-level non-empty string is folded in last.
    await configure({ queue: 'fold', options: { namespace: '' } })
    expect(await stored('fold')).toMatchObject({ namespace: '', task: 'keep' })
    await configure({ queue: 'fold', task: 'top', options: { task: 'nested' } })
    expect(await stored('fold')).toMatchObject({ task: 'top' })
  })

  it('ignores unknown keys', async () => {
    const res = await configure({ queue: 'unknown-keys', colour: 'red', options: { flavour: 1, leaseTime: 33 } })
    expect(res.status).toBe(200)
    expect(res.body.options).not.toHaveProperty('colour')
    expect(res.body.options).not.toHaveProperty('flavour')
    expect(await stored('unknown-keys')).toEqual({ ...DEFAULTS, leaseTime: 33 })
  })
})

describe('merge and replace', () => {
  it('merge keeps every option the body does not mention, for all 21', async () => {
    await configure({ queue: 'merge-all', options: CHANGED })
    for (const key of QUEUE_OPTION_KEYS) {
      const value = { boolean: !CHANGED[key], number: 7200, string: 'other' }[typeof DEFAULTS[key] as 'boolean' | 'number' | 'string']
      const res = await configure({ queue: 'merge-all', options: { [key]: value } })
      expect(res.status, key).toBe(200)
      expect(await stored('merge-all'), key).toEqual({ ...CHANGED, [key]: value })
      await configure({ queue: 'merge-all', options: { [key]: CHANGED[key] } })
    }
    expect(await stored('merge-all')).toEqual(CHANGED)
  })

  it('replace resets every option the body does not mention, namespace and task to the derived value', async () => {
    await configure({ queue: 'team.jobs', options: CHANGED })
    const res = await configure({ queue: 'team.jobs', mode: 'replace', options: { retryLimit: 8 } })
    expect(await stored('team.jobs')).toEqual({ ...DEFAULTS, namespace: 'team', task: 'jobs', retryLimit: 8 })
    expect(res.body).toMatchObject({ namespace: 'team', task: 'jobs' })
    expect(res.body.options).toEqual({ ...echoOf(DEFAULTS).options, retryLimit: 8 })
  })

  it('null takes the default in either mode', async () => {
    for (const mode of ['merge', 'replace']) {
      await configure({ queue: 'nulls.q', options: CHANGED })
      const nulls = Object.fromEntries(QUEUE_OPTION_KEYS.map((k) => [k, null]))
      await configure({ queue: 'nulls.q', mode, options: nulls })
      expect(await stored('nulls.q'), mode).toEqual({ ...DEFAULTS, namespace: 'nulls', task: 'q' })
    }
  })

  it('an edit keeps the queue id and updates updated_at', async () => {
    const first = await configure({ queue: 'same-id' })
    const second = await configure({ queue: 'same-id', mode: 'replace' })
    expect(second.body.queueId).toBe(first.body.queueId)
  })
})

describe('values are stored as given, apart from two clamps', () => {
  it('clamps minPopWaitTime to [0, 30000] and floors dedupWindowSeconds at 0', async () => {
    expect((await configure({ queue: 'clamp', minPopWaitTime: -5, dedupWindowSeconds: -1 })).body.options).toMatchObject({ minPopWaitTime: 0, dedupWindowSeconds: 0 })
    expect((await configure({ queue: 'clamp', minPopWaitTime: 99999 })).body.options).toMatchObject({ minPopWaitTime: 30000 })
    expect(await stored('clamp')).toMatchObject({ minPopWaitTime: 30000, dedupWindowSeconds: 0 })
  })

  it('stores other values without range checks (unenforced options included)', async () => {
    const odd = { leaseTime: -7, retryLimit: 0, priority: -3, ttl: 0, maxSize: 2147483647, retryDelay: -1 }
    const res = await configure({ queue: 'as-given', options: odd })
    expect(res.body.options).toMatchObject(odd)
    expect(await stored('as-given')).toMatchObject(odd)
  })
})

describe('sink-hold options are refused out of range, never clamped', () => {
  const refusals: [string, unknown][] = [
    ['retentionSinkHold', 'a:b'],
    ['retentionSinkHold', 'x'.repeat(65)],
    ['retentionSinkHold', 'white space'],
    ['retentionSinkHold', 5],
    ['retentionSinkHold', true],
    ['retentionSinkHoldMaxSeconds', 59],
    ['retentionSinkHoldMaxSeconds', 31536001],
    ['retentionSinkHoldMaxSeconds', 600.5],
    ['retentionSinkHoldMaxSeconds', '600'],
    ['retentionSinkHoldMaxSeconds', 0],
  ]

  it.each(refusals)('%s = %j answers 400 with invalid and keeps the configuration', async (option, value) => {
    await configure({ queue: 'held', options: { ...CHANGED, retentionSinkHold: 'lake', retentionSinkHoldMaxSeconds: 3600 } })
    const before = await stored('held')
    const res = await configure({ queue: 'held', leaseTime: 1, options: { [option]: value } })
    expect(res.status).toBe(400)
    expect(res.body).toMatchObject({ code: 'invalid_request', invalid: option, error: expect.stringContaining(option) })
    expect(await stored('held')).toEqual(before)
    // On a queue that does not exist nothing is created either.
    const fresh = await configure({ queue: 'held-new', options: { [option]: value } })
    expect(fresh.body.invalid).toBe(option)
    expect(await stored('held-new')).toBeUndefined()
  })

  it('accepts the edges of both ranges', async () => {
    for (const [hold, cap] of [['', 60], ['x'.repeat(64), 31536000], ['A-z_0.9', 60.0]] as const) {
      const res = await configure({ queue: 'held-edges', retentionSinkHold: hold, retentionSinkHoldMaxSeconds: cap })
      expect(res.status, `${hold} ${cap}`).toBe(200)
      expect(res.body.options).toMatchObject({ retentionSinkHold: hold, retentionSinkHoldMaxSeconds: cap })
    }
  })
})

describe('bad requests write nothing', () => {
  const malformed: [string, string | object | undefined][] = [
    ['no body', undefined],
    ['invalid JSON', '{"queue":'],
    ['a JSON array', '[]'],
    ['missing queue', { leaseTime: 5 }],
    ['numeric queue', { queue: 5 }],
    ['null queue', { queue: null }],
    ['queue over 255 characters', { queue: 'q'.repeat(256) }],
    ['unknown mode', { queue: 'bad-mode', mode: 'upsert' }],
    ['null mode', { queue: 'bad-mode', mode: null }],
    ['options as an array', { queue: 'bad-options', options: [1] }],
    ['options as a string', { queue: 'bad-options', options: 'leaseTime=5' }],
    ['leaseTime as a string (D13)', { queue: 'bad-type', leaseTime: 'abc' }],
    ['leaseTime as a fraction', { queue: 'bad-type', options: { leaseTime: 1.5 } }],
    ['retryLimit beyond int4', { queue: 'bad-type', retryLimit: 2 ** 31 }],
    ['encryptionEnabled as a string', { queue: 'bad-type', encryptionEnabled: 'true' }],
    ['namespace under options as a number', { queue: 'bad-type', options: { namespace: 5 } }],
  ]

  it.each(malformed)('%s → 400 with the envelope', async (_name, body) => {
    const before = await queueCount()
    const res = await app.json('POST', '/api/v1/configure', body)
    expect(res.status).toBe(400)
    expect(res.body).toEqual({ error: expect.any(String), code: expect.stringMatching(/^invalid_(json|request)$/) })
    expect(await queueCount()).toBe(before)
  })

  it('names the field that is wrong', async () => {
    expect((await configure({ queue: 'bad-type', leaseTime: 'abc' })).body.error).toMatch(/^leaseTime: /)
    expect((await configure({ leaseTime: 1 })).body.error).toBe('queue: must be a string')
    expect((await configure({ queue: 'x', mode: 'upsert' })).body.error).toBe('mode: must be "merge" or "replace"')
  })
})

describe('verdicts and failures of the procedure', () => {
  beforeAll(async () => {
    // A real verdict raised inside the configure transaction, by a trigger on the row it writes. A
    // "not found" verdict says so by its SQLSTATE (no_data_found), never by its text.
    await app.database.sql(`
      create function public.refuse_configure() returns trigger language plpgsql as $$
      begin
        if new.name = 'frozen' then raise exception 'queue frozen is frozen by policy'; end if;
        if new.name = 'ghost' then raise exception using errcode = 'no_data_found', message = 'tenant ghost not found'; end if;
        if new.name = 'wraith' then raise exception 'tenant wraith not found'; end if;
        if new.name = 'leaky' then raise exception using errcode = 'unique_violation', message = 'duplicate key value violates unique constraint "secret_idx"'; end if;
        if new.name = 'divider' then perform 1 / 0; end if;
        return new;
      end $$`)
    await app.database.sql(`create trigger refuse before insert or update on queen.queues for each row execute function public.refuse_configure()`)
  })
  afterAll(async () => {
    await app.database.sql('drop trigger refuse on queen.queues')
    await app.database.sql('drop function public.refuse_configure()')
  })

  it('passes a verdict through verbatim at 500', async () => {
    const res = await configure({ queue: 'frozen' })
    expect(res.status).toBe(500)
    expect(res.body).toEqual({ error: 'queue frozen is frozen by policy', code: 'internal' })
  })

  it('answers 404 when the verdict says "not found"', async () => {
    const res = await configure({ queue: 'ghost' })
    expect(res.status).toBe(404)
    expect(res.body).toEqual({ error: 'tenant ghost not found', code: 'not_found' })
  })

  it('reads the verdict\'s SQLSTATE, never its text: a plain raise that says "not found" is 500', async () => {
    const res = await configure({ queue: 'wraith' })
    expect(res.status).toBe(500)
    expect(res.body).toEqual({ error: 'tenant wraith not found', code: 'internal' })
  })

  it("never passes PostgreSQL's own text through: a SQLSTATE outside the engine's class and not a RAISE is a bare 500", async () => {
    for (const queue of ['leaky', 'divider']) {
      const res = await configure({ queue })
      expect(res.status, queue).toBe(500)
      expect(res.body, queue).toEqual({ error: 'Internal error', code: 'internal' })
    }
  })

  it('answers 500 "configure failed" when the call itself fails, without leaking the connection string', async () => {
    const port = await freePort()
    const url = `postgres://queen:s3cret-password@127.0.0.1:${port}/queen`
    const db = createDatabase(createNodePool({ connectionString: url, max: 1, connectionTimeoutMillis: 500 }), { longLived: true })
    const down = await testApp({ database: app.database, deps: { database: () => db } })
    try {
      const res = await down.json('POST', '/api/v1/configure', { queue: 'down' })
      expect(res.status).toBe(500)
      expect(res.body).toEqual({ error: 'configure failed: database unavailable', code: 'internal' })
      expect(JSON.stringify(res.body)).not.toMatch(/s3cret|127\.0\.0\.1|postgres:/)
      expect(res.headers.get('retry-after')).toBeNull()
    } finally {
      await down.close()
      await db.close()
    }
  })
})

describe('the SDK create() call', () => {
  // What the Queen JS and Python SDKs send for queue(...).create(): nine options, always.
  const SDK_CREATE = {
    leaseTime: 300,
    retryLimit: 3,
    priority: 0,
    delayedProcessing: 0,
    windowBuffer: 0,
    maxSize: 0,
    retentionSeconds: 0,
    completedRetentionSeconds: 0,
    encryptionEnabled: false,
  }

  it('stores the nine options it sends, keeps the rest, and logs turning encryption off', async () => {
    await configure({ queue: 'sdk', options: CHANGED })
    logged = []
    const res = await configure({ queue: 'sdk', options: SDK_CREATE })
    expect(res.status).toBe(200)
    expect(await stored('sdk')).toEqual({ ...CHANGED, ...SDK_CREATE })
    const warning = logged.map((l) => JSON.parse(l)).find((l) => l.msg === 'configure turned encryption off')
    expect(warning).toMatchObject({ level: 'warn', queue: 'sdk' })
    // Sent again, nothing turns off, nothing is logged.
    logged = []
    await configure({ queue: 'sdk', options: SDK_CREATE })
    expect(logged.filter((l) => l.includes('encryption off'))).toEqual([])
  })
})

describe('tenancy', () => {
  it('keeps queue names unique per tenant, not globally', async () => {
    const tenants = await testApp({ database: app.database, env: { QUEEN_TENANCY_HEADER: 'X-Tenant' } })
    try {
      const a = await tenants.json('POST', '/api/v1/configure', { queue: 'shared', leaseTime: 10 }, { 'x-tenant': 'acme' })
      const b = await tenants.json('POST', '/api/v1/configure', { queue: 'shared', leaseTime: 20 }, { 'x-tenant': 'globex' })
      expect(a.body.queueId).not.toBe(b.body.queueId)
      expect(await stored('shared', 'acme')).toMatchObject({ leaseTime: 10 })
      expect(await stored('shared', 'globex')).toMatchObject({ leaseTime: 20 })
    } finally {
      await tenants.close()
    }
  })
})
