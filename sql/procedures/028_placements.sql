-- Tenant placement (issue #26, docs/placement.md): the directory (tenant -> database name) kept in
-- the default database, and the four steps a move runs on the source and destination databases:
-- export a tenant's rows page by page, import them, census both sides, purge the source. The
-- directory functions are called on the default database only; the move functions on any database.
-- Every directory change bumps queen.placement_directory.version under its row lock, so versions
-- commit in order and a broker's cached map is valid exactly while the version is unchanged.

-- _placement_bump: the next directory version, taken under the single row's lock (writers of the
-- directory serialise here until they commit). Returns the new version. Raises nothing.
create or replace function queen._placement_bump()
returns bigint
language sql volatile
set search_path = queen, pg_catalog
as $$
  update placement_directory set version = version + 1 where id returning version
$$;

-- _placement_json: one directory row as the wire shape {tenant, database, state, movingTo,
-- version, updatedAt}. Raises nothing.
create or replace function queen._placement_json(p_row queen.placements)
returns jsonb
language sql volatile
set search_path = queen, pg_catalog
as $$
  select jsonb_build_object('tenant', p_row.tenant_id, 'database', p_row.database, 'state', p_row.state,
    'movingTo', p_row.moving_to, 'version', p_row.version, 'updatedAt', _iso_ms(p_row.updated_at))
$$;

