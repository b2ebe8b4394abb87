-- The archive sink (docs/sink.md): its lease, its committed pointer (namespace 'queen.sink' of the
-- key/value store) with the fenced, compare-and-set commit that alone moves it, and its status for
-- the console. A sink copies one queue of one tenant under a name; that triple owns one row of
-- queen.maintenance_leases (the lanes' lease kind), named 'sink:' || the JSON array
-- [tenant, sink, queue] so that no choice of names can make two triples collide. The row's
-- progress holds {tenant, sink, queue} plus the last commit's summary.
-- Concurrency: claim and commit each lock that one row, so two processes of one sink name
-- serialise on it, and only the live holder moves the pointer. Clock: clock_timestamp() unless
-- p_now pins it.

-- _sink_lease_name: the lease row's name for one (tenant, sink, queue).
create or replace function queen._sink_lease_name(p_tenant text, p_sink text, p_queue text)
returns text
language sql immutable
set search_path = queen, pg_catalog
as $$
  select 'sink:' || jsonb_build_array(p_tenant, p_sink, p_queue)::text
$$;

-- sink_lease_claim_v1: takes (or keeps) the sink's lease when it is free, expired, or already
-- held by p_token, creating the row on first use. No due check: a sink runs continuously.
-- Returns: true when p_token holds the lease afterwards. Raises: QM400 for an empty sink or queue.
create or replace function queen.sink_lease_claim_v1(
  p_tenant text,
  p_sink text,
  p_queue text,
  p_token uuid,
  p_ttl interval,
  p_now timestamptz default null
) returns boolean
language plpgsql volatile
set search_path = queen, pg_catalog
as $$
declare
  v_now timestamptz := coalesce(p_now, clock_timestamp());
  v_name text := _sink_lease_name(p_tenant, p_sink, p_queue);
begin
  if coalesce(p_sink, '') = '' or coalesce(p_queue, '') = '' then
    raise exception using errcode = 'QM400', message = 'sink and queue must not be empty';
  end if;
  insert into maintenance_leases (name, progress)
  values (v_name, jsonb_build_object('tenant', p_tenant, 'sink', p_sink, 'queue', p_queue))
  on conflict (name) do nothing;
  update maintenance_leases
     set holder = p_token, acquired_at = case when holder = p_token then acquired_at else v_now end,
         expires_at = v_now + p_ttl, last_started_at = v_now
   where name = v_name
     and (holder is null or holder = p_token or expires_at <= v_now);
  return found;
end
$$;

-- _sink_pointer_key: the key of one sink's committed pointer for one queue in namespace
-- 'queen.sink' of the key/value store.
create or replace function queen._sink_pointer_key(p_sink text, p_queue text)
returns text
language sql immutable
set search_path = queen, pg_catalog
as $$
  select 's3:' || p_sink || ':' || p_queue || ':committed'
$$;

-- sink_pointer_v1: the sink's committed pointer for one queue, as the sink reads it before a window:
-- {"windowEnd": the stored windowEnd or null when it is not a string, "version": the row's version}
-- or SQL null when there is no pointer yet (or only an expired row, which every read of the store
-- treats as absent). Raises nothing. Clock: p_now or clock_timestamp().
create or replace function queen.sink_pointer_v1(p_tenant text, p_sink text, p_queue text, p_now timestamptz default null)
returns jsonb
language sql volatile
set search_path = queen, pg_catalog
as $$
  select jsonb_build_object('windowEnd', case when jsonb_typeof(e.value->'windowEnd') = 'string' then e.value->'windowEnd' end,
                            'version', e.version)
    from kv_entries e
   where e.tenant_id = p_tenant and e.ns = 'queen.sink' and e.key = _sink_pointer_key(p_sink, p_queue)
     and (e.expires_at is null or e.expires_at > coalesce(p_now, clock_timestamp()))
$$;

-- sink_commit_v1: the only writer of the pointer s3:<sink>:<queue>:committed (namespace
-- 'queen.sink' of the key/value store, where clients may read but never write). Writes
-- {"windowEnd": p_window_end} (the text verbatim: the engine names its manifest with the same
-- string), without expiry, under three guards, checked in this order:
--   lease_lost: p_token does not hold a live lease, so a stalled process that lost its lease cannot
--               undo the work of the one that took over;
--   version:    compare-and-set on the row's version: p_expect_version is the version the caller
--               read before writing the window (0: it read no pointer), and any other write since
--               (another commit, an operator's) makes this one stale;
--   behind:     the pointer never moves backwards.
-- Each write stamps a new version from the store's sequence. Renews the lease and merges p_summary
-- into the row's progress (what the console shows); its "frames" is added to the running total
-- framesArchived.
-- Returns: {"committed": bool, "reason": null | "lease_lost" | "version" | "behind", "windowEnd":
-- the pointer after the call, "version": its version after the call (0: none)}. Raises: QM400
-- when p_window_end is not an ISO-8601 instant with a zone.
-- Concurrency: the lease row is locked first (FOR UPDATE), so commits of one sink and queue
-- serialise there and the version read after it is current.
drop function if exists queen.sink_commit_v1(text, text, text, uuid, interval, text, jsonb, timestamptz);
create or replace function queen.sink_commit_v1(
  p_tenant text,
  p_sink text,
  p_queue text,
  p_token uuid,
  p_ttl interval,
  p_window_end text,
  p_summary jsonb,
  p_expect_version bigint,
  p_now timestamptz default null
) returns jsonb
language plpgsql volatile
set search_path = queen, pg_catalog
as $$
declare
  v_now timestamptz := coalesce(p_now, clock_timestamp());
  v_name text := _sink_lease_name(p_tenant, p_sink, p_queue);
  v_key text := _sink_pointer_key(p_sink, p_queue);
  v_lease maintenance_leases;
  v_row kv_entries;
  v_current timestamptz;
  v_end timestamptz;
  v_reason text;
begin
  if p_window_end !~ '^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$' then
    raise exception using errcode = 'QM400', message = 'windowEnd: must be an ISO-8601 instant with a zone';
  end if;
  v_end := p_window_end::timestamptz;
  select * into v_lease from maintenance_leases where name = v_name for update;
  select * into v_row from kv_entries
   where tenant_id = p_tenant and ns = 'queen.sink' and key = v_key and (expires_at is null or expires_at > v_now)
     for update;
  v_current := _kv_committed_end(p_tenant, v_key, v_now);
  if v_lease.holder is distinct from p_token or v_lease.expires_at <= v_now then
    v_reason := 'lease_lost';
  elsif coalesce(v_row.version, 0) <> coalesce(p_expect_version, -1) then
    v_reason := 'version';
  elsif v_current is not null and v_end < v_current then
    v_reason := 'behind';
  end if;
  if v_reason is not null then
    return jsonb_build_object('committed', false, 'reason', v_reason, 'windowEnd', v_row.value->'windowEnd',
                              'version', coalesce(v_row.version, 0));
  end if;
  insert into kv_entries (tenant_id, ns, key, value, version, expires_at, updated_at)
  values (p_tenant, 'queen.sink', v_key, jsonb_build_object('windowEnd', p_window_end), nextval('kv_version_seq'), null, v_now)
  on conflict (tenant_id, ns, key) do update
     set value = excluded.value, version = excluded.version, expires_at = null, updated_at = excluded.updated_at
  returning * into v_row;
  update maintenance_leases
     set expires_at = v_now + p_ttl,
         progress = coalesce(progress, '{}'::jsonb) || (coalesce(p_summary, '{}'::jsonb) - 'frames')
                    || jsonb_build_object('tenant', p_tenant, 'sink', p_sink, 'queue', p_queue, 'committedAt', _iso_ms(v_now),
                                          'framesArchived', coalesce((progress->>'framesArchived')::bigint, 0)
                                                            + coalesce((p_summary->>'frames')::bigint, 0))
   where name = v_name;
  return jsonb_build_object('committed', true, 'reason', null, 'windowEnd', p_window_end, 'version', v_row.version);
end
$$;

-- sink_status_v1: every sink that has run for tenant p_tenant, and every queue of the tenant whose
-- retentionSinkHold names a sink that never ran (the hold then protects nothing but the cap).
-- Per sink: its pointer, lag in frames (frames created at or after the pointer, summed from
-- segments, which share one created_at each) and in seconds (now minus the oldest such frame), the
-- last commit's summary (format, compression, layout, last window with rows, last object), whether a live process holds the lease, and whether the queue's hold names
-- this sink and keeps frames its age cutoff would delete (floor below now - retentionSeconds).
-- Returns: {"sinks": [...]} ordered by queue, sink. Raises nothing. Clock: p_now or clock_timestamp().
create or replace function queen.sink_status_v1(p_tenant text, p_now timestamptz default null)
returns jsonb
language plpgsql volatile
set search_path = queen, pg_catalog
as $$
declare
  v_now timestamptz := coalesce(p_now, clock_timestamp());
  v_out jsonb := '[]'::jsonb;
  r record;
  v_end timestamptz;
  v_frames bigint;
  v_oldest timestamptz;
  v_floor timestamptz;
begin
  for r in
    with runs as (
      select l.progress->>'sink' as sink, l.progress->>'queue' as queue, l.progress, l.holder, l.expires_at
        from maintenance_leases l
       where l.name like 'sink:%' and l.progress->>'tenant' = p_tenant
    ), holds as (
      select q.retention_sink_hold as sink, q.name as queue
        from queues q
       where q.tenant_id = p_tenant and q.retention_sink_hold <> ''
    )
    select coalesce(runs.sink, holds.sink) as sink, coalesce(runs.queue, holds.queue) as queue,
           runs.progress, runs.holder, runs.expires_at, runs.sink is not null as ran
      from runs full join holds on holds.sink = runs.sink and holds.queue = runs.queue
     order by 2, 1
  loop
    v_end := _kv_committed_end(p_tenant, _sink_pointer_key(r.sink, r.queue), v_now);
    select coalesce(sum(s.frame_count), 0), min(s.created_at) into v_frames, v_oldest
      from queues q
      join log_partitions p on p.queue_id = q.id
      join log_segments s on s.partition_id = p.id
     where q.tenant_id = p_tenant and q.name = r.queue
       and (v_end is null or s.created_at >= v_end);
    select _log_hold_floor(q.tenant_id, q.name, q.retention_sink_hold, q.retention_sink_hold_max_seconds, v_now)
      into v_floor
      from queues q
     where q.tenant_id = p_tenant and q.name = r.queue and q.retention_sink_hold = r.sink
       and q.retention_enabled and q.retention_seconds > 0
       and _log_hold_floor(q.tenant_id, q.name, q.retention_sink_hold, q.retention_sink_hold_max_seconds, v_now)
           < v_now - make_interval(secs => q.retention_seconds);
    v_out := v_out || jsonb_build_array(jsonb_build_object(
      'sink', r.sink,
      'queue', r.queue,
      'windowEnd', case when v_end is null then null else _iso_ms(v_end) end,
      'lagFrames', v_frames,
      'lagSeconds', case when v_oldest is null then 0 else greatest(0, extract(epoch from v_now - v_oldest))::float8 end,
      'lastObject', r.progress->'lastObject',
      'format', r.progress->'format',
      'compression', r.progress->'compression',
      'layout', r.progress->'layout',
      'lastWindow', r.progress->'lastWindow',
      'committedAt', r.progress->'committedAt',
      'framesArchived', coalesce((r.progress->>'framesArchived')::bigint, 0),
      'running', r.holder is not null and r.expires_at > v_now,
      'ran', r.ran,
      'holdNamesSink', exists (select 1 from queues q where q.tenant_id = p_tenant and q.name = r.queue and q.retention_sink_hold = r.sink),
      'holdingRetention', v_floor is not null));
  end loop;
  return jsonb_build_object('sinks', v_out);
end
$$;
