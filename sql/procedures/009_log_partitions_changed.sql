-- partitions/changed (docs/sink-protocol.md): lists partition
-- names with their bounds, by name or changed since an instant, and a safeTime below which no
-- segment can still become visible. Writes nothing, leases nothing.

-- safeTime (design decision 32): the oldest xact_start among this database's client backends that
-- are inside a transaction, minus a 5 s guard. The guard only absorbs skew between backends; the
-- argument does not rest on it, so the randomized test sets `queen.safe_time_guard_ms` to 0 on its
-- database to make a real ordering fault visible. Nothing else sets it. Without the right to see
-- other roles' sessions their xact_start reads as null, so the bound also falls back to now() minus
-- the longest a single broker statement (or, on PostgreSQL 17+, a transaction) may run.
-- Must be the first thing a caller reads, before any table: see log_partitions_changed_v1.
-- Returns: {"safeTime": timestamptz, "degraded": bool}. Raises: nothing. VOLATILE: live state.
create or replace function queen._safe_time()
returns jsonb
language plpgsql volatile
set search_path = queen, pg_catalog
as $$
declare
  v_oldest timestamptz;
  v_visible boolean;
  v_safe timestamptz;
  v_txn_timeout interval := coalesce(nullif(current_setting('transaction_timeout', true), ''), '0')::interval;
  v_guard interval := coalesce(nullif(current_setting('queen.safe_time_guard_ms', true), '')::int, 5000) * interval '1 millisecond';
begin
  select min(xact_start) into v_oldest
    from pg_stat_activity
   where xact_start is not null
     and datname = current_database()
     and backend_type = 'client backend';
  v_visible := pg_has_role(current_user, 'pg_read_all_stats', 'MEMBER')
               or coalesce((select rolsuper from pg_roles where rolname = current_user), false);
  v_safe := least(coalesce(v_oldest, now()), now()) - v_guard;
  if not v_visible then
    v_safe := least(v_safe, now() - greatest(current_setting('statement_timeout')::interval, v_txn_timeout, interval '5 seconds'));
  end if;
  return jsonb_build_object('safeTime', v_safe, 'degraded', not v_visible);
end
$$;

-- log_partitions_changed_v1: one answer per entry {queue, since?, after?, limit?} of p_entries.
-- Enumeration (no since) pages on name with cursor 'n|<name>'; changed-since pages on
-- (last_write_at, name) from date_trunc('second', since) with cursor 't|<µs since epoch>|<name>'.
-- `next` is set only when a page is full. limit defaults to 1000, clamped to [1, 10000].
-- Returns: {safeTime, safeTimeDegraded, entries:[{queue, partitions:[{name, lastOffset, logStart,
-- lastWriteAt}], next} | {queue, error:"QUEUE_NOT_FOUND"|"BAD_CURSOR", message}]}.
-- Raises: QMISO outside READ COMMITTED; QM400 for a malformed entry (the route refuses those first).
-- Concurrency and clock: VOLATILE on purpose, and pg_stat_activity is read FIRST. pg_stat_activity
-- is live state, not an MVCC view; under STABLE every statement here would share the caller's
-- older snapshot, and a writer that committed between that snapshot and the activity read would
-- be in neither the scan nor the watermark. VOLATILE gives each later statement a fresh snapshot
-- taken after the activity read, so every writer was either in flight at the read (inside the
-- minimum), committed before the scan (seen by it), or started after the read (its created_at is
-- above safeTime). Fresh snapshots per statement are READ COMMITTED behaviour, hence QMISO.
create or replace function queen.log_partitions_changed_v1(p_tenant text, p_entries jsonb)
returns jsonb
language plpgsql volatile
set search_path = queen, pg_catalog
as $$
declare
  v_safe jsonb;
  v_entry jsonb;
  v_out jsonb := '[]'::jsonb;
  v_queue_id uuid;
  v_queue text;
  v_limit int;
  v_since timestamptz;
  v_after text;
  v_cursor_at timestamptz;
  v_cursor_name text;
  v_rows jsonb;
  v_count int;
