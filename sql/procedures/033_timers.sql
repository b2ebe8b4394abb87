-- Queen 1.6's timers (docs/timers.md): a message promised now and pushed later. Schedule,
-- reschedule and cancel are one function (_timers_apply) for the batch route, the cancel route and
-- the transaction's `timers` rider; the fire (_timers_fire) deletes a due row and pushes its message
-- in one transaction, so one schedule is delivered at most once and, since the row stays until a
-- fire commits, at least once.
--
-- Operations arrive validated and encoded by src/timers/ops.ts: {op:'schedule'|'reschedule',
-- queue, timerKey, partition, delayMs, txn, payload (base64 as sent), data (the message body,
-- encrypted when enc), enc, producerSub?} or {op:'cancel', queue, timerKey, txn?}.
-- Errors: QMTHZ a delay beyond the horizon (403 timer_horizon_exceeded), QMTDS scheduling switched
-- off (503 timers_disabled). Clock: PostgreSQL's, clock_timestamp() unless p_now pins it.

-- _timers_apply: applies timer operations in order; one result per operation, index-aligned:
-- {ok, status: scheduled|rescheduled|cancelled|absent, queue, timerKey, txn, messageId?, deliverAt?}.
-- A schedule mints the message id the fire will push under: a UUIDv7 whose time is the due instant
-- (so one fire's timers rise in id as they rise in offset, _timers_fire). A reschedule is a new
-- message under an old name and mints a new one.
-- p_horizon_ms bounds delayMs. Concurrency: each operation is one row statement on the
-- (tenant, queue, timer_key) key; a fire holding the row makes a cancel wait and then answer absent.
create or replace function queen._timers_apply(p_tenant text, p_ops jsonb, p_horizon_ms bigint, p_now timestamptz default null)
returns jsonb
language plpgsql volatile
set search_path = queen, pg_catalog
as $$
declare
  v_now timestamptz := coalesce(p_now, clock_timestamp());
  v_op jsonb;
  v_i integer;
  v_row timers;
  v_existed boolean;
  v_results jsonb := '[]'::jsonb;
  v_bad jsonb;
begin
  -- Encryption happens at schedule, so a payload never waits in cleartext for an encrypted queue:
  -- an `enc` that disagrees with an existing queue's flag is refused as push refuses it (QMENC,
  -- DETAIL {"queues":[{name, encryptionEnabled}]}), and the route encodes again with the flag.
  select jsonb_agg(distinct jsonb_build_object('name', q.name, 'encryptionEnabled', q.encryption_enabled))
    into v_bad
    from jsonb_array_elements(coalesce(p_ops, '[]')) o
    join queues q on q.tenant_id = p_tenant and q.name = o->>'queue'
   where o->>'op' <> 'cancel' and coalesce((o->>'enc')::boolean, false) <> q.encryption_enabled;
  if v_bad is not null then
    raise exception using errcode = 'QMENC', message = 'queue encryption flag differs from the timer',
      detail = jsonb_build_object('queues', v_bad)::text;
  end if;

  for v_op, v_i in select o, (ord - 1)::integer from jsonb_array_elements(coalesce(p_ops, '[]')) with ordinality as x(o, ord) loop
    if v_op->>'op' = 'cancel' then
      delete from timers where tenant_id = p_tenant and queue = v_op->>'queue' and timer_key = v_op->>'timerKey'
      returning * into v_row;
      v_results := v_results || jsonb_build_object('index', v_i, 'ok', found, 'status', case when found then 'cancelled' else 'absent' end,
                                                   'queue', v_op->>'queue', 'timerKey', v_op->>'timerKey',
                                                   'txn', coalesce(v_op->>'txn', v_row.txn));
      continue;
    end if;
    if (v_op->>'delayMs')::numeric > p_horizon_ms then
      raise exception using errcode = 'QMTHZ',
        message = format('timer_horizon_exceeded: operations[%s].delayMs %s is beyond the horizon of %s ms', v_i, v_op->>'delayMs', p_horizon_ms);
    end if;
    v_existed := exists (select 1 from timers where tenant_id = p_tenant and queue = v_op->>'queue' and timer_key = v_op->>'timerKey');
    -- A reschedule is a new timer under an old name: attempts and the last error start over.
    insert into timers as t (tenant_id, queue, timer_key, partition, deliver_at, txn, data, payload, enc, producer_sub,
                             attempts, last_error, created_at, updated_at, message_id)
    values (p_tenant, v_op->>'queue', v_op->>'timerKey', coalesce(nullif(v_op->>'partition', ''), 'Default'),
            -- A past delay fires at once; further back than a day it is clamped to one, so any
            -- integer the client sends stays a valid instant.
            v_now + make_interval(secs => greatest((v_op->>'delayMs')::numeric, -86400000) / 1000), v_op->>'txn', v_op->'data', v_op->>'payload',
            coalesce((v_op->>'enc')::boolean, false), v_op->>'producerSub', 0, null, v_now, v_now,
            _uuid_v7(v_now + make_interval(secs => greatest((v_op->>'delayMs')::numeric, -86400000) / 1000)))
    on conflict (tenant_id, queue, timer_key) do update
      set partition = excluded.partition, deliver_at = excluded.deliver_at, txn = excluded.txn, data = excluded.data,
          payload = excluded.payload, enc = excluded.enc, producer_sub = excluded.producer_sub,
          attempts = 0, last_error = null, updated_at = excluded.updated_at, message_id = excluded.message_id
    returning * into v_row;
    v_results := v_results || jsonb_build_object('index', v_i, 'ok', true, 'status', case when v_existed then 'rescheduled' else 'scheduled' end,
                                                 'queue', v_row.queue, 'timerKey', v_row.timer_key, 'txn', v_row.txn,
                                                 'messageId', v_row.message_id, 'deliverAt', _iso_us(v_row.deliver_at));
  end loop;
  return v_results;
