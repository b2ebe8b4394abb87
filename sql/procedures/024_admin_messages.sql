-- Admin retry and move-to-DLQ of one message (design decision 44), by (partition, transactionId) or
-- by transactionId alone. docs/admin-messages.md explains both and their limits; retry is the move
-- of 030_dlq.sql.
--
-- Cursor rows are read whole under their lock and written back with _log_consumer_write, as acks do.
-- A refusal raises its own SQLSTATE before anything is written: QMNFM message not found, QMNFG
-- consumer group not found, QMIND already in the DLQ, QMAMT ambiguous transaction (DETAIL
-- {"partitions": [...]}). src/errors.ts maps each to its 404 or 409, so a deterministic refusal
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

-- message_retry_v1: POST /api/v1/messages[/:partitionId]/:transactionId/retry. Replays a
-- dead-lettered message by moving its dead-letter row (030_dlq.sql's _dlq_move): the address
-- resolves to the newest row (failed_at, then id) of the key, of group p_group when given, so other
-- groups' rows survive. With p_partition_id null the key is looked up across the tenant's
-- partitions. No row at the address (a live message, an unknown key, another tenant's partition, a
-- partition id that is not a UUID) is the verdict `gone`.
-- Returns: _dlq_move's answer. Raises: QMAMT (DETAIL partitions) when the
-- one-parameter form names dead letters in several partitions.
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
  v_pid uuid := case when _is_uuid(p_partition_id) then p_partition_id::uuid end;
  v_parts jsonb;
  v_id uuid;
begin
  if p_partition_id is not null and v_pid is null then
    return jsonb_build_object('success', false, 'result', 'gone', 'transactionId', p_transaction_id);
  end if;
  if v_pid is null then
    select coalesce(jsonb_agg(distinct jsonb_build_object('partitionId', d.partition_id, 'queue', q.name, 'partition', d.partition_name)), '[]')
      into v_parts
      from log_dlq d join queues q on q.id = d.queue_id
     where d.tenant_id = p_tenant and d.transaction_id = p_transaction_id
       and (p_group is null or d.consumer_group = p_group);
    if jsonb_array_length(v_parts) > 1 then
      raise exception using errcode = 'QMAMT', message = 'ambiguous transaction',
        detail = jsonb_build_object('partitions', v_parts)::text;
    end if;
    v_pid := (v_parts -> 0 ->> 'partitionId')::uuid;
  end if;

  select d.id into v_id from log_dlq d
   where d.tenant_id = p_tenant and d.partition_id = v_pid and d.transaction_id = p_transaction_id
     and (p_group is null or d.consumer_group = p_group)
   order by d.failed_at desc, d.id desc limit 1;
  if v_id is null then
    return jsonb_build_object('success', false, 'result', 'gone', 'transactionId', p_transaction_id);
  end if;
  return _dlq_move(p_tenant, v_id, null, null, p_now);
end
$$;
