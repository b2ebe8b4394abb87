-- Message traces (docs/traces.md): free-form events a consumer records against a message, read back
-- by message key or by trace name. message_traces has no FK and stores the queue and partition
-- names at creation, so traces outlive a queue delete and a segment's retention; the retention lane
-- ages them out (docs/retention.md, not here). Every read is filtered by the trace row's own
-- tenant_id, never by a join to queues, for the same reason.

-- trace_create_v1: records one trace against the newest retained, not deleted frame with key
-- (p_partition_id, p_transaction_id), provided the partition belongs to p_tenant.
-- worker_id is the lease id the frame is under for p_consumer_group at p_now: the group's live
-- lease on the partition whose delivered range covers the frame's offset, else null.
-- Returns: {"traceId"} (a UUIDv7). Raises: QMNFM when no such frame is retained in the tenant (a
-- p_partition_id that is not a UUID names none); the route validates every other field first.
-- Concurrency: reads without locks and inserts one row. A concurrent ack or retention delete may
-- land just before or after; the trace then names the lease seen by this statement's snapshot.
-- Clock: clock_timestamp() unless p_now pins it (created_at, the trace id and lease liveness).
-- The signature that took p_partition_id as uuid is dropped so no stray overload remains.
drop function if exists queen.trace_create_v1(text, uuid, text, jsonb, text, text, text[], timestamptz);
create or replace function queen.trace_create_v1(p_tenant text, p_partition_id text, p_transaction_id text,
                                                 p_data jsonb, p_consumer_group text, p_event_type text,
                                                 p_trace_names text[], p_now timestamptz default null)
returns jsonb
language plpgsql volatile
set search_path = queen, pg_catalog
as $$
declare
  v_now timestamptz := coalesce(p_now, clock_timestamp());
  v_pid uuid := case when _is_uuid(p_partition_id) then p_partition_id::uuid end;
  v_part record;
  v_offset bigint;
  v_worker text;
  v_id uuid := _uuid_v7(v_now);
begin
  select * into v_part from _tenant_partition(p_tenant, v_pid);
  if not found then
    raise exception using errcode = 'QMNFM', message = 'message not found';
  end if;
  select f.frame_offset into v_offset from _frames_by_txn(v_pid, p_transaction_id) f limit 1;
  if v_offset is null then
    raise exception using errcode = 'QMNFM', message = 'message not found';
  end if;

  select c.lease_id::text into v_worker
    from log_consumers c
   where c.partition_id = v_pid and c.consumer_group = p_consumer_group
     and c.lease_id is not null and c.lease_expires_at > v_now
     and v_offset between c.lease_from and c.lease_to;

  insert into message_traces (id, tenant_id, queue_name, partition_id, partition_name, transaction_id,
                              frame_offset, consumer_group, event_type, data, trace_names, worker_id, created_at)
  values (v_id, p_tenant, v_part.queue_name, v_pid, v_part.partition_name, p_transaction_id,
          v_offset, p_consumer_group, p_event_type, p_data, coalesce(p_trace_names, '{}'), v_worker, v_now);

  return jsonb_build_object('traceId', v_id);
end
$$;

-- _trace_entry: one trace as every read answers it (Queen's shape, which its clients read:
-- snake_case, ms timestamps).
-- Returns: jsonb. Raises: nothing. IMMUTABLE: a pure function of the row.
create or replace function queen._trace_entry(t queen.message_traces)
returns jsonb
language sql immutable
set search_path = queen, pg_catalog
as $$
  select jsonb_build_object('id', t.id, 'event_type', t.event_type, 'data', t.data,
                            'consumer_group', t.consumer_group, 'worker_id', t.worker_id,
                            'created_at', _iso_ms(t.created_at), 'trace_names', to_jsonb(t.trace_names))
$$;

-- trace_list_v1: every trace of p_tenant recorded against key (p_partition_id, p_transaction_id),
-- oldest first (created_at, then the time-ordered id). Whether the message or its queue still
-- exists does not matter: traces outlive both.
-- Returns: {"traces": [entry…]}, [] for an unknown key. Raises: nothing.
-- Concurrency: a plain read. Clock: none.
create or replace function queen.trace_list_v1(p_tenant text, p_partition_id uuid, p_transaction_id text)
returns jsonb
language sql volatile
set search_path = queen, pg_catalog
as $$
  select jsonb_build_object('traces', coalesce(jsonb_agg(_trace_entry(t) order by t.created_at, t.id), '[]'))
    from message_traces t
   where t.partition_id = p_partition_id and t.transaction_id = p_transaction_id and t.tenant_id = p_tenant
