-- The status routes (GET /api/v1/status, /status/queues, /status/queues/:queue and its messages,
-- /status/analytics). The /api/v1/analytics routes, and the series helpers both use, are in
-- 013_analytics.sql.
-- Sources, the same clocks as the resource routes (docs/resources.md, design decision 10):
--   * counts per queue (pending, processing) come from queen.stats, as the stats lane left them,
--     with statsAge saying how old; partitions and retained totals are live watermark arithmetic;
--   * per-queue detail is live, from _partition_depth (the one copy of the backlog arithmetic);
--   * series come from queen.queue_metrics, the per-minute counters the stats lane folds in
--     at each pass: pushed → ingested, consumed → processed, dead_lettered → deadLettered;
--   * DLQ counts and live leases are read live (small, indexed tables).
-- Nothing here reads a payload; message listings read frame ids through the newest segments only.
-- Every public function is VOLATILE (no pooler cache) and takes p_tenant first; the broker-wide
-- cluster read of /metrics/prometheus lives in 023_system.sql beside the flags it reports.

-- status_overview_v1: GET /api/v1/status. p_filter {from, to, queue?, namespace?, task?} (ISO
-- instants; the route defaults the range to the last hour). Throughput is zero-filled over every
-- bucket of the range; counts are the stats lane's (statsAge), DLQ and leases are live.
-- Returns: {timeRange:{from, to}, bucketMinutes, pointCount, throughput:[{timestamp, ingested,
-- processed, ingestedPerSecond, processedPerSecond}], queues:{total, withBacklog},
-- messages:{total, pending, processing, completed, failed:null, deadLetter},
-- leases:{active, partitionsLeased}, deadLetterQueue:{total, inRange}, statsAge}.
-- Raises: nothing. VOLATILE. Clock: p_now decides which leases are live and statsAge.
create or replace function queen.status_overview_v1(p_tenant text, p_filter jsonb, p_now timestamptz default null)
returns jsonb
language sql volatile
set search_path = queen, pg_catalog
as $$
  with r as (
    select (p_filter ->> 'from')::timestamptz as t_from, (p_filter ->> 'to')::timestamptz as t_to,
           coalesce(p_now, now()) as t_now
  ), b as (
    select r.*, _status_bucket_minutes(r.t_from, r.t_to) as minutes from r
  ), q as (
    select s.id, st.total, st.pending, st.processing, st.computed_at
      from _status_scope(p_tenant, p_filter) s left join stats st on st.queue_id = s.id
  ), points as (
    select gs as bucket from b, generate_series(_status_bucket(b.t_from, b.minutes), b.t_to, make_interval(mins => b.minutes)) gs
  ), m as (
    select _status_bucket(qm.bucket, b.minutes) as bucket, sum(qm.pushed) as pushed, sum(qm.consumed) as consumed
      from b, queue_metrics qm
     where qm.queue_id in (select id from q)
       and qm.bucket >= date_trunc('minute', b.t_from) and qm.bucket <= b.t_to
     group by 1
  ), dlq as (
    select count(*) as total, count(*) filter (where d.failed_at >= b.t_from and d.failed_at <= b.t_to) as in_range,
           count(distinct (d.partition_id, d.frame_offset)) as messages
      from b, log_dlq d where d.queue_id in (select id from q)
  ), leases as (
    select count(distinct c.lease_id) as active, count(*) as partitions
      from b, log_consumers c join log_partitions p on p.id = c.partition_id
     where p.queue_id in (select id from q) and c.lease_id is not null and c.lease_expires_at > b.t_now
  )
  select jsonb_build_object(
    'timeRange', jsonb_build_object('from', _iso_ms(b.t_from), 'to', _iso_ms(b.t_to)),
    'bucketMinutes', b.minutes,
    'pointCount', (select count(*) from points),
    'throughput', coalesce((select jsonb_agg(jsonb_build_object(
        'timestamp', _iso_ms(pt.bucket),
        'ingested', coalesce(m.pushed, 0), 'processed', coalesce(m.consumed, 0),
        'ingestedPerSecond', round(coalesce(m.pushed, 0)::numeric / (b.minutes * 60), 3),
        'processedPerSecond', round(coalesce(m.consumed, 0)::numeric / (b.minutes * 60), 3)) order by pt.bucket)
      from points pt left join m on m.bucket = pt.bucket), '[]'),
    'queues', jsonb_build_object('total', (select count(*) from q),
                                 'withBacklog', (select count(*) from q where coalesce(pending, 0) > 0)),
    'messages', (select jsonb_build_object('total', coalesce(sum(total), 0), 'pending', coalesce(sum(pending), 0),
                                           'processing', coalesce(sum(processing), 0),
                                           'completed', coalesce(sum(greatest(total - pending - processing, 0)), 0),
                                           'failed', null, 'deadLetter', (select messages from dlq)) from q),
    'leases', (select jsonb_build_object('active', active, 'partitionsLeased', partitions) from leases),
    'deadLetterQueue', (select jsonb_build_object('total', total, 'inRange', in_range) from dlq),
    'statsAge', _stats_age((select min(computed_at) from q), b.t_now))
  from b
