// The retained_bytes lane (ENGINE 2.9, 8.1) and the retention lane's housekeeping (ENGINE 7.5):
// stats columns filled from the segments and the DLQ without touching stats_refresh's columns,
// bounded resumable steps, and traces, metrics and DLQ rows aged out by the configured days.
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { retainedBytes } from '../cron/retained-bytes.js'
import { retention } from '../cron/retention.js'
import { runLane } from '../cron/runner.js'
import { loadConfig } from '../src/config.js'
import { testApp, type TestApp } from './helpers/app.js'
import { ack, acksOf, pop, push } from './helpers/engine.js'

let app: TestApp
beforeAll(async () => {
  app = await testApp()
})
afterAll(() => app.close())

async function statsOf(queue: string) {
  const [row] = await app.database.sql<Record<string, unknown>>(
    `select s.segment_count::int as segments, s.retained_bytes::int as bytes, s.dlq_total::int as dlq,
            s.bytes_computed_at is not null as computed, s.pending::int as pending, s.computed_at
       from queen.stats s join queen.queues q on q.id = s.queue_id where q.name = $1`,
    [queue],
  )
  return row
}

async function stepAll(limit: number, now?: Date) {
  let next: string | null = null
  let steps = 0
  let processed = 0
  const tokens: string[] = []
  do {
    const result: { processed: number; next: string | null } = await app.db.call('log_retained_bytes_step_v1', { next, limit, now })
    processed += result.processed
    next = result.next
    if (next !== null) tokens.push(next)
    steps++
  } while (next !== null && steps < 1000)
  return { steps, processed, tokens }
}

describe('retained_bytes lane', () => {
  it('fills segment_count, retained_bytes and dlq_total, and leaves the stats lane columns alone', async () => {
    await push(app, [{ queue: 'bytes', payload: { n: 1 } }, { queue: 'bytes', payload: { n: 2 } }])
    await push(app, [{ queue: 'bytes', payload: { big: 'x'.repeat(5000) } }])
    await push(app, [{ queue: 'bytes', partition: 'other', payload: { n: 3 } }])
    await push(app, [{ queue: 'bytes-empty-later', payload: 1 }])
    // Dead-letter one frame for two groups: dlq_total counts rows.
    for (const group of ['a', 'b']) {
      const got = await pop(app, 'bytes', { consumerGroup: group, batch: 1, subscriptionMode: 'all' })
      await ack(app, acksOf(got.messages, 'dlq'), group)
    }
    // A value the stats lane wrote: must survive this lane's upsert.
    await app.database.sql(
      `insert into queen.stats (queue_id, tenant_id, pending, computed_at) select id, tenant_id, 42, now() from queen.queues where name = 'bytes'`,
    )
    expect(await statsOf('bytes')).toMatchObject({ segments: 0, bytes: 0, computed: false })

    await runLane(app.db, retainedBytes, { config: app.config, budgetMs: 10_000, force: true })
    const [expected] = await app.database.sql<{ segments: number; bytes: number }>(
      `select count(*)::int as segments, sum(pg_column_size(s.frames))::int as bytes
         from queen.log_segments s join queen.log_partitions p on p.id = s.partition_id join queen.queues q on q.id = p.queue_id
        where q.name = 'bytes'`,
    )
    expect(expected!.segments).toBe(3)
    expect(await statsOf('bytes')).toMatchObject({ segments: 3, bytes: expected!.bytes, dlq: 2, computed: true, pending: 42 })
    expect((await statsOf('bytes'))!.computed_at).not.toBeNull()
    expect(expected!.bytes).toBeGreaterThan(0)

    // Segments going away show on the next pass; a queue with none reports zeros, not a stale count.
    await app.database.sql(
      `delete from queen.log_segments where partition_id in (select p.id from queen.log_partitions p join queen.queues q on q.id = p.queue_id where q.name = 'bytes-empty-later')`,
    )
    await stepAll(1000)
    expect(await statsOf('bytes-empty-later')).toMatchObject({ segments: 0, bytes: 0, dlq: 0, computed: true })
    expect(await statsOf('bytes')).toMatchObject({ segments: 3, dlq: 2, pending: 42 })
  })

  it('works in bounded steps that resume by queue id, and rewrites equal values when repeated', async () => {
    for (let i = 0; i < 6; i++) await push(app, [{ queue: `many-${i}`, payload: i }])
    const [queues] = await app.database.sql<{ n: number }>(`select count(*)::int as n from queen.queues`)
    // One segment each: a limit of 2 segments writes two queues a step.
    const small = await stepAll(2)
    expect(small.processed).toBe(queues!.n)
    expect(small.steps).toBeGreaterThanOrEqual(Math.ceil(queues!.n / 2))
    const snapshot = await app.database.sql(`select queue_id, segment_count, retained_bytes, dlq_total from queen.stats order by queue_id`)
    await stepAll(200_000)
    expect(await app.database.sql(`select queue_id, segment_count, retained_bytes, dlq_total from queen.stats order by queue_id`)).toEqual(snapshot)
  })
})

