-- Queue configuration (design decision 26, docs/options.md). configure_queue_v1 owns every
-- write of a queue's options; 000_queue_options.sql spells them.

-- One option under the four merge rules (docs/options.md): absent keeps the stored value (merge) or
-- takes the default (replace, or a create: p_fresh); null takes the default; anything else is
-- taken as given. Rule 4 (a top-level '' namespace/task counts as absent) is the route's
-- normalisation, so by the time a bag arrives here an '' is a present value.
-- Returns: jsonb. Raises: nothing. IMMUTABLE.
create or replace function queen._opt(p_bag jsonb, p_key text, p_stored jsonb, p_default jsonb, p_fresh boolean)
returns jsonb
language sql immutable
set search_path = queen, pg_catalog
as $$
  select case when not (p_bag ? p_key) then case when p_fresh then p_default else p_stored end
              when p_bag -> p_key = 'null'::jsonb then p_default
              else p_bag -> p_key end
$$;

-- The two sink-hold options govern deletion, so they are refused out of range, never clamped
-- (design decision 27). Checked on the bag before anything is written. The name excludes ':'
-- because it is the middle segment of the kv key s3:<sink>:<queue>:committed.
-- Returns: nothing. Raises: QMHLD with DETAIL {"invalid": "<option>"}.
create or replace function queen._check_sink_hold(p_bag jsonb)
returns void
language plpgsql immutable
set search_path = queen, pg_catalog
as $$
declare
  v_hold jsonb := p_bag -> 'retentionSinkHold';
  v_cap jsonb := p_bag -> 'retentionSinkHoldMaxSeconds';
