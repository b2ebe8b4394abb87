-- Broker-wide maintenance flags and the database figures of the admin analytics (docs/status.md).
-- The flags are rows of queen.system_state ('maintenance' for push, 'pop_maintenance' for pop) that
-- log_push_v1, log_transaction_v1 and log_pop_v1 read by primary key inside their own call, so a
-- change made through any replica or isolate applies from the next request everywhere; nothing is
-- cached in a process.

-- system_maintenance_v1: both flags as booleans (a missing or non-boolean row reads as off, as the
-- push and pop procedures read it).
-- Returns: {maintenanceMode, popMaintenanceMode}. Raises: nothing. VOLATILE (no pooler cache: a
-- cached answer would report a flag that has since changed).
create or replace function queen.system_maintenance_v1()
returns jsonb
language sql volatile
set search_path = queen, pg_catalog
as $$
  select jsonb_build_object(
    'maintenanceMode', coalesce((select value = 'true'::jsonb from system_state where key = 'maintenance'), false),
    'popMaintenanceMode', coalesce((select value = 'true'::jsonb from system_state where key = 'pop_maintenance'), false))
$$;

-- system_maintenance_set_v1: turns one flag on or off. p_mode is 'push' or 'pop'; anything else
-- raises QM400 (the route only sends those two). An upsert, so a database whose row was removed by
-- hand gets it back rather than silently ignoring the switch.
-- Returns: both flags after the change, as system_maintenance_v1. Concurrency: the last writer wins;
-- each write is one row, so two admins flipping different flags never interfere.
create or replace function queen.system_maintenance_set_v1(p_mode text, p_enabled boolean)
returns jsonb
language plpgsql volatile
set search_path = queen, pg_catalog
as $$
declare
  v_key text := case p_mode when 'push' then 'maintenance' when 'pop' then 'pop_maintenance' end;
begin
  if v_key is null or p_enabled is null then
    raise exception using errcode = 'QM400', message = 'mode must be push or pop and enabled a boolean';
  end if;
  insert into system_state (key, value, updated_at) values (v_key, to_jsonb(p_enabled), clock_timestamp())
  on conflict (key) do update set value = excluded.value, updated_at = excluded.updated_at;
  return system_maintenance_v1();
end
$$;

-- system_postgres_stats_v1: GET /api/v1/analytics/postgres-stats (admin; broker-wide, so no
-- tenant). Connection counts are this database's client backends only (as safeTime counts them,
-- design decision 32), the cache-hit ratio and deadlocks come from pg_stat_database for this
-- database; cacheHitRatio is null before any block was read.
-- Returns: {databaseSizeBytes, connections:{total, active, idle, idleInTransaction}, cacheHitRatio,
-- deadlocks, serverVersion}. Raises: nothing. VOLATILE.
create or replace function queen.system_postgres_stats_v1()
returns jsonb
language sql volatile
set search_path = queen, pg_catalog
as $$
  with a as (
    select state from pg_stat_activity
     where datid = (select oid from pg_database where datname = current_database())
       and backend_type = 'client backend'
  ), d as (
    select blks_hit, blks_read, deadlocks from pg_stat_database where datname = current_database()
  )
  select jsonb_build_object(
    'databaseSizeBytes', pg_database_size(current_database()),
    'connections', jsonb_build_object(
      'total', (select count(*) from a),
      'active', (select count(*) from a where state = 'active'),
      'idle', (select count(*) from a where state = 'idle'),
      'idleInTransaction', (select count(*) from a where state like 'idle in transaction%')),
    'cacheHitRatio', (select case when blks_hit + blks_read > 0
                                  then round(blks_hit::numeric / (blks_hit + blks_read), 4) end from d),
    'deadlocks', coalesce((select deadlocks from d), 0),
    'serverVersion', current_setting('server_version'))
$$;

-- metrics_cluster_v1: the cluster series of GET /metrics/prometheus, across every tenant (a
-- broker-wide read: the route decides who may see per-queue series, design decision 41). Reads
-- partition watermarks, cursors, queen.stats and log_dlq, never log_segments. With p_per_queue
-- false only the broker-wide figures are computed.
-- Returns: {maintenance:{push, pop}, statsAge, queues:[{tenant, queue, pending, processing,
-- partitions, appended, retainedBytes, dlqDepth}], groups:[{tenant, queue, group, lag}]}.
-- pending/processing are the stats lane's (the resources list's source); appended = Σ hw (every
-- message ever appended); lag is a group's live offset lag. Raises: nothing. VOLATILE. Clock: p_now.
create or replace function queen.metrics_cluster_v1(p_per_queue boolean, p_now timestamptz default null)
returns jsonb
language sql volatile
set search_path = queen, pg_catalog
as $$
  with q as (
    select q.id, q.tenant_id, q.name, st.pending, st.processing, st.retained_bytes
      from queues q left join stats st on st.queue_id = q.id
     where p_per_queue
  ), w as (
    select p.queue_id, count(*) as partitions, sum(p.last_offset + 1) as appended
      from log_partitions p where p.queue_id in (select id from q) group by p.queue_id
  ), dl as (
    select d.queue_id, count(*) as depth from log_dlq d where d.queue_id in (select id from q) group by d.queue_id
  ), lag as (
    select q.tenant_id, q.name, cg.consumer_group,
           (select coalesce(sum(d.pending), 0) from _partition_depth(q.id, cg.consumer_group, coalesce(p_now, now())) d) as lag
      from q join consumer_groups cg on cg.queue_id = q.id
  )
  select jsonb_build_object(
    'maintenance', system_maintenance_v1(),
    'statsAge', _stats_age((select min(computed_at) from stats), coalesce(p_now, now())),
    'queues', coalesce((select jsonb_agg(jsonb_build_object(
        'tenant', q.tenant_id, 'queue', q.name, 'pending', coalesce(q.pending, 0), 'processing', coalesce(q.processing, 0),
        'partitions', coalesce(w.partitions, 0), 'appended', coalesce(w.appended, 0),
        'retainedBytes', coalesce(q.retained_bytes, 0), 'dlqDepth', coalesce(dl.depth, 0)) order by q.tenant_id, q.name)
      from q left join w on w.queue_id = q.id left join dl on dl.queue_id = q.id), '[]'),
    'groups', coalesce((select jsonb_agg(jsonb_build_object('tenant', tenant_id, 'queue', name, 'group', consumer_group, 'lag', lag)
                                         order by tenant_id, name, consumer_group) from lag), '[]'))
$$;