$$;

-- status_queues_v1: GET /api/v1/status/queues. p_filter {queue?, namespace?, task?, limit, offset}.
-- partitions and messages.total are live watermark arithmetic over the page's partitions; pending
-- and processing are the stats lane's, exactly as GET /api/v1/resources/queues serves them.
-- Returns: {queues:[{id, name, namespace, task, createdAt, partitions, messages:{total, pending,
-- processing}}], pagination:{limit, offset, total}}, ordered by name. Raises: nothing. VOLATILE.
create or replace function queen.status_queues_v1(p_tenant text, p_filter jsonb)
returns jsonb
language sql volatile
set search_path = queen, pg_catalog
as $$
  with scope as (
    select s.* from _status_scope(p_tenant, p_filter) s
  ), page as (
    select s.* from scope s order by s.name
     limit (p_filter ->> 'limit')::int offset (p_filter ->> 'offset')::bigint
  ), rows as (
    select pg.id, pg.name, pg.namespace, pg.task, pg.created_at,
           (select count(*) from log_partitions p where p.queue_id = pg.id) as partitions,
           (select coalesce(sum(p.last_offset + 1 - p.log_start), 0) from log_partitions p where p.queue_id = pg.id) as total,
           coalesce(st.pending, 0) as pending, coalesce(st.processing, 0) as processing
      from page pg left join stats st on st.queue_id = pg.id
  )
  select jsonb_build_object(
    'queues', coalesce((select jsonb_agg(jsonb_build_object(
        'id', id, 'name', name, 'namespace', namespace, 'task', task, 'createdAt', _iso_ms(created_at),
        'partitions', partitions,
        'messages', jsonb_build_object('total', total, 'pending', pending, 'processing', processing)) order by name) from rows), '[]'),
    'pagination', jsonb_build_object('limit', (p_filter ->> 'limit')::int, 'offset', (p_filter ->> 'offset')::bigint,
                                     'total', (select count(*) from scope)))
$$;

-- status_queue_detail_v1: GET /api/v1/status/queues/:queue. Live per partition, as
-- _partition_detail computes it (the worst cursor without a group, completed, deadLetter = distinct
-- dead-lettered offsets, oldest); cursor is __QUEUE_MODE__'s row (nulls and 0 when queue mode never
-- read the partition); batchesConsumed counts the rounds acks (or autoAck) completed on that cursor
-- (log_consumers.batches_consumed, migration 0003). lastActivity is the latest push (head_at) or
-- settlement (last_consumed_at of any group).
-- Returns: {queue:{id, name, namespace, task, priority, createdAt, config:{leaseTime, retryLimit,
-- retryDelay, ttl, maxQueueSize, deadLetterQueue}}, partitions:[…], totals:{…}}.
-- p_include_partitions false leaves the partitions key out (queenctl and the clients ask for
-- totals only); the totals are the same sums either way.
-- Raises: QM404 for an unknown queue. VOLATILE. Clock: p_now decides which leases are live.
-- The signature without p_include_partitions is dropped so no stray overload remains.
drop function if exists queen.status_queue_detail_v1(text, text, timestamptz);
create or replace function queen.status_queue_detail_v1(p_tenant text, p_queue text, p_now timestamptz default null,
                                                        p_include_partitions boolean default true)
