-- Admin retry and move-to-DLQ of one message (design decision 44), by (partition, transactionId) or
-- by transactionId alone. docs/admin-messages.md explains the retry strategy and its limits.
--
-- Cursor rows are read whole under their lock and written back with _log_consumer_write, as acks do.
-- A refusal raises its own SQLSTATE before anything is written: QMNFM message not found, QMNFG
-- consumer group not found, QMNID not in the DLQ, QMIND already in the DLQ, QMAMT ambiguous
-- transaction (DETAIL {"partitions": [...]}), QMAMG ambiguous consumer group (DETAIL
-- {"consumerGroups": [...]}). src/errors.ts maps each to its 404 or 409, so a deterministic refusal
-- is never a 5xx. A partition id is the client's text: one that is not a UUID names no message.

-- _txn_partitions: the tenant's partitions holding a retained, undeleted frame with transaction id
-- p_txn. Cost: a scan of every retained segment of the tenant (the one-parameter routes only; the
-- two-parameter form names the partition).
-- Returns: (partition_id, partition_name, queue_name). Raises: nothing. STABLE.
create or replace function queen._txn_partitions(p_tenant text, p_txn text)
returns table (partition_id uuid, partition_name text, queue_name text)
language sql stable
set search_path = queen, pg_catalog
as $$
  select p.id, p.name, q.name
    from queues q join log_partitions p on p.queue_id = q.id
   where q.tenant_id = p_tenant
     and exists (select 1 from _frames_by_txn(p.id, p_txn) f where f.frame_offset >= p.log_start)
   order by q.name, p.name
$$;

-- message_dlq_v1: POST /api/v1/messages[/:partitionId]/:transactionId/dlq. Dead-letters the
-- newest retained frame of the key for consumer group p_group (queue mode by default) with
-- reason p_error, and settles that frame for the group so it is not delivered to it again (its
-- other groups are untouched). With p_partition_id null the key is looked up across the tenant's
-- partitions. The cursor row is created when the group has none on the partition (its
-- subscription rule, as an ack would); a named group must be registered on the queue.
-- Returns: {movedToDLQ:true, transactionId, messageId, partitionId, queue, partition,
-- consumerGroup, offset}. Raises: QMNFM, QMAMT (DETAIL partitions:[{partitionId, queue,
-- partition}]), QMNFG, QMIND. Concurrency: the cursor row is locked FOR UPDATE (waiting for a pop
-- or ack that holds it); the DLQ insert is ON CONFLICT DO NOTHING, and the existence check runs
-- under that lock. If the group's acked_set is full (10 000 out-of-order completions) the settle is
-- forgotten as _log_settle documents and the frame may be delivered once more.
-- Clock: p_now (default clock_timestamp()) stamps failedAt.
-- The signature that took p_partition_id as uuid is dropped so no stray overload remains.
drop function if exists queen.message_dlq_v1(text, uuid, text, text, text, timestamptz);
create or replace function queen.message_dlq_v1(p_tenant text, p_partition_id text, p_transaction_id text,
                                                p_group text default '__QUEUE_MODE__', p_error text default null,
                                                p_now timestamptz default null)
returns jsonb
language plpgsql volatile
set search_path = queen, pg_catalog
as $$
declare
  v_now timestamptz := coalesce(p_now, clock_timestamp());
  v_group text := coalesce(nullif(p_group, ''), '__QUEUE_MODE__');
  v_pid uuid := case when _is_uuid(p_partition_id) then p_partition_id::uuid end;
  v_candidates jsonb;
  v_part record;
  v_off bigint;
  v_frame jsonb;
  v_c queen.log_consumers;
