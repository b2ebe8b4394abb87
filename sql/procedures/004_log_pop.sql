-- _log_pop_missing_cursors: inserts the group's missing cursor rows on the in-scope partitions that
-- hold data (one partition when p_pid is set), initialised by the group's rule (design decision 15), in
-- partition order (docs/design.md#4). Wildcard scope applies the caught-up filter as the candidate
-- walk does. Called by log_pop_v1 before it holds any cursor lock. plpgsql so its plan is kept
-- (see _log_consumer_write). Returns: nothing.
create or replace function queen._log_pop_missing_cursors(p_queue_ids uuid[], p_pid uuid, p_group text)
returns void
language plpgsql volatile
set search_path = queen, pg_catalog
as $$
begin
  insert into log_consumers (partition_id, consumer_group, committed_offset)
  select p.id, p_group, _log_initial_cursor(p.id, p.log_start, p.last_offset, g.subscription_mode, g.subscription_at)
    from log_partitions p
    join consumer_groups g on g.queue_id = p.queue_id and g.consumer_group = p_group
   where p.queue_id = any (p_queue_ids) and (p_pid is null or p.id = p_pid)
     and p.last_offset >= p.log_start
     and (p_pid is not null or g.caught_up_at is null or p.last_write_at >= g.caught_up_at - interval '2 minutes')
     and not exists (select 1 from log_consumers c where c.partition_id = p.id and c.consumer_group = p_group)
   order by p.id
  on conflict do nothing;
end
$$;

-- _log_pop_cursor_bounded: creates one partition's missing cursor row for a pop that already holds
-- other cursor locks, and locks it. The insert may wait for a concurrent inserter of the same row;
-- lock_timeout bounds that wait to 20 ms inside a subtransaction, so it can never close a deadlock
-- (the reason inserts are ordered, docs/design.md#4). Returns: the locked row, or a row of nulls when the
-- insert timed out or another transaction holds the row (the caller skips the partition).
create or replace function queen._log_pop_cursor_bounded(p_queue_ids uuid[], p_pid uuid, p_group text)
returns queen.log_consumers
language plpgsql volatile
set search_path = queen, pg_catalog
as $$
declare
  v_c log_consumers;
  v_timeout text := current_setting('lock_timeout');
begin
  begin
    perform set_config('lock_timeout', '20ms', true);
    perform _log_pop_missing_cursors(p_queue_ids, p_pid, p_group);
    perform set_config('lock_timeout', v_timeout, true);
  exception when lock_not_available then
    return v_c;  -- the subtransaction's rollback restored lock_timeout
  end;
  select * into v_c from log_consumers where partition_id = p_pid and consumer_group = p_group for update skip locked;
  return v_c;
end
$$;

-- _log_pop_hold_queues: the rows of a queue-scoped pop's queues FOR KEY SHARE (rank 1 of the lock
-- order atop 004_log_cursor.sql, as _ensure_queue takes it), so that a concurrent delete_queue_v1 or
-- configure waits for the pop. Returns false when one of them was deleted since the pop looked it up.
-- plpgsql so its plan is kept: as a SQL function (its SET clause forbids inlining) it was parsed and
-- planned on every pop, 110 µs of wall time a call at 2 400 msg/s against 22 µs for push's
-- identical statement in plpgsql (issue #33).
create or replace function queen._log_pop_hold_queues(p_queue_ids uuid[])
returns boolean
language plpgsql volatile
set search_path = queen, pg_catalog
as $$
begin
  return (select count(*) = cardinality(p_queue_ids)
            from (select 1 from queues where id = any (p_queue_ids) order by id for key share) held);
end
$$;

-- _log_pop_group_conflates: whether the group's stored policy conflates on the pop's queues (true when
-- it does on any), so an answer that claimed nothing can still say which policy applies. Null in
-- queue mode, which has no policy, and when no group row is in scope.
create or replace function queen._log_pop_group_conflates(p_queue_ids uuid[], p_group text)
returns boolean
language sql stable
set search_path = queen, pg_catalog
as $$
  select case when p_group <> '__QUEUE_MODE__' then
           (select bool_or(g.delivery = 'conflate') from consumer_groups g
             where g.queue_id = any (p_queue_ids) and g.consumer_group = p_group) end
$$;

-- log_pop_v1: every pop route (design decision 12). A pop leases a contiguous offset range of whole
-- partitions for one (partition, group); it never sleeps (long-polls wait in the route, 5.8).
--
-- p_request: {queue, partition?} or {namespace?, task?}; group ('' or absent: __QUEUE_MODE__);
--   batch [1, 10000]; partitions [1, 1000] (wildcard only); autoAck; subscriptionMode 'all'|'new'|
--   'timestamp' with subscriptionFrom (an ISO instant) for 'timestamp'; delivery 'all'|'conflate' (a
--   named group's first contact only); maxBytes (POP_MAX_BYTES); leaseSeconds (> 0: this claim's
--   lease instead of the queue's leaseTime); autopilot {batch, partitions, waiters, apply} (the knobs
--   the client left to the broker, the other parked pops of the group, and whether to act or only
--   report: docs/pop-autopilot.md); conflationAsked (answer `conflation` even when nothing is claimed).
-- Returns {claims:[…], leaseId, consumerGroup, partitionsClaimed, minPopWaitMs, queue, partition,
--   partitionId, windowBufferActive, paused, conflation, autopilot}. conflation: whether the group's
--   stored policy conflates (null when unknown: queue mode, or no group row in scope); autopilot: the
--   sizing chosen {partitions, batch, ready, backlog, applied}, null when none was asked or possible. Each claim is {queue, partition, partitionId, retryOffset,
--   retryCount, attemptFrom, attempts, offsets:[…], frames:[…], segments:[[baseOffset, createdAt (µs)], …]}: frames as stored
--   (design decision 9) with their offsets, each segment's createdAt once. src/db/procedures.ts expands the
--   claims into the wire's messages {queue, partition, partitionId, offset, id, transactionId,
--   traceId, producerSub, createdAt, enc, data, leaseId, consumerGroup, retryCount}.
-- Raises QM400 for an unparsable subscription instant.
-- Concurrency: queue, group and missing cursor rows are created before any row lock (cursor rows in
-- partition-id order). A queue-scoped pop holds its queue row FOR KEY SHARE from before its first
-- cursor lock or insert to its commit: at entry when it must create the queue or fix the group's
-- subscription, otherwise once the walk meets its first candidate, so a pop that finds nothing takes
-- no lock and writes nothing (no transaction id, no WAL to flush at commit: long polls re-check
-- often, issue #33). Candidate cursor rows are then locked FOR UPDATE SKIP LOCKED, so pops never
-- wait and two pops of one group can never lease one partition. Candidates are read
-- from a random pivot into a bounded window and served least recently claimed first, so no partition
-- starves (the walk, below). Wildcard scans skip partitions idle since before the group's caught-up
-- watermark; anything that moves a cursor
-- back (seek, subscription change) must clear consumer_groups.caught_up_at.
-- An expired lease with unsettled frames is reclaimed here and counts one failed attempt against the
-- first unsettled frame ("Lease expired"), which may dead-letter or drop it (design decision 12), and one
-- delivery attempt against each unsettled frame of the round (its message's retryCount).
-- A conflating group (consumer_groups.delivery = 'conflate', design decision 19) leases [c, vh − 1] of
-- each partition but delivers only the frame at vh − 1, so `batch` counts partitions; its expiries
-- are charged to lease_to, and a newer frame restarts the count (design decision 19).
-- Clock: clock_timestamp() once at entry, unless p_now pins it.
create or replace function queen.log_pop_v1(p_tenant text, p_request jsonb, p_now timestamptz default null)
returns jsonb
language plpgsql volatile
set search_path = queen, pg_catalog
-- Generic plans: the walk below was otherwise planned again on most calls, a tenth of a one-message
-- pop's CPU (issue #33). Its id bounds (v_id_min, v_id_max) keep a partition-scoped pop an index
-- probe under a generic plan.
set plan_cache_mode = force_generic_plan
as $$
declare
  v_now timestamptz := coalesce(p_now, clock_timestamp());
  v_group text := coalesce(nullif(p_request->>'group', ''), '__QUEUE_MODE__');
  v_queue text := p_request->>'queue';
  v_partition text := nullif(p_request->>'partition', '');
  v_ns text := nullif(p_request->>'namespace', '');
  v_task text := nullif(p_request->>'task', '');
  v_auto boolean := coalesce((p_request->>'autoAck')::boolean, false);
  v_mode text := coalesce(nullif(p_request->>'subscriptionMode', ''), 'all');
  v_delivery text := case when p_request->>'delivery' = 'conflate' then 'conflate' else 'all' end;
  v_sub_at timestamptz;
  v_frames_left integer := least(greatest(coalesce((p_request->>'batch')::integer, 1), 1), 10000);
  v_parts_left integer;
  v_bytes_left bigint := greatest(coalesce((p_request->>'maxBytes')::bigint, 8388608), 1);
  v_queue_ids uuid[];
  v_pid uuid;
  v_pivot uuid := gen_random_uuid();
  -- The id range the walk covers: every id, or the one partition of a partition-scoped pop. Bounds
  -- rather than "v_pid is null or p.id = v_pid", which a generic plan can only check row by row.
  v_id_min uuid := '00000000-0000-0000-0000-000000000000'::uuid;
  v_id_max uuid := 'ffffffff-ffff-ffff-ffff-ffffffffffff'::uuid;
  v_lease uuid := _uuid_v7(v_now);
  v_claims jsonb := '[]'::jsonb;
  v_claimed integer := 0;
  v_first_queue text;
  v_first_partition text;
  v_first_pid uuid;
  v_min_wait integer := 0;
  v_wb_active boolean := false;
  r record;
  v_c log_consumers;
  v_dirty boolean;
  v_vh bigint;
  v_lo bigint;
  v_hi bigint;
  v_part jsonb;
  v_from bigint;
  v_to bigint;
  v_n integer;
  v_dead bigint;
  v_bytes bigint;
  v_secs integer;
  v_locked boolean := false;
  v_qid uuid;
  v_steady boolean;
  v_held boolean := false;  -- a queue-scoped pop holds its queue row (see Concurrency above)
  v_whole boolean;
  v_answer jsonb;
  v_lease_secs integer := nullif(greatest(coalesce((p_request->>'leaseSeconds')::integer, 0), 0), 0);
  v_ap jsonb := p_request->'autopilot';
  v_autopilot jsonb;
  v_sized boolean := false;
  v_share integer;
  v_ap_parts integer;
  v_ap_batch integer;
  v_conflation boolean;
begin
  if (select value from system_state where key = 'pop_maintenance') = 'true'::jsonb then
    return jsonb_build_object('claims', '[]'::jsonb, 'leaseId', null, 'consumerGroup', v_group, 'partitionsClaimed', 0,
                              'minPopWaitMs', 0, 'paused', true, 'windowBufferActive', false);
  end if;

  if v_group = '__QUEUE_MODE__' then
    v_mode := 'all';  -- queue mode always reads from the log start
    v_delivery := 'all';  -- and delivery applies to named groups only (design decision 19)
  elsif v_mode = 'timestamp' then
    begin
      v_sub_at := (p_request->>'subscriptionFrom')::timestamptz;
    exception when others then
      raise exception using errcode = 'QM400', message = 'subscriptionFrom must be now or an ISO-8601 timestamp';
    end;
    if v_sub_at is null then
      raise exception using errcode = 'QM400', message = 'subscriptionFrom must be now or an ISO-8601 timestamp';
    end if;
  elsif v_mode = 'new' then
    v_sub_at := v_now;
  else
    v_mode := 'all';
  end if;

  if v_queue is not null then
    -- Steady state: the queue exists and the group's subscription is fixed, so first contact below
    -- would write nothing, and the queue row is held only once there is something to claim.
    select q.id, g.subscription_mode is not null into v_qid, v_steady
      from queues q
      left join consumer_groups g on g.queue_id = q.id and g.consumer_group = v_group
     where q.tenant_id = p_tenant and q.name = v_queue;
    if coalesce(v_steady, false) then
      v_queue_ids := array[v_qid];
    else
      -- A group may subscribe before the first push: the queue row exists from the first pop (design decisions 28, 30).
      v_queue_ids := array[_ensure_queue(p_tenant, v_queue)];
      v_held := true;
    end if;
    if v_partition is not null then
      -- Pop never creates partitions; an unknown one answers empty, but only after first contact
      -- below has fixed the group's subscription (a 'new' group must not start at a later pop).
      select id into v_pid from log_partitions where queue_id = v_queue_ids[1] and name = v_partition;
    end if;
  else
    select array_agg(id order by id) into v_queue_ids
      from queues
     where tenant_id = p_tenant and (v_ns is null or namespace = v_ns) and (v_task is null or task = v_task);
    if v_queue_ids is null then
      return jsonb_build_object('claims', '[]'::jsonb, 'leaseId', null, 'consumerGroup', v_group, 'partitionsClaimed', 0,
                                'minPopWaitMs', 0, 'paused', false, 'windowBufferActive', false);
    end if;
  end if;
  v_parts_left := case when v_pid is null then least(greatest(coalesce((p_request->>'partitions')::integer, 1), 1), 1000) else 1 end;
  select coalesce(max(min_pop_wait_time), 0) into v_min_wait from queues where id = any (v_queue_ids);

  -- First contact fixes the subscription and the delivery policy. A row written without a
  -- mode, by the delivery route (design decision 20) or a seek, takes the mode now; its delivery becomes 'conflate'
  -- when this pop asks for it, and otherwise keeps what the route stored.
  if not coalesce(v_steady, false) then
    insert into consumer_groups (queue_id, consumer_group, subscription_mode, subscription_at, delivery)
    select qid, v_group, v_mode, v_sub_at, v_delivery from unnest(v_queue_ids) qid order by qid
    on conflict (queue_id, consumer_group) do nothing;
    update consumer_groups
       set subscription_mode = v_mode, subscription_at = v_sub_at,
           delivery = case when v_delivery = 'conflate' then 'conflate' else delivery end
     where queue_id = any (v_queue_ids) and consumer_group = v_group and subscription_mode is null;
  end if;

  if v_partition is not null and v_pid is null then
    return jsonb_build_object('claims', '[]'::jsonb, 'leaseId', null, 'consumerGroup', v_group, 'partitionsClaimed', 0,
                              'minPopWaitMs', v_min_wait, 'paused', false, 'windowBufferActive', false,
                              'conflation', case when p_request ? 'conflationAsked' then _log_pop_group_conflates(v_queue_ids, v_group) end);
  end if;

  -- Missing cursor rows are created already initialised by the group's rule (design decisions 15, 16).
  -- A specific-partition pop creates its one row here. A wildcard or discovery pop creates them only
  -- when its candidate walk below meets a partition without one: anti-joining every partition of the
  -- scope on every pop cost 60-120 ms at 10 001 partitions while nothing was missing (issue #9).
  if v_pid is not null and not exists (select 1 from log_consumers where partition_id = v_pid and consumer_group = v_group) then
    if not v_held then
      if not _log_pop_hold_queues(v_queue_ids) then
        return log_pop_v1(p_tenant, p_request, p_now);  -- deleted meanwhile: start again, as a first pop
      end if;
      v_held := true;
    end if;
    perform _log_pop_missing_cursors(v_queue_ids, v_pid, v_group);
  end if;

  if v_pid is not null then
    v_pivot := v_pid;
    v_id_min := v_pid;
    v_id_max := v_pid;
    select (q.window_buffer > 0 and p.head_at > v_now - make_interval(secs => q.window_buffer)) into v_wb_active
      from log_partitions p join queues q on q.id = p.queue_id where p.id = v_pid;
  end if;

  -- The walk reads a window of ready partitions lazily from the pivot (a primary-key order walk that
  -- stops at the window), then serves them least recently claimed first: a saturated partition waits
  -- at most one rotation of the window's others, whatever the id gaps. Walking from the pivot alone
  -- chose each partition in proportion to the random id gap before it and starved the one behind the
  -- smallest gap (issue #33). Ready partitions beyond the window are left to later pops, which start
  -- at another pivot.
  for r in
    -- ready and backlog: the window's ready partitions and their unread frames, autopilot's signals.
    select w.*, count(*) over () as ready, sum(w.pending) over () as backlog from (
    select ab.*, row_number() over () as walked from (
    select * from (
      select p.id as pid, p.name as pname, p.log_start, p.last_offset, q.name as qname, q.lease_time, q.retry_limit,
             (q.dead_letter_queue or q.dlq_after_max_retries) as dlq_on, q.delayed_processing,
             (g.consumer_group <> '__QUEUE_MODE__' and g.delivery = 'conflate') as conflate,
             c.partition_id is not null as has_cursor, c.claimed_at,
             p.last_offset + 1 - greatest(coalesce(c.committed_offset, p.log_start), p.log_start) as pending
        from log_partitions p
        join queues q on q.id = p.queue_id
        join consumer_groups g on g.queue_id = p.queue_id and g.consumer_group = v_group
        -- The cursor row is a primary-key probe per partition walked (LATERAL ... LIMIT 1), so the walk
        -- stays lazy and stops with the budgets; a partition without one is a candidate (its data is
        -- unread by this group) and gets its row inside the loop.
        left join lateral (select c1.partition_id, c1.committed_offset, c1.lease_id, c1.lease_expires_at, c1.claimed_at
                             from log_consumers c1
                            where c1.partition_id = p.id and c1.consumer_group = v_group limit 1) c on true
       where p.queue_id = any (v_queue_ids) and p.id >= v_pivot and p.id <= v_id_max
         and p.last_offset >= greatest(coalesce(c.committed_offset, p.log_start), p.log_start)
         and (c.lease_id is null or c.lease_expires_at <= v_now)
         and (q.window_buffer = 0 or p.head_at <= v_now - make_interval(secs => q.window_buffer))
         and (v_pid is not null or g.caught_up_at is null or p.last_write_at >= g.caught_up_at - interval '2 minutes')
    ) a
    union all
    select * from (
      select p.id, p.name, p.log_start, p.last_offset, q.name, q.lease_time, q.retry_limit,
             (q.dead_letter_queue or q.dlq_after_max_retries), q.delayed_processing,
             (g.consumer_group <> '__QUEUE_MODE__' and g.delivery = 'conflate'),
             c.partition_id is not null, c.claimed_at,
             p.last_offset + 1 - greatest(coalesce(c.committed_offset, p.log_start), p.log_start)
        from log_partitions p
        join queues q on q.id = p.queue_id
        join consumer_groups g on g.queue_id = p.queue_id and g.consumer_group = v_group
        left join lateral (select c1.partition_id, c1.committed_offset, c1.lease_id, c1.lease_expires_at, c1.claimed_at
                             from log_consumers c1
                            where c1.partition_id = p.id and c1.consumer_group = v_group limit 1) c on true
       where p.queue_id = any (v_queue_ids) and p.id < v_pivot and p.id >= v_id_min
         and p.last_offset >= greatest(coalesce(c.committed_offset, p.log_start), p.log_start)
         and (c.lease_id is null or c.lease_expires_at <= v_now)
         and (q.window_buffer = 0 or p.head_at <= v_now - make_interval(secs => q.window_buffer))
         and (v_pid is not null or g.caught_up_at is null or p.last_write_at >= g.caught_up_at - interval '2 minutes')
    ) b
    ) ab limit greatest(64, 4 * v_parts_left)
    ) w
    order by w.claimed_at nulls first, w.walked
  loop
    if not v_sized then
      v_sized := true;
      -- Autopilot sizes the knobs the client left out from what this walk sees (docs/pop-autopilot.md):
      -- the width is this pop's share of the ready partitions, shared with the group's pops parked on
      -- this process; the batch is the backlog those partitions hold on average. One sweep is at most
      -- 64 partitions and 1000 frames, and the byte budget still ends a claim early. A conflating
      -- group keeps its own sizing (one frame per partition).
      if v_ap is not null and v_pid is null and not r.conflate then
        v_share := 1 + greatest(coalesce((v_ap->>'waiters')::integer, 0), 0);
        v_ap_parts := case when (v_ap->>'partitions')::boolean
                           then least(64, greatest(1, ceil(r.ready::numeric / v_share)::integer)) else v_parts_left end;
        v_ap_batch := case when (v_ap->>'batch')::boolean
                           then least(1000, greatest(v_ap_parts, ceil(r.backlog::numeric * v_ap_parts / r.ready)::integer)) else v_frames_left end;
        v_autopilot := jsonb_build_object('partitions', v_ap_parts, 'batch', v_ap_batch, 'ready', r.ready, 'backlog', r.backlog,
                                          'applied', coalesce((v_ap->>'apply')::boolean, false));
        if coalesce((v_ap->>'apply')::boolean, false) then
          v_parts_left := v_ap_parts;
          v_frames_left := v_ap_batch;
        end if;
      end if;
    end if;
    if v_queue is not null and not v_held then
      -- The first candidate: the queue row before any cursor lock or insert. A queue deleted since
      -- it was looked up starts the pop again, which then finds no queue and creates it, as a pop
      -- after the delete would; this pop holds nothing yet.
      if not _log_pop_hold_queues(v_queue_ids) then
        return log_pop_v1(p_tenant, p_request, p_now);
      end if;
      v_held := true;
    end if;
    select * into v_c from log_consumers
     where partition_id = r.pid and consumer_group = v_group
       for update skip locked;
    if not found and not r.has_cursor and not v_locked then
      -- No row yet. While this pop holds no cursor lock it may create the
      -- scope's missing rows, in partition order like every cursor insert (docs/design.md#4): an insert can
      -- wait for a concurrent inserter of the same row, which must never happen under a row lock of
      -- ours.
      perform _log_pop_missing_cursors(v_queue_ids, null, v_group);
      select * into v_c from log_consumers
       where partition_id = r.pid and consumer_group = v_group
         for update skip locked;
    elsif not found and not r.has_cursor then
      -- A partition created after the scope's rows (a multi-partition claim already holds a lock):
      -- its one row is inserted with the wait bounded, so the lock-order hazard above cannot form a
      -- deadlock, and a partition that loses the race is only left to a later pop.
      v_c := _log_pop_cursor_bounded(v_queue_ids, r.pid, v_group);
    end if;
    continue when v_c.partition_id is null;  -- no row, or a row another pop holds (SELECT INTO sets nulls)
    v_locked := true;
    continue when v_c.lease_id is not null and v_c.lease_expires_at > v_now;
    -- The loop's snapshot is older than the lock: read the head again.
    select log_start, last_offset into r.log_start, r.last_offset from log_partitions where id = r.pid;
    v_dirty := false;

    if v_c.committed_offset < r.log_start then
      v_c := _log_rebase(v_c, r.log_start);  -- gap tolerance: resume at the next existing offset
      v_dirty := true;
    end if;

    if v_c.lease_id is not null then
      -- Expired (checked above). An unsettled range charges one attempt; a range wholly removed by
      -- retention does not (design decision 11).
      if v_c.committed_offset <= v_c.lease_to and r.conflate then
        -- A conflating lease delivered only lease_to: the expiry is charged to it, and exhaustion
        -- dead-letters it and retires the whole leased range (design decision 19).
        v_c := _log_count_attempts(v_c, v_c.lease_to, v_c.lease_to);
        v_c := _log_count_failure_latest(v_c, v_c.lease_to);
        if v_c.retry_count > r.retry_limit then
          if r.dlq_on then
            perform _log_dead_letter(r.pid, v_group, v_c.lease_to, 'Lease expired', v_c.retry_count, v_now);
          end if;
          v_c := _log_settle_through(v_c, v_c.lease_to);
          v_c.retry_offset := null;
          v_c.retry_count := 0;
        end if;
      elsif v_c.committed_offset <= v_c.lease_to then
        -- Every unsettled frame of the round was delivered once more (each message's retryCount);
        -- the lowest governs the retry limit.
        v_c := _log_count_attempts(v_c, v_c.committed_offset, v_c.lease_to);
        v_c := _log_count_failure(v_c, v_c.committed_offset);
        if v_c.retry_offset = v_c.committed_offset and v_c.retry_count > r.retry_limit then
          if r.dlq_on then
            perform _log_dead_letter(r.pid, v_group, v_c.committed_offset, 'Lease expired', v_c.retry_count, v_now);
          end if;
          v_c := _log_settle(v_c, v_c.committed_offset);
          v_c.retry_offset := null;
          v_c.retry_count := 0;
        end if;
      end if;
      v_c.lease_id := null;
      v_c.lease_expires_at := null;
      v_dirty := true;
    end if;

    v_vh := r.last_offset + 1;
    if r.delayed_processing > 0 then
      -- Delivery stops at the first frame younger than the delay, which keeps FIFO.
      select s.last_offset + 1 into v_vh
        from log_segments s
       where s.partition_id = r.pid and s.created_at <= v_now - make_interval(secs => r.delayed_processing)
       order by s.created_at desc, s.base_offset desc
       limit 1;
      if not found then
        v_vh := r.log_start;
      end if;
      v_vh := least(v_vh, r.last_offset + 1);
    end if;

    -- Deleted frames (design decision 43) are settled for this group as its reads reach them and never delivered;
    -- a cursor resting on one moves past it here, so it counts as pending only until then.
    for v_dead in select t.frame_offset from log_tombstones t
                   where t.partition_id = r.pid and t.frame_offset >= v_c.committed_offset and t.frame_offset < v_vh
                   order by t.frame_offset limit 10000 loop
      v_c := _log_settle(v_c, v_dead);
      v_dirty := true;
    end loop;

    v_n := 0;
    if v_c.committed_offset < v_vh then
      -- Conflation reads only the newest visible frame; the lease still covers [c, vh − 1] (below).
      v_lo := case when r.conflate then v_vh - 1 else v_c.committed_offset end;
      v_hi := case when r.conflate then v_vh - 1 else least(v_vh - 1, v_c.committed_offset + v_frames_left - 1) end;
      if r.conflate then
        -- The newest frame that was not deleted (design decision 43); the loop above left the cursor below it.
        while v_lo > v_c.committed_offset and exists (select 1 from log_tombstones t where t.partition_id = r.pid and t.frame_offset = v_lo) loop
          v_lo := v_lo - 1;
        end loop;
        v_hi := v_lo;
      end if;
      -- A claim while nothing is claimed and one partition is left is the pop's only claim (the
      -- loop exits after it), so the statement builds the whole answer as the return below would:
      -- wrapping a finished claim in an array and then in the answer copied every frame twice more.
      v_whole := v_claimed = 0 and v_parts_left = 1;
      -- Tombstones: one probe of the range (an InitPlan), and the per-frame probe only when the
      -- range holds one, so a partition without deletes pays one index probe instead of one a frame.
      with sl as (
        select s.base_offset + greatest(v_lo - s.base_offset, 0) + o.i - 1 as off, s.base_offset as base,
               s.created_at, o.frame
          from log_segments s
          cross join lateral unnest(s.frames[greatest(v_lo - s.base_offset + 1, 1) : (v_hi - s.base_offset + 1)])
                             with ordinality as o(frame, i)
         where s.partition_id = r.pid
           and s.base_offset >= coalesce((select max(s2.base_offset) from log_segments s2
                                           where s2.partition_id = r.pid and s2.base_offset <= v_lo), -1)
           and s.base_offset <= v_hi
      ), sized as (
        select sl.*, octet_length(sl.frame::text)::bigint as len from sl
         where not ((select exists (select 1 from log_tombstones t
                                     where t.partition_id = r.pid and t.frame_offset between v_lo and v_hi))
                    and exists (select 1 from log_tombstones t where t.partition_id = r.pid and t.frame_offset = sl.off))
           -- Frames above the frontier this group already settled (acked, or dead-lettered) are not
           -- delivered again; the frontier frame itself never is one. Conflation reads one frame.
           and (r.conflate or not (sl.off = any (v_c.acked_set)))
      ), measured as (
        select z.*, row_number() over (order by z.off) as rn, sum(z.len) over (order by z.off) as cum from sized z
      )
      -- One claim in the compact shape src/db/procedures.ts expands into messages: the stored frames
      -- as they are, their offsets, and each segment's createdAt once. Building a fourteen-key
      -- object per message here was a third of a pop's CPU (issue #9). The claim is a row (c) whose
      -- columns are its keys, and v_part is to_jsonb of an array holding it (or of the whole answer,
      -- w): every frame is pushed once into the one result, where jsonb_agg(frame) converted each
      -- frame and read it back, and jsonb_build_object copied the finished arrays again.
      select case when v_whole then to_jsonb(w) else to_jsonb(array[c]) end, g.lo, g.hi, g.n, g.bytes
        into v_part, v_from, v_to, v_n, v_bytes
        from (select array_agg(m.off order by m.off) as offsets, array_agg(m.frame order by m.off) as frames,
                     min(m.off) as lo, max(m.off) as hi, count(*)::integer as n, coalesce(sum(m.len), 0)::bigint as bytes
                from measured m
               where m.rn = 1 or m.cum <= v_bytes_left) g
        cross join lateral (
          select r.qname as queue, r.pname as partition, r.pid as "partitionId",
                 v_c.retry_offset as "retryOffset", v_c.retry_count as "retryCount",
                 v_c.attempt_from as "attemptFrom", v_c.attempts, g.offsets, g.frames,
                 (select jsonb_agg(jsonb_build_array(x.base, _iso_us(x.created_at)) order by x.base)
                    from (select distinct m2.base, m2.created_at from measured m2
                           where m2.rn = 1 or m2.cum <= v_bytes_left) x) as segments) c
        -- The answer of the return below for this one claim.
        cross join lateral (
          select array[c] as claims, case when v_auto then '' else v_lease::text end as "leaseId",
                 v_group as "consumerGroup", 1 as "partitionsClaimed", v_min_wait as "minPopWaitMs",
                 r.qname as queue, r.pname as partition, r.pid as "partitionId",
                 coalesce(v_wb_active, false) as "windowBufferActive", false as paused,
                 r.conflate as conflation, v_autopilot as autopilot) w;
    end if;

    if v_n > 0 then
      if r.conflate then
        v_from := v_c.committed_offset;  -- the lease covers every position the delivered frame supersedes
      end if;
      v_c.committed_offset := greatest(v_c.committed_offset, v_from);  -- a gap jump; never a regression
      v_c.claimed_at := v_now;  -- to the back of the rotation
      if v_auto then
        v_c.total_consumed := v_c.total_consumed + case when r.conflate then v_to + 1 - v_from else v_n end;
        v_c.batches_consumed := v_c.batches_consumed + 1;  -- an autoAck round completes as it is delivered
        v_c.committed_offset := greatest(v_c.committed_offset, v_to + 1);
        v_c.acked_set := array(select x from unnest(v_c.acked_set) x where x > v_to order by x);
        v_c.last_consumed_at := v_now;
        if v_c.retry_offset is not null and v_c.retry_offset < v_c.committed_offset then
          v_c.retry_offset := null;
          v_c.retry_count := 0;
        end if;
      else
        v_secs := coalesce(v_lease_secs, case when r.lease_time <= 0 then 60 else r.lease_time end);
        v_c.lease_id := v_lease;
        v_c.released_lease_id := null;  -- a new round: acks naming the last one are no longer its retries
        v_c.lease_expires_at := v_now + make_interval(secs => v_secs);
        v_c.lease_from := v_from;
        v_c.lease_to := v_to;
      end if;
      v_dirty := true;
      if v_whole then
        v_answer := v_part;
      else
        v_claims := case when v_claimed = 0 then v_part else v_claims || v_part end;
      end if;
      v_claimed := v_claimed + 1;
      v_conflation := coalesce(v_conflation, false) or r.conflate;
      if v_claimed = 1 then
        v_first_queue := r.qname;
        v_first_partition := r.pname;
        v_first_pid := r.pid;
      end if;
      v_frames_left := v_frames_left - v_n;
      v_bytes_left := v_bytes_left - v_bytes;
      v_parts_left := v_parts_left - 1;
    end if;

    if v_dirty then
      perform _log_consumer_write(v_c);
    end if;
    exit when v_frames_left <= 0 or v_parts_left <= 0 or v_bytes_left <= 0;
  end loop;

  -- Caught-up watermark. A wildcard or discovery pop that claimed nothing re-checks, at
  -- most every 30 s per (queue, group), whether anything at all is pending, ignoring leases, the
  -- window buffer and the filter itself; if nothing is, later scans consider only partitions written
  -- since 2 minutes before that instant. Frames under a live lease count as pending, so a later
  -- failure or expiry cannot hide. SKIP LOCKED: a group row another session is changing (a seek,
  -- which clears caught_up_at) is simply left for the next check.
  if v_pid is null and v_claimed = 0 then
    update consumer_groups g
       set caught_up_checked_at = v_now,
           caught_up_at = case when exists (
                              select 1 from log_partitions p
                                left join log_consumers c on c.partition_id = p.id and c.consumer_group = g.consumer_group
                               where p.queue_id = g.queue_id
                                 and p.last_offset >= greatest(coalesce(c.committed_offset,
                                       _log_initial_cursor(p.id, p.log_start, p.last_offset, g.subscription_mode, g.subscription_at)),
                                       p.log_start))
                               then g.caught_up_at else v_now end
     where (g.queue_id, g.consumer_group) in (
             select g2.queue_id, g2.consumer_group from consumer_groups g2
              where g2.queue_id = any (v_queue_ids) and g2.consumer_group = v_group
                and (g2.caught_up_checked_at is null or g2.caught_up_checked_at <= v_now - interval '30 seconds')
              order by g2.queue_id
                for update skip locked);
  end if;

  if v_answer is not null then
    return v_answer;  -- built with the only claim, above
  end if;
  return jsonb_build_object(
    'claims', v_claims,
    'leaseId', case when v_claimed = 0 then null when v_auto then '' else v_lease::text end,
    'consumerGroup', v_group,
    'partitionsClaimed', v_claimed,
    'minPopWaitMs', v_min_wait,
    'queue', v_first_queue,
    'partition', v_first_partition,
    'partitionId', v_first_pid,
    'windowBufferActive', coalesce(v_wb_active, false),
    'paused', false,
    'conflation', case when v_claimed > 0 or p_request ? 'conflationAsked' then coalesce(v_conflation, _log_pop_group_conflates(v_queue_ids, v_group)) end,
    'autopilot', v_autopilot);
end
$$;