begin
  if current_setting('transaction_isolation') <> 'read committed' then
    raise exception using errcode = 'QMISO', message = 'partitions/changed must run at READ COMMITTED';
  end if;
  -- Before any table read (see the contract above).
  v_safe := _safe_time();

  if jsonb_typeof(p_entries) is distinct from 'array' then
    raise exception using errcode = 'QM400', message = 'entries: must be an array';
  end if;

  for v_entry in select e from jsonb_array_elements(p_entries) e loop
    v_queue := v_entry ->> 'queue';
    v_limit := least(greatest(coalesce((v_entry ->> 'limit')::numeric, 1000), 1), 10000)::int;
    v_since := date_trunc('second', (v_entry ->> 'since')::timestamptz);
    v_after := v_entry ->> 'after';

    select id into v_queue_id from queues where tenant_id = p_tenant and name = v_queue;
    if v_queue_id is null then
      v_out := v_out || jsonb_build_array(jsonb_build_object('queue', v_queue, 'error', 'QUEUE_NOT_FOUND', 'message', 'Queue not found'));
      continue;
    end if;

    -- The cursor names its mode; one from the other mode is refused, never restarted, which
    -- would loop a paging client on its first page. Names may contain '|'.
    v_cursor_at := null;
    v_cursor_name := null;
    if v_after is not null then
      if v_since is null and v_after like 'n|%' then
        v_cursor_name := substr(v_after, 3);
      elsif v_since is not null and v_after ~ '^t\|-?[0-9]{1,19}\|' then
        v_cursor_at := to_timestamp(split_part(v_after, '|', 2)::numeric / 1000000);
        v_cursor_name := substr(v_after, length(split_part(v_after, '|', 2)) + 4);
      else
        v_out := v_out || jsonb_build_array(jsonb_build_object('queue', v_queue, 'error', 'BAD_CURSOR',
          'message', case when v_since is null then 'cursor is not from an enumeration (no since)'
                          else 'cursor is not from a changed-since sweep' end));
        continue;
      end if;
    end if;

    if v_since is null then
      select coalesce(jsonb_agg(jsonb_build_object('name', p.name, 'lastOffset', p.last_offset, 'logStart', p.log_start,
                                                   'lastWriteAt', _iso_us(p.last_write_at)) order by p.name), '[]'),
             count(*)::integer
        into v_rows, v_count
        from (select name, last_offset, log_start, last_write_at from log_partitions
               where queue_id = v_queue_id and (v_cursor_name is null or name > v_cursor_name)
               order by name limit v_limit) p;
    else
      select coalesce(jsonb_agg(jsonb_build_object('name', p.name, 'lastOffset', p.last_offset, 'logStart', p.log_start,
                                                   'lastWriteAt', _iso_us(p.last_write_at)) order by p.last_write_at, p.name), '[]'),
             count(*)::integer
        into v_rows, v_count
        from (select name, last_offset, log_start, last_write_at from log_partitions
               where queue_id = v_queue_id and last_write_at >= v_since
                 and (v_cursor_at is null or (last_write_at, name) > (v_cursor_at, v_cursor_name))
               order by last_write_at, name limit v_limit) p;
    end if;

    v_out := v_out || jsonb_build_array(jsonb_build_object('queue', v_queue, 'partitions', v_rows, 'next',
      case when v_count < v_limit then null
           when v_since is null then 'n|' || (v_rows -> -1 ->> 'name')
           else 't|' || (extract(epoch from (v_rows -> -1 ->> 'lastWriteAt')::timestamptz) * 1000000)::bigint
                || '|' || (v_rows -> -1 ->> 'name') end));
  end loop;

  return jsonb_build_object('safeTime', _iso_us((v_safe ->> 'safeTime')::timestamptz),
                            'safeTimeDegraded', (v_safe -> 'degraded')::boolean,
                            'entries', v_out);
end
$$;
