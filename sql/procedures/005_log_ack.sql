-- Ack, retry and the dead-letter queue (ENGINE 6.1-6.2), plus the cursor-row helpers pop shares.
--
-- The per-row state machine works on a log_consumers value held in a variable and written back once
-- per row (_log_consumer_write), so an ack of fifty items is one UPDATE, not fifty.
-- `committed_offset` is a contiguous frontier that only moves forward; `acked_set` holds settled
-- offsets above it; retry state (retry_offset, retry_count) belongs to the lowest failing unsettled
-- frame and is cleared when that frame settles (ENGINE 6.7: no inherited counts).

-- _log_initial_cursor: where a group's missing cursor row on a partition starts (ENGINE 5.2, D7):
-- the log start for 'all' (and queue mode), else the first segment written at or after the
-- subscription instant, else the high watermark. Ties of one split push share created_at, so the
-- lookup takes min(base_offset) (D9).
create or replace function queen._log_initial_cursor(p_pid uuid, p_log_start bigint, p_last_offset bigint,
                                                     p_mode text, p_at timestamptz)
returns bigint
language sql stable
set search_path = queen, pg_catalog
as $$
  select case when p_mode in ('new', 'timestamp') and p_at is not null
              then greatest(coalesce((select min(s.base_offset) from log_segments s
                                        where s.partition_id = p_pid and s.created_at >= p_at),
                                     p_last_offset + 1), p_log_start)
              else p_log_start end
$$;

-- _log_settle: settle(o) of ENGINE 6.2 on a cursor value. Never moves the cursor backwards.
create or replace function queen._log_settle(p_c queen.log_consumers, p_offset bigint)
returns queen.log_consumers
language plpgsql immutable
set search_path = queen, pg_catalog
as $$
declare
  c queen.log_consumers := p_c;
begin
  if p_offset < c.committed_offset then
    null;
  elsif p_offset = c.committed_offset then
    c.committed_offset := p_offset + 1;
    while cardinality(c.acked_set) > 0 and c.acked_set[1] <= c.committed_offset loop
      if c.acked_set[1] = c.committed_offset then
        c.committed_offset := c.committed_offset + 1;
      end if;
      c.acked_set := c.acked_set[2:];
    end loop;
  elsif not (p_offset = any (c.acked_set)) and cardinality(c.acked_set) < 10000 then
    -- Beyond 10 000 out-of-order completions the newest is forgotten: that frame is redelivered.
    c.acked_set := array(select x from unnest(c.acked_set || p_offset) x order by x);
  end if;
  if c.retry_offset is not null and c.retry_offset < c.committed_offset then
    c.retry_offset := null;
    c.retry_count := 0;
  end if;
  return c;
end
$$;

-- _log_count_failure_latest: one failed attempt for a conflating group (ENGINE 6.3, D8). Unlike
-- _log_count_failure, a newer frame supersedes a failing older one and restarts the count: only the
-- newest value matters, so an older failure must not govern it.
create or replace function queen._log_count_failure_latest(p_c queen.log_consumers, p_offset bigint)
returns queen.log_consumers
language plpgsql immutable
set search_path = queen, pg_catalog
as $$
declare
  c queen.log_consumers := p_c;
begin
  if c.retry_offset is not null and c.retry_offset = p_offset and c.retry_offset >= c.committed_offset then
    c.retry_count := c.retry_count + 1;
  else
    c.retry_offset := p_offset;
    c.retry_count := 1;
  end if;
  return c;
end
$$;

-- _log_rebase: moves a cursor left below log_start (retention removed a prefix) up to it, absorbing
-- completions recorded at or above it (gap tolerance, ENGINE 4 and 7.1). Never moves backwards.
create or replace function queen._log_rebase(p_c queen.log_consumers, p_log_start bigint)
returns queen.log_consumers
language plpgsql immutable
set search_path = queen, pg_catalog
as $$
declare
  c queen.log_consumers := p_c;
begin
  if c.committed_offset >= p_log_start then
    return c;
  end if;
  c.committed_offset := p_log_start;
  c.acked_set := array(select x from unnest(c.acked_set) x where x >= p_log_start order by x);
  while cardinality(c.acked_set) > 0 and c.acked_set[1] = c.committed_offset loop
    c.committed_offset := c.committed_offset + 1;
    c.acked_set := c.acked_set[2:];
  end loop;
  if c.retry_offset is not null and c.retry_offset < c.committed_offset then
    c.retry_offset := null;
    c.retry_count := 0;
  end if;
  return c;
end
$$;

-- _log_settle_through: settles every position up to and including p_offset (a conflating group's
-- ack, ENGINE 6.3): the delivered frame is the newest of its leased range, so retiring it retires
-- the older values it supersedes. Callers pass an offset inside the leased range only, so frames
-- pushed after the pop stay pending (D8). Never moves the cursor backwards. It is exactly moving
-- the frontier up to p_offset + 1, which _log_rebase does.
create or replace function queen._log_settle_through(p_c queen.log_consumers, p_offset bigint)
returns queen.log_consumers
language sql immutable
set search_path = queen, pg_catalog
as $$
  select _log_rebase(p_c, p_offset + 1)
$$;

-- _log_count_failure: records one failed attempt against frame p_offset (ENGINE 6.2): the lowest
-- failing unsettled frame governs; a failure above it changes nothing.
create or replace function queen._log_count_failure(p_c queen.log_consumers, p_offset bigint)
returns queen.log_consumers
language plpgsql immutable
set search_path = queen, pg_catalog
as $$
declare
  c queen.log_consumers := p_c;
