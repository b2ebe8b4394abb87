// Migration 0029 (docs/engine.md, "Statistics and vacuum"): ANALYZE keeps no statistics of
// log_segments.frames, which cost seconds of CPU a run on a busy queue and served no plan;
// ephemeral_messages is not vacuumed for inserts alone; ephemeral_rings.next_seq and
// ephemeral_groups.scan_from, unread since 0028, are gone. Rows kept across the upgrade stay as
// they were and are still read.
import { afterAll, expect, it } from 'vitest'
import { databaseBefore, query, type DatabaseBeforeMigration } from './helpers/migration.js'

let database: DatabaseBeforeMigration | undefined
afterAll(() => database?.drop())

const framesStatistics = async (url: string) =>
  (await query<{ target: number | null }>(url, `select attstattarget as target from pg_attribute
    where attrelid = 'queen.log_segments'::regclass and attname = 'frames'`))[0]!.target

const reloptions = async (url: string, table: string) =>
  (await query<{ options: string[] | null }>(url, `select reloptions as options from pg_class where oid = $1::regclass`, [table]))[0]!.options

const columns = async (url: string, table: string) =>
  (await query<{ name: string }>(url, `select attname as name from pg_attribute
    where attrelid = $1::regclass and attnum > 0 and not attisdropped order by attnum`, [table])).map((c) => c.name)

it('turns off the statistics of log_segments.frames and the insert vacuums of ephemeral messages, drops two unread columns, and keeps the rows', async () => {
  database = await databaseBefore('0029', `migr_upkeep_${Date.now().toString(36)}`)
  const url = database.url
  // Before: the column takes the default statistics target (null in PostgreSQL 17, -1 before it).
  expect([null, -1]).toContain(await framesStatistics(url))
  expect(await reloptions(url, 'queen.ephemeral_messages')).toBeNull()
  await query(url, `insert into queen.ephemeral_messages (tenant_id, queue, partition, seq, payload, bytes) values ('', 'e', 'a', 7, '{"x":1}', 7)`)
  await query(url, `insert into queen.ephemeral_partitions (tenant_id, queue, partition, last_seq) values ('', 'e', 'a', 7)`)
  await query(url, `insert into queen.ephemeral_rings (tenant_id, queue, next_seq, depth, bytes) values ('', 'e', 8, 1, 7)`)
  await query(url, `insert into queen.ephemeral_groups (tenant_id, queue, grp, scan_from) values ('', 'e', 'g', 0)`)
  expect(await columns(url, 'queen.ephemeral_rings')).toContain('next_seq')
  expect(await columns(url, 'queen.ephemeral_groups')).toContain('scan_from')
  await query(url, `insert into queen.queues (name) values ('q')`)
  await query(url, `insert into queen.log_partitions (queue_id, name) select id, 'p' from queen.queues where name = 'q'`)
  await query(url, `insert into queen.log_segments (partition_id, base_offset, last_offset, frame_count, created_at, byte_size, frames)
    select id, 1, 2, 2, now(), 10, array['{"a":1}', '{"b":2}']::jsonb[] from queen.log_partitions where name = 'p'`)

  await database.migrateRest()

  expect(await framesStatistics(url)).toBe(0)
  expect(await query(url, `select base_offset, frames from queen.log_segments`)).toEqual([
    { base_offset: '1', frames: [{ a: 1 }, { b: 2 }] },
  ])
  expect(await reloptions(url, 'queen.ephemeral_messages')).toEqual(['autovacuum_vacuum_insert_threshold=-1'])
  expect(await query(url, `select seq, payload from queen.ephemeral_messages`)).toEqual([{ seq: '7', payload: { x: 1 } }])
  expect(await columns(url, 'queen.ephemeral_rings')).not.toContain('next_seq')
  expect(await columns(url, 'queen.ephemeral_groups')).not.toContain('scan_from')
  expect(await query(url, `select queue, depth, bytes from queen.ephemeral_rings`)).toEqual([{ queue: 'e', depth: '1', bytes: '7' }])
  // The queue's group and message work as before: the message kept across the upgrade is popped.
  const popped = (await query<{ r: { messages: { payload: unknown }[] } }>(url, `select queen.ephemeral_pop_v1('', 'e', null, 'g', 10, true) as r`))[0]!.r
  expect(popped.messages.map((m) => m.payload)).toEqual([{ x: 1 }])
  // ANALYZE then records nothing for the column, and still does for the others.
  await query(url, `analyze queen.log_segments`)
  expect(await query(url, `select attname from pg_stats where schemaname = 'queen' and tablename = 'log_segments' order by attname`))
    .not.toContainEqual({ attname: 'frames' })
  expect(await query(url, `select attname from pg_stats where schemaname = 'queen' and tablename = 'log_segments' and attname = 'base_offset'`))
    .toEqual([{ attname: 'base_offset' }])
})
