// Migration 0028: ephemeral pushes number per partition from a sequence, messages keep one index,
// and a queue-wide pop reads each partition from the group's cursor there. What a clean restart
// kept across the upgrade carries over: each partition gets its row, a queue-wide position becomes
// the cursors of the partitions below it, and new numbers start above every number already given.
import { afterAll, expect, it } from 'vitest'
import { databaseBefore, query, type DatabaseBeforeMigration } from './helpers/migration.js'

let database: DatabaseBeforeMigration | undefined
afterAll(() => database?.drop())

it('carries the partitions, queue-wide positions and numbers kept before 0028 over', async () => {
  database = await databaseBefore('0028', `migr_eph_parts_${Date.now().toString(36)}`)
  const url = database.url
  await query(url, `insert into queen.ephemeral_incarnation (id, epoch) values (1, 'oldepoch')`)
  await query(url, `insert into queen.ephemeral_rings (tenant_id, queue, next_seq, depth, bytes) values ('', 'q', 13, 3, 3)`)
  await query(url, `insert into queen.ephemeral_messages (tenant_id, queue, partition, seq, payload, bytes) values
    ('', 'q', 'a', 10, '1', 1), ('', 'q', 'b', 11, '2', 1), ('', 'q', 'a', 12, '3', 1)`)
  // Group g popped queue-wide up to 11 (message 10 had expired, so only b's cursor moved); group h popped partition a to its end.
  await query(url, `insert into queen.ephemeral_groups (tenant_id, queue, grp, scan_from) values ('', 'q', 'g', 11), ('', 'q', 'h', 0)`)
  await query(url, `insert into queen.ephemeral_cursors (tenant_id, queue, grp, partition, last_seq) values ('', 'q', 'g', 'b', 11), ('', 'q', 'h', 'a', 12)`)

  await database.migrateRest()

  expect(await query(url, `select partition, last_seq from queen.ephemeral_partitions order by partition`)).toEqual([
    { partition: 'a', last_seq: '12' },
    { partition: 'b', last_seq: '11' },
  ])
  expect(await query(url, `select grp, partition, last_seq from queen.ephemeral_cursors order by grp, partition`)).toEqual([
    { grp: 'g', partition: 'a', last_seq: '10' },
    { grp: 'g', partition: 'b', last_seq: '11' },
    { grp: 'h', partition: 'a', last_seq: '12' },
  ])
  expect(await query(url, `select indexdef from pg_indexes where schemaname = 'queen' and tablename = 'ephemeral_messages'`)).toEqual([
    { indexdef: expect.stringContaining('(tenant_id, queue, partition, seq)') },
  ])

  const call = async <T>(text: string) => (await query<{ r: T }>(url, `select ${text} as r`))[0]!.r
  type Popped = { messages: { id: string; payload: unknown }[] }
  // g goes on past its queue-wide position: 12 only; h has a's end and still b's 11.
  expect((await call<Popped>(`queen.ephemeral_pop_v1('', 'q', null, 'g', 10, true)`)).messages.map((m) => m.id)).toEqual(['e:oldepoch:a:12'])
  expect((await call<Popped>(`queen.ephemeral_pop_v1('', 'q', null, 'h', 10, true)`)).messages.map((m) => m.id)).toEqual(['e:oldepoch:b:11'])
  // A push after the upgrade numbers above every earlier number, and both groups get it next.
  expect(await call(`queen.ephemeral_push_v1('', 'q', 'b', '[4]'::jsonb)`)).toEqual({ pushed: 1 })
  for (const group of ['g', 'h']) {
    const next = (await call<Popped>(`queen.ephemeral_pop_v1('', 'q', null, '${group}', 10, true)`)).messages
    expect(next.map((m) => m.payload)).toEqual([4])
    expect(BigInt(next[0]!.id.split(':')[3]!)).toBeGreaterThan(13n)
  }
})
