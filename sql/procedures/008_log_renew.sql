-- log_renew_v1: POST /api/v1/lease/:leaseId/extend. Extends every partition
-- holding a live lease, in the tenant, to max(current expiry, now + seconds): never shorter.
-- An item with `exact: true` sets the expiry to now + seconds, shorter or longer: SQS's
-- ChangeMessageVisibility restarts the visibility from now (the native route never sends it).
-- p_items: [{index, leaseId, seconds, exact?}]. Returns, in index order,
--   [{index, leaseId, success, error, code, expiresAt, partitionsExtended}]; expiresAt is the earliest
--   new expiry. No matching live row: "Lease already expired" when a row still carries the id, else
--   "Lease not found". Raises nothing.
-- Concurrency: the lease's rows are locked in (partition, group) order before the update, the same
-- order ack uses, so a renew and an ack of one multi-partition lease cannot deadlock.
-- Clock: clock_timestamp() unless p_now pins it.
create or replace function queen.log_renew_v1(p_tenant text, p_items jsonb, p_now timestamptz default null)
returns jsonb
language plpgsql volatile
set search_path = queen, pg_catalog
as $$
declare
  v_now timestamptz := coalesce(p_now, clock_timestamp());
  v_results jsonb[] := '{}'::jsonb[];
  it jsonb;
  v_lease uuid;
  v_secs integer;
  v_exact boolean;
  v_min timestamptz;
  v_n integer;
  v_error text;
  v_code text;
begin
  for it in select x from jsonb_array_elements(p_items) x order by (x->>'index')::integer loop
    v_lease := case when _is_uuid(it->>'leaseId') then (it->>'leaseId')::uuid end;
    v_secs := coalesce((it->>'seconds')::integer, 60);
    v_exact := coalesce((it->>'exact')::boolean, false);
    v_min := null;
    v_n := 0;
    v_error := null;
    v_code := null;
    if v_lease is not null then
      perform 1 from log_consumers c
        join log_partitions p on p.id = c.partition_id
        join queues q on q.id = p.queue_id and q.tenant_id = p_tenant
       where c.lease_id = v_lease and c.lease_expires_at > v_now
       order by c.partition_id, c.consumer_group
         for update of c;
      with upd as (
        update log_consumers c
           set lease_expires_at = case when v_exact then v_now + make_interval(secs => v_secs)
                                       else greatest(c.lease_expires_at, v_now + make_interval(secs => v_secs)) end
          from log_partitions p join queues q on q.id = p.queue_id and q.tenant_id = p_tenant
         where c.lease_id = v_lease and c.partition_id = p.id and c.lease_expires_at > v_now
        returning c.lease_expires_at
      )
      select min(lease_expires_at), count(*)::integer into v_min, v_n from upd;
    end if;
    if v_n = 0 then
      if v_lease is not null and exists (
           select 1 from log_consumers c
             join log_partitions p on p.id = c.partition_id
             join queues q on q.id = p.queue_id and q.tenant_id = p_tenant
            where c.lease_id = v_lease) then
        v_error := 'Lease already expired';
        v_code := 'lease_expired';
      else
        v_error := 'Lease not found';
        v_code := 'lease_not_found';
      end if;
    end if;
    v_results := v_results || jsonb_build_object(
      'index', (it->>'index')::integer, 'leaseId', it->>'leaseId', 'success', v_n > 0, 'error', v_error,
      'code', v_code, 'expiresAt', _iso_ms(v_min), 'partitionsExtended', v_n);
  end loop;
  return to_jsonb(v_results);
end
$$;