returns jsonb
language sql volatile
set search_path = queen, pg_catalog
as $$
  with q as (
    select * from queues where tenant_id = p_tenant and name = p_queue
  ), d as (
    select x.*,
           (select max(c.last_consumed_at) from log_consumers c where c.partition_id = x.partition_id) as settled_at,
           qm.total_consumed, qm.batches_consumed, qm.committed_offset
      from q cross join lateral _partition_detail(q.id, coalesce(p_now, now())) x
      left join log_consumers qm on qm.partition_id = x.partition_id and qm.consumer_group = '__QUEUE_MODE__'
  )
  select coalesce((select jsonb_build_object(
    'queue', jsonb_build_object(
      'id', q.id, 'name', q.name, 'namespace', q.namespace, 'task', q.task, 'priority', q.priority,
      'createdAt', _iso_ms(q.created_at),
      'config', jsonb_build_object('leaseTime', q.lease_time, 'retryLimit', q.retry_limit, 'retryDelay', q.retry_delay,
                                   'ttl', q.ttl, 'maxQueueSize', q.max_size, 'deadLetterQueue', q.dead_letter_queue)),
    'totals', (select jsonb_build_object('total', coalesce(sum(total), 0), 'pending', coalesce(sum(pending), 0),
                                         'processing', coalesce(sum(processing), 0), 'completed', coalesce(sum(completed), 0),
                                         'failed', null, 'deadLetter', coalesce(sum(dead_letter), 0)) from d))
  || case when not p_include_partitions then '{}'::jsonb else jsonb_build_object(
    'partitions', coalesce((select jsonb_agg(jsonb_build_object(
        'id', d.partition_id, 'name', d.name, 'createdAt', _iso_ms(d.created_at),
        'messages', jsonb_build_object('total', d.total, 'pending', d.pending, 'processing', d.processing),
        'stats', jsonb_build_object('total', d.total, 'pending', d.pending, 'processing', d.processing,
                                    'completed', d.completed, 'failed', null, 'deadLetter', d.dead_letter),
        'cursor', jsonb_build_object('totalConsumed', coalesce(d.total_consumed, 0), 'batchesConsumed', coalesce(d.batches_consumed, 0),
                                     'committedOffset', d.committed_offset),
        'lastActivity', _iso_ms(nullif(greatest(coalesce(d.head_at, '-infinity'), coalesce(d.settled_at, '-infinity')), '-infinity')),
        'oldestMessage', case when d.total > 0 then _iso_ms(d.oldest) end,
        'newestMessage', case when d.total > 0 then _iso_ms(d.head_at) end) order by d.name) from d), '[]')) end
  from q), _raise('QM404', 'queue not found'))
$$;

