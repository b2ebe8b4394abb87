-- Consumer-group administration (docs/consumer-groups.md): listings, lag, delete, subscription
-- rewrite, seek and the delivery policy. One procedure per route, each tenant-scoped and VOLATILE
-- (no pooler cache). Lag is the watermark arithmetic of _partition_depth (011_log_stats.sql), never
-- recomputed here, so group lag, depth, detail and stats agree.
--
-- Which (group, queue) pairs exist: a group "is on" a queue when it has a consumer_groups row (a
-- subscription record, written by pop, seek or the delivery route) or a cursor row on one of the
-- queue's partitions (an ack or transaction may create one without registering, 005_log_ack.sql).
--
-- Lock order (design decision 4, extended): queue rows FOR KEY SHARE in id order, then
-- consumer_groups rows in (queue_id, group) order, then log_consumers rows in (partition_id, group)
-- order. Pop takes consumer_groups before log_consumers too, and its own caught-up update skips
-- locked rows, so these writers cannot deadlock with pops; the queue-row share makes a concurrent
-- queue delete wait.
--
-- Seek is the only writer that lowers committed_offset (design decision 14). Every cursor move
-- backwards (seek, subscription rewrite, delete without metadata) clears
-- consumer_groups.caught_up_at: pop's caught-up check keeps an old watermark when it finds work
-- (docs/engine.md), so without the clear a wildcard pop would skip partitions idle since before it.

-- _group_lag: one row per (group, queue, partition) for the tenant's groups (all of them, or
-- p_group), with that group's own backlog from _partition_depth (a missing cursor row owes the
-- whole retained range, design decision 10) and the cursor row's fields (null without a row).
-- time_lag_seconds: seconds since the createdAt of the oldest pending frame (the segment holding
-- the effective cursor), 0 with nothing pending. STABLE. Clock: p_now decides live leases and lag.
create or replace function queen._group_lag(p_tenant text, p_group text, p_now timestamptz)
returns table (consumer_group text, queue_id uuid, queue_name text, partition_id uuid, partition_name text,
               pending bigint, committed bigint, live_lease uuid, total_consumed bigint,
               last_consumed_at timestamptz, oldest_unconsumed_at timestamptz, time_lag_seconds bigint)
language sql stable
set search_path = queen, pg_catalog
as $$
  with pairs as (
    select g.consumer_group, g.queue_id
      from consumer_groups g join queues q on q.id = g.queue_id
     where q.tenant_id = p_tenant and (p_group is null or g.consumer_group = p_group)
    union
    select lc.consumer_group, p.queue_id
      from log_consumers lc
      join log_partitions p on p.id = lc.partition_id
      join queues q on q.id = p.queue_id
     where q.tenant_id = p_tenant and (p_group is null or lc.consumer_group = p_group)
  )
  select pr.consumer_group, q.id, q.name, d.partition_id, d.name, d.pending, lc.committed_offset,
         case when lc.lease_id is not null and lc.lease_expires_at > p_now then lc.lease_id end,
         coalesce(lc.total_consumed, 0), lc.last_consumed_at, o.created_at,
         case when d.pending > 0 and o.created_at is not null
              then greatest(floor(extract(epoch from p_now - o.created_at)), 0)::bigint else 0 end
    from pairs pr
    join queues q on q.id = pr.queue_id
    cross join lateral _partition_depth(q.id, pr.consumer_group, p_now) d
    left join log_consumers lc on lc.partition_id = d.partition_id and lc.consumer_group = pr.consumer_group
    left join lateral (
      select s.created_at from log_segments s
       where d.pending > 0 and s.partition_id = d.partition_id and s.base_offset <= d.c
       order by s.base_offset desc limit 1
    ) o on true
$$;