-- placements_directory_v1: the whole directory unless the caller already holds its version.
-- Returns {version, placements: [row…] | null} (null when p_known equals the current version, so a
-- broker's periodic check costs one primary-key read and no rows). Raises nothing. Reads one
-- snapshot: the version and the rows agree.
create or replace function queen.placements_directory_v1(p_known bigint default null)
returns jsonb
language plpgsql volatile
set search_path = queen, pg_catalog
as $$
declare
  v_version bigint;
begin
  select version into v_version from placement_directory where id;
  if p_known is not null and p_known = v_version then
    return jsonb_build_object('version', v_version, 'placements', null);
  end if;
  return jsonb_build_object('version', v_version, 'placements',
    coalesce((select jsonb_agg(_placement_json(p) order by p.tenant_id) from placements p), '[]'::jsonb));
end
$$;

-- _placement_lock: the first step of every directory write, in the one order two writers take
-- them: the directory row (bumping its version), then the tenant's row. Returns the tenant's row as
-- it stands, with version set to the new one the write must carry; for a tenant without a row only
-- tenant_id and version are set. Raises nothing.
create or replace function queen._placement_lock(p_tenant text)
returns queen.placements
language plpgsql volatile
set search_path = queen, pg_catalog
as $$
declare
  v_version bigint := _placement_bump();
  v_row placements;
begin
  select * into v_row from placements where tenant_id = p_tenant for update;
  v_row.tenant_id := p_tenant;
  v_row.version := v_version;
  return v_row;
end
$$;

-- _placement_store: writes a tenant's directory row (database, state, moving_to, version) stamped
-- p_now, under the locks _placement_lock took. Returns the row's wire shape. Raises nothing.
create or replace function queen._placement_store(p_row queen.placements, p_now timestamptz)
returns jsonb
language sql volatile
set search_path = queen, pg_catalog
as $$
  insert into placements as p (tenant_id, database, state, moving_to, version, updated_at)
  values (p_row.tenant_id, p_row.database, p_row.state, p_row.moving_to, p_row.version, p_now)
  on conflict (tenant_id) do update
     set database = excluded.database, state = excluded.state, moving_to = excluded.moving_to,
         version = excluded.version, updated_at = excluded.updated_at
  returning _placement_json(p)
$$;

-- placement_set_v1: places a tenant on a database by name (the broker checks the name against its
-- configuration first; the directory does not know the map). Placing does not move data: it is for
-- tenants that have none yet (docs/placement.md). Returns the row. Raises QM409 while the tenant is
-- being moved, unless p_force (an operator lifting the fence of a move whose broker died).
-- Concurrency: serialises on the directory row lock. Clock: clock_timestamp() unless p_now pins it.
create or replace function queen.placement_set_v1(p_tenant text, p_database text, p_force boolean default false, p_now timestamptz default null)
returns jsonb
language plpgsql volatile
set search_path = queen, pg_catalog
as $$
declare
  v_now timestamptz := coalesce(p_now, clock_timestamp());
  v_row placements := _placement_lock(p_tenant);
begin
  if v_row.state = 'moving' and not p_force then
    raise exception using errcode = 'QM409', message = 'tenant is being moved; retry when the move has finished';
  end if;
  v_row.database := p_database;
  v_row.state := 'placed';
  v_row.moving_to := null;
  return _placement_store(v_row, v_now);
end
$$;

-- placement_move_begin_v1: fences a tenant for a move from p_from to p_to (state 'moving'). Returns
-- the row. Raises QM409 when the tenant is already moving or no longer lives on p_from (a
-- concurrent change). Concurrency: serialises on the directory row lock. Clock: clock_timestamp()
-- unless p_now pins it.
create or replace function queen.placement_move_begin_v1(p_tenant text, p_from text, p_to text, p_now timestamptz default null)
returns jsonb
language plpgsql volatile
set search_path = queen, pg_catalog
as $$
declare
  v_now timestamptz := coalesce(p_now, clock_timestamp());
  v_row placements := _placement_lock(p_tenant);
begin
  if v_row.state = 'moving' then
    raise exception using errcode = 'QM409', message = 'tenant is already being moved';
  end if;
  if coalesce(v_row.database, 'default') <> p_from then
    raise exception using errcode = 'QM409', message = 'tenant placement changed; retry the move';
  end if;
  v_row.database := p_from;
  v_row.state := 'moving';
  v_row.moving_to := p_to;
  return _placement_store(v_row, v_now);
end
$$;

-- placement_move_end_v1: lifts a move's fence, leaving the tenant on p_database: the destination
-- when the copy was verified (the flip), the source when the move is abandoned. Returns the row.
-- Raises QM409 when the tenant is not being moved. Concurrency: serialises on the directory row
-- lock. Clock: clock_timestamp() unless p_now pins it.
create or replace function queen.placement_move_end_v1(p_tenant text, p_database text, p_now timestamptz default null)
returns jsonb
language plpgsql volatile
set search_path = queen, pg_catalog
as $$
declare
  v_now timestamptz := coalesce(p_now, clock_timestamp());
  v_row placements := _placement_lock(p_tenant);
begin
  if v_row.state is distinct from 'moving' then
    raise exception using errcode = 'QM409', message = 'tenant is not being moved';
  end if;
  v_row.database := p_database;
  v_row.state := 'placed';
  v_row.moving_to := null;
  return _placement_store(v_row, v_now);
end
$$;

-- _placement_tables: every tenant-scoped table, parents first (the import order; purge relies on
-- the cascades from queues and stream_queries), with its primary key and the predicate that selects
-- one tenant's rows (alias t, the tenant as $1). derived marks tables the lanes recompute, which
-- the census compares by count only. Tables not listed hold no tenant data (schema_migrations,
-- maintenance_leases, system_state, the directory itself). Raises nothing.
create or replace function queen._placement_tables()
returns table (ord int, name text, pk text[], scope text, derived boolean)
language sql volatile
set search_path = queen, pg_catalog
as $$
  select * from (values
    (1, 'queues', array['id'], 't.tenant_id = $1', false),
    (2, 'log_partitions', array['id'], 't.queue_id in (select q.id from queen.queues q where q.tenant_id = $1)', false),
    (3, 'log_segments', array['partition_id', 'base_offset'], 't.partition_id in (select p.id from queen.log_partitions p join queen.queues q on q.id = p.queue_id where q.tenant_id = $1)', false),
    (4, 'log_consumers', array['partition_id', 'consumer_group'], 't.partition_id in (select p.id from queen.log_partitions p join queen.queues q on q.id = p.queue_id where q.tenant_id = $1)', false),
    (5, 'consumer_groups', array['queue_id', 'consumer_group'], 't.queue_id in (select q.id from queen.queues q where q.tenant_id = $1)', false),
    (6, 'log_txns', array['partition_id', 'txn_hash'], 't.partition_id in (select p.id from queen.log_partitions p join queen.queues q on q.id = p.queue_id where q.tenant_id = $1)', false),
    (7, 'log_tombstones', array['partition_id', 'frame_offset'], 't.partition_id in (select p.id from queen.log_partitions p join queen.queues q on q.id = p.queue_id where q.tenant_id = $1)', false),
    (8, 'stats', array['queue_id'], 't.queue_id in (select q.id from queen.queues q where q.tenant_id = $1)', true),
    (9, 'queue_metrics', array['queue_id', 'bucket'], 't.queue_id in (select q.id from queen.queues q where q.tenant_id = $1)', true),
    (10, 'log_dlq', array['id'], 't.tenant_id = $1', false),
    (11, 'message_traces', array['id'], 't.tenant_id = $1', false),
    (13, 'stream_queries', array['id'], 't.tenant_id = $1', false),
    (14, 'stream_state', array['query_id', 'partition_id', 'key'], 't.query_id in (select s.id from queen.stream_queries s where s.tenant_id = $1)', false),
    (15, 'stream_shards', array['query_id', 'partition_id'], 't.query_id in (select s.id from queen.stream_queries s where s.tenant_id = $1)', false),
    (16, 'kv_entries', array['tenant_id', 'ns', 'key'], 't.tenant_id = $1', false),
    (17, 'timers', array['tenant_id', 'queue', 'timer_key'], 't.tenant_id = $1', false)
  ) as v (ord, name, pk, scope, derived)
$$;

-- _placement_table: the primary-key columns and tenant predicate of one catalog entry, by name.
-- Raises QM400 for a table that is not tenant-scoped, so no caller can export or import anything else.
create or replace function queen._placement_table(p_table text, out o_pk text[], out o_scope text)
returns record
language plpgsql volatile
set search_path = queen, pg_catalog
as $$
begin
  select t.pk, t.scope into o_pk, o_scope from _placement_tables() t where t.name = p_table;
  if not found then
    raise exception using errcode = 'QM400', message = format('table: %s is not a tenant-scoped table', p_table);
  end if;
end
$$;

-- placement_export_v1: one page of a tenant's rows of one table, in primary-key order after p_after
-- (the previous page's `next`, or null for the first page). Returns {rows: [row as JSON…], next:
-- <last row> | null when this was the last page}. Raises QM400 for an unknown table. Reads only;
-- the move fences the tenant first, so pages of one table see the same rows.
create or replace function queen.placement_export_v1(p_tenant text, p_table text, p_after jsonb default null, p_limit int default 1000)
returns jsonb
language plpgsql volatile
set search_path = queen, pg_catalog
as $$
declare
  v_pk text[];
  v_scope text;
  v_t text;
  v_k text;
  v_rows jsonb;
begin
  select o_pk, o_scope into v_pk, v_scope from _placement_table(p_table);
  select string_agg(format('t.%I', c), ', '), string_agg(format('k.%I', c), ', ') into v_t, v_k from unnest(v_pk) c;
  execute format(
    'select coalesce(jsonb_agg(to_jsonb(t) order by %1$s), ''[]''::jsonb) from (
       select t.* from queen.%2$I t
        where (%3$s) and ($2::jsonb is null or (%1$s) > (select %4$s from jsonb_populate_record(null::queen.%2$I, $2) k))
        order by %1$s limit $3) t',
    v_t, p_table, v_scope, v_k)
  using p_tenant, p_after, greatest(1, p_limit) into v_rows;
  return jsonb_build_object('rows', v_rows,
    'next', case when jsonb_array_length(v_rows) < greatest(1, p_limit) then null else v_rows -> -1 end);