describe('retained_bytes lane, a queue larger than a step', () => {
  it('walks one queue over several steps, resuming mid-queue, and sums to the whole', async () => {
    // 3 partitions of 30, 1 and 0 segments (the empty one made by a consumer-side cursor only).
    for (let i = 0; i < 30; i++) await push(app, [{ queue: 'wide-bytes', partition: 'a', payload: { i, pad: 'z'.repeat(i * 10) } }])
    await push(app, [{ queue: 'wide-bytes', partition: 'b', payload: 'b' }])
    await push(app, [{ queue: 'narrow-bytes', payload: 1 }])
    const [expected] = await app.database.sql<{ segments: number; bytes: number }>(
      `select count(*)::int as segments, sum(pg_column_size(s.frames))::int as bytes
         from queen.log_segments s join queen.log_partitions p on p.id = s.partition_id join queen.queues q on q.id = p.queue_id
        where q.name = 'wide-bytes'`,
    )
    expect(expected!.segments).toBe(31)
    await app.database.sql(`update queen.stats set segment_count = 0, retained_bytes = 0`)
    const [wide] = await app.database.sql<{ id: string }>(`select id from queen.queues where name = 'wide-bytes'`)
    const walked = await stepAll(7)
    // 31 segments, 2 partitions and the queue itself are 34 rows: the walk of this queue alone
    // stops mid-queue at least four times, each resuming where the last stopped.
    const midQueue = walked.tokens.filter((t) => t.startsWith('{')).map((t) => JSON.parse(t))
    expect(midQueue.filter((t) => t.queue === wide!.id).length).toBeGreaterThanOrEqual(4)
    expect(await statsOf('wide-bytes')).toMatchObject({ segments: 31, bytes: expected!.bytes, computed: true })
    expect(await statsOf('narrow-bytes')).toMatchObject({ segments: 1, computed: true })
  })

  it('resumes after a queue deleted in the middle of its walk', async () => {
    for (let i = 0; i < 10; i++) await push(app, [{ queue: 'doomed-bytes', partition: 'a', payload: i }])
    const [doomed] = await app.database.sql<{ id: string }>(`select id from queen.queues where name = 'doomed-bytes'`)
    // A token as a step leaves it mid-queue, then the queue goes away before the next step.
    const token = JSON.stringify({ queue: doomed!.id, partition: null, base: -1, segments: 4, bytes: 100 })
    await app.json('DELETE', '/api/v1/resources/queues/doomed-bytes')
    const result: { processed: number; next: string | null } = await app.db.call('log_retained_bytes_step_v1', { next: token, limit: 200_000 })
    expect(result.next).toBeNull()
    const [after] = await app.database.sql<{ n: number }>(`select count(*)::int as n from queen.queues where id > $1`, [doomed!.id])
    expect(result.processed).toBe(after!.n)
  })
})