$$;

-- trace_by_name_v1: the traces of p_tenant carrying the name p_name, newest first, one page of
-- p_limit from p_offset (the route clamps both), with the message each was recorded against.
-- message_payload is the frame the trace was written for (by its stored offset, so a later
-- message reusing the key is never shown in its place), while that frame is still retained and
-- not deleted; else null. `enc` tells the route to decrypt it (the database never holds the key).
-- Returns: {"traces": [entry + transaction_id, partition_id, queue_name, partition_name,
-- message_payload, enc], "total"}; total counts every matching trace. Raises: nothing.
-- Cost: the GIN index on trace_names finds the matches; the page reads at most p_limit frames.
-- Concurrency: a plain read; total and the page come from one snapshot. Clock: none.
create or replace function queen.trace_by_name_v1(p_tenant text, p_name text, p_limit int, p_offset bigint)
returns jsonb
language sql volatile
set search_path = queen, pg_catalog
as $$
  with page as (
    select t from message_traces t
     where t.tenant_id = p_tenant and t.trace_names @> array[p_name]
     order by t.created_at desc, t.id desc
     limit p_limit offset p_offset
  ), shaped as (
    select (p.t).created_at, (p.t).id,
           _trace_entry(p.t) || jsonb_build_object(
             'transaction_id', (p.t).transaction_id, 'partition_id', (p.t).partition_id,
             'queue_name', (p.t).queue_name, 'partition_name', (p.t).partition_name,
             'message_payload', f.frame -> 'data',
             'enc', coalesce((f.frame ->> 'enc')::boolean, false)) as entry
      from page p
      left join lateral (
        select fa.frame
          from log_partitions lp
          cross join lateral _log_frame_at(lp.id, (p.t).frame_offset) fa
         where lp.id = (p.t).partition_id
           and (p.t).frame_offset >= lp.log_start
           and fa.frame ->> 'txn' = (p.t).transaction_id
           and not exists (select 1 from log_tombstones tb
                            where tb.partition_id = (p.t).partition_id and tb.frame_offset = (p.t).frame_offset)
      ) f on true
  )
  select jsonb_build_object(
           'traces', coalesce((select jsonb_agg(s.entry order by s.created_at desc, s.id desc) from shaped s), '[]'),
           'total', (select count(*) from message_traces t
                      where t.tenant_id = p_tenant and t.trace_names @> array[p_name]))
$$;

-- trace_names_v1: the distinct trace names of p_tenant, most recently seen first (ties by name),
-- one page of p_limit from p_offset. trace_count counts traces carrying the name, message_count
-- the distinct message keys they were recorded against, last_seen the newest trace's time.
-- Returns: {"trace_names": [{trace_name, trace_count, message_count, last_seen}], "total"}; total
-- counts every distinct name. Raises: nothing. Cost: one aggregate over the tenant's traces, which
-- TRACE_RETENTION_DAYS bounds. Concurrency: a plain read. Clock: none.
create or replace function queen.trace_names_v1(p_tenant text, p_limit int, p_offset bigint)
returns jsonb
language sql volatile
set search_path = queen, pg_catalog
as $$
  with names as (
    select n.name, count(*) as trace_count,
           count(distinct (t.partition_id, t.transaction_id)) as message_count,
           max(t.created_at) as last_seen
      from message_traces t
      cross join lateral unnest(t.trace_names) as n(name)
     where t.tenant_id = p_tenant
     group by n.name
  ), page as (
    select * from names order by last_seen desc, name limit p_limit offset p_offset
  )
  select jsonb_build_object(
           'trace_names', coalesce((select jsonb_agg(jsonb_build_object(
                                      'trace_name', p.name, 'trace_count', p.trace_count,
                                      'message_count', p.message_count, 'last_seen', _iso_ms(p.last_seen))
                                    order by p.last_seen desc, p.name) from page p), '[]'),
           'total', (select count(*) from names))
$$;