end
$$;

-- placement_import_v1: inserts exported rows of one table as they are (ids, offsets and timestamps
-- kept). Returns {imported: n}. Raises QM400 for an unknown table; 23505 when a row already exists
-- (the move purges the destination's leftovers first, in the same transaction).
create or replace function queen.placement_import_v1(p_table text, p_rows jsonb)
returns jsonb
language plpgsql volatile
set search_path = queen, pg_catalog
as $$
declare
  v_n bigint;
begin
  perform _placement_table(p_table);
  execute format('insert into queen.%1$I select * from jsonb_populate_recordset(null::queen.%1$I, $1)', p_table) using p_rows;
  get diagnostics v_n = row_count;
  return jsonb_build_object('imported', v_n);
end
$$;

-- placement_census_v1: what the move verifies, per tenant-scoped table: the row count and an md5
-- over every row's JSON in primary-key order (so offsets, cursor positions, DLQ rows and traces
-- must match exactly), or only the count for tables the lanes recompute. Returns {<table>: {rows,
-- digest}}. Raises nothing. The time zone is pinned so both databases render timestamps alike.
create or replace function queen.placement_census_v1(p_tenant text)
returns jsonb
language plpgsql volatile
set search_path = queen, pg_catalog
set timezone = 'UTC'
as $$
declare
  v_entry record;
  v_rows bigint;
  v_digest text;
  v_out jsonb := '{}'::jsonb;
