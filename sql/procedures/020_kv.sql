-- Key/value pointers (design decision 31), tenant-scoped: the sink's committed pointer
-- s3:<sink>:<queue>:committed lives here. Values are any JSON and tenant-writable; retention reads
-- them as untrusted (017_retention.sql, _kv_committed_end). Keys are 1 to 400 characters (code
-- points, not bytes); the route checks first, these raise QM400 as a backstop.

-- kv_put_v1: writes (inserts or replaces) one key. Last writer wins; concurrent puts of one key
-- serialise on its primary key. Returns {"key", "value", "updatedAt"}. Raises QM400 for a bad key.
-- Clock: updated_at is clock_timestamp() unless p_now pins it.
create or replace function queen.kv_put_v1(p_tenant text, p_key text, p_value jsonb, p_now timestamptz default null)
returns jsonb
language plpgsql volatile
set search_path = queen, pg_catalog
as $$
declare
  v_row kv;
begin
  if p_key is null or char_length(p_key) not between 1 and 400 then
    raise exception using errcode = 'QM400', message = 'key: must be 1 to 400 characters';
  end if;
  insert into kv (tenant_id, key, value, updated_at)
  values (p_tenant, p_key, coalesce(p_value, 'null'::jsonb), coalesce(p_now, clock_timestamp()))
  on conflict (tenant_id, key) do update set value = excluded.value, updated_at = excluded.updated_at
  returning * into v_row;
  return jsonb_build_object('key', v_row.key, 'value', v_row.value, 'updatedAt', _iso_ms(v_row.updated_at));
end
$$;

-- kv_get_v1: reads one key of the tenant. Returns {"key", "value", "updatedAt"}. Raises QMNFK when
-- the tenant has no such key (another tenant's key is exactly as absent).
create or replace function queen.kv_get_v1(p_tenant text, p_key text)
returns jsonb
language sql volatile
set search_path = queen, pg_catalog
as $$
  select coalesce((select jsonb_build_object('key', key, 'value', value, 'updatedAt', _iso_ms(updated_at))
                     from kv where tenant_id = p_tenant and key = p_key),
                  _raise('QMNFK', 'key not found'))
$$;

-- kv_delete_v1: deletes one key of the tenant. Returns {"deleted": <whether a row went>}.
create or replace function queen.kv_delete_v1(p_tenant text, p_key text)
returns jsonb
language plpgsql volatile
set search_path = queen, pg_catalog
as $$
declare
  v_n integer;
begin
  delete from kv where tenant_id = p_tenant and key = p_key;
  get diagnostics v_n = row_count;
  return jsonb_build_object('deleted', v_n > 0);
end
$$;
