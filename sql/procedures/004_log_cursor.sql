-- The cursor state machine: the per-row helpers that pop, ack, transactions, the message admin
-- routes and streams share. They work on a log_consumers value held in a variable and written back
-- once per row (_log_consumer_write), so an ack of fifty items is one UPDATE, not fifty. Files are
-- applied in name order and this one sorts before its first caller, 004_log_pop.sql, so every
-- helper exists before any function that calls it is created.
--
-- Lock order, which every procedure follows: the queues row, then log_partitions rows by id, then
-- log_consumers rows by (partition_id, consumer_group), inserts of cursor rows included. No call
-- takes a lock of an earlier rank after one of a later rank, so two calls never wait on each other
-- in a cycle (a deadlock).
--
-- `committed_offset` is a contiguous frontier that only moves forward; `acked_set` holds settled
-- offsets above it; retry state (retry_offset, retry_count) belongs to the lowest failing unsettled
-- frame and is cleared when that frame settles, so the next failing frame never inherits a count.

-- _log_initial_cursor: where a group's missing cursor row on a partition starts. Pop and every ack
-- path create a missing row through it, so the row follows the group's subscription instead of
-- starting blindly at the log start: the log start for 'all' (and queue mode), else the first
-- segment written at or after the subscription instant, else the high watermark. Pieces of one
-- split push share created_at, so the lookup takes min(base_offset), the first of the tied ones.
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

-- _log_settle: settles offset p_offset on a cursor value: at the frontier, the frontier moves over
-- it and every settled offset that follows; above it, it joins acked_set. Never moves the cursor
-- backwards.
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

-- _log_count_failure_latest: one failed attempt for a conflating (last-value) group. Unlike
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
-- completions recorded at or above it, so pop and ack resume at the first retained offset instead
-- of failing on a removed one. Never moves backwards.
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
-- ack): the delivered frame is the newest of its leased range, so retiring it retires the older
-- values it supersedes. Callers pass an offset inside the leased range only, so frames pushed after
-- the pop stay pending: conflation settles only what was leased. Never moves the cursor backwards.
-- It is exactly moving the frontier up to p_offset + 1, which _log_rebase does.
create or replace function queen._log_settle_through(p_c queen.log_consumers, p_offset bigint)
returns queen.log_consumers
language sql immutable
set search_path = queen, pg_catalog
as $$
  select _log_rebase(p_c, p_offset + 1)
$$;

-- _log_count_failure: records one failed attempt against frame p_offset: the lowest failing
-- unsettled frame governs (it is redelivered first anyway); a failure above it changes nothing.
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
-- Display only: the retry limit is governed by retry_offset and retry_count (_log_count_failure).
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
-- group's subscription (_log_initial_cursor), in lock order and before any row lock is taken.
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