begin
  for v_entry in select * from _placement_tables() order by ord loop
    execute format(
      'select count(*), case when $2 then null else md5(coalesce(string_agg(to_jsonb(t)::text, ''|'' order by %1$s), '''')) end from queen.%2$I t where %3$s',
      (select string_agg(format('t.%I', c), ', ') from unnest(v_entry.pk) c), v_entry.name, v_entry.scope)
    using p_tenant, v_entry.derived into v_rows, v_digest;
    v_out := v_out || jsonb_build_object(v_entry.name, jsonb_build_object('rows', v_rows, 'digest', v_digest));
  end loop;
  return v_out;
end
$$;

-- placement_purge_v1: deletes every row of a tenant from this database: the source after a
-- verified move, the destination's leftovers before a copy. log_txns has no foreign key and goes
-- first; the queues and stream_queries cascades take the rest of their trees. Returns {deleted: n}
-- (rows deleted directly, cascades not counted). Raises nothing.
create or replace function queen.placement_purge_v1(p_tenant text)
returns jsonb
language plpgsql volatile
set search_path = queen, pg_catalog
as $$
declare
  v_n bigint;
  v_total bigint := 0::bigint;
begin
  delete from log_txns where partition_id in (select p.id from log_partitions p join queues q on q.id = p.queue_id where q.tenant_id = p_tenant);
  get diagnostics v_n = row_count;
  v_total := v_total + v_n;
  delete from queues where tenant_id = p_tenant;
  get diagnostics v_n = row_count;
  v_total := v_total + v_n;
  -- The cached listing (0008) is derived, never copied, so it is not counted; the queue deletes
  -- above have just recorded changes for it.
  delete from stats_listings where tenant_id = p_tenant;
  delete from stats_listing_changes where tenant_id = p_tenant;
  delete from stats_listing_changed_queues where tenant_id = p_tenant;
  delete from log_dlq where tenant_id = p_tenant;
  get diagnostics v_n = row_count;
  v_total := v_total + v_n;
  delete from message_traces where tenant_id = p_tenant;
  get diagnostics v_n = row_count;
  v_total := v_total + v_n;
  delete from kv_entries where tenant_id = p_tenant;
  get diagnostics v_n = row_count;
  v_total := v_total + v_n;
  delete from timers where tenant_id = p_tenant;
  get diagnostics v_n = row_count;
  v_total := v_total + v_n;
  delete from stream_queries where tenant_id = p_tenant;
  get diagnostics v_n = row_count;
  return jsonb_build_object('deleted', v_total + v_n);
end
$$;

-- placement_drain_v1: how many transactions of this database's client backends (other than the
-- caller's) started before p_before and are still open. A move waits for zero after its fence has
-- reached every broker, so no write that began before the fence is still running when it copies.
-- Returns {open: n}. Raises nothing. A role that cannot see other roles' xact_start counts only
-- what it can see (docs/placement.md).
create or replace function queen.placement_drain_v1(p_before timestamptz)
returns jsonb
language sql volatile
set search_path = queen, pg_catalog
as $$
  select jsonb_build_object('open', count(*))
    from pg_stat_activity
   where datid = (select oid from pg_database where datname = current_database())
     and backend_type = 'client backend' and pid <> pg_backend_pid()
     and xact_start < p_before
$$;