begin
  if v_hold is not null and v_hold <> 'null'::jsonb
     and (jsonb_typeof(v_hold) <> 'string' or (v_hold #>> '{}') !~ '^[A-Za-z0-9._-]{0,64}$') then
    raise exception using errcode = 'QMHLD',
      message = 'retentionSinkHold must be a string of at most 64 characters from A-Z a-z 0-9 . _ -',
      detail = '{"invalid":"retentionSinkHold"}';
  end if;
  if v_cap is not null and v_cap <> 'null'::jsonb
     and (jsonb_typeof(v_cap) <> 'number'
          or (v_cap #>> '{}')::numeric <> trunc((v_cap #>> '{}')::numeric)
          or (v_cap #>> '{}')::numeric not between 60 and 31536000) then
    raise exception using errcode = 'QMHLD',
      message = 'retentionSinkHoldMaxSeconds must be a whole number of seconds from 60 to 31536000',
      detail = '{"invalid":"retentionSinkHoldMaxSeconds"}';
  end if;
end
$$;

-- configure_queue_v1: creates or edits one queue's configuration.
-- p_options is the normalised bag (at most the 21 option keys; others are ignored); p_replace
-- resets every option the bag omits to its default. Values are stored as given except
-- minPopWaitTime (clamped to [0, 30000]) and dedupWindowSeconds (floored at 0).
-- Concurrency: an edit locks the queue row FOR UPDATE first, so a concurrent editor merges onto
-- this one's result; an encryption flip also locks every partition FOR NO KEY UPDATE in id order
-- (design decision 24: a push then commits wholly before or wholly after the flip). A create takes
-- no lock and inserts ON CONFLICT DO NOTHING; the loser of a race falls through to the edit path.
-- Never creates a partition.
-- Returns: {"response": <the route's 200 body>, "encryptionEnabled": bool, "encryptionTurnedOff":
-- bool} (the flags let the route refresh its encryption cache and log a turn-off); response is
-- {configured, queueId, partitionId: null, queue, namespace, task, storage: "segments",
-- options: <19 keys of the row just written>}.
-- Raises: QMHLD (sink-hold refusal, nothing written); QM400 (name over 255 characters); a cast
-- error such as 22P02 for a value of the wrong type (the route refuses those first,
-- design decision 29).
-- Clock: p_now (default now()) stamps created_at / updated_at.
create or replace function queen.configure_queue_v1(
  p_tenant text,
  p_queue text,
  p_options jsonb default '{}',
  p_replace boolean default false,
  p_now timestamptz default null
) returns json
language plpgsql volatile
set search_path = queen, pg_catalog
as $$
declare
  v_now timestamptz := coalesce(p_now, now());
  v_bag jsonb := coalesce(p_options, '{}');
  v_defaults jsonb := _queue_option_defaults(p_queue);
  v_cur queues;
  v_row queues;
  v_stored jsonb;
  v_eff jsonb;
  v_fresh boolean;
  v_key text;
begin
  if length(p_queue) > 255 then
    raise exception using errcode = 'QM400', message = 'queue: must be at most 255 characters';
  end if;
  perform _check_sink_hold(v_bag);

  loop
    select * into v_cur from queues where tenant_id = p_tenant and name = p_queue for update;
    v_fresh := p_replace or not found;
    v_stored := case when found then _queue_options(v_cur)::jsonb end;

    v_eff := '{}';
    for v_key in select jsonb_object_keys(v_defaults) loop
      v_eff := v_eff || jsonb_build_object(v_key, _opt(v_bag, v_key, v_stored -> v_key, v_defaults -> v_key, v_fresh));
    end loop;

    v_row := v_cur;
    v_row.namespace := v_eff ->> 'namespace';
    v_row.task := v_eff ->> 'task';
    v_row.priority := (v_eff ->> 'priority')::int;
    v_row.lease_time := (v_eff ->> 'leaseTime')::int;
    v_row.retry_limit := (v_eff ->> 'retryLimit')::int;
    v_row.retry_delay := (v_eff ->> 'retryDelay')::int;
    v_row.max_size := (v_eff ->> 'maxSize')::int;
    v_row.ttl := (v_eff ->> 'ttl')::int;
    v_row.dead_letter_queue := (v_eff ->> 'deadLetterQueue')::boolean;
    v_row.dlq_after_max_retries := (v_eff ->> 'dlqAfterMaxRetries')::boolean;
    v_row.delayed_processing := (v_eff ->> 'delayedProcessing')::int;
    v_row.window_buffer := (v_eff ->> 'windowBuffer')::int;
    v_row.retention_seconds := (v_eff ->> 'retentionSeconds')::int;
    v_row.completed_retention_seconds := (v_eff ->> 'completedRetentionSeconds')::int;
    v_row.retention_enabled := (v_eff ->> 'retentionEnabled')::boolean;
    v_row.encryption_enabled := (v_eff ->> 'encryptionEnabled')::boolean;
    v_row.max_wait_time_seconds := (v_eff ->> 'maxWaitTimeSeconds')::int;
    v_row.min_pop_wait_time := least(greatest((v_eff ->> 'minPopWaitTime')::int, 0), 30000);
    v_row.dedup_window_seconds := greatest((v_eff ->> 'dedupWindowSeconds')::int, 0);
    v_row.retention_sink_hold := v_eff ->> 'retentionSinkHold';
    v_row.retention_sink_hold_max_seconds := (v_eff ->> 'retentionSinkHoldMaxSeconds')::int;

    if v_cur.id is not null then
      if v_row.encryption_enabled <> v_cur.encryption_enabled then
        perform 1 from log_partitions where queue_id = v_cur.id order by id for no key update;
      end if;
      update queues set
        namespace = v_row.namespace, task = v_row.task, priority = v_row.priority,
        lease_time = v_row.lease_time, retry_limit = v_row.retry_limit, retry_delay = v_row.retry_delay,
        max_size = v_row.max_size, ttl = v_row.ttl, dead_letter_queue = v_row.dead_letter_queue,
        dlq_after_max_retries = v_row.dlq_after_max_retries, delayed_processing = v_row.delayed_processing,
        window_buffer = v_row.window_buffer, retention_seconds = v_row.retention_seconds,
        completed_retention_seconds = v_row.completed_retention_seconds,
        retention_enabled = v_row.retention_enabled, encryption_enabled = v_row.encryption_enabled,
        max_wait_time_seconds = v_row.max_wait_time_seconds, min_pop_wait_time = v_row.min_pop_wait_time,
        dedup_window_seconds = v_row.dedup_window_seconds, retention_sink_hold = v_row.retention_sink_hold,
        retention_sink_hold_max_seconds = v_row.retention_sink_hold_max_seconds, updated_at = v_now
      where id = v_cur.id
      returning * into v_row;
      exit;
    end if;

    insert into queues (tenant_id, name, namespace, task, priority, lease_time, retry_limit, retry_delay,
                        max_size, ttl, dead_letter_queue, dlq_after_max_retries, delayed_processing,
                        window_buffer, retention_seconds, completed_retention_seconds, retention_enabled,
                        encryption_enabled, max_wait_time_seconds, min_pop_wait_time, dedup_window_seconds,
                        retention_sink_hold, retention_sink_hold_max_seconds, created_at, updated_at)
    values (p_tenant, p_queue, v_row.namespace, v_row.task, v_row.priority, v_row.lease_time,
            v_row.retry_limit, v_row.retry_delay, v_row.max_size, v_row.ttl, v_row.dead_letter_queue,
            v_row.dlq_after_max_retries, v_row.delayed_processing, v_row.window_buffer,
            v_row.retention_seconds, v_row.completed_retention_seconds, v_row.retention_enabled,
            v_row.encryption_enabled, v_row.max_wait_time_seconds, v_row.min_pop_wait_time,
            v_row.dedup_window_seconds, v_row.retention_sink_hold, v_row.retention_sink_hold_max_seconds,
            v_now, v_now)
    on conflict (tenant_id, name) do nothing
    returning * into v_row;
    exit when v_row.id is not null;
    -- A concurrent creator won: its row is committed now, so the next pass edits it.
  end loop;

  -- json, not jsonb, so the response keeps the documented key order.
  return json_build_object(
    'response', json_build_object(
      'configured', true,
      'queueId', v_row.id,
      'partitionId', null,
      'queue', v_row.name,
      'namespace', v_row.namespace,
      'task', v_row.task,
      'storage', 'segments',
      'options', (select json_object_agg(key, value order by n)
                    from json_each(_queue_options(v_row)) with ordinality as o(key, value, n)
                   where key not in ('namespace', 'task'))),
    'encryptionEnabled', v_row.encryption_enabled,
    'encryptionTurnedOff', coalesce(v_cur.encryption_enabled and not v_row.encryption_enabled, false));
end
$$;
