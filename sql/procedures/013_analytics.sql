-- Aggregate reads over a tenant's queues: the resource listings that sum them (overview,
-- namespaces, tasks) and the analytics routes (queue ops, queue lag, retention). The listings read
-- queen.stats as the lanes left it, so they cost one row per queue and say how old they are
-- (statsAge). The series helpers (_status_bucket_minutes, _status_bucket, _status_scope) live here,
-- before their first `language sql` caller, and 022_status.sql's series use them too.

-- The tenant's queues with their cached numbers, the common input of the three listings.
-- Returns: one row per queue. Raises: nothing. STABLE.
create or replace function queen._queue_aggregates(p_tenant text)
returns table (queue_id uuid, namespace text, task text, partitions bigint, total bigint, pending bigint,
               processing bigint, dead_letter bigint, computed_at timestamptz)
language sql stable
set search_path = queen, pg_catalog
as $$
  select q.id, q.namespace, q.task, coalesce(s.partition_count, 0), coalesce(s.total, 0), coalesce(s.pending, 0),
         coalesce(s.processing, 0), coalesce(s.dlq_total, 0), s.computed_at
    from queues q left join stats s on s.queue_id = q.id
   where q.tenant_id = p_tenant
$$;

-- log_resources_overview_v1: GET /api/v1/resources/overview.
-- Returns: {queues, partitions, namespaces, tasks, consumerGroups, messages:{total, pending,
-- processing, completed, failed:null, deadLetter}, streams:{queries, stateRows, stateBytes}, statsAge}.
-- streams is live but cheap: the shards' counters, which each cycle moves
-- (0006_stream_state_size.sql). Raises: nothing. VOLATILE (no pooler cache).
create or replace function queen.log_resources_overview_v1(p_tenant text, p_now timestamptz default null)
returns jsonb
language sql volatile
set search_path = queen, pg_catalog
as $$
  with a as (select * from _queue_aggregates(p_tenant))
  select jsonb_build_object(
    'queues', (select count(*) from a),
    'partitions', (select coalesce(sum(partitions), 0) from a),
    'namespaces', (select count(distinct namespace) from a where namespace <> ''),
    'tasks', (select count(distinct task) from a where task <> ''),
    'consumerGroups', (select count(distinct g.consumer_group) from consumer_groups g join a on a.queue_id = g.queue_id
                        where g.consumer_group <> '__QUEUE_MODE__'),
    'messages', (select jsonb_build_object('total', coalesce(sum(total), 0), 'pending', coalesce(sum(pending), 0),
                                           'processing', coalesce(sum(processing), 0),
                                           'completed', coalesce(sum(greatest(total - pending - processing, 0)), 0),
                                           'failed', null, 'deadLetter', coalesce(sum(dead_letter), 0)) from a),
    'streams', (select jsonb_build_object('queries', count(distinct q.id), 'stateRows', coalesce(sum(h.state_rows), 0),
                                          'stateBytes', coalesce(sum(h.state_bytes), 0))
                  from stream_queries q left join stream_shards h on h.query_id = q.id
                 where q.tenant_id = p_tenant),
    'statsAge', _stats_age((select min(computed_at) from a), coalesce(p_now, now())))
$$;

-- log_resources_grouped_v1: GET /api/v1/resources/namespaces (p_by = 'namespace') and
-- /resources/tasks (p_by = 'task'). Queues without one ('') are left out, as discovery does.
-- Returns: {namespaces|tasks:[{namespace|task, queues, partitions, messages:{total, pending,
-- processing}}], statsAge}. Raises: nothing. VOLATILE (no pooler cache).
create or replace function queen.log_resources_grouped_v1(p_tenant text, p_by text, p_now timestamptz default null)
returns jsonb
language sql volatile
set search_path = queen, pg_catalog
as $$
  with a as (
    select case when p_by = 'task' then task else namespace end as key, * from _queue_aggregates(p_tenant)
  ), g as (
    select key, count(*) as queues, sum(partitions) as partitions, sum(total) as total, sum(pending) as pending,
           sum(processing) as processing
      from a where key <> '' group by key
  )
  select jsonb_build_object(
    case when p_by = 'task' then 'tasks' else 'namespaces' end,
    coalesce((select jsonb_agg(jsonb_build_object(p_by, key, 'queues', queues, 'partitions', partitions,
                                                  'messages', jsonb_build_object('total', total, 'pending', pending, 'processing', processing))
                               order by key) from g), '[]'),
    'statsAge', _stats_age((select min(computed_at) from a), coalesce(p_now, now())))
