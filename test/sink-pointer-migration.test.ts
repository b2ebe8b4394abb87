// Migration 0021: every row of the old single-key store (queen.kv, behind the removed
// /api/v1/kv/:key routes) moves into the namespaced store. Sink pointers land in the broker's
// namespace queen.sink under the same key, where the sink and retention's hold read them; any other
// key lands in legacy-kv, the tenant's to read and write. The old table and procedures are gone.
// The same migration gives pending timers the message id their fire will push under.
import { afterAll, expect, it } from 'vitest'
import { migrations } from '../src/db/sql-bundle.generated.js'
import { databaseBefore, query, type DatabaseBeforeMigration } from './helpers/migration.js'

let database: DatabaseBeforeMigration | undefined
afterAll(() => database?.drop())

it('moves the pointers of the old store into queen.sink and every other key into legacy-kv', async () => {
  // The schema as it was before 0021 (its tables only: the procedures of this code need 0021).
  database = await databaseBefore('0021', `migr_ptr_${Date.now().toString(36)}`)
  const url = database.url
  await query(url, `insert into queen.kv (tenant_id, key, value, updated_at) values
    ('', 's3:lake:orders:committed', '{"windowEnd": "2026-03-01T10:00:00.000Z"}', '2026-03-01T10:00:01Z'),
    ('acme', 's3:lake:a/b:committed', '{"windowEnd": "2026-03-01T11:00:00.000Z"}', '2026-03-01T11:00:01Z'),
    ('', 's3:lake:broken:committed', '"not an object"', '2026-03-01T12:00:00Z'),
    ('', 'notes', '{"x": 1}', '2026-03-01T09:00:00Z'),
    ('acme', 'shared', '[1, 2]', '2026-03-01T09:00:00Z')`)
  await query(url, `insert into queen.timers (tenant_id, queue, timer_key, deliver_at, txn, data, payload, created_at, updated_at)
    values ('', 'reminders', 'pending', '2026-03-01T10:00:00.123Z', 'pending-1', '1', 'MQ==', now(), now())`)
  // Written through the 1.6 routes before the namespace was reserved: a client's row in queen.sink
  // goes, a client's own legacy-kv key is kept.
  await query(url, `insert into queen.kv_entries (tenant_id, ns, key, value, version, updated_at) values
    ('', 'queen.sink', 's3:fake:orders:committed', '{"windowEnd": "2030-01-01T00:00:00Z"}', nextval('queen.kv_version_seq'), now()),
    ('acme', 'legacy-kv', 'shared', '"newer"', nextval('queen.kv_version_seq'), now())`)

  const after = await database.migrateRest()
  expect(after.applied).toContain(migrations.find((m) => m.name.startsWith('0021_'))!.name)

  const rows = await query<{ tenant_id: string; ns: string; key: string; value: unknown; expires_at: Date | null; updated_at: Date; version: string }>(
    url,
    `select tenant_id, ns, key, value, expires_at, updated_at, version from queen.kv_entries order by tenant_id, ns, key`,
  )
  expect(rows.map(({ version: _v, ...r }) => r)).toEqual([
    { tenant_id: '', ns: 'legacy-kv', key: 'notes', value: { x: 1 }, expires_at: null, updated_at: new Date('2026-03-01T09:00:00Z') },
    { tenant_id: '', ns: 'queen.sink', key: 's3:lake:broken:committed', value: 'not an object', expires_at: null, updated_at: new Date('2026-03-01T12:00:00Z') },
    { tenant_id: '', ns: 'queen.sink', key: 's3:lake:orders:committed', value: { windowEnd: '2026-03-01T10:00:00.000Z' }, expires_at: null, updated_at: new Date('2026-03-01T10:00:01Z') },
    { tenant_id: 'acme', ns: 'legacy-kv', key: 'shared', value: 'newer', expires_at: null, updated_at: expect.any(Date) },
    { tenant_id: 'acme', ns: 'queen.sink', key: 's3:lake:a/b:committed', value: { windowEnd: '2026-03-01T11:00:00.000Z' }, expires_at: null, updated_at: new Date('2026-03-01T11:00:01Z') },
  ])
  expect(new Set(rows.map((r) => r.version)).size).toBe(rows.length)

  // Readable where the sink and retention's hold look for them.
  const pointer = (tenant: string, sink: string, queue: string) =>
    query<{ p: unknown }>(url, `select queen.sink_pointer_v1($1, $2, $3) as p`, [tenant, sink, queue]).then((r) => r[0]!.p)
  expect(await pointer('', 'lake', 'orders')).toMatchObject({ windowEnd: '2026-03-01T10:00:00.000Z', version: expect.any(Number) })
  expect(await pointer('acme', 'lake', 'a/b')).toMatchObject({ windowEnd: '2026-03-01T11:00:00.000Z' })
  expect(await pointer('', 'lake', 'broken')).toMatchObject({ windowEnd: null })
  expect(await pointer('', 'fake', 'orders')).toBeNull()
  const [held] = await query<{ at: Date }>(url, `select queen._kv_committed_end('acme', 's3:lake:a/b:committed', '2026-03-02T00:00:00Z') as at`)
  expect(held!.at).toEqual(new Date('2026-03-01T11:00:00.000Z'))

  // The old store is gone with its procedures.
  expect(await query(url, `select to_regclass('queen.kv') as t`)).toEqual([{ t: null }])
  expect(await query(url, `select proname from pg_proc where pronamespace = 'queen'::regnamespace and proname in ('kv_put_v1', 'kv_get_v1', 'kv_delete_v1')`)).toEqual([])
})

it('gives a timer pending from before the message id it will be delivered under, a UUIDv7 of its due instant', async () => {
  // The database the first test seeded and migrated.
  const url = database!.url
  const [row] = await query<{ message_id: string }>(url, `select message_id from queen.timers where timer_key = 'pending'`)
  expect(row!.message_id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
  expect(parseInt(row!.message_id.replace(/-/g, '').slice(0, 12), 16)).toBe(Date.parse('2026-03-01T10:00:00.123Z'))
  const [peek] = await query<{ p: { messageId: string } }>(url, `select queen.timers_get_v1('', 'reminders', 'pending') as p`)
  expect(peek!.p.messageId).toBe(row!.message_id)
})
