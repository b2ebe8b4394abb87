-- The reads behind Queen 1.5+'s dashboard Workload and Dead Letter pages (docs/status.md): workload
-- per namespace, task or queue; the shapes of a queue's newest dead-letter errors; how many of each
-- queue's partitions are written to; and the retention figures grouped. All tenant-scoped, reads
-- only. They read what the stats lane keeps (queue_metrics per minute, the stats row per queue)
-- and the log tables' own columns; no payload leaves the database.

-- The bucket width of a workload window, from its length: 1 minute up to an hour, 5 up to 6 hours,
-- 15 up to a day, 60 up to a week, 360 beyond (the rule Queen's dashboard reads); past a year of
-- 360-minute buckets, wide enough that the axis keeps at most 1440 buckets, so no window, however
-- long, makes an answer of unbounded size.
-- Returns: minutes. Raises: nothing. IMMUTABLE.
create or replace function queen._workload_bucket_minutes(p_from timestamptz, p_to timestamptz)
returns integer
language sql immutable
set search_path = queen, pg_catalog
as $$
  select greatest(case when p_to - p_from <= interval '1 hour' then 1
                       when p_to - p_from <= interval '6 hours' then 5
                       when p_to - p_from <= interval '1 day' then 15
                       when p_to - p_from <= interval '7 days' then 60
                       else 360 end,
                  ceil(extract(epoch from p_to - p_from) / 60 / 1439)::int)
$$;

-- _workload_block: the window totals, the bucketed series and the current gauges of a set of queues.
-- p_axis is the bucket starts the series follow. A bucket in which no queue of the set has a
-- metrics row is null in every series; figures the stats lane does not measure are null throughout.
-- `now` reads the stats rows, except deadLetter, counted live (the stats row's count moves only
-- with the retained-bytes lane).
-- Returns: {queues, window:{...}, series:{...}, now:{...}}. Raises: nothing. STABLE.
create or replace function queen._workload_block(p_ids uuid[], p_from timestamptz, p_to timestamptz, p_minutes integer,
                                                 p_axis timestamptz[], p_now timestamptz)
returns jsonb
language sql stable
set search_path = queen, pg_catalog
as $$
  with m as (
    select qm.queue_id, _status_bucket(qm.bucket, p_minutes) as bucket, qm.pushed, qm.consumed, qm.dead_lettered, qm.max_lag_seconds
      from queue_metrics qm
     where qm.queue_id = any (p_ids) and qm.bucket >= date_trunc('minute', p_from) and qm.bucket <= p_to
  ), per_bucket as (
    select bucket, sum(pushed) as pushed, sum(consumed) as settled, sum(dead_lettered) as dead, max(max_lag_seconds) as lag
      from m group by bucket
  ), axis as (
    select a.bucket, a.i, pb.pushed, pb.settled, pb.dead, pb.lag
      from unnest(p_axis) with ordinality as a(bucket, i) left join per_bucket pb on pb.bucket = a.bucket
  ), nulls as (
    select coalesce(jsonb_agg(null::int order by i), '[]') as series from axis
  ), g as (
    select count(*) as groups from consumer_groups c where c.queue_id = any (p_ids) and c.consumer_group <> '__QUEUE_MODE__'
  ), ungrouped as (
    select i.id from unnest(p_ids) i(id) where not exists (select 1 from consumer_groups c where c.queue_id = i.id)
  )
  select jsonb_build_object(
    'queues', cardinality(p_ids),
    'window', jsonb_build_object(
      'pushMessages', coalesce((select sum(pushed) from m), 0), 'pushRequests', null,
      'popMessages', null, 'popEmpty', null, 'ackRequests', null, 'ackSuccess', null, 'ackFailed', null,
      'transactions', null, 'conflated', null, 'partitionsCreated', null, 'partitionsDeleted', null,
      'parkedAvg', null, 'avgLagMs', null,
      'maxLagMs', (select round(max(max_lag_seconds) * 1000)::bigint from m),
      'settledMessages', coalesce((select sum(consumed) from m), 0),
      'deadLettered', coalesce((select sum(dead_lettered) from m), 0)),
    'series', jsonb_build_object(
      'push', (select jsonb_agg(pushed order by i) from axis),
      'pop', (select series from nulls), 'popEmpty', (select series from nulls), 'ackFailed', (select series from nulls),
      'parked', (select series from nulls), 'avgLagMs', (select series from nulls),
      'maxLagMs', (select jsonb_agg(round(lag * 1000)::bigint order by i) from axis),
      'settled', (select jsonb_agg(settled order by i) from axis),
      'deadLettered', (select jsonb_agg(dead order by i) from axis)),
    'now', (select jsonb_build_object(
      'pending', coalesce(sum(s.pending), 0), 'processing', coalesce(sum(s.processing), 0),
      'deadLetter', (select count(*) from log_dlq d where d.queue_id = any (p_ids)), 'retainedBytes', coalesce(sum(s.retained_bytes), 0),
      'partitions', coalesce(sum(s.partition_count), 0),
      'groups', (select groups from g),
      'queuesWithoutGroup', (select count(*) from ungrouped),
      'pendingWithoutGroup', coalesce(sum(s.pending) filter (where s.queue_id in (select id from ungrouped)), 0),
      'queuesTouched', (select count(distinct queue_id) from m),
      'queuesActive', (select count(distinct queue_id) from m where pushed > 0 or consumed > 0))
      from unnest(p_ids) i(id) left join stats s on s.queue_id = i.id))
$$;

-- analytics_workload_v1: GET /api/v1/analytics/workload. p_filter {from, to, groupBy
-- (namespace|task|queue, default namespace), namespace?, task?, queue?}. One row per group of the
-- filtered queues (a queue with no namespace or task groups under ''), ordered by key; `tenant` is
-- every queue of the tenant, whatever the filters, so a row's share is against the whole tenant.
-- Returns: {timeRange:{from, to}, bucketMinutes, groupBy, buckets:[...], rows:[{key, queues,
-- namespace?, task? (groupBy queue), window, series, now}], tenant:{queues, window, series, now}}.
-- Raises: nothing. VOLATILE. Clock: p_now.
create or replace function queen.analytics_workload_v1(p_tenant text, p_filter jsonb, p_now timestamptz default null)
returns jsonb
language sql volatile
set search_path = queen, pg_catalog
as $$
  with b as (
    select f.t_from, f.t_to, _workload_bucket_minutes(f.t_from, f.t_to) as minutes,
           coalesce(p_filter ->> 'groupBy', 'namespace') as group_by, coalesce(p_now, now()) as at
      from (select (p_filter ->> 'from')::timestamptz as t_from, (p_filter ->> 'to')::timestamptz as t_to) f
  ), axis as (
    select array_agg(t order by t) as buckets
      from b, generate_series(_status_bucket(b.t_from, b.minutes), _status_bucket(b.t_to, b.minutes), make_interval(mins => b.minutes)) t
  ), grouped as (
    select case b.group_by when 'task' then q.task when 'queue' then q.name else q.namespace end as key,
           array_agg(q.id order by q.name) as ids, min(q.namespace) as namespace, min(q.task) as task
      from b, _status_scope(p_tenant, p_filter) q
     group by 1
  )
  select jsonb_build_object(
    'timeRange', jsonb_build_object('from', _iso_ms(b.t_from), 'to', _iso_ms(b.t_to)),
    'bucketMinutes', b.minutes,
    'groupBy', b.group_by,
    'buckets', (select coalesce(jsonb_agg(_iso_ms(t) order by t), '[]') from unnest(axis.buckets) t),
    'rows', coalesce((select jsonb_agg(jsonb_build_object('key', g.key)
                                       || case when b.group_by = 'queue' then jsonb_build_object('namespace', g.namespace, 'task', g.task) else '{}'::jsonb end
                                       || _workload_block(g.ids, b.t_from, b.t_to, b.minutes, axis.buckets, b.at)
                                       order by g.key) from grouped g), '[]'),
    'tenant', _workload_block(coalesce((select array_agg(q.id) from queues q where q.tenant_id = p_tenant), '{}'),
                              b.t_from, b.t_to, b.minutes, axis.buckets, b.at))
  from b, axis
$$;

-- The shape of an error text: UUIDs and long hex runs become <id>, dates and timestamps <date>,
-- standalone integers <n>; whitespace collapses and the first 120 characters are kept, so errors
-- that differ only in the ids and numbers they name fold together.
-- Returns: text. Raises: nothing. IMMUTABLE.
create or replace function queen._error_signature(p_error text)
returns text
language sql immutable
set search_path = queen, pg_catalog
as $$
  select left(btrim(regexp_replace(regexp_replace(regexp_replace(regexp_replace(regexp_replace(coalesce(p_error, ''),
           '[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}', '<id>', 'g'),
           '\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?)?', '<date>', 'g'),
           '\m[0-9a-fA-F]{16,}\M', '<id>', 'g'),
           '\m\d+\M', '<n>', 'g'),
           '\s+', ' ', 'g')), 120)
$$;

-- analytics_dlq_signatures_v1: GET /api/v1/analytics/dlq-signatures. The newest p_limit
-- dead-letter rows of one queue, their error texts folded by _error_signature and counted (the
-- eight commonest), without reading a payload out: avgBytes is measured here.
-- Returns: {queue, rowsNow (every row of the queue), sample, retryCounts, groups, oldest, newest,
-- avgBytes, signatures:[{text, n, share}], byDay:[{day, n}]}. An unknown queue is all zeros.
-- Raises: nothing. VOLATILE.
create or replace function queen.analytics_dlq_signatures_v1(p_tenant text, p_queue text, p_limit integer default 200)
returns jsonb
language sql volatile
set search_path = queen, pg_catalog
as $$
  with q as (
    select id from queues where tenant_id = p_tenant and name = p_queue
  ), s as (
    select d.error, d.retry_count, d.consumer_group, d.failed_at, octet_length((d.frame -> 'data')::text) as bytes
      from log_dlq d
     where d.queue_id = (select id from q) and d.tenant_id = p_tenant
     order by d.failed_at desc, d.id
     limit greatest(least(p_limit, 1000), 1)
  ), sig as (
    select _error_signature(error) as text, count(*) as n from s group by 1
  )
  select jsonb_build_object(
    'queue', p_queue,
    'rowsNow', (select count(*) from log_dlq d where d.queue_id = (select id from q) and d.tenant_id = p_tenant),
    'sample', (select count(*) from s),
    'retryCounts', coalesce((select jsonb_agg(distinct retry_count order by retry_count) from s), '[]'),
    'groups', coalesce((select jsonb_agg(distinct consumer_group order by consumer_group) from s), '[]'),
    'oldest', (select _iso_ms(min(failed_at)) from s),
    'newest', (select _iso_ms(max(failed_at)) from s),
    'avgBytes', (select coalesce(round(avg(bytes))::bigint, 0) from s),
    'signatures', coalesce((select jsonb_agg(jsonb_build_object('text', text, 'n', n, 'share', round(n::numeric / (select count(*) from s), 3))
                                            order by n desc, text)
                              from (select * from sig order by n desc, text limit 8) top), '[]'),
    'byDay', coalesce((select jsonb_agg(jsonb_build_object('day', day, 'n', n) order by day)
                         from (select to_char(failed_at at time zone 'UTC', 'YYYY-MM-DD') as day, count(*) as n from s group by 1) d), '[]'))
$$;

-- analytics_partition_liveness_v1: GET /api/v1/analytics/partition-liveness. p_filter {queue?,
-- namespace?, task?, limit (1..200)}. Per queue, its partitions counted against those written to
-- in the last hour, day and week (log_partitions.last_write_at, one pass, no partition row sent),
-- those created in the last day, and the queue's pending from its stats row. Ordered by partitions
-- descending, then queue.
-- Returns: {capturedAt, rows:[{queue, namespace, task, partitions, live1h, live24h, live7d,
-- created24h, oldestWriteAt, newestWriteAt, pending}]}. Raises: nothing. VOLATILE. Clock: p_now.
create or replace function queen.analytics_partition_liveness_v1(p_tenant text, p_filter jsonb, p_now timestamptz default null)
returns jsonb
language sql volatile
set search_path = queen, pg_catalog
as $$
  with t as (select coalesce(p_now, now()) as at), r as (
    select q.name, q.namespace, q.task, count(p.id) as partitions,
           count(p.id) filter (where p.last_write_at >= t.at - interval '1 hour') as live1h,
           count(p.id) filter (where p.last_write_at >= t.at - interval '1 day') as live24h,
           count(p.id) filter (where p.last_write_at >= t.at - interval '7 days') as live7d,
           count(p.id) filter (where p.created_at >= t.at - interval '1 day') as created24h,
           min(p.last_write_at) as oldest, max(p.last_write_at) as newest, coalesce(max(s.pending), 0) as pending
      from t, _status_scope(p_tenant, p_filter) q
      left join log_partitions p on p.queue_id = q.id
      left join stats s on s.queue_id = q.id
     group by q.name, q.namespace, q.task
     order by count(p.id) desc, q.name
     limit greatest(least(coalesce((p_filter ->> 'limit')::int, 20), 200), 1)
  )
  select jsonb_build_object(
    'capturedAt', (select _iso_ms(at) from t),
    'rows', coalesce((select jsonb_agg(jsonb_build_object(
        'queue', name, 'namespace', namespace, 'task', task, 'partitions', partitions, 'live1h', live1h,
        'live24h', live24h, 'live7d', live7d, 'created24h', created24h, 'oldestWriteAt', _iso_ms(oldest),
        'newestWriteAt', _iso_ms(newest), 'pending', pending) order by partitions desc, name) from r), '[]'))
$$;

-- analytics_retention_groups_v1: the `rows` GET /api/v1/analytics/retention adds when groupBy
-- (namespace|task|queue) is given: per group of the (p_queue-filtered) queues, its queues and the
-- sums of the figures the per-queue items carry, ordered by retainedBytes descending, then key.
-- Returns: [{key, queues:[names], retainedBytes, segments, oldestRetainedAt}]. Raises: nothing.
-- VOLATILE.
create or replace function queen.analytics_retention_groups_v1(p_tenant text, p_group_by text, p_queue text default null)
returns jsonb
language sql volatile
set search_path = queen, pg_catalog
as $$
  with r as (
    select case p_group_by when 'task' then q.task when 'queue' then q.name else q.namespace end as key,
           jsonb_agg(q.name order by q.name) as queues, sum(coalesce(st.retained_bytes, 0)) as bytes,
           sum(coalesce(st.segment_count, 0)) as segments,
           min((select min((select s.created_at from log_segments s
                             where s.partition_id = p.id and s.base_offset <= p.log_start and s.last_offset >= p.log_start
                             order by s.base_offset desc limit 1))
                  from log_partitions p where p.queue_id = q.id and p.last_offset >= p.log_start)) as oldest
      from queues q left join stats st on st.queue_id = q.id
     where q.tenant_id = p_tenant and (p_queue is null or q.name = p_queue)
     group by 1
  )
  select coalesce(jsonb_agg(jsonb_build_object('key', key, 'queues', queues, 'retainedBytes', bytes, 'segments', segments,
                                               'oldestRetainedAt', _iso_ms(oldest)) order by bytes desc, key), '[]')
    from r
$$;