$$;

-- The bucket size of a series over [p_from, p_to]: the smallest of 1, 5, 15, 60, 360, 1440 minutes
-- whose aligned buckets number at most 360 (a chart gets at most 360 points), else 1440.
-- Returns: minutes. Raises: nothing. IMMUTABLE.
create or replace function queen._status_bucket_minutes(p_from timestamptz, p_to timestamptz)
returns integer
language sql immutable
set search_path = queen, pg_catalog
as $$
  select coalesce(min(b), 1440)
    from unnest(array[1, 5, 15, 60, 360, 1440]) b
   where floor(extract(epoch from p_to) / (b * 60)) - floor(extract(epoch from p_from) / (b * 60)) + 1 <= 360
$$;

-- The start of the p_minutes-minute bucket holding p_at, aligned to the Unix epoch.
-- Returns: timestamptz. Raises: nothing. IMMUTABLE.
create or replace function queen._status_bucket(p_at timestamptz, p_minutes integer)
returns timestamptz
language sql immutable
set search_path = queen, pg_catalog
as $$
  select to_timestamp(floor(extract(epoch from p_at) / (p_minutes * 60)) * (p_minutes * 60))
$$;

-- The tenant's queues matching the optional filters {queue, namespace, task} of p_filter.
-- Returns: rows of queen.queues. Raises: nothing. STABLE.
create or replace function queen._status_scope(p_tenant text, p_filter jsonb)
returns setof queen.queues
language sql stable
set search_path = queen, pg_catalog
as $$
  select * from queues q
   where q.tenant_id = p_tenant
     and (p_filter ->> 'queue' is null or q.name = p_filter ->> 'queue')
     and (p_filter ->> 'namespace' is null or q.namespace = p_filter ->> 'namespace')
     and (p_filter ->> 'task' is null or q.task = p_filter ->> 'task')
$$;

-- analytics_queue_ops_v1: GET /api/v1/analytics/queue-ops. p_filter {from, to, queue?}. Per queue and
-- bucket (bucketMinutes as /status chooses it), only the buckets in which the queue has counters.
-- Returns: {timeRange:{from, to}, bucketMinutes, series:[{timestamp, queue, ingested, processed,
-- deadLettered}]} ordered by (timestamp, queue). Raises: nothing. VOLATILE.
create or replace function queen.analytics_queue_ops_v1(p_tenant text, p_filter jsonb)
returns jsonb
language sql volatile
set search_path = queen, pg_catalog
as $$
  with b as (
    select (p_filter ->> 'from')::timestamptz as t_from, (p_filter ->> 'to')::timestamptz as t_to,
           _status_bucket_minutes((p_filter ->> 'from')::timestamptz, (p_filter ->> 'to')::timestamptz) as minutes
  ), m as (
    select _status_bucket(qm.bucket, b.minutes) as bucket, s.name as queue, sum(qm.pushed) as pushed,
           sum(qm.consumed) as consumed, sum(qm.dead_lettered) as dead
      from b, _status_scope(p_tenant, p_filter) s join queue_metrics qm on qm.queue_id = s.id
     where qm.bucket >= date_trunc('minute', b.t_from) and qm.bucket <= b.t_to
     group by 1, 2
  )
  select jsonb_build_object(
    'timeRange', jsonb_build_object('from', _iso_ms(b.t_from), 'to', _iso_ms(b.t_to)),
    'bucketMinutes', b.minutes,
    'series', coalesce((select jsonb_agg(jsonb_build_object('timestamp', _iso_ms(bucket), 'queue', queue, 'ingested', pushed,
                                                            'processed', consumed, 'deadLettered', dead) order by bucket, queue) from m), '[]'))
  from b