-- consumer_group_list_v1: GET /api/v1/consumer-groups. A bare array, one entry per (group, queue),
-- ordered by (name, queueName): {name, topics, queueName, members (distinct live lease ids),
-- partitionsWithLag, totalLag, maxTimeLag, state, subscriptionMode, subscriptionTimestamp,
-- subscriptionCreatedAt}. state: Stable below 300 s of lag; Lagging at or above it when the group
-- settled something in the last 3 600 s; else Dead. subscriptionMode is null for a record written
-- by the delivery route or a seek before the group's first pop (design decision 20).
-- Raises nothing. VOLATILE. Clock: p_now, else the transaction's now().
create or replace function queen.consumer_group_list_v1(p_tenant text, p_now timestamptz default null)
returns jsonb
language sql volatile
set search_path = queen, pg_catalog
as $$
  with lag as (
    select * from _group_lag(p_tenant, null, coalesce(p_now, now()))
  ), pairs as (
    select g.consumer_group, g.queue_id from consumer_groups g join queues q on q.id = g.queue_id where q.tenant_id = p_tenant
    union
    select consumer_group, queue_id from lag
  ), agg as (
    select l.consumer_group, l.queue_id, count(distinct l.live_lease) as members,
           count(*) filter (where l.pending > 0) as lagging, sum(l.pending) as total_lag,
           max(l.time_lag_seconds) as max_lag, max(l.last_consumed_at) as last_consumed
      from lag l group by l.consumer_group, l.queue_id
  ), rows as (
    select pr.consumer_group, q.name as queue_name, cg.subscription_mode, cg.subscription_at, cg.created_at as sub_created,
           coalesce(a.members, 0) as members, coalesce(a.lagging, 0) as lagging, coalesce(a.total_lag, 0) as total_lag,
           coalesce(a.max_lag, 0) as max_lag, a.last_consumed
      from pairs pr
      join queues q on q.id = pr.queue_id
      left join agg a on a.consumer_group = pr.consumer_group and a.queue_id = pr.queue_id
      left join consumer_groups cg on cg.queue_id = pr.queue_id and cg.consumer_group = pr.consumer_group
  )
  select coalesce(jsonb_agg(jsonb_build_object(
           'name', r.consumer_group, 'topics', jsonb_build_array(r.queue_name), 'queueName', r.queue_name,
           'members', r.members, 'partitionsWithLag', r.lagging, 'totalLag', r.total_lag, 'maxTimeLag', r.max_lag,
           'state', case when r.max_lag < 300 then 'Stable'
                         when r.last_consumed >= coalesce(p_now, now()) - interval '3600 seconds' then 'Lagging'
                         else 'Dead' end,
           'subscriptionMode', r.subscription_mode,
           'subscriptionTimestamp', _iso_ms(r.subscription_at),
           'subscriptionCreatedAt', _iso_ms(r.sub_created))
         order by r.consumer_group, r.queue_name), '[]'::jsonb)
    from rows r
$$;

