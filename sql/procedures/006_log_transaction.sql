-- _log_transaction_ack_lease: a transaction's ack operation, with the lease it acts for. Queen's JS
-- client (TransactionBuilder.ack) never puts the lease on the ack; it sends it in requiredLeases,
-- which log_transaction_v1 has verified before any operation runs. An ack that names no lease
-- therefore acts for its row's live lease when that lease is one the transaction holds, so its
-- failed and retry apply instead of answering lease_invalid (design decision 17; issue #20); an ack
-- of a row whose lease the transaction does not hold stays leaseless, and that lease stays
-- protected.
-- Returns: p_op, with leaseId added when it applies. Raises: nothing.
create or replace function queen._log_transaction_ack_lease(p_op jsonb, p_required_leases jsonb, p_now timestamptz)
returns jsonb
language sql stable
set search_path = queen, pg_catalog
as $$
  select case when nullif(p_op->>'leaseId', '') is not null or jsonb_array_length(coalesce(p_required_leases, '[]')) = 0
              then p_op
              else p_op || coalesce((
                select jsonb_build_object('leaseId', c.lease_id::text)
                  from log_consumers c
                 where c.partition_id = case when _is_uuid(p_op->>'partitionId') then (p_op->>'partitionId')::uuid end
                   and c.consumer_group = coalesce(nullif(p_op->>'consumerGroup', ''), '__QUEUE_MODE__')
                   and c.lease_expires_at > p_now
                   and p_required_leases ? c.lease_id::text), '{}') end
$$;

-- log_transaction_v1: POST /api/v1/transaction (design decision 21). Pushes and acks run in array
-- order inside one PostgreSQL transaction, all or nothing, together with the `kv` and `timers`
-- riders (docs/kv.md, docs/timers.md), which run first: a lost idempotency marker, the riders'
-- common failure, then costs one insert before any partition lock is taken, and timers are locked
-- before partitions as the timer fire locks them.
--
-- p_kv: KV operations as POST /api/v1/kv takes them, under p_kv_limits (the route passes the
--   rider's ceilings and inTransaction, which refuses getPrefix). p_timers: timer operations as
--   src/timers/ops.ts encodes them, bounded by p_horizon_ms.
-- A `required` KV write whose precondition failed rolls everything back and answers
--   {success:false, reason:'kv_precondition', failedIndex, kvReason, value, version}; failedIndex
--   counts in the flat result space (push items and acks first, then kv, then timers). A timer
--   beyond the horizon answers {success:false, reason:'timer_horizon_exceeded', error, code}.
--
-- p_ops: [{type:'push', items:[push items as log_push_v1 takes them]} |
--         {type:'ack', transactionId, partitionId, offset?, leaseId?, status?, consumerGroup?, error?}].
-- p_required_leases: lease ids that must be live in the tenant when the transaction starts.
-- Returns {success:true, results, kv, timers} or {success:false, error, code, results}: results are
--   [{operation, type:'push', …push item result} | {operation, type:'ack', …ack item result}], up to and
--   including the failing entry. A business failure rolls back the whole block and is a result, never
--   an error (the SDKs would resend a 5xx). QMENC, QMMNT and every non-business error propagate, so the
--   route can re-encrypt, answer 503, or answer 500 without leaking SQL text.
-- Concurrency: queues and partitions the pushes name are created first; then every lock is taken up
-- front in the one lock order (design decision 4: allocator rows by id, then the acks' cursor rows
-- by (partition, group)), whatever the operation order, so the later per-operation locks are
-- re-entrant no-ops.
-- Acks: completed settles; failed and dlq dead-letter at once through the DLQ switch (no retry round);
-- retry releases the lease. Clock: clock_timestamp() unless p_now pins it.
drop function if exists queen.log_transaction_v1(text, jsonb, jsonb, timestamptz);
create or replace function queen.log_transaction_v1(p_tenant text, p_ops jsonb, p_required_leases jsonb default '[]',
                                                    p_now timestamptz default null, p_kv jsonb default null,
                                                    p_timers jsonb default null, p_kv_limits jsonb default '{}',
                                                    p_horizon_ms bigint default 7776000000)
returns jsonb
language plpgsql volatile
set search_path = queen, pg_catalog
as $$
declare
  v_now timestamptz := coalesce(p_now, clock_timestamp());
  v_pushes jsonb;
  v_acks jsonb;
  v_lease text;
  v_results jsonb[] := '{}'::jsonb[];
  v_op jsonb;
  v_opi integer;
  v_out jsonb;
  v_item jsonb;
  v_error text;
  v_code text;
  v_kv jsonb := '[]'::jsonb;
  v_timers jsonb := '[]'::jsonb;
  v_detail text;
begin
  select coalesce(jsonb_agg(i), '[]'::jsonb) into v_pushes
    from jsonb_array_elements(p_ops) o, jsonb_array_elements(coalesce(o->'items', '[]'::jsonb)) i
   where o->>'type' = 'push';
  select coalesce(jsonb_agg(o), '[]'::jsonb) into v_acks from jsonb_array_elements(p_ops) o where o->>'type' = 'ack';

  if jsonb_array_length(v_pushes) > 0 and (select value from system_state where key = 'maintenance') = 'true'::jsonb then
    raise exception using errcode = 'QMMNT', message = 'push maintenance is on';
  end if;

  if jsonb_array_length(coalesce(p_kv, '[]')) > 0 and (select value from system_state where key = 'kv_enabled') = 'false'::jsonb then
    raise exception using errcode = 'QMKVX', message = 'kv_disabled';
  end if;
  if jsonb_array_length(coalesce(p_timers, '[]')) > 0 and (select value from system_state where key = 'timers_schedule_enabled') = 'false'::jsonb then
    raise exception using errcode = 'QMTDX', message = 'timers_disabled';
  end if;

  begin
    if jsonb_array_length(coalesce(p_kv, '[]')) > 0 then
      v_kv := _kv_apply(p_tenant, p_kv, p_kv_limits || '{"inTransaction": true}', p_now);
    end if;
    v_timers := _timers_apply(p_tenant, p_timers, p_horizon_ms, p_now);

    for v_lease in select jsonb_array_elements_text(coalesce(p_required_leases, '[]'::jsonb)) loop
      continue when v_lease = '';
      if not _is_uuid(v_lease) or not exists (
           select 1 from log_consumers c
             join log_partitions p on p.id = c.partition_id
             join queues q on q.id = p.queue_id and q.tenant_id = p_tenant
            where c.lease_id = v_lease::uuid and c.lease_expires_at > v_now) then
        v_error := 'Lease expired or not held: ' || v_lease;
        v_code := 'lease_invalid';
        raise exception using errcode = 'QMTXN', message = v_error;
      end if;
    end loop;

    -- Creation first, no locks held, as push does (_log_create_targets says why).
    perform _log_create_targets(p_tenant, v_pushes);
    perform _log_ensure_cursors(p_tenant, v_acks);

    -- Every lock up front, in the global order.
    perform 1 from log_partitions p
     where p.id in (select p2.id from jsonb_array_elements(v_pushes) e
                      join queues q on q.tenant_id = p_tenant and q.name = e->>'queue'
                      join log_partitions p2 on p2.queue_id = q.id and p2.name = coalesce(nullif(e->>'partition', ''), 'Default'))
     order by p.id
       for no key update;
    perform 1 from log_consumers c
     where (c.partition_id, c.consumer_group) in (
             select case when _is_uuid(x->>'partitionId') then (x->>'partitionId')::uuid end,
                    coalesce(nullif(x->>'consumerGroup', ''), '__QUEUE_MODE__')
               from jsonb_array_elements(v_acks) x)
     order by c.partition_id, c.consumer_group
       for update;

    for v_op, v_opi in select o, (ord - 1)::integer from jsonb_array_elements(p_ops) with ordinality as x(o, ord) loop
      if v_op->>'type' = 'push' then
        v_out := _log_push(p_tenant, coalesce(v_op->'items', '[]'::jsonb), p_now);
        for v_item in select i from _log_push_items(v_out) i loop
          v_results := v_results || (v_item || jsonb_build_object('operation', v_opi, 'type', 'push'));
        end loop;
      else
        v_item := _log_ack(p_tenant, jsonb_build_array(_log_transaction_ack_lease(v_op, p_required_leases, v_now)
                                                       || jsonb_build_object('index', 0)), v_now, true)->0;
        v_results := v_results || (v_item || jsonb_build_object('operation', v_opi, 'type', 'ack'));
        if not (v_item->>'success')::boolean then
          v_error := v_item->>'error';
          v_code := v_item->>'code';
          raise exception using errcode = 'QMTXN', message = v_error;
        end if;
      end if;
    end loop;
  exception
    when sqlstate 'QMTXN' then
      return jsonb_build_object('success', false, 'error', v_error, 'code', v_code, 'results', to_jsonb(v_results));
    when sqlstate 'QMTHZ' then
      -- A timer beyond the horizon rolls the bundle back like any other failed operation.
      get stacked diagnostics v_error = message_text;
      return jsonb_build_object('success', false, 'reason', 'timer_horizon_exceeded', 'error', v_error,
                                'code', 'timer_horizon_exceeded', 'results', '[]'::jsonb);
    when sqlstate 'QMKVP' then
      get stacked diagnostics v_detail = pg_exception_detail;
      return jsonb_build_object('success', false, 'reason', 'kv_precondition', 'error', 'kv_precondition_failed',
                                'code', 'kv_precondition', 'results', '[]'::jsonb)
             || (v_detail::jsonb || jsonb_build_object('failedIndex', (v_detail::jsonb->>'failedIndex')::integer
                                                                      + jsonb_array_length(v_pushes) + jsonb_array_length(v_acks)));
  end;
  return jsonb_build_object('success', true, 'results', to_jsonb(v_results), 'kv', v_kv, 'timers', v_timers);
end
$$;
