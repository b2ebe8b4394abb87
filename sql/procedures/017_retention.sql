-- Retention: delete-and-advance, the sink-hold floor (with _kv_committed_end, the reader of the
-- sink's committed pointer, which 027_sink.sql calls too), the partition walk the retention and
-- eviction lanes share, housekeeping of traces, metrics and DLQ rows, and the retention lane's step.
--
-- Every deletion of segments goes through _log_delete_and_advance: a prefix of one partition, under
-- that partition's allocator lock taken with SKIP LOCKED (a partition mid-push is taken on the next
-- pass, a step never waits on a push), then log_start moves to the first surviving offset. Time and
-- offset increase together (design decision 9), so each cutoff predicate is prefix-closed and
-- log_start only moves forward. Cursors below log_start are left alone: pop and ack already resume
-- at the next existing offset (design decision 11).

-- _kv_committed_end: the sink's committed window end read from key p_key of namespace
-- 'queen.sink' in the key/value store (tenant p_tenant), read strictly. The namespace is reserved
-- to the broker (clients cannot write it), but the value is still checked: it must be exactly
-- {"windowEnd": "<ISO-8601 instant>"}: an object with that one key, a string with a date, a time
-- and a zone designator (an instant without a zone is ambiguous), that PostgreSQL parses, and no
-- later than p_now + 60 s.
-- Returns: the instant, or NULL for a missing, malformed or unreadable value (never raises: the
-- pointer is data, and a bad one must only degrade its own queue to the cap-only floor). An expired
-- row is absent, as every read of the store treats it (the sink writes its pointer without expiry).
create or replace function queen._kv_committed_end(p_tenant text, p_key text, p_now timestamptz)
returns timestamptz
language plpgsql stable
set search_path = queen, pg_catalog
as $$
declare
  v jsonb;
  v_text text;
  v_at timestamptz;
begin
  select e.value into v from kv_entries e
   where e.tenant_id = p_tenant and e.ns = 'queen.sink' and e.key = p_key
     and (e.expires_at is null or e.expires_at > p_now);
  if v is null or jsonb_typeof(v) <> 'object'
     or (select array_agg(k) from jsonb_object_keys(v) k) is distinct from array['windowEnd']
     or jsonb_typeof(v->'windowEnd') <> 'string' then
    return null;
  end if;
  v_text := v->>'windowEnd';
  if v_text !~ '^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}(:?\d{2})?)$' then
    return null;
  end if;
  v_at := v_text::timestamptz;
  if v_at > p_now + interval '60 seconds' then
    return null;
  end if;
  return v_at;
exception when others then
  return null;  -- e.g. month 13: unparsable is malformed, never an error
end
$$;

-- _log_hold_floor: the sink hold's floor for one queue (design decision 31):
--   GREATEST(committed window end - 60 s, p_now - p_max_seconds)
-- GREATEST ignores a NULL pointer, so a missing or malformed one leaves the cap alone.
-- Returns: NULL when the queue has no hold (p_hold = ''), else the floor; never raises.
create or replace function queen._log_hold_floor(p_tenant text, p_queue text, p_hold text, p_max_seconds integer,
                                                 p_now timestamptz)
returns timestamptz
language plpgsql stable
set search_path = queen, pg_catalog
as $$
begin
  if coalesce(p_hold, '') = '' then
    return null;
  end if;
  return greatest(_kv_committed_end(p_tenant, _sink_pointer_key(p_hold, p_queue), p_now) - interval '60 seconds',
                  p_now - make_interval(secs => p_max_seconds));
end
$$;

-- _log_delete_and_advance: deletes up to p_max_segments of the oldest segments of partition p_pid
-- that match either cutoff (design decision 11), then advances log_start to the first surviving
-- offset and drops tombstones below it (they name frames that no longer exist).
--   age:       created_at < p_age_cutoff (NULL: never)
--   completed: created_at < p_done_cutoff (NULL: never) and last_offset below the minimum
--              effective cursor of the queue's registered groups on this partition; NULL, so
--              nothing qualifies, when the queue has no registered group or one lacks a row here.
-- The cursors are read after the allocator lock, so log_start is current; they move only forward
-- (except by seek), so a stale read can only keep more.
-- Returns: segments deleted, or -1 when the partition is locked (by a push or another step).
-- Concurrency: FOR NO KEY UPDATE SKIP LOCKED on the partition, held until the step commits.
create or replace function queen._log_delete_and_advance(p_pid uuid, p_qid uuid, p_age_cutoff timestamptz,
                                                         p_done_cutoff timestamptz, p_max_segments integer)
returns integer
language plpgsql volatile
set search_path = queen, pg_catalog
as $$
declare
  v_log_start bigint;
  v_done_below bigint;
  v_deleted integer;
