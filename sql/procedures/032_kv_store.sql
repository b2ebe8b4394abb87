-- Queen 1.6's namespaced key/value store (docs/kv.md): the batch of seven operations, the console's
-- two reads, and the kv_timers lane's expiry sweep. One function (_kv_apply) answers the batch
-- route, the single-key routes and the transaction's `kv` rider, so the three cannot drift.
--
-- Errors: QMKV4 a malformed operation (400 kv_bad_request, the message names the field), QMKVL a
-- value or key over its ceiling (413 payload_too_large), QMKVP a lost `required` precondition
-- (DETAIL {failedIndex, kvReason, value, version}; the callers turn it into a rolled-back 200).
-- Clock: every read and write of one call compares expiry against one instant, v_now.

-- _kv_row: one stored row as the wire shows it.
create or replace function queen._kv_row(p_row queen.kv_entries, p_keys_only boolean default false)
returns jsonb
language sql stable
set search_path = queen, pg_catalog
as $$
  select jsonb_build_object('key', p_row.key, 'version', p_row.version,
                            'expiresAt', _iso_us(p_row.expires_at), 'updatedAt', _iso_us(p_row.updated_at))
         || case when p_keys_only then '{}'::jsonb else jsonb_build_object('value', p_row.value) end
$$;

-- _kv_bad: raises QMKV4 naming the operation and what is wrong with it.
create or replace function queen._kv_bad(p_index integer, p_message text)
returns void
language plpgsql volatile
set search_path = queen, pg_catalog
as $$
begin
  raise exception using errcode = 'QMKV4', message = format('operations[%s]: %s', p_index, p_message);
end
$$;

-- _kv_check_name: a namespace or key is a non-empty string of at most p_max bytes; a namespace is
-- also a path segment of the single-key routes, so it may not hold '/' or control characters.
create or replace function queen._kv_check_name(p_index integer, p_field text, p_value jsonb, p_max integer, p_segment boolean)
returns text
language plpgsql volatile
set search_path = queen, pg_catalog
as $$
declare
  v text;
begin
  if p_value is null or jsonb_typeof(p_value) <> 'string' or p_value #>> '{}' = '' then
    perform _kv_bad(p_index, p_field || ' must be a non-empty string');
  end if;
  v := p_value #>> '{}';
  if octet_length(v) > p_max then
    raise exception using errcode = 'QMKVL', message = format('operations[%s]: %s is %s bytes (limit %s)', p_index, p_field, octet_length(v), p_max);
  end if;
  if p_segment and v ~ '[/[:cntrl:]]' then
    perform _kv_bad(p_index, p_field || ' must not contain "/" or control characters');
  end if;
  return v;
end
$$;

-- _kv_expiry: the expiry a write asks for: exactly one of ttlSeconds (an integer > 0) and
-- forever:true. Returns the instant, or null for forever; raises kv_expiry_not_specified otherwise.
create or replace function queen._kv_expiry(p_index integer, p_op jsonb, p_now timestamptz)
returns timestamptz
language plpgsql volatile
set search_path = queen, pg_catalog
as $$
declare
  v_ttl jsonb := p_op->'ttlSeconds';
  v_forever jsonb := p_op->'forever';
