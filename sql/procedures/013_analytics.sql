-- Queue delete and the aggregate listings (q&r "DELETE /api/v1/resources/queues/:queue",
-- "Aggregate listings"; D25). The aggregates read queen.stats as the lanes left it, so they cost
-- one row per queue and say how old they are (statsAge).

-- delete_queue_v1: the whole delete in one transaction. log_txns and log_dlq carry no foreign key
-- (the purge path must never pay FK-trigger cost), so their rows go first, explicitly, while the
-- partitions still resolve; then the queues row, whose cascade removes partitions, segments,
-- cursors, group metadata, stats and metrics. Traces and kv entries are kept.
-- Returns: {deleted:true, queue, existed:true} or {deleted:false, queue, existed:false, message}.
-- Raises: nothing. Concurrency: the queue row is locked first, so a concurrent configure or a push
-- creating a partition waits and then finds the queue gone (a push re-creates it, as any first
-- push would).
create or replace function queen.delete_queue_v1(p_tenant text, p_queue text)
returns jsonb
language plpgsql volatile
set search_path = queen, pg_catalog
as $$
declare
  v_id uuid;
begin
  select id into v_id from queues where tenant_id = p_tenant and name = p_queue for update;
  if v_id is null then
    return jsonb_build_object('deleted', false, 'queue', p_queue, 'existed', false,
                              'message', 'Queue not found, nothing was deleted');
  end if;
  delete from log_txns t using log_partitions p where p.queue_id = v_id and t.partition_id = p.id;
  delete from log_dlq where queue_id = v_id;
  delete from queues where id = v_id;
  return jsonb_build_object('deleted', true, 'queue', p_queue, 'existed', true);
end
$$;

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
-- streams is live but cheap: the shards' counters, which each cycle moves (S5,
-- 0006_stream_state_size.sql). Raises: nothing. VOLATILE (no pooler cache).
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