begin
  select log_start into v_log_start from log_partitions where id = p_pid for no key update skip locked;
  if not found then
    return -1;
  end if;
  if p_done_cutoff is not null then
    select case when count(*) = 0 or count(c.partition_id) < count(*) then null
                else min(greatest(c.committed_offset, v_log_start)) end
      into v_done_below
      from consumer_groups g
      left join log_consumers c on c.partition_id = p_pid and c.consumer_group = g.consumer_group
     where g.queue_id = p_qid;
  end if;

  delete from log_segments s
   where s.partition_id = p_pid
     and s.base_offset in (select x.base_offset from log_segments x
                            where x.partition_id = p_pid
                              and (x.created_at < p_age_cutoff
                                   or (x.created_at < p_done_cutoff and x.last_offset < v_done_below))
                            order by x.base_offset
                            limit greatest(p_max_segments, 1));
  get diagnostics v_deleted = row_count;
  if v_deleted > 0 then
    update log_partitions p
       set log_start = greatest(p.log_start, coalesce((select min(s.base_offset) from log_segments s where s.partition_id = p_pid),
                                                      p.last_offset + 1))
     where p.id = p_pid
    returning log_start into v_log_start;
    delete from log_tombstones where partition_id = p_pid and frame_offset < v_log_start;
  end if;
  return v_deleted;
end
$$;

-- _log_trim_step: one bounded step of the walk over partitions, in (queue_id, id) order, that the
-- retention lane (p_mode 'retention') and the eviction lane (p_mode 'eviction') share.
--   retention: queues with retention_enabled; age cutoff now - retention_seconds, completed cutoff
--              now - completed_retention_seconds (each only when > 0), both capped by the sink
--              hold's floor when one is set: cutoff := LEAST(cutoff, floor) (design decision 31).
--   eviction:  queues with max_wait_time_seconds > 0, whatever retention_enabled says; age cutoff
--              now - max_wait_time_seconds; no completed cutoff, no hold, groups and leases ignored
--              (data loss by design: dropping stale work is what the option is for).
-- p_next is '<queue id>/<partition id>', the last partition finished (NULL: from the start).
-- p_limit bounds both the segments deleted and the partitions visited by one step.
-- Returns: {"processed": <segments deleted>, "next": <resume key> | null when the walk is done}.
-- Raises: nothing of its own. Idempotent: a repeated step finds nothing more to delete.
create or replace function queen._log_trim_step(p_mode text, p_next text, p_limit integer, p_now timestamptz)
returns jsonb
language plpgsql volatile
set search_path = queen, pg_catalog
as $$
declare
  v_now timestamptz := coalesce(p_now, clock_timestamp());
  v_zero constant uuid := '00000000-0000-0000-0000-000000000000'::uuid;
  v_after_q uuid := v_zero;
  v_after_p uuid := v_zero;
  v_segments_left integer := greatest(coalesce(p_limit, 1), 1);
  v_visits_left integer := greatest(coalesce(p_limit, 1), 1);
  v_processed integer := 0;
  v_qid uuid;
  v_age timestamptz;
  v_done timestamptz;
  v_floor timestamptz;
  v_n integer;
  r record;
begin
  if p_next ~ '^[0-9a-f-]{36}/[0-9a-f-]{36}$' and _is_uuid(split_part(p_next, '/', 1)) and _is_uuid(split_part(p_next, '/', 2)) then
    v_after_q := split_part(p_next, '/', 1)::uuid;
    v_after_p := split_part(p_next, '/', 2)::uuid;
  end if;

  for r in
    select p.id as pid, q.id as qid, q.tenant_id, q.name, q.retention_seconds, q.completed_retention_seconds,
           q.max_wait_time_seconds, q.retention_sink_hold, q.retention_sink_hold_max_seconds
      from log_partitions p
      join queues q on q.id = p.queue_id
     where (p.queue_id, p.id) > (v_after_q, v_after_p)
       and case when p_mode = 'eviction' then q.max_wait_time_seconds > 0
                else q.retention_enabled and (q.retention_seconds > 0 or q.completed_retention_seconds > 0) end
     order by p.queue_id, p.id
  loop
    if v_visits_left = 0 then
      return jsonb_build_object('processed', v_processed, 'next', v_after_q || '/' || v_after_p);
    end if;
    v_visits_left := v_visits_left - 1;

    if r.qid is distinct from v_qid then
      v_qid := r.qid;
      if p_mode = 'eviction' then
        v_age := v_now - make_interval(secs => r.max_wait_time_seconds);
        v_done := null;
      else
        v_age := case when r.retention_seconds > 0 then v_now - make_interval(secs => r.retention_seconds) end;
        v_done := case when r.completed_retention_seconds > 0 then v_now - make_interval(secs => r.completed_retention_seconds) end;
        v_floor := _log_hold_floor(r.tenant_id, r.name, r.retention_sink_hold, r.retention_sink_hold_max_seconds, v_now);
        -- LEAST ignores NULLs, so a disabled cutoff must stay NULL rather than become the floor.
        if v_floor is not null then
          v_age := case when v_age is not null then least(v_age, v_floor) end;
          v_done := case when v_done is not null then least(v_done, v_floor) end;
        end if;
      end if;
    end if;

    v_n := _log_delete_and_advance(r.pid, r.qid, v_age, v_done, v_segments_left);
    if v_n > 0 then
      v_processed := v_processed + v_n;
      v_segments_left := v_segments_left - v_n;
      if v_segments_left <= 0 then
        -- The budget ran out inside this partition: the next step starts with it again.
        return jsonb_build_object('processed', v_processed, 'next', v_after_q || '/' || v_after_p);
      end if;
    end if;
    v_after_q := r.qid;
    v_after_p := r.pid;
  end loop;
  return jsonb_build_object('processed', v_processed, 'next', null);
