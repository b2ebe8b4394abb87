// Migration 0027: the per-message lease rows of 0014 become one-row-per-pop lease rows. Leases held
// across the upgrade (a clean restart keeps unlogged rows) carry over, one row each, and keep their
// verdicts: the id of a delivery in flight still acks, an expired one is redelivered with attempts + 1.
import { afterAll, expect, it } from 'vitest'
import { databaseBefore, query, type DatabaseBeforeMigration } from './helpers/migration.js'

let database: DatabaseBeforeMigration | undefined
afterAll(() => database?.drop())

it('carries the leases held before 0027 over, one row each, with their verdicts', async () => {
  database = await databaseBefore('0027', `migr_eph_${Date.now().toString(36)}`)
  const url = database.url
  await query(url, `insert into queen.ephemeral_incarnation (id, epoch) values (1, 'oldepoch')`)
  await query(url, `insert into queen.ephemeral_rings (tenant_id, queue, next_seq, depth, bytes) values ('', 'q', 13, 3, 3)`)
  await query(url, `insert into queen.ephemeral_messages (tenant_id, queue, partition, seq, payload, bytes) values
    ('', 'q', 'a', 10, '1', 1), ('', 'q', 'b', 11, '2', 1), ('', 'q', 'a', 12, '3', 1)`)
  await query(url, `insert into queen.ephemeral_groups (tenant_id, queue, grp, scan_from) values ('', 'q', 'g', 12)`)
  await query(url, `insert into queen.ephemeral_cursors (tenant_id, queue, grp, partition, last_seq) values ('', 'q', 'g', 'a', 12), ('', 'q', 'g', 'b', 11)`)
  await query(url, `insert into queen.ephemeral_leases (tenant_id, queue, grp, seq, partition, attempts, lease_until) values
    ('', 'q', 'g', 10, 'a', 0, now() + interval '1 hour'),
    ('', 'q', 'g', 11, 'b', 2, now() - interval '1 second'),
    ('', 'q', 'g', 12, 'a', 1, now() + interval '1 hour')`)

  await database.migrateRest()

  expect(await query(url, `select lo, hi, seqs, partitions, attempts from queen.ephemeral_leases order by lo`)).toEqual([
    { lo: '10', hi: '10', seqs: ['10'], partitions: ['a'], attempts: [0] },
    { lo: '11', hi: '11', seqs: ['11'], partitions: ['b'], attempts: [2] },
    { lo: '12', hi: '12', seqs: ['12'], partitions: ['a'], attempts: [1] },
  ])
  expect(await query(url, `select to_regclass('queen.ephemeral_leases_per_message') as t`)).toEqual([{ t: null }])

  const call = async <T>(text: string) => (await query<{ r: T }>(url, `select ${text} as r`))[0]!.r
  // The expired lease is redelivered; the others are still held.
  const popped = await call<{ messages: { id: string; attempts: number }[] }>(`queen.ephemeral_pop_v1('', 'q', null, 'g', 10, false)`)
  expect(popped.messages.map((m: { id: string; attempts: number }) => [m.id, m.attempts])).toEqual([['e:oldepoch:b:11.3', 3]])
  const acked = await call<{ results: { outcome: string }[] }>(`queen.ephemeral_ack_v1('', 'q', 'g', '[{"id": "e:oldepoch:a:10"}, {"id": "e:oldepoch:a:12.1"}, {"id": "e:oldepoch:b:11.2"}]')`)
  expect(acked.results.map((r: { outcome: string }) => r.outcome)).toEqual(['acked', 'acked', 'unknown'])
  expect(await query(url, `select seqs, attempts from queen.ephemeral_leases`)).toEqual([{ seqs: ['11'], attempts: [3] }])
})