-- consumer_group_lagging_v1: GET /api/v1/consumer-groups/lagging. One entry per (group, partition)
-- with something pending and time_lag_seconds >= p_min_lag_seconds, worst first (snake_case, as
-- Queen's wire format has it). Raises nothing. VOLATILE. Clock: p_now, else the transaction's now().
create or replace function queen.consumer_group_lagging_v1(p_tenant text, p_min_lag_seconds bigint, p_now timestamptz default null)
returns jsonb
language sql volatile
set search_path = queen, pg_catalog
as $$
  select coalesce(jsonb_agg(jsonb_build_object(
           'consumer_group', l.consumer_group, 'queue_name', l.queue_name, 'partition_name', l.partition_name,
           'partition_id', l.partition_id, 'worker_id', l.live_lease, 'offset_lag', l.pending,
           'time_lag_seconds', l.time_lag_seconds, 'lag_hours', round(l.time_lag_seconds / 3600.0, 2),
           'oldest_unconsumed_at', _iso_ms(l.oldest_unconsumed_at), 'last_consumed_at', _iso_ms(l.last_consumed_at))
         order by l.time_lag_seconds desc, l.pending desc, l.consumer_group, l.queue_name, l.partition_name), '[]'::jsonb)
    from _group_lag(p_tenant, null, coalesce(p_now, now())) l
   where l.pending > 0 and l.time_lag_seconds >= p_min_lag_seconds
$$;

-- consumer_group_detail_v1: GET /api/v1/consumer-groups/:group. An object keyed by queue name, {}
-- for an unknown group (design decision 30): {"<queue>": {conflation, partitions:[{partition,
-- partitionId, workerId, lastConsumedAt, totalConsumed, offsetLag, timeLagSeconds, leaseActive,
-- committedOffset|null}]}}. Every partition of each queue the group is on is listed;
-- committedOffset is null where the group has no cursor row yet. Raises nothing. VOLATILE. Clock:
-- p_now, else the transaction's now().
create or replace function queen.consumer_group_detail_v1(p_tenant text, p_group text, p_now timestamptz default null)
returns jsonb
language sql volatile
set search_path = queen, pg_catalog
as $$
  with lag as (
    select * from _group_lag(p_tenant, p_group, coalesce(p_now, now()))
  ), queues_of as (
    select distinct l.queue_id, l.queue_name from lag l
    union
    select q.id, q.name from consumer_groups g join queues q on q.id = g.queue_id
     where q.tenant_id = p_tenant and g.consumer_group = p_group
  )
  select coalesce(jsonb_object_agg(qo.queue_name, jsonb_build_object(
           'conflation', coalesce((select g.delivery = 'conflate' and p_group <> '__QUEUE_MODE__' from consumer_groups g
                                    where g.queue_id = qo.queue_id and g.consumer_group = p_group), false),
           'partitions', coalesce((select jsonb_agg(jsonb_build_object(
               'partition', l.partition_name, 'partitionId', l.partition_id, 'workerId', l.live_lease,
               'lastConsumedAt', _iso_ms(l.last_consumed_at), 'totalConsumed', l.total_consumed,
               'offsetLag', l.pending, 'timeLagSeconds', l.time_lag_seconds, 'leaseActive', l.live_lease is not null,
               'committedOffset', l.committed) order by l.partition_name)
             from lag l where l.queue_id = qo.queue_id), '[]'::jsonb))), '{}'::jsonb)
    from queues_of qo
$$;

-- consumer_group_delete_v1: DELETE /api/v1/consumer-groups/:group[/queues/:queue]. Removes the
-- group's cursors and leases in every tenant queue (or in p_queue), and its consumer_groups rows
-- when p_delete_metadata, so the next pop under that name is a first contact. Without metadata
-- deletion the subscription stays and the cursors are re-created by it (design decision 15), which
-- may move them back: caught_up_at is cleared. An unknown group or queue deletes nothing
-- (design decision 30).
-- Returns {success, consumerGroup, deletedPartitions, metadataDeleted (a record was removed)}
-- (+ queueName). Raises nothing. VOLATILE.
create or replace function queen.consumer_group_delete_v1(p_tenant text, p_group text, p_queue text default null,
                                                          p_delete_metadata boolean default true)
returns jsonb
language plpgsql volatile
set search_path = queen, pg_catalog
as $$
declare
  v_queue_ids uuid[];
  v_cursors integer;
  v_records integer := 0;
begin
  select array_agg(id order by id) into v_queue_ids
    from (select id from queues where tenant_id = p_tenant and (p_queue is null or name = p_queue)
           order by id for key share) q;
  v_queue_ids := coalesce(v_queue_ids, '{}');

  perform 1 from consumer_groups
   where queue_id = any (v_queue_ids) and consumer_group = p_group
   order by queue_id for update;
  perform 1 from log_consumers c join log_partitions p on p.id = c.partition_id
   where p.queue_id = any (v_queue_ids) and c.consumer_group = p_group
   order by c.partition_id for update of c;

  delete from log_consumers c using log_partitions p
   where p.id = c.partition_id and p.queue_id = any (v_queue_ids) and c.consumer_group = p_group;
  get diagnostics v_cursors = row_count;

  if p_delete_metadata then
    delete from consumer_groups where queue_id = any (v_queue_ids) and consumer_group = p_group;
    get diagnostics v_records = row_count;
  else
    update consumer_groups set caught_up_at = null, caught_up_checked_at = null
     where queue_id = any (v_queue_ids) and consumer_group = p_group;
  end if;

  return jsonb_build_object('success', true, 'consumerGroup', p_group, 'deletedPartitions', v_cursors,
                            'metadataDeleted', v_records > 0)
         || case when p_queue is not null then jsonb_build_object('queueName', p_queue) else '{}'::jsonb end;
end
$$;

-- consumer_group_subscription_v1: POST /api/v1/consumer-groups/:group/subscription. Rewrites the
-- subscription instant of every consumer_groups row of the group in the tenant; the mode becomes
-- 'timestamp' so the instant governs every partition the group meets from now on
-- (design decision 15). Existing cursors do not move. Clears caught_up_at (a new partition may
-- start below it).
-- Returns {success, consumerGroup, newTimestamp, rowsUpdated}. Raises nothing. VOLATILE.
create or replace function queen.consumer_group_subscription_v1(p_tenant text, p_group text, p_timestamp timestamptz)
returns jsonb
language plpgsql volatile
set search_path = queen, pg_catalog
as $$
declare
  v_rows integer;
begin
  perform 1 from queues q
   where q.tenant_id = p_tenant
     and exists (select 1 from consumer_groups g where g.queue_id = q.id and g.consumer_group = p_group)
   order by q.id for key share;
  update consumer_groups g
     set subscription_mode = 'timestamp', subscription_at = p_timestamp, caught_up_at = null, caught_up_checked_at = null
   where (g.queue_id, g.consumer_group) in (
           select g2.queue_id, g2.consumer_group from consumer_groups g2 join queues q on q.id = g2.queue_id
            where q.tenant_id = p_tenant and g2.consumer_group = p_group
            order by g2.queue_id for update of g2);
  get diagnostics v_rows = row_count;
  return jsonb_build_object('success', true, 'consumerGroup', p_group, 'newTimestamp', _iso_ms(p_timestamp),
                            'rowsUpdated', v_rows);
end
$$;

-- _group_seek_cursor: writes a sought cursor to a (locked) row: the new frontier, and no lease,
-- recorded completions or attempts (design decision 14). total_consumed is kept: it counts what
-- the group has consumed over its life, which a replay does not undo.
create or replace function queen._group_seek_cursor(p_pid uuid, p_group text, p_offset bigint)
returns void
language sql volatile
set search_path = queen, pg_catalog
as $$
  update log_consumers
     set committed_offset = p_offset, acked_set = '{}', lease_id = null, lease_expires_at = null,
         lease_from = null, lease_to = null, retry_offset = null, retry_count = 0,
         released_lease_id = null, attempt_from = null, attempts = null
   where partition_id = p_pid and consumer_group = p_group
$$;

-- consumer_group_seek_v1: POST /api/v1/consumer-groups/:group/queues/:queue/seek. Sets the group's
-- cursor on every partition of the queue, creating missing rows (design decision 15: seek is a path
-- that creates them, and here the seek target is the initialisation): p_to_end → hw; p_timestamp →
-- the first offset whose segment was written at or after it (design decision 16: min(base_offset) …
-- created_at >= t), else hw. It may move backwards (the only regression, design decision 14). Live
-- leases are released, so in-flight acks with the old lease id answer lease_invalid. The group is
-- registered if it was not (its subscription columns left unset for its first pop, as the delivery
-- route leaves them), and caught_up_at is cleared.
-- Returns {success, consumerGroup, queueName, seekToEnd, targetTimestamp, partitionsUpdated}.
-- Raises QM404 for an unknown queue, before anything is written. VOLATILE.
create or replace function queen.consumer_group_seek_v1(p_tenant text, p_group text, p_queue text,
                                                        p_timestamp timestamptz default null, p_to_end boolean default false)
returns jsonb
language plpgsql volatile
set search_path = queen, pg_catalog
as $$
declare
  v_qid uuid;
  v_count integer := 0;
  r record;
begin
  select id into v_qid from queues where tenant_id = p_tenant and name = p_queue for key share;
  if not found then
    raise exception using errcode = 'QM404', message = 'queue not found';
  end if;
  insert into consumer_groups (queue_id, consumer_group) values (v_qid, p_group)
  on conflict (queue_id, consumer_group) do nothing;
  update consumer_groups set caught_up_at = null, caught_up_checked_at = null
   where queue_id = v_qid and consumer_group = p_group;

  insert into log_consumers (partition_id, consumer_group, committed_offset)
  select p.id, p_group, p.last_offset + 1 from log_partitions p
   where p.queue_id = v_qid
     and not exists (select 1 from log_consumers c where c.partition_id = p.id and c.consumer_group = p_group)
   order by p.id
  on conflict do nothing;

  for r in
    select p.id, p.log_start, p.last_offset
      from log_partitions p join log_consumers c on c.partition_id = p.id and c.consumer_group = p_group
     where p.queue_id = v_qid
     order by p.id
       for update of c
  loop
    perform _group_seek_cursor(r.id, p_group,
      case when p_to_end then r.last_offset + 1
           else greatest(coalesce((select min(s.base_offset) from log_segments s
                                    where s.partition_id = r.id and s.created_at >= p_timestamp),
                                  r.last_offset + 1), r.log_start) end);
    v_count := v_count + 1;
  end loop;

  return jsonb_build_object('success', true, 'consumerGroup', p_group, 'queueName', p_queue,
                            'seekToEnd', p_to_end, 'targetTimestamp', case when p_to_end then null else _iso_ms(p_timestamp) end,
                            'partitionsUpdated', v_count);
end
$$;

-- consumer_group_partition_seek_v1: POST …/queues/:queue/partitions/:partition/seek. Moves the
-- group's cursor on one partition to its end (hw) or, with p_timestamp, to the first offset whose
-- segment was written at or after it (else hw), as the queue seek places each partition; creates the
-- row when missing, with the same clearing as a queue seek. Returns {success, consumerGroup,
-- queueName, partitionName, updated, seekToEnd, targetTimestamp, committedOffset, cursorMovedTo
-- (createdAt of the newest frame below the cursor, null when there is none)}.
-- Raises QM404 for an unknown queue, QMNFP for an unknown partition, before anything is written. VOLATILE.
-- The signature without p_timestamp is dropped so no stray overload remains.
drop function if exists queen.consumer_group_partition_seek_v1(text, text, text, text);
create or replace function queen.consumer_group_partition_seek_v1(p_tenant text, p_group text, p_queue text, p_partition text,
                                                                  p_timestamp timestamptz default null)
returns jsonb
language plpgsql volatile
set search_path = queen, pg_catalog
as $$
declare
  v_qid uuid;
  v_pid uuid;
  v_hw bigint;
  v_start bigint;
  v_head timestamptz;
  v_target bigint;
  v_moved_to timestamptz;
begin
  select id into v_qid from queues where tenant_id = p_tenant and name = p_queue for key share;
  if not found then
    raise exception using errcode = 'QM404', message = 'queue not found';
  end if;
  select id into v_pid from log_partitions where queue_id = v_qid and name = p_partition;
  if not found then
    raise exception using errcode = 'QMNFP', message = 'partition not found';
  end if;
  insert into consumer_groups (queue_id, consumer_group) values (v_qid, p_group)
  on conflict (queue_id, consumer_group) do nothing;
  update consumer_groups set caught_up_at = null, caught_up_checked_at = null
   where queue_id = v_qid and consumer_group = p_group;
  insert into log_consumers (partition_id, consumer_group, committed_offset)
  select v_pid, p_group, p.last_offset + 1 from log_partitions p where p.id = v_pid
  on conflict do nothing;
  perform 1 from log_consumers where partition_id = v_pid and consumer_group = p_group for update;
  -- Read the head after the cursor lock, so a push that committed meanwhile is included.
  select last_offset + 1, log_start, head_at into v_hw, v_start, v_head from log_partitions where id = v_pid;
  if p_timestamp is null then
    v_target := v_hw;
    v_moved_to := case when v_hw > 0 then v_head end;
  else
    v_target := greatest(coalesce((select min(s.base_offset) from log_segments s
                                    where s.partition_id = v_pid and s.created_at >= p_timestamp), v_hw), v_start);
    v_moved_to := (select s.created_at from log_segments s
                    where s.partition_id = v_pid and s.base_offset < v_target
                    order by s.base_offset desc limit 1);
  end if;
  perform _group_seek_cursor(v_pid, p_group, v_target);
  return jsonb_build_object('success', true, 'consumerGroup', p_group, 'queueName', p_queue, 'partitionName', p_partition,
                            'updated', true, 'seekToEnd', p_timestamp is null,
                            'targetTimestamp', _iso_ms(p_timestamp), 'committedOffset', v_target,
                            'cursorMovedTo', _iso_us(v_moved_to));
end
$$;

-- consumer_group_delivery_v1: POST /api/v1/consumer-groups/:group/queues/:queue/delivery.
-- Sets the group's stored delivery policy ('conflate' or 'all'), and only that
-- (design decision 20): a new row leaves the subscription columns unset, so the group's first pop
-- still fixes its mode and instant; an unknown queue is created as a queue-scoped pop creates it.
-- Queue mode has no delivery policy (design decision 19; QM400, the route refuses it first).
-- Returns {success, consumerGroup, queueName, conflation}. VOLATILE.
create or replace function queen.consumer_group_delivery_v1(p_tenant text, p_group text, p_queue text, p_conflation boolean)
returns jsonb
language plpgsql volatile
set search_path = queen, pg_catalog
as $$
declare
  v_qid uuid;
begin
  if p_group = '__QUEUE_MODE__' then
    raise exception using errcode = 'QM400', message = 'delivery applies to named consumer groups only';
  end if;
  v_qid := _ensure_queue(p_tenant, p_queue);
  insert into consumer_groups (queue_id, consumer_group, delivery)
  values (v_qid, p_group, case when p_conflation then 'conflate' else 'all' end)
  on conflict (queue_id, consumer_group) do update set delivery = excluded.delivery;
  return jsonb_build_object('success', true, 'consumerGroup', p_group, 'queueName', p_queue, 'conflation', p_conflation);
end
$$;
