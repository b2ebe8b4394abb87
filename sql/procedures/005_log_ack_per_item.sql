-- The per-item ack: the general path, which settles every item of any batch one by one through
-- the cursor state machine (004_log_cursor.sql): any status, acks by offset, conflating groups,
-- items without a lease, and a transaction's terminal acks. log_transaction_v1 and streams call
-- it directly; the plain and per-row paths hand it what they decline.

-- _log_find_txn: the lowest offset in [p_from, p_to] whose frame carries transaction id p_txn, by one
-- seek-then-slice read; NULL when none.
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

-- _log_ack: the body of log_ack_v1 and of transaction acks (p_terminal: a transaction's failed/dlq
-- is a terminal verdict with no retry round).
-- Items: [{index, partitionId, transactionId, offset?, consumerGroup?, leaseId?, status, error?}].
-- Returns a JSON array, in index order, of {index, transactionId, offset, success, error, code,
--   queueName, partitionName, leaseReleased, dlq, dropped, evicted, alreadyAcked?}: alreadyAcked
--   (present only when true) marks an item whose verdict already stood, so nothing changed.
-- Concurrency: missing cursor rows are inserted first in (partition, group) order, then each row is
-- locked FOR UPDATE in that order (the lock order, 004_log_cursor.sql). Leases are checked once per
-- row at lock time, so an earlier item releasing the lease cannot invalidate a later one. An ack
-- never touches another consumer's lease: an item without a leaseId applies completed and dlq
-- (transactions rely on this), and failed/retry only when the row has no live lease.
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
  -- Missing cursor rows first, before any row lock, in lock order (each started by its group's
  -- subscription).
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
           -- Delivery (conflation) applies to named groups only: its route refuses queue mode.
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

    -- Resolve every item of this row to an offset, against the locked state.
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
        -- An offset is verified against the frame's transaction id: an item naming the wrong frame is
        -- not found and changes nothing.
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

    -- Apply in ascending offset order, whatever order the items came in, so a completion above a
    -- failure in one batch cannot move the frontier past the failed frame.
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
        -- Never touch another consumer's live lease (see the contract above).
        v_success := false; v_err := 'Invalid or expired lease'; v_code := 'lease_invalid';
      elsif v_off < v_c.committed_offset or v_off = any (v_c.acked_set) then
        v_already := true;  -- already settled: a no-op
      elsif v_status in ('completed', 'success') and g.conflate and v_off <= v_c.lease_to then
        -- Last-value delivery: completing the delivered frame retires the leased range up to it, and
        -- no further: frames pushed after the pop stay pending.
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
        -- The acks settled the round's last frame: the round is complete (batchesConsumed counts it).
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

  -- Unknown, malformed or foreign partitions: "Message not found", nothing touched (another tenant's
  -- id looks exactly like an unknown one).
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
