-- Dead letters as Queen 1.6 handles them (docs/admin-messages.md): a replay is a move, one
-- transaction that claims the dead-letter row, pushes one frame under the transaction id
-- `dlq:<row id>`, and deletes that row only. A bulk purge removes one queue's rows.
--
-- Every outcome a caller must read is a verdict in the answer, not a raise: `moved`, `duplicate`
-- (the destination's dedup window already holds `dlq:<row id>`: nothing written, the row kept),
-- `gone` (no such row for this tenant), `maintenance` (push maintenance is on: nothing written),
-- `encryption_mismatch` (the payload and the destination queue disagree on encryption, or a sealed
-- payload moves to another queue or partition than it was sealed for: the route re-encodes the
-- stored payload for the destination, which SQL cannot, and moves again with it).
-- The routes turn each into its status (200, 200, 404, 503; a mismatch is never answered as such).

-- _dlq_move: the move primitive shared by the address-keyed retry and the row-id replay.
-- p_queue / p_partition name a destination; null keeps the row's own queue or partition. A
-- destination that does not exist is created by the push allocator, under p_tenant. p_data and
-- p_enc, when p_enc is given, are the row's payload as the route re-encoded it for the destination
-- (after an encryption_mismatch verdict); otherwise the stored payload is pushed as it is.
-- Returns: {success, result, dlqId, ...}; for moved and duplicate also queue, partition, partitionId,
-- consumerGroup, originalTransactionId, replayedAs:{index, message_id, transaction_id, queueName,
-- status, offset}, dlqRowRemoved; for encryption_mismatch the stored `data`, `encrypted` (its flag),
-- `destinationEncrypted`, the destination's `partition` and the row's `sourceQueue` and
-- `sourcePartition`, for the route only. Raises: nothing of its own (QMENC cannot come
-- from _log_push: the flag is compared first; a configure flipping it waits for the push's locks).
-- Concurrency: the dead-letter row is locked FOR UPDATE first, so two movers of one row serialise
-- and the loser finds it gone; then _log_push takes its queue and allocator locks.
-- Clock: p_now (default clock_timestamp()).
create or replace function queen._dlq_move(p_tenant text, p_dlq_id uuid, p_queue text default null,
                                           p_partition text default null, p_now timestamptz default null,
                                           p_data jsonb default null, p_enc boolean default null)
returns jsonb
language plpgsql volatile
set search_path = queen, pg_catalog
as $$
declare
  v_row queen.log_dlq;
  v_source text;
  v_queue text;
  v_partition text;
  v_txn text;
  v_enc boolean;
  v_flag boolean;
  v_item jsonb;
  v_duplicate boolean;
begin
  if (select value from system_state where key = 'maintenance') = 'true'::jsonb then
    return jsonb_build_object('success', false, 'result', 'maintenance', 'dlqId', p_dlq_id, 'dlqRowRemoved', false);
  end if;
  select d.* into v_row from log_dlq d where d.id = p_dlq_id and d.tenant_id = p_tenant for update;
  select q.name into v_source from queues q where q.id = v_row.queue_id and q.tenant_id = p_tenant;
  if v_row.id is null or v_source is null then
    return jsonb_build_object('success', false, 'result', 'gone', 'dlqId', p_dlq_id);
  end if;

  v_queue := coalesce(p_queue, v_source);
  v_partition := coalesce(p_partition, v_row.partition_name);
  v_txn := 'dlq:' || v_row.id::text;
  v_enc := coalesce(p_enc, (v_row.frame ->> 'enc')::boolean, false);
  -- A queue that does not exist yet is created unencrypted by the push below.
  v_flag := coalesce((select q.encryption_enabled from queues q where q.tenant_id = p_tenant and q.name = v_queue), false);
  -- A sealed payload is bound to the queue and partition it was pushed to (AES-GCM associated
  -- data, src/encryption.ts), so one moving elsewhere must be opened and sealed again as well.
  if v_flag <> v_enc
     or (p_enc is null and v_enc and (v_queue, v_partition) is distinct from (v_source, v_row.partition_name)) then
    return jsonb_build_object('success', false, 'result', 'encryption_mismatch', 'dlqId', v_row.id,
                              'queue', v_queue, 'partition', v_partition,
                              'sourceQueue', v_source, 'sourcePartition', v_row.partition_name,
                              'encrypted', coalesce((v_row.frame ->> 'enc')::boolean, false), 'destinationEncrypted', v_flag,
                              'data', coalesce(v_row.frame -> 'data', 'null'::jsonb), 'dlqRowRemoved', false);
  end if;

  select i into v_item
    from _log_push_items(_log_push(p_tenant, jsonb_build_array(jsonb_strip_nulls(jsonb_build_object(
           'index', 0, 'queue', v_queue, 'partition', v_partition, 'transactionId', v_txn,
           'traceId', v_row.frame ->> 'trace', 'producerSub', v_row.frame ->> 'sub',
           'enc', v_enc, 'data', case when p_enc is null then coalesce(v_row.frame -> 'data', 'null'::jsonb)
                                      else coalesce(p_data, 'null'::jsonb) end))), p_now)) i;
  v_duplicate := v_item ->> 'status' = 'duplicate';
  if not v_duplicate then
    delete from log_dlq where id = v_row.id;
  end if;

  return jsonb_build_object(
    'success', true,
    'result', case when v_duplicate then 'duplicate' else 'moved' end,
    'queue', v_queue, 'partition', v_partition, 'partitionId', v_item -> 'partitionId',
    'consumerGroup', v_row.consumer_group, 'dlqId', v_row.id, 'originalTransactionId', v_row.transaction_id,
    'replayedAs', jsonb_build_object(
      'index', 0,
      -- A duplicate's own id is inside a frame this move does not read: the all-zero "original
      -- unknown" id, as a duplicate push reports it to Queen's clients.
      'message_id', case when v_duplicate then '00000000-0000-0000-0000-000000000000' else v_item ->> 'messageId' end,
      'transaction_id', v_txn, 'queueName', v_queue, 'status', v_item ->> 'status', 'offset', v_item -> 'offset'),
    'dlqRowRemoved', not v_duplicate);
end
$$;

-- log_dlq_replay_v1: POST /api/v1/dlq/:id/replay. The move of one dead-letter row by its id (the
-- `id` GET /api/v1/dlq lists), optionally to another queue and/or partition. An id that is not a
-- UUID names no row: `gone`, like an unknown one. p_data / p_enc: the re-encoded payload, as
-- _dlq_move takes it.
-- Returns: _dlq_move's answer. Raises: nothing.
create or replace function queen.log_dlq_replay_v1(p_tenant text, p_dlq_id text, p_queue text default null,
                                                   p_partition text default null, p_now timestamptz default null,
                                                   p_data jsonb default null, p_enc boolean default null)
returns jsonb
language plpgsql volatile
set search_path = queen, pg_catalog
as $$
begin
  if not _is_uuid(p_dlq_id) then
    return jsonb_build_object('success', false, 'result', 'gone', 'dlqId', p_dlq_id);
  end if;
  return _dlq_move(p_tenant, p_dlq_id::uuid, nullif(p_queue, ''), nullif(p_partition, ''), p_now, p_data, p_enc);
end
$$;

-- log_dlq_purge_v1: DELETE /api/v1/dlq. Deletes every dead-letter row of one queue of the tenant,
-- or of one consumer group of it when p_group is given. No match deletes nothing (deleted: 0).
-- Returns: {success:true, deleted, queue, consumerGroup (null: every group)}. Raises: nothing.
create or replace function queen.log_dlq_purge_v1(p_tenant text, p_queue text, p_group text default null)
returns jsonb
language sql volatile
set search_path = queen, pg_catalog
as $$
  with gone as (
    delete from log_dlq d
     using queues q
     where q.id = d.queue_id and q.tenant_id = p_tenant and q.name = p_queue
       and d.tenant_id = p_tenant
       and (nullif(p_group, '') is null or d.consumer_group = p_group)
    returning 1
  )
  select jsonb_build_object('success', true, 'deleted', (select count(*) from gone), 'queue', p_queue,
                            'consumerGroup', nullif(p_group, ''))
$$;
