// The raw limit: the same frames written straight into PostgreSQL by a minimal client (node-postgres,
// one multi-row INSERT per batch) into the table a hand-rolled Postgres queue would need, and the
// matching consume (lease with FOR UPDATE SKIP LOCKED, then delete) — no HTTP, no broker, no
// per-partition order, no dedup, no leases kept per consumer group. A Postgres-backed broker cannot
// beat this on the same box; the ratio to it is the figure we keep.
import pg from 'pg'
import { closedLoop, type LoopResult } from './lib.js'
import { partitionName, smallPayload } from './queen.js'

const rand = (n: number) => Math.floor(Math.random() * n)

export async function rawSetup(url: string, concurrency: number) {
  const pool = new pg.Pool({ connectionString: url, max: concurrency, application_name: 'bench-raw' })
  await pool.query(`
    drop schema if exists bench_raw cascade;
    create schema bench_raw;
    create table bench_raw.messages (
      id bigint generated always as identity primary key,
      partition text not null,
      transaction_id uuid not null default gen_random_uuid(),
      payload jsonb not null,
      created_at timestamptz not null default now(),
      lease_until timestamptz
    );
    create index messages_partition_idx on bench_raw.messages (partition, id);`)
  return pool
}

function insertSql(batch: number): string {
  const rows = Array.from({ length: batch }, (_, i) => `($1, $${i + 2}::jsonb)`).join(', ')
  return `insert into bench_raw.messages (partition, payload) values ${rows}`
}

export async function rawInsertLoad(pool: pg.Pool, batch: number, partitions: number, payload: (n: number) => unknown, timing: { concurrency: number; warmupMs: number; durationMs: number }): Promise<LoopResult> {
  const text = insertSql(batch)
  let n = 0
  return closedLoop({
    ...timing,
    op: async () => {
      const values: unknown[] = [partitionName(rand(partitions))]
      for (let i = 0; i < batch; i++) values.push(JSON.stringify(payload(n++)))
      await pool.query(text, values)
      return batch
    },
  })
}

export async function rawFill(pool: pg.Pool, count: number, partitions: number): Promise<void> {
  const text = insertSql(1000)
  for (let done = 0; done < count; done += 1000) {
    const values: unknown[] = [partitionName(rand(partitions))]
    for (let i = 0; i < 1000; i++) values.push(JSON.stringify(smallPayload(done + i)))
    await pool.query(text, values)
  }
}

/** Consume = lease a batch (one statement) then delete it (a second): the shape of pop + ack. */
export async function rawConsume(pool: pg.Pool, batch: number): Promise<number | 'empty'> {
  const { rows } = await pool.query<{ id: string }>(
    `update bench_raw.messages set lease_until = now() + interval '60 seconds'
      where id in (select id from bench_raw.messages where lease_until is null order by id limit $1 for update skip locked)
      returning id, partition, transaction_id, payload`,
    [batch],
  )
  if (rows.length === 0) return 'empty'
  await pool.query('delete from bench_raw.messages where id = any($1::bigint[])', [rows.map((r) => r.id)])
  return rows.length
}

export async function rawConsumeLoad(pool: pg.Pool, batch: number, timing: { concurrency: number; warmupMs: number; durationMs: number }): Promise<LoopResult> {
  let empties = 0
  return closedLoop({
    ...timing,
    op: async () => {
      const got = await rawConsume(pool, batch)
      empties = got === 'empty' ? empties + 1 : 0
      return got
    },
    isDone: () => empties > timing.concurrency * 3,
  })
}

export async function rawPushPopLoad(pool: pg.Pool, partitions: number, options: { pushers: number; consumers: number; warmupMs: number; durationMs: number }) {
  const [push, popAck] = await Promise.all([
    rawInsertLoad(pool, 1, partitions, smallPayload, { concurrency: options.pushers, warmupMs: options.warmupMs, durationMs: options.durationMs }),
    closedLoop({ concurrency: options.consumers, warmupMs: options.warmupMs, durationMs: options.durationMs, op: () => rawConsume(pool, 1) }),
  ])
  return { partitions, push, popAck }
}