begin
  if v_forever is not null and v_forever <> 'true'::jsonb then
    perform _kv_bad(p_index, 'kv_expiry_not_specified: forever may only be true');
  end if;
  if (v_ttl is null) = (v_forever is null) then
    perform _kv_bad(p_index, 'kv_expiry_not_specified: give exactly one of ttlSeconds and forever');
  end if;
  if v_forever is not null then
    return null;
  end if;
  if jsonb_typeof(v_ttl) <> 'number' or (v_ttl #>> '{}')::numeric <> trunc((v_ttl #>> '{}')::numeric)
     or (v_ttl #>> '{}')::numeric <= 0 or (v_ttl #>> '{}')::numeric > 3153600000 then
    perform _kv_bad(p_index, 'ttlSeconds must be a positive integer');
  end if;
  return p_now + make_interval(secs => (v_ttl #>> '{}')::numeric);
end
$$;

-- _kv_apply: applies a batch of KV operations in order and returns one result per operation,
-- index-aligned. p_limits: {maxOps, maxKeys, maxValueBytes, maxKeyBytes, maxReadBytes, inTransaction}.
-- A failed `required` write raises QMKVP, so the caller's transaction (or block) rolls back.
-- Concurrency: writes lock their row (insert … on conflict, or select … for update), so versions
-- and increments serialise per key; reads take no locks.
create or replace function queen._kv_apply(p_tenant text, p_ops jsonb, p_limits jsonb, p_now timestamptz default null)
returns jsonb
language plpgsql volatile
set search_path = queen, pg_catalog
as $$
declare
  v_now timestamptz := coalesce(p_now, clock_timestamp());
  v_in_txn boolean := coalesce((p_limits->>'inTransaction')::boolean, false);
  v_max_ops integer := coalesce((p_limits->>'maxOps')::integer, 256);
  v_max_keys integer := coalesce((p_limits->>'maxKeys')::integer, 1024);
  v_max_value integer := coalesce((p_limits->>'maxValueBytes')::integer, 65536);
  v_max_key integer := coalesce((p_limits->>'maxKeyBytes')::integer, 512);
  v_budget bigint := coalesce((p_limits->>'maxReadBytes')::bigint, 4194304);
  v_op jsonb;
  v_i integer;
  v_name text;
  v_ns text;
  v_key text;
  v_allowed text[];
  v_extra text;
  v_keys integer := 0;
  v_written text[] := '{}'::text[];
  v_results jsonb := '[]'::jsonb;
  v_out jsonb;
  v_row kv_entries;
  v_found boolean;
  v_expires timestamptz;
  v_expect bigint;
  v_limit integer;
  v_rows jsonb;
  v_missing jsonb;
  v_truncated boolean;
  v_k text;
  v_num numeric;
  v_new numeric;
  v_delta numeric;
  v_applied boolean;
  v_reason text;
  v_keys_only boolean;
begin
  if p_ops is null or jsonb_typeof(p_ops) <> 'array' then
    raise exception using errcode = 'QMKV4', message = 'operations must be an array';
  end if;
  if jsonb_array_length(p_ops) > v_max_ops then
    raise exception using errcode = 'QMKV4', message = format('at most %s operations per call (got %s)', v_max_ops, jsonb_array_length(p_ops));
  end if;

  -- Shape first, for the whole batch: a malformed last operation must not leave the first applied.
  for v_op, v_i in select o, (ord - 1)::integer from jsonb_array_elements(p_ops) with ordinality as x(o, ord) loop
    if jsonb_typeof(v_op) <> 'object' then
      perform _kv_bad(v_i, 'must be an object');
    end if;
    v_name := v_op->>'op';
    v_allowed := case v_name
      when 'get' then array['op', 'ns', 'key']
      when 'getMany' then array['op', 'ns', 'keys']
      when 'getPrefix' then array['op', 'ns', 'prefix', 'after', 'limit', 'keysOnly']
      when 'put' then array['op', 'ns', 'key', 'value', 'ttlSeconds', 'forever', 'expect', 'required']
      when 'putIfAbsent' then array['op', 'ns', 'key', 'value', 'ttlSeconds', 'forever', 'required']
      when 'delete' then array['op', 'ns', 'key', 'expect', 'required']
      when 'incr' then array['op', 'ns', 'key', 'delta', 'ttlSeconds', 'forever', 'min', 'max', 'required']
    end;
    if v_allowed is null then
      perform _kv_bad(v_i, format('unknown op %s', coalesce(v_op->'op', 'null'::jsonb)));
    end if;
    select string_agg(k, ', ' order by k) into v_extra from jsonb_object_keys(v_op) k where k <> all (v_allowed);
    if v_extra is not null then
      perform _kv_bad(v_i, format('%s does not take %s', v_name, v_extra));
    end if;
    if v_name = 'getPrefix' and v_in_txn then
      perform _kv_bad(v_i, 'kv_get_prefix_not_allowed_in_transaction: run getPrefix through POST /api/v1/kv');
    end if;
    v_ns := _kv_check_name(v_i, 'ns', v_op->'ns', 128, true);
    if v_name = 'getMany' then
      if jsonb_typeof(v_op->'keys') is distinct from 'array' or jsonb_array_length(v_op->'keys') = 0 then
        perform _kv_bad(v_i, 'keys must be a non-empty array');
      end if;
      perform _kv_check_name(v_i, 'keys[]', k, v_max_key, false) from jsonb_array_elements(v_op->'keys') k;
      if (select count(distinct k) <> count(*) from jsonb_array_elements_text(v_op->'keys') k) then
        perform _kv_bad(v_i, 'keys names one key twice');
      end if;
      v_keys := v_keys + jsonb_array_length(v_op->'keys');
    elsif v_name = 'getPrefix' then
      if v_op->'prefix' is null or jsonb_typeof(v_op->'prefix') <> 'string' or v_op->>'prefix' = '' then
        perform _kv_bad(v_i, 'kv_prefix_required: prefix must be a non-empty string');
      end if;
      if v_op ? 'after' and jsonb_typeof(v_op->'after') not in ('string', 'null') then
        perform _kv_bad(v_i, 'after must be a string');
      end if;
      if v_op ? 'limit' and (jsonb_typeof(v_op->'limit') <> 'number' or (v_op->>'limit')::numeric <> trunc((v_op->>'limit')::numeric)) then
        perform _kv_bad(v_i, 'limit must be an integer');
      end if;
      if v_op ? 'keysOnly' and jsonb_typeof(v_op->'keysOnly') <> 'boolean' then
        perform _kv_bad(v_i, 'keysOnly must be a boolean');
      end if;
      v_keys := v_keys + least(greatest(coalesce((v_op->>'limit')::numeric, 100), 1), 1000)::integer;
    else
      v_key := _kv_check_name(v_i, 'key', v_op->'key', v_max_key, false);
      v_keys := v_keys + 1;
      if v_name in ('put', 'putIfAbsent', 'delete', 'incr') then
        if (v_ns || '/' || v_key) = any (v_written) then
          perform _kv_bad(v_i, format('the batch writes key %s of namespace %s twice', v_key, v_ns));
        end if;
        v_written := v_written || (v_ns || '/' || v_key);
        if v_op ? 'required' and jsonb_typeof(v_op->'required') <> 'boolean' then
          perform _kv_bad(v_i, 'required must be a boolean');
        end if;
      end if;
      if v_name in ('put', 'putIfAbsent') then
        if not v_op ? 'value' then
          perform _kv_bad(v_i, 'value is required');
        end if;
        if octet_length((v_op->'value')::text) > v_max_value then
          raise exception using errcode = 'QMKVL',
            message = format('operations[%s]: value is %s bytes (limit %s)', v_i, octet_length((v_op->'value')::text), v_max_value);
        end if;
      end if;
      if v_name in ('put', 'putIfAbsent', 'incr') then
        perform _kv_expiry(v_i, v_op, v_now);
      end if;
      if v_op ? 'expect' and (jsonb_typeof(v_op->'expect') <> 'number' or (v_op->>'expect')::numeric <> trunc((v_op->>'expect')::numeric)
                              or (v_op->>'expect')::numeric not between 0 and 9223372036854775807 or (v_name = 'delete' and (v_op->>'expect')::numeric = 0)) then
        perform _kv_bad(v_i, case when v_name = 'delete' then 'expect must be a version > 0' else 'expect must be 0 or a version > 0' end);
      end if;
      if v_name = 'incr' then
        if jsonb_typeof(v_op->'delta') is distinct from 'number' then
          perform _kv_bad(v_i, 'delta must be a number');
        end if;
        if (v_op ? 'min' and jsonb_typeof(v_op->'min') <> 'number') or (v_op ? 'max' and jsonb_typeof(v_op->'max') <> 'number') then
          perform _kv_bad(v_i, 'min and max must be numbers');
        end if;
      end if;
    end if;
  end loop;
  if v_keys > v_max_keys then
    raise exception using errcode = 'QMKV4', message = format('at most %s keys per call (got %s)', v_max_keys, v_keys);
  end if;

  for v_op, v_i in select o, (ord - 1)::integer from jsonb_array_elements(p_ops) with ordinality as x(o, ord) loop
    v_name := v_op->>'op';
    v_ns := v_op->>'ns';
    v_key := v_op->>'key';
    v_applied := null;
    v_reason := null;

    if v_name = 'get' then
      select * into v_row from kv_entries
       where tenant_id = p_tenant and ns = v_ns and key = v_key and (expires_at is null or expires_at > v_now);
      if found then
        v_out := jsonb_build_object('found', true) || _kv_row(v_row);
        v_budget := v_budget - octet_length(v_row.value::text);
      else
        v_out := jsonb_build_object('found', false, 'key', v_key);
      end if;

    elsif v_name = 'getMany' then
      v_rows := '[]'::jsonb;
      v_missing := '[]'::jsonb;
      v_truncated := false;
      for v_k in select jsonb_array_elements_text(v_op->'keys') loop
        if v_budget <= 0 then
          v_truncated := true;
          exit;
        end if;
        select * into v_row from kv_entries
         where tenant_id = p_tenant and ns = v_ns and key = v_k and (expires_at is null or expires_at > v_now);
        if found then
          v_rows := v_rows || _kv_row(v_row);
          v_budget := v_budget - octet_length(v_row.value::text);
        else
          v_missing := v_missing || to_jsonb(v_k);
        end if;
      end loop;
      v_out := jsonb_build_object('rows', v_rows, 'missing', v_missing, 'truncated', v_truncated);

    elsif v_name = 'getPrefix' then
      v_limit := least(greatest(coalesce((v_op->>'limit')::numeric, 100), 1), 1000)::integer;
      v_keys_only := coalesce((v_op->>'keysOnly')::boolean, false);
      v_rows := '[]'::jsonb;
      v_truncated := false;
      v_k := null;
      for v_row in select * from kv_entries
                    where tenant_id = p_tenant and ns = v_ns
                      and key >= (v_op->>'prefix') and starts_with(key, v_op->>'prefix')
                      and (v_op->>'after' is null or key > (v_op->>'after'))
                      and (expires_at is null or expires_at > v_now)
                    order by key limit v_limit + 1 loop
        if jsonb_array_length(v_rows) >= v_limit or (v_budget <= 0 and not v_keys_only) then
          v_truncated := true;
          exit;
        end if;
        v_rows := v_rows || _kv_row(v_row, v_keys_only);
        v_k := v_row.key;
        if not v_keys_only then
          v_budget := v_budget - octet_length(v_row.value::text);
        end if;
      end loop;
      v_out := jsonb_build_object('rows', v_rows, 'truncated', v_truncated, 'nextAfter', case when v_truncated then v_k end);

    elsif v_name in ('put', 'putIfAbsent') then
      v_expires := _kv_expiry(v_i, v_op, v_now);
      v_expect := case when v_name = 'putIfAbsent' then 0 else (v_op->>'expect')::bigint end;
      v_name := 'put';
      if v_expect is null then
        insert into kv_entries (tenant_id, ns, key, value, version, expires_at, updated_at)
        values (p_tenant, v_ns, v_key, v_op->'value', nextval('kv_version_seq'), v_expires, v_now)
        on conflict (tenant_id, ns, key) do update
          set value = excluded.value, version = excluded.version, expires_at = excluded.expires_at, updated_at = excluded.updated_at
        returning * into v_row;
        v_applied := true;
      elsif v_expect = 0 then
        -- "Must not exist": wins against a row whose expiry has passed, swept or not.
        insert into kv_entries as e (tenant_id, ns, key, value, version, expires_at, updated_at)
        values (p_tenant, v_ns, v_key, v_op->'value', nextval('kv_version_seq'), v_expires, v_now)
        on conflict (tenant_id, ns, key) do update
          set value = excluded.value, version = excluded.version, expires_at = excluded.expires_at, updated_at = excluded.updated_at
          where e.expires_at is not null and e.expires_at <= v_now
        returning * into v_row;
        v_applied := found;
        if not v_applied then
          v_reason := 'exists';
        end if;
      else
        update kv_entries set value = v_op->'value', version = nextval('kv_version_seq'), expires_at = v_expires, updated_at = v_now
         where tenant_id = p_tenant and ns = v_ns and key = v_key and version = v_expect and (expires_at is null or expires_at > v_now)
        returning * into v_row;
        v_applied := found;
      end if;

    elsif v_name = 'delete' then
      v_expect := (v_op->>'expect')::bigint;
      delete from kv_entries
       where tenant_id = p_tenant and ns = v_ns and key = v_key and (expires_at is null or expires_at > v_now)
         and (v_expect is null or version = v_expect)
      returning * into v_row;
      v_applied := found;
      if v_applied then
        v_row.value := 'null'::jsonb;
      end if;

    elsif v_name = 'incr' then
      v_delta := (v_op->>'delta')::numeric;
      loop
        select * into v_row from kv_entries where tenant_id = p_tenant and ns = v_ns and key = v_key for update;
        v_found := found and (v_row.expires_at is null or v_row.expires_at > v_now);
        if v_found and jsonb_typeof(v_row.value) <> 'number' then
          v_applied := false;
          v_reason := 'type';
          exit;
        end if;
        v_num := case when v_found then (v_row.value #>> '{}')::numeric else 0 end;
        v_new := v_num + v_delta;
        if (v_op ? 'max' and (v_new > (v_op->>'max')::numeric or v_delta > (v_op->>'max')::numeric))
           or (v_op ? 'min' and (v_new < (v_op->>'min')::numeric or v_delta < (v_op->>'min')::numeric)) then
          v_applied := false;
          v_reason := 'limit';
          if not v_found then
            v_row := null;
          end if;
          exit;
        end if;
        if v_found then
          -- A live row keeps its expiry: a window extended by every increment never closes.
          update kv_entries set value = to_jsonb(v_new), version = nextval('kv_version_seq'), updated_at = v_now
           where tenant_id = p_tenant and ns = v_ns and key = v_key
          returning * into v_row;
        elsif v_row.key is not null then
          -- An expired row counts as zero and starts a new window with the TTL given now.
          update kv_entries set value = to_jsonb(v_new), version = nextval('kv_version_seq'),
                                expires_at = _kv_expiry(v_i, v_op, v_now), updated_at = v_now
           where tenant_id = p_tenant and ns = v_ns and key = v_key
          returning * into v_row;
        else
          insert into kv_entries (tenant_id, ns, key, value, version, expires_at, updated_at)
          values (p_tenant, v_ns, v_key, to_jsonb(v_new), nextval('kv_version_seq'), _kv_expiry(v_i, v_op, v_now), v_now)
          on conflict (tenant_id, ns, key) do nothing
          returning * into v_row;
          continue when not found;
        end if;
        v_applied := true;
        exit;
      end loop;
    end if;

    if v_applied is not null then
      if not v_applied then
        -- The loser gets the current live row (if any), so it needs no second round trip.
        select * into v_row from kv_entries
         where tenant_id = p_tenant and ns = v_ns and key = v_key and (expires_at is null or expires_at > v_now);
        if not found then
          v_row := null;
        end if;
        v_reason := coalesce(v_reason, case when v_row.key is null then 'absent' else 'version' end);
        if coalesce((v_op->>'required')::boolean, false) then
          raise exception using errcode = 'QMKVP', message = 'kv_precondition',
            detail = jsonb_build_object('failedIndex', v_i, 'kvReason', v_reason, 'value', v_row.value, 'version', v_row.version)::text;
        end if;
      end if;
      v_out := jsonb_build_object('applied', v_applied, 'key', v_key, 'value', v_row.value, 'version', v_row.version)
               || case when v_reason is not null then jsonb_build_object('reason', v_reason) else '{}'::jsonb end;
    end if;
    v_results := v_results || (jsonb_build_object('index', v_i, 'op', v_name) || v_out);
  end loop;
  return v_results;
end
$$;

-- kv_apply_v1: POST /api/v1/kv and the single-key routes. Returns {results:[…]} on success, or
-- {ok:false, reason:'kv_precondition', failedIndex, kvReason, value, version} when a `required`
-- write lost its precondition; then nothing of the batch is written.
create or replace function queen.kv_apply_v1(p_tenant text, p_ops jsonb, p_limits jsonb default '{}', p_now timestamptz default null)
returns jsonb
language plpgsql volatile
set search_path = queen, pg_catalog
as $$
declare
  v_detail text;
begin
  if (select value from system_state where key = 'kv_enabled') = 'false'::jsonb then
    raise exception using errcode = 'QMKVD', message = 'kv_disabled';
  end if;
  begin
    return jsonb_build_object('results', _kv_apply(p_tenant, p_ops, p_limits, p_now));
  exception when sqlstate 'QMKVP' then
    get stacked diagnostics v_detail = pg_exception_detail;
    return jsonb_build_object('ok', false, 'reason', 'kv_precondition') || v_detail::jsonb;
  end;
end
$$;

-- kv_namespaces_v1: GET /api/v1/resources/kv/namespaces: every namespace of the tenant with its
-- exact row count, expired rows the sweep has not removed yet included, in byte order.
create or replace function queen.kv_namespaces_v1(p_tenant text)
returns jsonb
language sql volatile
set search_path = queen, pg_catalog
as $$
  select jsonb_build_object('namespaces', coalesce(jsonb_agg(jsonb_build_object('namespace', ns, 'keys', n) order by ns), '[]'::jsonb))
    from (select ns, count(*) as n from kv_entries where tenant_id = p_tenant group by ns) x
$$;

-- kv_list_v1: POST /api/v1/resources/kv/list: one keyset page of one namespace for the console.
-- p_args: {namespace, prefix?, after?, limit? (clamped to 1..1000, default 100), keysOnly?,
-- includeExpired?}. Rows carry `expired`, decided against one instant for the whole page; the page
-- stops after the row that crosses p_max_read_bytes of values. Returns {rows, truncated, nextAfter, bytes}.
create or replace function queen.kv_list_v1(p_tenant text, p_args jsonb, p_max_read_bytes bigint default 4194304, p_now timestamptz default null)
returns jsonb
language plpgsql volatile
set search_path = queen, pg_catalog
as $$
declare
  v_now timestamptz := coalesce(p_now, clock_timestamp());
  v_prefix text := coalesce(p_args->>'prefix', '');
  v_limit integer := least(greatest(coalesce((p_args->>'limit')::numeric, 100), 1), 1000)::integer;
  v_keys_only boolean := coalesce((p_args->>'keysOnly')::boolean, false);
  v_expired boolean := coalesce((p_args->>'includeExpired')::boolean, false);
  v_rows jsonb := '[]'::jsonb;
  v_bytes bigint := 0::bigint;
  v_row kv_entries;
  v_last text;
  v_truncated boolean := false;
begin
  perform _kv_check_name(0, 'namespace', p_args->'namespace', 128, true);
  for v_row in select * from kv_entries
                where tenant_id = p_tenant and ns = p_args->>'namespace'
                  and key >= v_prefix and starts_with(key, v_prefix)
                  and (p_args->>'after' is null or key > p_args->>'after')
                  and (v_expired or expires_at is null or expires_at > v_now)
                order by key limit v_limit + 1 loop
    if jsonb_array_length(v_rows) >= v_limit or (not v_keys_only and v_bytes >= p_max_read_bytes) then
      v_truncated := true;
      exit;
    end if;
    v_rows := v_rows || (_kv_row(v_row, v_keys_only)
                         || jsonb_build_object('expired', v_row.expires_at is not null and v_row.expires_at <= v_now));
    v_last := v_row.key;
    if not v_keys_only then
      v_bytes := v_bytes + octet_length(v_row.value::text);
    end if;
  end loop;
  return jsonb_build_object('rows', v_rows, 'truncated', v_truncated, 'nextAfter', case when v_truncated then v_last end,
                            'bytes', v_bytes);
end
$$;

-- kv_sweep_step_v1: one bounded step of the kv_timers lane's expiry sweep (docs/lanes.md). Deletes
-- up to p_limit rows whose expiry has passed; reads already hide them, so this only frees storage.
-- Returns {"processed", "next": null | "more"}. Raises: nothing. Clock: clock_timestamp() unless p_now.
create or replace function queen.kv_sweep_step_v1(p_limit integer default 10000, p_now timestamptz default null)
returns jsonb
language plpgsql volatile
set search_path = queen, pg_catalog
set lock_timeout = '1s'
as $$
declare
  v_now timestamptz := coalesce(p_now, clock_timestamp());
  v_deleted integer;
begin
  with doomed as (
    select tenant_id, ns, key from kv_entries
     where expires_at <= v_now
     order by expires_at
     limit greatest(p_limit, 1)
     for update skip locked
  )
  delete from kv_entries e using doomed d
   where e.tenant_id = d.tenant_id and e.ns = d.ns and e.key = d.key and e.expires_at <= v_now;
  get diagnostics v_deleted = row_count;
  return jsonb_build_object('processed', v_deleted, 'next', case when v_deleted >= greatest(p_limit, 1) then 'more' end);
end
$$;