describe('retention housekeeping', () => {
  const NOW = new Date('2031-01-01T00:00:00Z')
  const daysAgo = (d: number) => new Date(NOW.getTime() - d * 86_400_000).toISOString()

  it('ages out traces, metrics and DLQ rows by their configured days, and keeps the DLQ by default', async () => {
    const [q] = await app.database.sql<{ id: string }>(`insert into queen.queues (name) values ('hk') returning id`)
    const pid = '00000000-0000-4000-8000-000000000001'
    for (const [age, label] of [[31, 'old'], [29, 'new']] as const) {
      await app.database.sql(
        `insert into queen.message_traces (queue_name, partition_id, partition_name, transaction_id, created_at) values ('hk', $1, 'Default', $2, $3)`,
        [pid, label, daysAgo(age)],
      )
    }
    for (const age of [91, 89]) {
      await app.database.sql(`insert into queen.queue_metrics (queue_id, bucket) values ($1, $2)`, [q!.id, daysAgo(age)])
    }
    for (const [i, age] of [400, 10].entries()) {
      await app.database.sql(
        `insert into queen.log_dlq (queue_id, partition_id, partition_name, consumer_group, frame_offset, message_id, transaction_id, frame, original_created_at, failed_at)
         values ($1, $2, 'Default', 'g', $3, gen_random_uuid(), 't', '{}', $4, $4)`,
        [q!.id, pid, i, daysAgo(age)],
      )
    }
    const counts = async () =>
      (
        await app.database.sql<{ traces: number; metrics: number; dlq: number }>(
          `select (select count(*) from queen.message_traces)::int as traces, (select count(*) from queen.queue_metrics)::int as metrics,
                  (select count(*) from queen.log_dlq where queue_id = $1)::int as dlq`,
          [q!.id],
        )
      )[0]

    // Defaults: traces 30 days, metrics 90, DLQ kept (0).
    const run = await runLane(app.db, retention, { config: app.config, budgetMs: 10_000, force: true, now: NOW })
    expect(run).toMatchObject({ claimed: true, complete: true, processed: 2 })
    expect(await counts()).toEqual({ traces: 1, metrics: 1, dlq: 2 })
    const [trace] = await app.database.sql<{ t: string }>(`select transaction_id as t from queen.message_traces`)
    expect(trace!.t).toBe('new')

    const config = loadConfig({ LOG_LEVEL: 'silent', DLQ_RETENTION_DAYS: '365', TRACE_RETENTION_DAYS: '0' }, 'node')
    await runLane(app.db, retention, { config, budgetMs: 10_000, force: true, now: NOW })
    expect(await counts()).toEqual({ traces: 1, metrics: 1, dlq: 1 })
  })

  it('deletes in bounded housekeeping steps, repeating while a step comes back full', async () => {
    const NOW2 = new Date('2032-01-01T00:00:00Z')
    await app.database.sql(
      `insert into queen.message_traces (queue_name, partition_id, partition_name, transaction_id, created_at)
       select 'hk2', gen_random_uuid(), 'Default', g::text, $1::timestamptz - interval '40 days' from generate_series(1, 25) g`,
      [NOW2.toISOString()],
    )
    const first = await app.db.call('log_retention_step_v1', { next: 'housekeeping', limit: 10, traceDays: 30, metricsDays: 0, dlqDays: 0, now: NOW2 })
    expect(first).toEqual({ processed: 10, next: 'housekeeping' })
    const second = await app.db.call('log_retention_step_v1', { next: 'housekeeping', limit: 10, traceDays: 30, metricsDays: 0, dlqDays: 0, now: NOW2 })
    expect(second).toEqual({ processed: 10, next: 'housekeeping' })
    const third = await app.db.call('log_retention_step_v1', { next: 'housekeeping', limit: 10, traceDays: 30, metricsDays: 0, dlqDays: 0, now: NOW2 })
    expect(third).toEqual({ processed: 6, next: null })
  })
})

describe('retention housekeeping cost', () => {
  // A housekeeping step that finds nothing old (the usual pass) must not read the tables it
  // guards: with an index leading on each age column (migration 0002) it descends three of them;
  // without, PostgreSQL reads a whole heap or a whole index of 20 000 rows per table. Buffers
  // (pages touched, nested calls included) count that exactly, where a timing would not.
  it('finds old traces, metrics buckets and DLQ rows through their age indexes, touching a few pages', async () => {
    const NOW3 = '2035-01-01T00:00:00Z'
    const [q] = await app.database.sql<{ id: string }>(`insert into queen.queues (name) values ('hk-cost') returning id`)
    await app.database.sql(
      `insert into queen.message_traces (queue_name, partition_id, partition_name, transaction_id, created_at)
       select 'hk-cost', gen_random_uuid(), 'Default', g::text, $1::timestamptz - interval '1 second' * g from generate_series(1, 20000) g`,
      [NOW3],
    )
    await app.database.sql(`insert into queen.queue_metrics (queue_id, bucket) select $1, $2::timestamptz - interval '1 minute' * g from generate_series(1, 20000) g`, [q!.id, NOW3])
    await app.database.sql(
      `insert into queen.log_dlq (queue_id, partition_id, partition_name, consumer_group, frame_offset, message_id, transaction_id, frame, original_created_at, failed_at)
       select $1, gen_random_uuid(), 'Default', 'g', g, gen_random_uuid(), 't', '{}', $2::timestamptz, $2::timestamptz - interval '1 second' * g
         from generate_series(1, 20000) g`,
      [q!.id, NOW3],
    )
    await app.database.sql('analyze queen.message_traces, queen.queue_metrics, queen.log_dlq')
    const client = new pg.Client({ connectionString: app.database.url })
    await client.connect()
    try {
      const step = `select queen.log_retention_step_v1(p_next => 'housekeeping', p_limit => 100, p_trace_days => 30, p_metrics_days => 90,
                                                       p_dlq_days => 30, p_now => '${NOW3}')`
      // The first call plans the step's statements (catalog reads) and deletes what earlier tests
      // left old; the second, measured, runs the cached plans and finds nothing to delete.
      expect((await client.query(step)).rows[0].log_retention_step_v1).toMatchObject({ next: null })
      const { rows } = await client.query(`explain (analyze, buffers, format json) ${step}`)
      const plan = rows[0]['QUERY PLAN'][0].Plan
      const pages = plan['Shared Hit Blocks'] + plan['Shared Read Blocks']
      expect(pages).toBeLessThan(100) // 33 here with the indexes, 661 without them
    } finally {
      await client.end()
    }
  })
})