begin
  if p_partition_id is null then
    select coalesce(jsonb_agg(jsonb_build_object('partitionId', t.partition_id, 'queue', t.queue_name, 'partition', t.partition_name)), '[]')
      into v_candidates from _txn_partitions(p_tenant, p_transaction_id) t;
    if jsonb_array_length(v_candidates) = 0 then
      raise exception using errcode = 'QMNFM', message = 'message not found';
    elsif jsonb_array_length(v_candidates) > 1 then
      raise exception using errcode = 'QMAMT', message = 'ambiguous transaction',
        detail = jsonb_build_object('partitions', v_candidates)::text;
    end if;
    v_pid := (v_candidates -> 0 ->> 'partitionId')::uuid;
  end if;

  select * into v_part from _tenant_partition(p_tenant, v_pid);
  if not found then
    raise exception using errcode = 'QMNFM', message = 'message not found';
  end if;
  select m.frame_offset, m.frame into v_off, v_frame
    from _frames_by_txn(v_pid, p_transaction_id) m where m.frame_offset >= v_part.log_start limit 1;
  if v_off is null then
    raise exception using errcode = 'QMNFM', message = 'message not found';
  end if;
  if v_group <> '__QUEUE_MODE__'
     and not exists (select 1 from consumer_groups g where g.queue_id = v_part.queue_id and g.consumer_group = v_group) then
    raise exception using errcode = 'QMNFG', message = 'consumer group not found on this queue';
  end if;

  perform _log_ensure_cursors(p_tenant, jsonb_build_array(jsonb_build_object('partitionId', v_pid, 'consumerGroup', v_group)));
  select * into v_c from log_consumers where partition_id = v_pid and consumer_group = v_group for update;
  if exists (select 1 from log_dlq d where d.partition_id = v_pid and d.consumer_group = v_group and d.frame_offset = v_off) then
    -- Raising also undoes the cursor row _log_ensure_cursors may have made: a refusal writes nothing.
    raise exception using errcode = 'QMIND', message = 'message already in the DLQ for this consumer group';
  end if;

  perform _log_dead_letter(v_pid, v_group, v_off, coalesce(p_error, 'Manually moved to DLQ'),
                           case when v_c.retry_offset = v_off then v_c.retry_count else 0 end, v_now);
  perform _log_consumer_write(_log_settle(v_c, v_off));

  return jsonb_build_object('movedToDLQ', true, 'transactionId', p_transaction_id, 'messageId', v_frame ->> 'id',
                            'partitionId', v_pid, 'queue', v_part.queue_name, 'partition', v_part.partition_name,
                            'consumerGroup', v_group, 'offset', v_off);
end
$$;

-- message_retry_v1: POST /api/v1/messages[/:partitionId]/:transactionId/retry. Re-delivers a
-- dead-lettered message to the consumer group that dead-lettered it and removes that DLQ row.
-- p_group picks the group when several dead-lettered the key; with p_partition_id null the DLQ
-- rows of the key are looked up across the tenant's partitions. Of several rows of one
-- (partition, group) the newest offset is retried. Two ways (docs/admin-messages.md):
--   rewind: when the group's cursor stands right after the frame (committed_offset = offset + 1),
--           holds no lease, does not conflate, and the frame is still retained: the cursor moves
--           back one position, so exactly that group gets exactly that frame again, in order.
--   repush: otherwise a new frame with the dead-lettered copy's payload (enc, data, traceId,
--           producerSub) is appended to the same partition under a new transaction id, settled at
--           once for every other group with a cursor on the partition, and linked to the original
--           by a 'retry' trace {retryOf:{partitionId, transactionId, offset}} on the new frame.
-- Returns: {retried:true, transactionId, consumerGroup, partitionId, queue, partition, offset,
-- redelivery:'rewind'|'repush', newOffset?, newTransactionId?}.
-- Raises: QMNFM, QMNID, QMAMT (DETAIL partitions), QMAMG (DETAIL consumerGroups); QMENC when the
-- queue's encryption flag no longer matches the copy (from _log_push).
-- Concurrency: the partition's allocator row (FOR NO KEY UPDATE, as push takes it), then the
-- group's cursor row, then (repush) the other groups' cursor rows in group order.
-- Clock: p_now (default clock_timestamp()).
-- The signature that took p_partition_id as uuid is dropped so no stray overload remains.
drop function if exists queen.message_retry_v1(text, uuid, text, text, timestamptz);
create or replace function queen.message_retry_v1(p_tenant text, p_partition_id text, p_transaction_id text,
                                                  p_group text default null, p_now timestamptz default null)
returns jsonb
language plpgsql volatile
set search_path = queen, pg_catalog
as $$
declare
  v_now timestamptz := coalesce(p_now, clock_timestamp());
  v_pid uuid := case when _is_uuid(p_partition_id) then p_partition_id::uuid end;
  v_parts jsonb;
  v_groups text[];
  v_dlq queen.log_dlq;
  v_part record;
  v_c queen.log_consumers;
  v_conflate boolean;
  v_pushed jsonb;
  v_new_off bigint;
  v_new_txn text;
  v_other queen.log_consumers;