begin
  if c.retry_offset is null or c.retry_offset < c.committed_offset or c.retry_offset = any (c.acked_set)
     or p_offset < c.retry_offset then
    c.retry_offset := p_offset;
    c.retry_count := 1;
  elsif p_offset = c.retry_offset then
    c.retry_count := c.retry_count + 1;
  end if;
  return c;
end
$$;

-- _log_count_attempts: one more delivery attempt for every unsettled frame of [p_from, p_to] (a lease
-- that expired over them, or one failed ack), so each message of a redelivered round carries its own
-- retryCount (issue #20). Counts below the frontier are dropped as the array is rebuilt from it.
-- Display only: the retry limit is governed by retry_offset and retry_count (ENGINE 6.2).
create or replace function queen._log_count_attempts(p_c queen.log_consumers, p_from bigint, p_to bigint)
returns queen.log_consumers
language plpgsql immutable
set search_path = queen, pg_catalog
as $$
declare
  c queen.log_consumers := p_c;
begin
  if p_to < greatest(p_from, c.committed_offset) then
    return c;
  end if;
  c.attempts := array(select coalesce(c.attempts[(o - c.attempt_from + 1)::int], 0)
                             + case when o >= p_from and o <= p_to and not (o = any (c.acked_set)) then 1 else 0 end
                        from generate_series(c.committed_offset,
                                             greatest(p_to, coalesce(c.attempt_from + cardinality(c.attempts) - 1, p_to))) o
                       order by o);
  c.attempt_from := c.committed_offset;
  return c;
end
$$;

-- _log_release_lease: ends a cursor's live lease by an ack, remembering its id (released_lease_id) so
-- that the same ack retried after its answer was lost is answered alreadyAcked, not lease_invalid.
create or replace function queen._log_release_lease(p_c queen.log_consumers)
returns queen.log_consumers
language plpgsql immutable
set search_path = queen, pg_catalog
as $$
declare
  c queen.log_consumers := p_c;
begin
  c.released_lease_id := c.lease_id;
  c.lease_id := null;
  c.lease_expires_at := null;
  return c;
end
$$;

-- _log_consumer_write: writes a cursor value back to its (already locked) row. plpgsql, not SQL:
-- PostgreSQL 17 plans a non-inlined SQL function's body again on every call from a new statement,
-- which cost ~0.2 ms per cursor row written; plpgsql keeps the plan for the session.
create or replace function queen._log_consumer_write(p_c queen.log_consumers)
returns void
language plpgsql volatile
set search_path = queen, pg_catalog
as $$
begin
  update log_consumers
     set committed_offset = p_c.committed_offset, acked_set = p_c.acked_set,
         lease_id = p_c.lease_id, lease_expires_at = p_c.lease_expires_at,
         lease_from = p_c.lease_from, lease_to = p_c.lease_to,
         retry_offset = p_c.retry_offset, retry_count = p_c.retry_count,
         total_consumed = p_c.total_consumed, batches_consumed = p_c.batches_consumed,
         last_consumed_at = p_c.last_consumed_at, released_lease_id = p_c.released_lease_id,
         attempt_from = p_c.attempt_from, attempts = p_c.attempts, claimed_at = p_c.claimed_at
   where partition_id = p_c.partition_id and consumer_group = p_c.consumer_group;
end
$$;

-- _log_frame_at: the frame stored at one offset and its segment's created_at, or no row.
create or replace function queen._log_frame_at(p_pid uuid, p_offset bigint, out frame jsonb, out created_at timestamptz)
returns record
language sql stable
set search_path = queen, pg_catalog
as $$
  select s.frames[(p_offset - s.base_offset + 1)::int], s.created_at
    from log_segments s
   where s.partition_id = p_pid and s.base_offset <= p_offset and s.last_offset >= p_offset
   order by s.base_offset desc
   limit 1
$$;

-- _log_dead_letter: copies one frame into log_dlq (a full copy with no FK, so it outlives retention of
-- the segment). ON CONFLICT DO NOTHING: no path dead-letters a frame twice for one group.
-- Returns true when the frame still existed to be copied.
create or replace function queen._log_dead_letter(p_pid uuid, p_group text, p_offset bigint, p_error text,
                                                  p_retry_count integer, p_now timestamptz)
returns boolean
language plpgsql volatile
set search_path = queen, pg_catalog
as $$
declare
  v_frame jsonb;
  v_created timestamptz;
begin
  select f.frame, f.created_at into v_frame, v_created from _log_frame_at(p_pid, p_offset) f;
  if v_frame is null then
    return false;
  end if;
  insert into log_dlq (tenant_id, queue_id, partition_id, partition_name, consumer_group, frame_offset, message_id,
                       transaction_id, frame, error, retry_count, original_created_at, failed_at)
  select q.tenant_id, q.id, p.id, p.name, p_group, p_offset, (v_frame->>'id')::uuid, v_frame->>'txn',
         v_frame, p_error, p_retry_count, v_created, p_now
    from log_partitions p join queues q on q.id = p.queue_id
   where p.id = p_pid
  on conflict (partition_id, consumer_group, frame_offset) do nothing;
  return true;
end
$$;

-- _log_ensure_cursors: inserts the cursor rows an ack batch needs and lacks, initialised by each
-- group's subscription rule (D7), in lock order (ENGINE 1.4) and before any row lock is taken.
-- Shared by ack and transaction acks. plpgsql so its plan is kept (see _log_consumer_write).
-- Returns: nothing. Raises: nothing.
create or replace function queen._log_ensure_cursors(p_tenant text, p_acks jsonb)
returns void
language plpgsql volatile
set search_path = queen, pg_catalog
as $$
begin
  -- Each named partition and its cursor row are looked up by primary key (LATERAL ... LIMIT 1 keeps
  -- them parameterised index probes): joined plainly, the ~100 rows the planner assumes for
  -- jsonb_array_elements made it hash-join a sequential scan of every partition and every cursor
  -- row in the database (BENCHMARKS.md, issue #9).
  insert into log_consumers (partition_id, consumer_group, committed_offset)
  select distinct on (p.id, a.grp) p.id, a.grp,
         _log_initial_cursor(p.id, p.log_start, p.last_offset, cg.subscription_mode, cg.subscription_at)
    from (select distinct coalesce(nullif(x->>'consumerGroup', ''), '__QUEUE_MODE__') as grp,
                 case when _is_uuid(x->>'partitionId') then (x->>'partitionId')::uuid end as pid
            from jsonb_array_elements(p_acks) x) a
    cross join lateral (select p1.id, p1.queue_id, p1.log_start, p1.last_offset from log_partitions p1
                         where p1.id = a.pid
                           and not exists (select 1 from log_consumers c
                                            where c.partition_id = p1.id and c.consumer_group = a.grp)
                         limit 1) p
    join queues q on q.id = p.queue_id and q.tenant_id = p_tenant
    left join consumer_groups cg on cg.queue_id = q.id and cg.consumer_group = a.grp
   order by p.id, a.grp
  on conflict do nothing;
end
$$;

-- _log_ack_plain: the common ack in one pass, or NULL when the batch is not that shape (the caller
-- then runs the general path, _log_ack below, which gives the same answer item by item). The shape
-- is what a consumer acking its pop sends: every item completes (status completed, success or
-- absent) by transaction id without an offset; all share one partition, one group that does not
-- conflate and at most one lease id, the row's live lease; every id is found in the leased range,
-- and the round had not ended. Settling is then set arithmetic on the sorted offsets instead of the
-- general path's per-item state machine, which was most of an ack's CPU (issue #9, BENCHMARKS.md).
-- Nothing is written until every condition has held, so returning NULL is always safe; the one row
-- lock taken before that is the lock the general path takes next, in the same transaction.
-- It reads the items p_acks[p_from .. p_to] (0-based, inclusive; the whole array when p_to is null),
-- so _log_ack_leases can hand it one row's run of a fused call without copying it out.
-- Returns {plain: {queueName, partitionName, releasedIndex, index[], transactionId[], offset[],
-- alreadyAcked[]}}: every item succeeded, arrays in index order, releasedIndex the item that ended
-- the round (or null), alreadyAcked the indexes whose verdict already stood (or null).
-- The signature before the run arguments is dropped, so a database migrated by an older broker is
-- not left with two overloads.
drop function if exists queen._log_ack_plain(text, jsonb, timestamptz);
create or replace function queen._log_ack_plain(p_tenant text, p_acks jsonb, p_now timestamptz,
                                                p_from integer default 0, p_to integer default null)
returns jsonb
language plpgsql volatile
set search_path = queen, pg_catalog
set plan_cache_mode = force_generic_plan
as $$
declare
  v_pid text;
  v_grp text;
  v_lease text;
  v_plain boolean;
  v_puuid uuid;
  v_pname text;
  v_qname text;
  v_log_start bigint;
  v_last bigint;
  v_c log_consumers;
  v_lo bigint;
  v_hi bigint;
  v_idx integer[];
  v_txn text[];
  v_offs bigint[];
  v_unresolved bigint;
  v_new bigint[];
  v_all bigint[];
  v_run bigint;
  v_released integer;
  v_already integer[];
begin
  select min(x->>'partitionId'), min(coalesce(nullif(x->>'consumerGroup', ''), '__QUEUE_MODE__')),
         min(lower(nullif(x->>'leaseId', ''))),
         count(x->>'partitionId') = count(*) and min(x->>'partitionId') = max(x->>'partitionId')
           and min(coalesce(nullif(x->>'consumerGroup', ''), '__QUEUE_MODE__'))
               = max(coalesce(nullif(x->>'consumerGroup', ''), '__QUEUE_MODE__'))
           and min(lower(nullif(x->>'leaseId', ''))) is not distinct from max(lower(nullif(x->>'leaseId', '')))
           and bool_and(coalesce(x->>'status', 'completed') in ('completed', 'success')
                        and jsonb_typeof(x->'offset') is distinct from 'number'
                        and x->>'transactionId' is not null)
    into v_pid, v_grp, v_lease, v_plain
    from generate_series(p_from, coalesce(p_to, jsonb_array_length(p_acks) - 1)) i
    cross join lateral (select p_acks->i as x) e;
  if not coalesce(v_plain, false) or not _is_uuid(v_pid) then
    return null;
  end if;

  -- Delivery applies to named groups only (D8).
  select p1.id, p1.name, q.name into v_puuid, v_pname, v_qname
    from log_partitions p1
    join queues q on q.id = p1.queue_id and q.tenant_id = p_tenant
    left join consumer_groups cg on cg.queue_id = q.id and cg.consumer_group = v_grp
   where p1.id = v_pid::uuid
     and (v_grp = '__QUEUE_MODE__' or coalesce(cg.delivery, 'all') <> 'conflate');
  if not found then
    return null;
  end if;

  select * into v_c from log_consumers where partition_id = v_puuid and consumer_group = v_grp for update;
  if not found or v_c.lease_id is null or v_c.lease_expires_at <= p_now
     or (v_lease is not null and v_lease <> v_c.lease_id::text) then
    return null;
  end if;
  select log_start, last_offset into v_log_start, v_last from log_partitions where id = v_puuid;
  v_c := _log_rebase(v_c, v_log_start);
  v_lo := greatest(v_c.lease_from, v_log_start);
  v_hi := least(v_c.lease_to, v_last);
  if not coalesce(v_c.committed_offset <= v_c.lease_to and v_lo <= v_hi and v_hi - v_lo < 10000, false) then
    return null;
  end if;

  -- Each id's lowest offset in the leased range (the general path's transaction-id map); the
  -- items in index order, the order of the answer.
  with sl as (
    select s.base_offset + greatest(v_lo - s.base_offset, 0) + o.i - 1 as off, o.frame->>'txn' as txn
      from log_segments s
      cross join lateral unnest(s.frames[greatest(v_lo - s.base_offset + 1, 1) : (v_hi - s.base_offset + 1)])
                         with ordinality as o(frame, i)
     where s.partition_id = v_puuid
       and s.base_offset >= coalesce((select max(s2.base_offset) from log_segments s2
                                       where s2.partition_id = v_puuid and s2.base_offset <= v_lo), -1)
       and s.base_offset <= v_hi
  ), first_at as (
    select sl.txn, min(sl.off) as off from sl group by sl.txn
  )
  select array_agg((x->>'index')::integer order by (x->>'index')::integer),
         array_agg(x->>'transactionId' order by (x->>'index')::integer),
         array_agg(f.off order by (x->>'index')::integer),
         count(*) filter (where f.off is null)
    into v_idx, v_txn, v_offs, v_unresolved
    from generate_series(p_from, coalesce(p_to, jsonb_array_length(p_acks) - 1)) i
    cross join lateral (select p_acks->i as x) e
    left join first_at f on f.txn = x->>'transactionId';
  if v_unresolved > 0 then
    return null;
  end if;

  -- settle(o) of ENGINE 6.2 for every offset at once: the offsets not settled yet join acked_set;
  -- the frontier then moves over the run of consecutive offsets starting at it. In a sorted set of
  -- distinct offsets, o - position is non-decreasing, and equals committed - 1 exactly on that run.
  v_new := array(select distinct o from unnest(v_offs) o
                  where o >= v_c.committed_offset and not (o = any (v_c.acked_set)) order by o);
  if cardinality(v_new) < cardinality(v_offs) then
    -- Items whose verdict already stood (a settled frame, or a frame an earlier item of this batch
    -- names), answered alreadyAcked as the general path does; computed only when there are some.
    select array_agg(x.i order by x.i) into v_already
      from (select u.i, u.o, row_number() over (partition by u.o order by u.i) as k
              from unnest(v_idx, v_offs) as u(i, o)) x
     where x.k > 1 or x.o < v_c.committed_offset or x.o = any (v_c.acked_set);
  end if;
  if cardinality(v_c.acked_set) + cardinality(v_new) >= 10000 then
    return null;  -- the general path knows which completion to forget at the cap
  end if;
  if cardinality(v_new) > 0 then
    v_all := array(select o from unnest(v_c.acked_set || v_new) o where o >= v_c.committed_offset order by o);
    select count(*) into v_run from unnest(v_all) with ordinality as u(o, i) where u.o - u.i = v_c.committed_offset - 1;
    v_c.committed_offset := v_c.committed_offset + v_run;
    v_c.acked_set := v_all[v_run + 1:];
    v_c.total_consumed := v_c.total_consumed + cardinality(v_new);
    v_c.last_consumed_at := p_now;
    if v_c.retry_offset is not null and v_c.retry_offset < v_c.committed_offset then
      v_c.retry_offset := null;
      v_c.retry_count := 0;
    end if;
    if v_c.committed_offset > v_c.lease_to then
      -- The round is complete (API 5.14 batchesConsumed). The general path applies items by offset,
      -- then index, so the item that completed it is the lowest index naming the highest new
      -- offset: every other offset of the round was settled before it.
      v_c := _log_release_lease(v_c);
      v_c.batches_consumed := v_c.batches_consumed + 1;
      v_released := (select min(u.i) from unnest(v_idx, v_offs) as u(i, o) where u.o = v_new[cardinality(v_new)]);
    end if;
  end if;
  perform _log_consumer_write(v_c);

  -- Items are answered in the compact shape src/db/procedures.ts expands (every item succeeded;
  -- arrays in index order): building a twelve-key object per item in SQL cost as much as all the
  -- settling above.
  return jsonb_build_object('plain', jsonb_build_object(
           'queueName', v_qname, 'partitionName', v_pname,
           'releasedIndex', v_released, 'index', to_jsonb(v_idx), 'transactionId', to_jsonb(v_txn),
           'offset', to_jsonb(v_offs), 'alreadyAcked', to_jsonb(v_already)));
end
$$;

-- _log_ack: the body of log_ack_v1 and of transaction acks (p_terminal: a transaction's failed/dlq
-- is a terminal verdict with no retry round, ENGINE 6.4).
-- Items: [{index, partitionId, transactionId, offset?, consumerGroup?, leaseId?, status, error?}].
-- Returns a JSON array, in index order, of {index, transactionId, offset, success, error, code,
--   queueName, partitionName, leaseReleased, dlq, dropped, evicted, alreadyAcked?}: alreadyAcked
--   (present only when true) marks an item whose verdict already stood, so nothing changed.
-- Concurrency: missing cursor rows are inserted first in (partition, group) order, then each row is
-- locked FOR UPDATE in that order (ENGINE 1.4). Leases are checked once per row at lock time (6.1),
-- so an earlier item releasing the lease cannot invalidate a later one; D5: an item without a
-- leaseId applies completed and dlq, and failed/retry only when the row has no live lease.
create or replace function queen._log_ack(p_tenant text, p_acks jsonb, p_now timestamptz, p_terminal boolean)
returns jsonb
language plpgsql volatile
set search_path = queen, pg_catalog
-- Generic plans, as in _log_push: custom plans were rebuilt on every call, and every statement here
-- looks rows up by key, so no plan depends on parameter values.
set plan_cache_mode = force_generic_plan
as $$
declare
  v_now timestamptz := coalesce(p_now, clock_timestamp());
  v_results jsonb[] := '{}'::jsonb[];
  g record;
  e jsonb;
  v_c log_consumers;
  v_live boolean;
  v_lease_at_lock uuid;
  v_log_start bigint;
  v_last bigint;
  v_resolved jsonb[];
  v_off bigint;
  v_frame jsonb;
  v_given_lease text;
  v_status text;
  v_released boolean;
  v_dlq boolean;
  v_dropped boolean;
  v_err text;
  v_code text;
  v_success boolean;
  v_evicted boolean;
  v_already boolean;
  v_reason text;
  v_lo bigint;
  v_hi bigint;
  v_by_off jsonb;
  v_by_txn jsonb;
  v_acks jsonb;
  v_known uuid[];
begin
  -- Missing cursor rows first, before any row lock, in lock order (D7: initialised by the group's rule).
  perform _log_ensure_cursors(p_tenant, p_acks);

  -- Each item's partition id and group, validated and normalised once (`_pid`: the canonical uuid
  -- text, or null when malformed; `_grp`), so the per-row filters below compare text instead of
  -- running the uuid check again per item and row.
  select jsonb_agg(x || jsonb_build_object(
                          '_grp', coalesce(nullif(x->>'consumerGroup', ''), '__QUEUE_MODE__'),
                          '_pid', case when _is_uuid(x->>'partitionId') then ((x->>'partitionId')::uuid)::text end)
                   order by ord)
    into v_acks
    from jsonb_array_elements(p_acks) with ordinality as t(x, ord);
  -- The named partitions that exist in this tenant, each found by primary key (see _log_ensure_cursors).
  select coalesce(array_agg(p.id order by p.id), '{}') into v_known
    from (select distinct (x->>'_pid')::uuid as pid from jsonb_array_elements(v_acks) x where x->>'_pid' is not null) a
    cross join lateral (select p1.id, p1.queue_id from log_partitions p1 where p1.id = a.pid limit 1) p
    join queues q on q.id = p.queue_id and q.tenant_id = p_tenant;

  for g in
    select p.id as pid, p.name as pname, q.name as qname, q.retry_limit,
           (q.dead_letter_queue or q.dlq_after_max_retries) as dlq_on, a.grp,
           -- Delivery applies to named groups only (D8).
           (a.grp <> '__QUEUE_MODE__' and coalesce(cg.delivery, 'all') = 'conflate') as conflate
      from (select distinct x->>'_grp' as grp, (x->>'_pid')::uuid as pid
              from jsonb_array_elements(v_acks) x
             where (x->>'_pid')::uuid = any (v_known)) a
      cross join lateral (select p1.id, p1.name, p1.queue_id from log_partitions p1 where p1.id = a.pid limit 1) p
      join queues q on q.id = p.queue_id
      left join consumer_groups cg on cg.queue_id = q.id and cg.consumer_group = a.grp
     order by p.id, a.grp
  loop
    select * into v_c from log_consumers where partition_id = g.pid and consumer_group = g.grp for update;
    select log_start, last_offset into v_log_start, v_last from log_partitions where id = g.pid;
    v_live := v_c.lease_id is not null and v_c.lease_expires_at > v_now;
    v_lease_at_lock := case when v_live then v_c.lease_id end;
    v_c := _log_rebase(v_c, v_log_start);

    -- Resolve every item of this row to an offset (ENGINE 6.1 step 4), against the locked state.
    -- One seek-then-slice read covers the lease range and every offset the items name, so a batch
    -- of a hundred acks detoasts each segment once instead of once per item.
    v_by_off := null;
    v_by_txn := null;
    select least(min((x->>'offset')::bigint), v_c.lease_from), greatest(max((x->>'offset')::bigint), v_c.lease_to)
      into v_lo, v_hi
      from jsonb_array_elements(v_acks) x
     where x->>'_grp' = g.grp and x->>'_pid' = g.pid::text
       and jsonb_typeof(x->'offset') = 'number'
       and (x->>'offset')::bigint between v_log_start and v_last;
    v_lo := greatest(coalesce(v_lo, v_c.lease_from), v_log_start);
    v_hi := least(coalesce(v_hi, v_c.lease_to), v_last);
    if v_lo is not null and v_hi is not null and v_lo <= v_hi and v_hi - v_lo < 10000 then
      with sl as (
        select s.base_offset + greatest(v_lo - s.base_offset, 0) + o.i - 1 as off, o.frame->>'txn' as txn
          from log_segments s
          cross join lateral unnest(s.frames[greatest(v_lo - s.base_offset + 1, 1) : (v_hi - s.base_offset + 1)])
                             with ordinality as o(frame, i)
         where s.partition_id = g.pid
           and s.base_offset >= coalesce((select max(s2.base_offset) from log_segments s2
                                           where s2.partition_id = g.pid and s2.base_offset <= v_lo), -1)
           and s.base_offset <= v_hi
      )
      select jsonb_object_agg(sl.off::text, sl.txn),
             (select jsonb_object_agg(t.txn, t.off) from (
                select distinct on (sl2.txn) sl2.txn, sl2.off from sl sl2
                 where sl2.off between v_c.lease_from and v_c.lease_to order by sl2.txn, sl2.off) t)
        into v_by_off, v_by_txn
        from sl;
    end if;

    v_resolved := '{}';
    for e in
      select x from jsonb_array_elements(v_acks) x
       where x->>'_grp' = g.grp and x->>'_pid' = g.pid::text
    loop
      v_off := null;
      v_reason := null;
      if coalesce(e->>'status', 'completed') not in ('completed', 'success', 'failed', 'dlq', 'retry') then
        v_reason := 'invalid_status';
      elsif jsonb_typeof(e->'offset') = 'number' then
        -- D6: an offset is verified against the frame's transaction id.
        v_off := (e->>'offset')::bigint;
        if v_off < v_log_start then
          v_reason := 'evicted';
        elsif v_off > v_last then
          v_reason := 'not_found';
        elsif v_by_off ? (v_off::text) then
          if v_by_off->>(v_off::text) is distinct from e->>'transactionId' then
            v_reason := 'not_found';
          end if;
        else
          select f.frame into v_frame from _log_frame_at(g.pid, v_off) f;
          if v_frame is null or v_frame->>'txn' is distinct from e->>'transactionId' then
            v_reason := 'not_found';
          end if;
        end if;
      else
        if v_by_txn is not null then
          v_off := (v_by_txn->>(e->>'transactionId'))::bigint;
        elsif v_c.lease_from is not null then
          v_off := _log_find_txn(g.pid, greatest(v_c.lease_from, v_log_start), v_c.lease_to, e->>'transactionId');
        end if;
        if v_off is null then
          select t.frame_offset into v_off from log_txns t
           where t.partition_id = g.pid and t.txn_hash = md5(e->>'transactionId')::uuid;
          if v_off is not null and v_off >= v_log_start then
            select f.frame into v_frame from _log_frame_at(g.pid, v_off) f;
            if v_frame is null or v_frame->>'txn' is distinct from e->>'transactionId' then
              v_off := null;
            end if;
          end if;
        end if;
        if v_off is null then
          v_off := _log_find_txn(g.pid, v_c.committed_offset,
                                 (select max(s.last_offset) from (
                                    select s1.last_offset from log_segments s1
                                     where s1.partition_id = g.pid
                                       and s1.base_offset >= coalesce((select max(s2.base_offset) from log_segments s2
                                                                        where s2.partition_id = g.pid
                                                                          and s2.base_offset <= v_c.committed_offset), -1)
                                     order by s1.base_offset limit 8) s),
                                 e->>'transactionId');
        end if;
        if v_off is null then
          v_reason := 'not_found';
        elsif v_off < v_log_start then
          v_reason := 'evicted';
        end if;
      end if;
      v_resolved := v_resolved || (e || jsonb_build_object('_off', v_off, '_reason', v_reason));
    end loop;

    -- Apply in ascending offset order, whatever order the items came in (ENGINE 6.1 step 5).
    for e in select x from unnest(v_resolved) x order by (x->>'_off')::bigint nulls first, (x->>'index')::integer loop
      v_off := (e->>'_off')::bigint;
      v_reason := e->>'_reason';
      v_status := coalesce(e->>'status', 'completed');
      v_given_lease := lower(nullif(e->>'leaseId', ''));
      v_success := true;
      v_err := null;
      v_code := null;
      v_released := false;
      v_dlq := false;
      v_dropped := false;
      v_evicted := false;
      v_already := false;

      if v_reason = 'invalid_status' then
        v_success := false; v_err := 'Invalid status: ' || coalesce(e->>'status', ''); v_code := 'invalid_status';
      elsif v_reason = 'not_found' then
        v_success := false; v_err := 'Message not found'; v_code := 'message_not_found';
      elsif v_given_lease is not null and v_lease_at_lock is null and v_given_lease = v_c.released_lease_id::text
            and v_off between v_c.lease_from and v_c.lease_to
            and (v_off < v_c.committed_offset or v_off = any (v_c.acked_set) or v_status in ('failed', 'retry')) then
        -- The lease this ack names was ended by an ack of its own round, and this item's verdict
        -- already stands (its frame settled, or a failure or retry already handed it back): a retry
        -- of an ack whose answer was lost. Success, and nothing changes (issue #20).
        v_already := true;
      elsif v_given_lease is not null and v_given_lease is distinct from v_lease_at_lock::text then
        v_success := false; v_err := 'Invalid or expired lease'; v_code := 'lease_invalid';
      elsif v_reason = 'evicted' then
        v_evicted := true;
      elsif v_status in ('failed', 'retry') and v_given_lease is null and v_lease_at_lock is not null then
        -- D5: never touch another consumer's live lease.
        v_success := false; v_err := 'Invalid or expired lease'; v_code := 'lease_invalid';
      elsif v_off < v_c.committed_offset or v_off = any (v_c.acked_set) then
        v_already := true;  -- already settled: a no-op
      elsif v_status in ('completed', 'success') and g.conflate and v_off <= v_c.lease_to then
        -- Last-value delivery: completing the delivered frame retires the leased range up to it (D8).
        v_c.total_consumed := v_c.total_consumed + (v_off + 1 - v_c.committed_offset)
                              - (select count(*) from unnest(v_c.acked_set) x where x <= v_off);
        v_c := _log_settle_through(v_c, v_off);
        v_c.last_consumed_at := v_now;
      elsif v_status in ('completed', 'success') then
        v_c := _log_settle(v_c, v_off);
        v_c.total_consumed := v_c.total_consumed + 1;
        v_c.last_consumed_at := v_now;
      elsif v_status = 'retry' then
        if v_c.lease_id is not null and v_c.lease_expires_at > v_now then
          v_c := _log_release_lease(v_c); v_released := true;
        end if;
      else
        if v_status = 'failed' and not p_terminal then
          v_c := case when g.conflate then _log_count_failure_latest(v_c, v_off) else _log_count_failure(v_c, v_off) end;
          v_c := _log_count_attempts(v_c, v_off, v_off);
        end if;
        if v_status = 'dlq' or p_terminal or (v_c.retry_offset = v_off and v_c.retry_count > g.retry_limit) then
          -- The DLQ switch (dead_letter_queue OR dlq_after_max_retries), evaluated at every exhaustion.
          if g.dlq_on then
            perform _log_dead_letter(g.pid, g.grp, v_off,
                                     coalesce(nullif(e->>'error', ''),
                                              case when p_terminal then 'Unknown error'
                                                   when v_status = 'dlq' then 'Dead-lettered by consumer'
                                                   else 'Retries exhausted' end),
                                     case when v_c.retry_offset = v_off then v_c.retry_count else 0 end, v_now);
            v_dlq := true;
          else
            v_dropped := true;
          end if;
          if v_c.retry_offset = v_off then
            v_c.retry_offset := null; v_c.retry_count := 0;
          end if;
          v_c := case when g.conflate and v_off <= v_c.lease_to then _log_settle_through(v_c, v_off)
                      else _log_settle(v_c, v_off) end;
          if p_terminal and v_c.lease_id is not null and v_c.lease_expires_at > v_now then
            v_c := _log_release_lease(v_c); v_released := true;
          end if;
        elsif v_c.lease_id is not null and v_c.lease_expires_at > v_now then
          -- Within budget: release the lease, leave the cursor; the next pop redelivers from it.
          v_c := _log_release_lease(v_c); v_released := true;
        end if;
      end if;

      if v_success and v_c.lease_id is not null and v_c.lease_expires_at > v_now and v_c.committed_offset > v_c.lease_to then
        -- The acks settled the round's last frame: the round is complete (API 5.14 batchesConsumed).
        v_c := _log_release_lease(v_c); v_released := true;
        v_c.batches_consumed := v_c.batches_consumed + 1;
      end if;

      v_results := v_results || (jsonb_build_object(
        'index', (e->>'index')::integer, 'transactionId', e->>'transactionId', 'offset', v_off,
        'success', v_success, 'error', v_err, 'code', v_code, 'queueName', g.qname, 'partitionName', g.pname,
        'leaseReleased', v_released, 'dlq', v_dlq, 'dropped', v_dropped, 'evicted', v_evicted)
        || case when v_already then '{"alreadyAcked": true}'::jsonb else '{}'::jsonb end);
    end loop;
    perform _log_consumer_write(v_c);
  end loop;

  -- Unknown, malformed or foreign partitions: "Message not found" (API 5.6), nothing touched.
  for e in
    select x from jsonb_array_elements(v_acks) x
     where x->>'_pid' is null or not ((x->>'_pid')::uuid = any (v_known))
  loop
    v_results := v_results || jsonb_build_object(
      'index', (e->>'index')::integer, 'transactionId', e->>'transactionId',
      'offset', case when jsonb_typeof(e->'offset') = 'number' then (e->>'offset')::bigint end,
      'success', false,
      'error', case when coalesce(e->>'status', 'completed') not in ('completed', 'success', 'failed', 'dlq', 'retry')
                    then 'Invalid status: ' || coalesce(e->>'status', '') else 'Message not found' end,
      'code', case when coalesce(e->>'status', 'completed') not in ('completed', 'success', 'failed', 'dlq', 'retry')
                   then 'invalid_status' else 'message_not_found' end,
      'queueName', null, 'partitionName', null,
      'leaseReleased', false, 'dlq', false, 'dropped', false, 'evicted', false);
  end loop;

  return coalesce((select jsonb_agg(x order by (x->>'index')::integer) from unnest(v_results) x), '[]'::jsonb);
end
$$;

-- _log_find_txn: the lowest offset in [p_from, p_to] whose frame carries transaction id p_txn, by one
-- seek-then-slice read (ENGINE 5.4); NULL when none.
create or replace function queen._log_find_txn(p_pid uuid, p_from bigint, p_to bigint, p_txn text)
returns bigint
language sql stable
set search_path = queen, pg_catalog
as $$
  select min(s.base_offset + greatest(p_from - s.base_offset, 0) + o.i - 1)
    from log_segments s
    cross join lateral unnest(s.frames[greatest(p_from - s.base_offset + 1, 1) : (p_to - s.base_offset + 1)])
                       with ordinality as o(frame, i)
   where p_to is not null and p_from <= p_to
     and s.partition_id = p_pid
     and s.base_offset >= coalesce((select max(s2.base_offset) from log_segments s2
                                     where s2.partition_id = p_pid and s2.base_offset <= p_from), -1)
     and s.base_offset <= p_to
     and o.frame->>'txn' = p_txn
$$;

-- _log_ack_leases: a batch naming several (partition, group) rows, as a fused call of several
-- consumers' acks does (ENGINE 12.1), settled row by row on the common path where it can be, so
-- that fusing acks shares their commit without giving up the set-based ack (issue #9,
-- BENCHMARKS.md). Each row's items must form one run of the array, as a fused call's members do
-- (otherwise the whole batch takes the general path); _log_ack_plain reads each run in place. Rows
-- are taken in lock order (ENGINE 1.4); each is settled or declined before anything of it is
-- written. At the first decline the loop stops, and every item not settled yet (that row's, the
-- later rows', and items naming no valid partition id) goes to the general path, which locks its
-- rows in the same order after the ones already held. Every item touches only its own row, so
-- answering row by row gives the answers the general path gives for the whole batch
-- (test/http/ack-plain.test.ts compares the two). A missing cursor row is inserted before any row
-- lock is taken (ENGINE 1.4), as the general path would.
-- Returns {leases: [<_log_ack_plain's plain object>…], rest: [<_log_ack's items>…]}, or _log_ack's
-- array when no row took the common path.
create or replace function queen._log_ack_leases(p_tenant text, p_acks jsonb, p_now timestamptz)
returns jsonb
language plpgsql volatile
set search_path = queen, pg_catalog
-- Generic plans, as in _log_ack: no plan here depends on the values of the batch.
set plan_cache_mode = force_generic_plan
as $$
declare
  v_pids uuid[];
  v_grps text[];
  v_from integer[];
  v_to integer[];
  v_rows integer;
  v_runs boolean;
  v_distinct integer;
  v_part jsonb;
  v_leases jsonb[] := '{}'::jsonb[];
  v_done integer := 0;
  v_rest jsonb := '[]'::jsonb;
begin
  -- The rows, in lock order, each with its run [from, to] of the array: grouped by the partition
  -- id as sent, so only a row's id is parsed, not every item's.
  select array_agg(r.pid::uuid order by r.pid::uuid, r.grp), array_agg(r.grp order by r.pid::uuid, r.grp),
         array_agg(r.lo order by r.pid::uuid, r.grp), array_agg(r.hi order by r.pid::uuid, r.grp),
         count(*)::integer, bool_and(r.hi - r.lo + 1 = r.items), count(distinct (r.pid::uuid, r.grp))::integer
    into v_pids, v_grps, v_from, v_to, v_rows, v_runs, v_distinct
    from (select x->>'partitionId' as pid, coalesce(nullif(x->>'consumerGroup', ''), '__QUEUE_MODE__') as grp,
                 min(ord - 1)::integer as lo, max(ord - 1)::integer as hi, count(*) as items
            from jsonb_array_elements(p_acks) with ordinality as t(x, ord)
           group by 1, 2
          offset 0) r  -- a fence: pushed below the grouping, the id check ran once per item
   where _is_uuid(r.pid);
  -- One row is _log_ack_plain's to settle whole (log_ack_v1 tried); a row whose items are not one
  -- run, or one row named by two spellings of its partition id, is the general path's.
  if v_rows < 2 or not v_runs or v_distinct < v_rows then
    return _log_ack(p_tenant, p_acks, p_now, false);
  end if;
  -- Each cursor row probed by key (LATERAL ... LIMIT 1, see _log_ensure_cursors).
  if (select count(*) from unnest(v_pids, v_grps) as r(pid, grp)
        cross join lateral (select 1 from log_consumers c
                             where c.partition_id = r.pid and c.consumer_group = r.grp limit 1) c) < v_rows then
    perform _log_ensure_cursors(p_tenant, p_acks);
  end if;

  for k in 1 .. v_rows loop
    v_part := _log_ack_plain(p_tenant, p_acks, p_now, v_from[k], v_to[k]);
    exit when v_part is null;
    v_leases := v_leases || (v_part->'plain');
    v_done := k;
  end loop;
  if v_done = 0 then
    return _log_ack(p_tenant, p_acks, p_now, false);
  end if;

  if (select sum(v_to[j] - v_from[j] + 1) from generate_series(1, v_done) j) < jsonb_array_length(p_acks) then
    select coalesce(jsonb_agg(t.x order by t.ord), '[]') into v_rest
      from jsonb_array_elements(p_acks) with ordinality as t(x, ord)
     where not exists (select 1 from generate_series(1, v_done) j where t.ord - 1 between v_from[j] and v_to[j]);
    v_rest := _log_ack(p_tenant, v_rest, p_now, false);
  end if;
  return jsonb_build_object('leases', to_jsonb(v_leases), 'rest', v_rest);
end
$$;

-- log_ack_v1: POST /api/v1/ack and /ack/batch (API 5.6). Per-item verdicts are JSON, never raised,
-- so one bad item cannot roll back its neighbours (ENGINE 1.6). Clock: clock_timestamp() unless p_now.
-- Returns _log_ack_plain's compact answer when the batch is the common shape of one row, else
-- _log_ack_leases' answer (several rows) or _log_ack's array.
create or replace function queen.log_ack_v1(p_tenant text, p_acks jsonb, p_now timestamptz default null)
returns jsonb
language plpgsql volatile
set search_path = queen, pg_catalog
as $$
declare
  v_now timestamptz := coalesce(p_now, clock_timestamp());
  v_last integer := jsonb_array_length(p_acks) - 1;
begin
  -- A batch whose first and last items name different rows is not one row's: it skips
  -- _log_ack_plain's whole-batch shape check, which would only decline it.
  if v_last > 0 and ((p_acks->0->>'partitionId') is distinct from (p_acks->v_last->>'partitionId')
                     or (p_acks->0->>'consumerGroup') is distinct from (p_acks->v_last->>'consumerGroup')) then
    return _log_ack_leases(p_tenant, p_acks, v_now);
  end if;
  return coalesce(_log_ack_plain(p_tenant, p_acks, v_now), _log_ack_leases(p_tenant, p_acks, v_now));
end
$$;