describe('lane step procedures', () => {
  it('are VOLATILE and carry a function-level lock_timeout of 1 s', async () => {
    const rows = await app.database.sql<{ name: string; volatile: string; config: string[] | null }>(
      `select proname as name, provolatile as volatile, proconfig as config from pg_proc
        where pronamespace = 'queen'::regnamespace
          and proname in ('log_retention_step_v1', 'log_evict_max_wait_step_v1', 'log_retained_bytes_step_v1', 'sink_pointer_v1', 'sink_commit_v1', 'kv_apply_v1')
        order by 1`,
    )
    expect(rows).toHaveLength(6)
    for (const row of rows) {
      expect(row.volatile, row.name).toBe('v')
      expect(row.config, row.name).toContain('search_path=queen, pg_catalog')
      if (row.name.endsWith('_step_v1')) expect(row.config, row.name).toContain('lock_timeout=1s')
    }
  })
})

describe('stats_refresh lane', () => {
  it('bounds a step by the rows it reads: queues and their partitions, never starting a queue past the limit', async () => {
    for (let i = 0; i < 24; i++) await push(app, [{ queue: 'stats-wide', partition: `p${i}`, payload: i }])
    for (let i = 0; i < 6; i++) await push(app, [{ queue: `stats-narrow-${i}`, payload: i }])
    const limit = 10
    let after: string | undefined
    const stepStarts: Date[] = []
    for (let step = 0; step < 1000; step++) {
      // Each step's own clock, so the rows it wrote can be told apart by computed_at.
      const now = new Date(Date.UTC(2031, 0, 1, 0, 0, step))
      stepStarts.push(now)
      const result: { processed: number; next: string | null } = await app.db.call('log_stats_refresh_step_v1', { after, limit, now })
      if (result.next === null) break
      after = result.next
    }
    const rows = await app.database.sql<{ at: Date; id: string; partitions: number }>(`
      select s.computed_at as at, q.id, s.partition_count::int as partitions
        from queen.stats s join queen.queues q on q.id = s.queue_id where s.computed_at >= '2031-01-01' order by q.id`)
    const [all] = await app.database.sql<{ n: number }>(`select count(*)::int as n from queen.queues`)
    expect(rows).toHaveLength(all!.n)
    const bySteps = new Map<number, { partitions: number }[]>()
    for (const r of rows) bySteps.set(r.at.getTime(), [...(bySteps.get(r.at.getTime()) ?? []), r])
    expect(bySteps.size).toBeGreaterThan(2)
    for (const queues of bySteps.values()) {
      // Everything before the step's last queue stayed under the limit; the last one may cross it.
      const before = queues.slice(0, -1).reduce((sum, q) => sum + 1 + q.partitions, 0)
      expect(before).toBeLessThan(limit)
    }
    expect(rows.find((r) => r.partitions === 24)).toBeDefined()
  })

  it('stops a step at its time budget and resumes after it, with the stats of one unbounded refresh', async () => {
    for (let i = 0; i < 5; i++) await push(app, [{ queue: `stats-budget-${i}`, partition: `p${i % 2}`, payload: i }])
    const snapshot = () =>
      app.database.sql<{ id: string; partitions: number; total: string; pending: string; processing: string; hw: string; committed: string }>(`
        select queue_id as id, partition_count::int as partitions, total::text, pending::text, processing::text,
               hw_total::text as hw, committed_total::text as committed
          from queen.stats order by queue_id`)
    const now = new Date(Date.UTC(2032, 0, 1))
    // One unbounded pass: the reference.
    const whole: { processed: number; next: string | null } = await app.db.call('log_stats_refresh_step_v1', { limit: 1_000_000, now, maxMs: 60_000 })
    expect(whole.next).toBeNull()
    const reference = await snapshot()
    const [queues] = await app.database.sql<{ n: number }>(`select count(*)::int as n from queen.queues`)
    await app.database.sql(`delete from queen.stats`)

    // A budget of 0 ms is spent by the first queue, always done: one queue a step, each resuming after the last.
    let after: string | undefined
    let steps = 0
    for (; steps < 1000; steps++) {
      const result: { processed: number; next: string | null } = await app.db.call('log_stats_refresh_step_v1', { after, limit: 1_000_000, now, maxMs: 0 })
      if (result.next === null) break
      expect(result.processed).toBe(1)
      after = result.next
    }
    expect(steps).toBe(queues!.n)
    expect(await snapshot()).toEqual(reference)
  })
})