begin
  if p_partition_id is not null and v_pid is null then
    raise exception using errcode = 'QMNFM', message = 'message not found';
  end if;
  select coalesce(jsonb_agg(distinct jsonb_build_object('partitionId', d.partition_id, 'queue', q.name, 'partition', d.partition_name)), '[]')
    into v_parts
    from log_dlq d join queues q on q.id = d.queue_id
   where d.tenant_id = p_tenant and d.transaction_id = p_transaction_id
     and (v_pid is null or d.partition_id = v_pid)
     and (p_group is null or d.consumer_group = p_group);
  if jsonb_array_length(v_parts) = 0 then
    -- Distinguish "there is such a message, it is just not dead-lettered" from "no such message".
    if (v_pid is not null and exists (select 1 from _tenant_partition(p_tenant, v_pid) tp
                                       cross join lateral _frames_by_txn(tp.partition_id, p_transaction_id) m
                                       where m.frame_offset >= tp.log_start))
       or (v_pid is null and exists (select 1 from _txn_partitions(p_tenant, p_transaction_id))) then
      raise exception using errcode = 'QMNID', message = 'message is not in the DLQ';
    end if;
    raise exception using errcode = 'QMNFM', message = 'message not found';
  elsif jsonb_array_length(v_parts) > 1 then
    raise exception using errcode = 'QMAMT', message = 'ambiguous transaction',
      detail = jsonb_build_object('partitions', v_parts)::text;
  end if;

  select array_agg(distinct d.consumer_group order by d.consumer_group) into v_groups
    from log_dlq d
   where d.partition_id = (v_parts -> 0 ->> 'partitionId')::uuid and d.transaction_id = p_transaction_id
     and (p_group is null or d.consumer_group = p_group);
  if cardinality(v_groups) > 1 then
    raise exception using errcode = 'QMAMG', message = 'ambiguous consumer group',
      detail = jsonb_build_object('consumerGroups', to_jsonb(v_groups))::text;
  end if;

  select * into v_dlq from log_dlq d
   where d.partition_id = (v_parts -> 0 ->> 'partitionId')::uuid and d.transaction_id = p_transaction_id
     and d.consumer_group = v_groups[1]
   order by d.frame_offset desc limit 1
     for update;
  if not found then
    -- A concurrent retry took it first.
    raise exception using errcode = 'QMNID', message = 'message is not in the DLQ';
  end if;
  select * into v_part from _tenant_partition(p_tenant, v_dlq.partition_id);
  if not found then
    -- Its partition is gone.
    raise exception using errcode = 'QMNFM', message = 'message not found';
  end if;
  -- The allocator lock before any cursor lock (design decision 4), as the repush below takes it again.
  perform 1 from log_partitions where id = v_dlq.partition_id for no key update;
  select (g.consumer_group <> '__QUEUE_MODE__' and g.delivery = 'conflate') into v_conflate
    from consumer_groups g where g.queue_id = v_dlq.queue_id and g.consumer_group = v_dlq.consumer_group;

  select * into v_c from log_consumers
   where partition_id = v_dlq.partition_id and consumer_group = v_dlq.consumer_group for update;

  if v_c.partition_id is not null and v_c.lease_id is null and not coalesce(v_conflate, false)
     and v_c.committed_offset = v_dlq.frame_offset + 1 and v_dlq.frame_offset >= v_part.log_start then
    -- A fresh start for that frame: no retry state, no attempts, no earlier round's lease.
    v_c.committed_offset := v_dlq.frame_offset;
    v_c.retry_offset := null;
    v_c.retry_count := 0;
    v_c.attempt_from := null;
    v_c.attempts := null;
    v_c.released_lease_id := null;
    perform _log_consumer_write(v_c);
  else
    v_pushed := _log_push(p_tenant, jsonb_build_array(jsonb_strip_nulls(jsonb_build_object(
                  'index', 0, 'queue', v_part.queue_name, 'partition', v_part.partition_name,
                  'enc', coalesce((v_dlq.frame ->> 'enc')::boolean, false), 'data', v_dlq.frame -> 'data',
                  'traceId', v_dlq.frame ->> 'trace', 'producerSub', v_dlq.frame ->> 'sub'))), v_now);
    v_new_off := (v_pushed #>> '{columns,offset,0}')::bigint;
    v_new_txn := coalesce(v_pushed #>> '{columns,transactionId,0}', v_pushed #>> '{columns,messageId,0}');
    for v_other in
      select * from log_consumers
       where partition_id = v_dlq.partition_id and consumer_group <> v_dlq.consumer_group
       order by consumer_group
         for update
    loop
      perform _log_consumer_write(_log_settle(v_other, v_new_off));
    end loop;
    insert into message_traces (tenant_id, queue_name, partition_id, partition_name, transaction_id, frame_offset,
                                consumer_group, event_type, data, created_at)
    values (p_tenant, v_part.queue_name, v_dlq.partition_id, v_part.partition_name, v_new_txn, v_new_off,
            v_dlq.consumer_group, 'retry',
            jsonb_build_object('retryOf', jsonb_build_object('partitionId', v_dlq.partition_id,
                                                             'transactionId', p_transaction_id, 'offset', v_dlq.frame_offset)),
            v_now);
  end if;

  delete from log_dlq where id = v_dlq.id;

  return jsonb_build_object('retried', true, 'transactionId', p_transaction_id, 'consumerGroup', v_dlq.consumer_group,
                            'partitionId', v_dlq.partition_id, 'queue', v_part.queue_name, 'partition', v_part.partition_name,
                            'offset', v_dlq.frame_offset, 'redelivery', case when v_new_off is null then 'rewind' else 'repush' end)
         || case when v_new_off is null then '{}'::jsonb
                 else jsonb_build_object('newOffset', v_new_off, 'newTransactionId', v_new_txn) end;
end
$$;