-- status_queue_messages_v1: GET /api/v1/status/queues/:queue/messages. The queue's retained,
-- undeleted frames newest first by (createdAt, offset), one page, with their status for every
-- group (_message_state's rule, as GET /api/v1/messages). Only the newest segments that can hold
-- the page are unnested, so the cost follows the page, not the queue.
-- Returns: a JSON array of {id, transactionId, partitionId, queuePath, queue, partition, status,
-- createdAt (µs), offset}. Raises: QM404 for an unknown queue. VOLATILE. Clock: p_now.
create or replace function queen.status_queue_messages_v1(p_tenant text, p_queue text, p_limit integer, p_offset bigint,
                                                          p_now timestamptz default null)
returns jsonb
language sql volatile
set search_path = queen, pg_catalog
as $$
  with q as (
    select id, name from queues where tenant_id = p_tenant and name = p_queue
  ), parts as (
    select p.id, p.name, p.log_start from log_partitions p join q on p.queue_id = q.id
  ), heads as (
    -- Newest segments first until they hold the page, read from the columns alone (no frames
    -- detoasted); tombstones only ever shrink a segment, so the cut keeps a margin of as many
    -- frames as the queue has tombstones.
    select s.partition_id, s.base_offset, pt.name, pt.log_start,
           sum(s.last_offset + 1 - greatest(s.base_offset, pt.log_start))
             over (order by s.created_at desc, s.base_offset desc rows between unbounded preceding and 1 preceding) as before
      from parts pt join log_segments s on s.partition_id = pt.id and s.last_offset >= pt.log_start
  ), segs as (
    select h.*, s.created_at, s.frames
      from heads h join log_segments s on s.partition_id = h.partition_id and s.base_offset = h.base_offset
     where coalesce(h.before, 0) < p_limit + p_offset + (select count(*) from log_tombstones t where t.partition_id in (select id from parts))
  ), frames as (
    select sg.partition_id, sg.name, sg.log_start, sg.created_at, sg.base_offset + u.n - 1 as frame_offset, u.f
      from segs sg cross join lateral unnest(sg.frames) with ordinality as u(f, n)
     where sg.base_offset + u.n - 1 >= sg.log_start
       and not exists (select 1 from log_tombstones t where t.partition_id = sg.partition_id and t.frame_offset = sg.base_offset + u.n - 1)
     order by sg.created_at desc, frame_offset desc
     limit p_limit offset p_offset
  )
  select coalesce((select coalesce((select jsonb_agg(jsonb_build_object(
      'id', f.f -> 'id', 'transactionId', f.f -> 'txn', 'partitionId', f.partition_id,
      'queuePath', q.name || '/' || f.name, 'queue', q.name, 'partition', f.name,
      'status', _message_state(f.partition_id, f.log_start, f.frame_offset, coalesce(p_now, now())) ->> 'status',
      'createdAt', _iso_us(f.created_at), 'offset', f.frame_offset) order by f.created_at desc, f.frame_offset desc)
    from frames f), '[]')
  from q), _raise('QM404', 'queue not found'))
$$;

-- status_analytics_v1: GET /api/v1/status/analytics. p_filter {interval: minute|hour|day, from, to,
-- queue?, namespace?, task?}. Zero-filled buckets of the interval (UTC) over the range, summed over
-- the queues in scope; at most 10 000 buckets.
-- pending is a gauge, not a counter: per queue the value of its last recorded minute in the bucket,
-- summed over the queues; null in a bucket where the stats lane recorded no minute (an extension
-- of Queen's series, read by the console's pending chart; docs/status.md).
-- Returns: {interval, timeRange:{from, to}, series:[{timestamp, ingested, processed, deadLettered,
-- pending}], totals:{ingested, processed, deadLettered}}. Raises: QM400 when the range needs more than 10 000
-- buckets of the interval, or the interval is not minute, hour or day. VOLATILE.
create or replace function queen.status_analytics_v1(p_tenant text, p_filter jsonb)
returns jsonb
language plpgsql volatile
set search_path = queen, pg_catalog
as $$
declare
  v_interval text := p_filter ->> 'interval';
  v_from timestamptz := (p_filter ->> 'from')::timestamptz;
  v_to timestamptz := (p_filter ->> 'to')::timestamptz;
  v_step interval;
  v_result jsonb;
begin
  v_step := case v_interval when 'minute' then interval '1 minute' when 'hour' then interval '1 hour'
                            when 'day' then interval '1 day' end;
  if v_step is null then
    raise exception using errcode = 'QM400', message = 'interval must be one of minute, hour, day';
  end if;
  if extract(epoch from v_to - date_trunc(v_interval, v_from, 'UTC')) / extract(epoch from v_step) >= 10000 then
    raise exception using errcode = 'QM400', message = format('from/to spans more than 10000 %s buckets', v_interval);
  end if;

  with points as (
    select gs as bucket from generate_series(date_trunc(v_interval, v_from, 'UTC'), v_to, v_step) gs
  ), m as (
    select date_trunc(v_interval, qm.bucket, 'UTC') as bucket, sum(qm.pushed) as pushed, sum(qm.consumed) as consumed,
           sum(qm.dead_lettered) as dead
      from queue_metrics qm
     where qm.queue_id in (select id from _status_scope(p_tenant, p_filter))
       and qm.bucket >= date_trunc('minute', v_from) and qm.bucket <= v_to
     group by 1
  ), g as (
    select last.bucket, sum(last.pending) as pending
      from (select distinct on (qm.queue_id, date_trunc(v_interval, qm.bucket, 'UTC'))
                   date_trunc(v_interval, qm.bucket, 'UTC') as bucket, qm.pending
              from queue_metrics qm
             where qm.queue_id in (select id from _status_scope(p_tenant, p_filter))
               and qm.bucket >= date_trunc('minute', v_from) and qm.bucket <= v_to
             order by qm.queue_id, date_trunc(v_interval, qm.bucket, 'UTC'), qm.bucket desc) last
     group by 1
  ), s as (
    select pt.bucket, coalesce(m.pushed, 0) as pushed, coalesce(m.consumed, 0) as consumed, coalesce(m.dead, 0) as dead,
           g.pending
      from points pt left join m on m.bucket = pt.bucket left join g on g.bucket = pt.bucket
  )
  select jsonb_build_object(
    'interval', v_interval,
    'timeRange', jsonb_build_object('from', _iso_ms(v_from), 'to', _iso_ms(v_to)),
    'series', coalesce((select jsonb_agg(jsonb_build_object('timestamp', _iso_ms(bucket), 'ingested', pushed,
                                                            'processed', consumed, 'deadLettered', dead, 'pending', pending) order by bucket) from s), '[]'),
    'totals', (select jsonb_build_object('ingested', coalesce(sum(pushed), 0), 'processed', coalesce(sum(consumed), 0),
                                         'deadLettered', coalesce(sum(dead), 0)) from s))
    into v_result;
  return v_result;
end
$$;