$$;

-- analytics_queue_lag_v1: GET /api/v1/analytics/queue-lag. Current lag per (queue, registered group),
-- live: offsetLag = Σ pending of that group's cursors (a partition without its row owes its whole
-- retained range, as _partition_depth counts it), timeLagSeconds = age of the oldest pending frame
-- (the segment at the cursor), 0 when nothing is pending. p_queue narrows to one queue.
-- Returns: {items:[{queue, consumerGroup, partitions, offsetLag, timeLagSeconds}]} ordered by
-- (queue, consumerGroup). Raises: nothing. VOLATILE. Clock: p_now.
create or replace function queen.analytics_queue_lag_v1(p_tenant text, p_queue text default null, p_now timestamptz default null)
returns jsonb
language sql volatile
set search_path = queen, pg_catalog
as $$
  with g as (
    select q.id, q.name, cg.consumer_group
      from queues q join consumer_groups cg on cg.queue_id = q.id
     where q.tenant_id = p_tenant and (p_queue is null or q.name = p_queue)
  ), lag as (
    select g.name, g.consumer_group, count(d.partition_id) as partitions, coalesce(sum(d.pending), 0) as offset_lag,
           coalesce(max(extract(epoch from coalesce(p_now, now()) - (
             select s.created_at from log_segments s
              where s.partition_id = d.partition_id and s.base_offset <= d.c
              order by s.base_offset desc limit 1))) filter (where d.pending > 0), 0) as time_lag
      from g left join lateral _partition_depth(g.id, g.consumer_group, coalesce(p_now, now())) d on true
     group by g.name, g.consumer_group
  )
  select jsonb_build_object('items', coalesce((select jsonb_agg(jsonb_build_object(
      'queue', name, 'consumerGroup', consumer_group, 'partitions', partitions, 'offsetLag', offset_lag,
      'timeLagSeconds', round(greatest(time_lag, 0)::numeric, 3)) order by name, consumer_group) from lag), '[]'))
$$;

-- analytics_retention_v1: GET /api/v1/analytics/retention. The retention options of each queue,
-- retainedBytes and segments as the retained-bytes lane last counted them (0 before its first
-- pass), and oldestRetainedAt live (a primary-key probe at each partition's log_start). p_queue
-- narrows to one queue.
-- Returns: {items:[{queue, retentionEnabled, retentionSeconds, completedRetentionSeconds,
-- maxWaitTimeSeconds, retainedBytes, segments, oldestRetainedAt}]} ordered by queue.
-- Raises: nothing. VOLATILE.
create or replace function queen.analytics_retention_v1(p_tenant text, p_queue text default null)
returns jsonb
language sql volatile
set search_path = queen, pg_catalog
as $$
  select jsonb_build_object('items', coalesce(jsonb_agg(jsonb_build_object(
      'queue', q.name, 'retentionEnabled', q.retention_enabled, 'retentionSeconds', q.retention_seconds,
      'completedRetentionSeconds', q.completed_retention_seconds, 'maxWaitTimeSeconds', q.max_wait_time_seconds,
      'retainedBytes', coalesce(st.retained_bytes, 0), 'segments', coalesce(st.segment_count, 0),
      'oldestRetainedAt', _iso_ms((select min((select s.created_at from log_segments s
                                                where s.partition_id = p.id and s.base_offset <= p.log_start and s.last_offset >= p.log_start
                                                order by s.base_offset desc limit 1))
                                     from log_partitions p where p.queue_id = q.id and p.last_offset >= p.log_start)))
      order by q.name), '[]'))
    from queues q left join stats st on st.queue_id = q.id
   where q.tenant_id = p_tenant and (p_queue is null or q.name = p_queue)
$$;
