-- The plain ack: one cursor row's common batch (what a consumer acking its own pop sends), settled
-- in one pass by set arithmetic. log_ack_v1 (005_log_ack.sql) tries it first, _log_ack_leases
-- (005_log_ack_per_row.sql) runs it once per row of a batch naming several, and streams use it for
-- a cycle's acks. Whatever it declines goes to the per-item path (005_log_ack_per_item.sql).

-- _log_ack_plain: the common ack in one pass, or NULL when the batch is not that shape (the caller
-- then runs the general path, _log_ack, which gives the same answer item by item). The shape
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

  -- Delivery (conflation) applies to named groups only: its route refuses queue mode.
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

  -- _log_settle for every offset at once: the offsets not settled yet join acked_set;
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
      -- The round is complete (batchesConsumed counts it). The general path applies items by offset,
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