end
$$;

-- _log_housekeeping_step: ages out, at most p_limit rows per table, message_traces older than
-- p_trace_days, queue_metrics buckets older than p_metrics_days and log_dlq rows that failed more
-- than p_dlq_days ago. A days value of 0 keeps that table's rows (DLQ_RETENTION_DAYS
-- defaults to 0: kept until the queue is deleted). The sink hold does not apply: none of these
-- are segments.
-- Returns: {"processed": <rows deleted>, "full": <some table had more than p_limit to delete>}.
create or replace function queen._log_housekeeping_step(p_limit integer, p_trace_days integer, p_metrics_days integer,
                                                        p_dlq_days integer, p_now timestamptz)
returns jsonb
language plpgsql volatile
set search_path = queen, pg_catalog
as $$
declare
  v_limit integer := greatest(coalesce(p_limit, 1), 1);
  v_n integer;
  v_total integer := 0;
  v_full boolean := false;
begin
  if p_trace_days > 0 then
    delete from message_traces where id in (
      select id from message_traces where created_at < p_now - make_interval(days => p_trace_days) limit v_limit);
    get diagnostics v_n = row_count;
    v_total := v_total + v_n;
    v_full := v_full or v_n >= v_limit;
  end if;
  if p_metrics_days > 0 then
    delete from queue_metrics m using (
      select queue_id, bucket from queue_metrics where bucket < p_now - make_interval(days => p_metrics_days) limit v_limit) d
     where m.queue_id = d.queue_id and m.bucket = d.bucket;
    get diagnostics v_n = row_count;
    v_total := v_total + v_n;
    v_full := v_full or v_n >= v_limit;
  end if;
  if p_dlq_days > 0 then
    delete from log_dlq where id in (
      select id from log_dlq where failed_at < p_now - make_interval(days => p_dlq_days) limit v_limit);
    get diagnostics v_n = row_count;
    v_total := v_total + v_n;
    v_full := v_full or v_n >= v_limit;
  end if;
  return jsonb_build_object('processed', v_total, 'full', v_full);
end
$$;

-- log_retention_step_v1: one bounded step of the retention lane (docs/retention.md). A pass walks
-- the retention-enabled queues' partitions (_log_trim_step, sink hold included), then housekeeping
-- (next = 'housekeeping') until a housekeeping step comes back short.
-- Returns: {"processed": <segments or rows deleted>, "next": <resume point> | null at pass end}.
-- Raises: nothing of its own; a lock wait over 1 s (a backstop: partition locks are SKIP LOCKED)
-- raises 55P03. Concurrency: two steps in parallel never delete the same segment (each partition
-- under its allocator lock, SKIP LOCKED); idempotent. Clock: clock_timestamp() unless p_now.
create or replace function queen.log_retention_step_v1(
  p_next text default null,
  p_limit integer default 1000,
  p_trace_days integer default 30,
  p_metrics_days integer default 90,
  p_dlq_days integer default 0,
  p_now timestamptz default null
) returns jsonb
language plpgsql volatile
set search_path = queen, pg_catalog
set lock_timeout = '1s'
as $$
declare
  v_now timestamptz := coalesce(p_now, clock_timestamp());
  v jsonb;
begin
  if p_next = 'housekeeping' then
    v := _log_housekeeping_step(p_limit, p_trace_days, p_metrics_days, p_dlq_days, v_now);
    return jsonb_build_object('processed', v->'processed',
                              'next', case when (v->>'full')::boolean then 'housekeeping' end);
  end if;
  v := _log_trim_step('retention', p_next, p_limit, v_now);
  if v->>'next' is null then
    return jsonb_set(v, '{next}', '"housekeeping"');
  end if;
  return v;
end
$$;