end
$$;

-- timers_apply_v1: POST /api/v1/timers. Returns {results}. Raises QMTDS when an operator switched
-- timers off (the cancel route does not check it: a cancel must always work).
create or replace function queen.timers_apply_v1(p_tenant text, p_ops jsonb, p_horizon_ms bigint, p_now timestamptz default null)
returns jsonb
language plpgsql volatile
set search_path = queen, pg_catalog
as $$
begin
  if (select value from system_state where key = 'timers_schedule_enabled') = 'false'::jsonb then
    raise exception using errcode = 'QMTDS', message = 'timers_disabled';
  end if;
  return jsonb_build_object('results', _timers_apply(p_tenant, p_ops, p_horizon_ms, p_now));
end
$$;

-- timers_cancel_v1: DELETE /api/v1/timers/:queue/*timerKey. One cancel; never refused by a switch.
create or replace function queen.timers_cancel_v1(p_tenant text, p_queue text, p_timer_key text, p_txn text default null)
returns jsonb
language sql volatile
set search_path = queen, pg_catalog
as $$
  select (_timers_apply(p_tenant, jsonb_build_array(jsonb_strip_nulls(jsonb_build_object('op', 'cancel', 'queue', p_queue,
                                                                                          'timerKey', p_timer_key, 'txn', p_txn))), 0)->0) - 'index'
$$;

-- timers_get_v1: GET /api/v1/timers/:queue/*timerKey: one pending timer with its payload as sent
-- (never decrypted), or {found:false}.
create or replace function queen.timers_get_v1(p_tenant text, p_queue text, p_timer_key text)
returns jsonb
language sql volatile
set search_path = queen, pg_catalog
as $$
  select coalesce(
    (select jsonb_build_object('found', true, 'queue', queue, 'timerKey', timer_key, 'partition', partition,
                               'deliverAt', _iso_us(deliver_at), 'txn', txn, 'messageId', message_id, 'payload', payload,
                               'payloadZstd', false, 'encrypted', enc, 'producerSub', producer_sub, 'attempts', attempts,
                               'lastError', last_error, 'claimed', false, 'createdAt', _iso_us(created_at),
                               'updatedAt', _iso_us(updated_at))
       from timers where tenant_id = p_tenant and queue = p_queue and timer_key = p_timer_key),
    jsonb_build_object('found', false, 'queue', p_queue, 'timerKey', p_timer_key))
$$;

-- timers_list_v1: GET /api/v1/timers/:queue: a keyset page over timer keys, without payloads (as
-- Queen 1.6 lists them: the peek is the one read that carries a payload). p_limit is clamped to
-- 1..1000. Returns {rows, truncated, nextAfter}; a row is {queue, timerKey, partition, deliverAt,
-- txn, messageId, attempts, lastError, claimed, encrypted, createdAt}.
create or replace function queen.timers_list_v1(p_tenant text, p_queue text, p_after text default null, p_limit integer default 100)
returns jsonb
language sql volatile
set search_path = queen, pg_catalog
as $$
  with page as (
    select * from timers
     where tenant_id = p_tenant and queue = p_queue and (p_after is null or timer_key > p_after)
     order by timer_key limit least(greatest(coalesce(p_limit, 100), 1), 1000) + 1
  ), numbered as (
    select p.*, row_number() over (order by timer_key) as n from page p
  ), kept as (
    select * from numbered where n <= least(greatest(coalesce(p_limit, 100), 1), 1000)
  )
  select jsonb_build_object(
    'rows', coalesce((select jsonb_agg(jsonb_build_object('queue', queue, 'timerKey', timer_key, 'partition', partition,
                                                          'deliverAt', _iso_us(deliver_at), 'txn', txn, 'messageId', message_id,
                                                          'attempts', attempts, 'lastError', last_error, 'claimed', false,
                                                          'encrypted', enc, 'createdAt', _iso_us(created_at))
                                       order by timer_key) from kept), '[]'::jsonb),
    'truncated', (select count(*) from numbered) > (select count(*) from kept),
    'nextAfter', case when (select count(*) from numbered) > (select count(*) from kept)
                      then (select max(timer_key) from kept) end)
$$;

-- timers_count_v1: GET /api/v1/timers/:queue?mode=count&prefix=…: pending timers of the queue whose
-- key starts with p_prefix (a literal, no wildcards). Returns {count}.
create or replace function queen.timers_count_v1(p_tenant text, p_queue text, p_prefix text)
returns jsonb
language sql volatile
set search_path = queen, pg_catalog
as $$
  select jsonb_build_object('count', count(*)) from timers
   where tenant_id = p_tenant and queue = p_queue and timer_key >= p_prefix and starts_with(timer_key, p_prefix)
$$;

-- _timers_fire: pushes the due timers (deliver_at <= now) of one tenant's queue, or of every
-- tenant and queue when both are null, at most p_limit of them. Each tenant's due timers are
-- deleted and pushed as one batch in one subtransaction (a push per timer could not keep up with a
-- few hundred timers a second); when that batch fails, its timers are retried one by one, and a
-- timer whose own push fails (an encryption flag changed since the schedule, say) keeps its row,
-- counts an attempt and backs off exponentially; after five attempts the row stays with its last
-- error and waits for a cancel or a reschedule.
-- Returns {processed, next, queues:[{tenant, queue}]}: the queues that received a message.
-- Concurrency: rows are taken FOR UPDATE SKIP LOCKED, so concurrent firers share the work and
-- never push a timer twice; timers are locked before partitions, the order transactions use.
create or replace function queen._timers_fire(p_tenant text, p_queue text, p_limit integer, p_now timestamptz default null)
returns jsonb
language plpgsql volatile
set search_path = queen, pg_catalog
as $$
declare
  v_now timestamptz := coalesce(p_now, clock_timestamp());
  v_rows timers[];
  v_row timers;
  v_tenant text;
  v_items jsonb;
  v_item jsonb;
  v_fired integer := 0;
  v_queues jsonb := '[]'::jsonb;
begin
  -- Only an operator stops the fire (the switch below); nothing else does.
  if (select value from system_state where key = 'timers_fire_enabled') = 'false'::jsonb then
    return jsonb_build_object('processed', 0, 'next', null, 'queues', '[]'::jsonb);
  end if;
  select coalesce(array_agg(x.t order by (x.t).deliver_at), '{}'::timers[]) into v_rows
    from (select t from timers t
           where t.deliver_at <= v_now and t.attempts < 5
             and (p_tenant is null or t.tenant_id = p_tenant) and (p_queue is null or t.queue = p_queue)
           order by t.deliver_at
           limit greatest(p_limit, 1)
           for update skip locked) x;

  for v_tenant in select distinct r.tenant_id from unnest(v_rows) r loop
    -- Distinct indexes: the push orders a partition's items by them. Here by message id, which is
    -- due order to the millisecond: the ids were minted at schedule, and in id order a partition's
    -- frames of this fire rise in id as in offset, the order a client sorting on (createdAt, id)
    -- restores.
    select jsonb_agg(_timers_item(x.r) || jsonb_build_object('index', x.n - 1) order by x.n) into v_items
      from (select r, row_number() over (order by r.message_id) as n
              from unnest(v_rows) r where r.tenant_id = v_tenant) x;
    begin
      delete from timers t using unnest(v_rows) r
       where r.tenant_id = v_tenant and t.tenant_id = r.tenant_id and t.queue = r.queue and t.timer_key = r.timer_key;
      perform _log_create_targets(v_tenant, v_items);
      perform _log_push(v_tenant, v_items, p_now);
      v_fired := v_fired + jsonb_array_length(v_items);
    exception when others then
      -- One timer can spoil a batch: retry this tenant's one by one, so only that one backs off.
      for v_row in select * from unnest(v_rows) r where r.tenant_id = v_tenant loop
        v_item := _timers_item(v_row);
        begin
          delete from timers where tenant_id = v_row.tenant_id and queue = v_row.queue and timer_key = v_row.timer_key;
          perform _log_create_targets(v_tenant, jsonb_build_array(v_item));
          perform _log_push(v_tenant, jsonb_build_array(v_item), p_now);
          v_fired := v_fired + 1;
        exception when others then
          update timers set attempts = attempts + 1, last_error = sqlerrm,
                            deliver_at = v_now + make_interval(secs => least(power(2, attempts + 1), 300))
           where tenant_id = v_row.tenant_id and queue = v_row.queue and timer_key = v_row.timer_key;
        end;
      end loop;
    end;
  end loop;
  select coalesce(jsonb_agg(distinct jsonb_build_object('tenant', r.tenant_id, 'queue', r.queue)), '[]'::jsonb) into v_queues
    from unnest(v_rows) r
   where not exists (select 1 from timers t where t.tenant_id = r.tenant_id and t.queue = r.queue and t.timer_key = r.timer_key);
  return jsonb_build_object('processed', v_fired, 'next', case when cardinality(v_rows) >= greatest(p_limit, 1) then 'more' end,
                            'queues', v_queues);
end
$$;

-- _timers_item: a timer as the push item its fire writes: the message id minted at schedule, its
-- txn as the transaction id, the body as stored at schedule (encrypted when enc), and the producer
-- of the schedule.
create or replace function queen._timers_item(p_row queen.timers)
returns jsonb
language sql immutable
set search_path = queen, pg_catalog
as $$
  select jsonb_build_object('index', 0, 'queue', p_row.queue, 'partition', p_row.partition,
                            'transactionId', p_row.txn, 'data', p_row.data, 'id', p_row.message_id)
         || case when p_row.enc then jsonb_build_object('enc', true) else '{}'::jsonb end
         || case when p_row.producer_sub is not null then jsonb_build_object('producerSub', p_row.producer_sub) else '{}'::jsonb end
$$;

-- timers_fire_step_v1: one bounded step of the kv_timers lane: fires due timers of every tenant.
create or replace function queen.timers_fire_step_v1(p_limit integer default 1000, p_now timestamptz default null)
returns jsonb
language sql volatile
set search_path = queen, pg_catalog
as $$
  select _timers_fire(null, null, p_limit, p_now)
$$;

-- timers_fire_queue_v1: fires the due timers of one queue of the tenant, for a pop about to read it
-- (so a consumer sees a due timer even where the lane runs only once a minute).
create or replace function queen.timers_fire_queue_v1(p_tenant text, p_queue text, p_limit integer default 1000, p_now timestamptz default null)
returns jsonb
language sql volatile
set search_path = queen, pg_catalog
as $$
  select _timers_fire(p_tenant, p_queue, p_limit, p_now)
$$;

-- kv_timers_switches_v1: GET /api/v1/system/kv-timers: the three kill switches, each on unless an
-- operator turned it off (a missing row reads as on).
create or replace function queen.kv_timers_switches_v1()
returns jsonb
language sql volatile
set search_path = queen, pg_catalog
as $$
  select jsonb_build_object(
    'kvEnabled', coalesce((select value <> 'false'::jsonb from system_state where key = 'kv_enabled'), true),
    'timersScheduleEnabled', coalesce((select value <> 'false'::jsonb from system_state where key = 'timers_schedule_enabled'), true),
    'timersFireEnabled', coalesce((select value <> 'false'::jsonb from system_state where key = 'timers_fire_enabled'), true))
$$;

-- kv_timers_switches_set_v1: POST /api/v1/system/kv-timers: sets the switches given (null leaves
-- one as it is) for every replica and isolate, from their next call. Returns the three as they now are.
create or replace function queen.kv_timers_switches_set_v1(p_kv boolean default null, p_timers_schedule boolean default null,
                                                           p_timers_fire boolean default null)
returns jsonb
language plpgsql volatile
set search_path = queen, pg_catalog
as $$
begin
  insert into system_state (key, value, updated_at)
  select k, to_jsonb(v), clock_timestamp()
    from (values ('kv_enabled', p_kv), ('timers_schedule_enabled', p_timers_schedule), ('timers_fire_enabled', p_timers_fire)) s(k, v)
   where v is not null
  on conflict (key) do update set value = excluded.value, updated_at = excluded.updated_at;
  return kv_timers_switches_v1();
end
$$;
