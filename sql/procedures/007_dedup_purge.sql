-- log_dedup_purge_step_v1: one bounded step of the dedup_purge lane (docs/lanes.md). Deletes up to
-- p_limit dedup hashes whose window has passed. Pushes already ignore expired hashes
-- (design decision 8), so this only bounds storage; it is idempotent and never waits on a row
-- another step holds.
-- Returns: {"processed": <rows deleted>, "next": null | "more"}; "more" asks the runner to step again.
-- Raises: nothing. Clock: clock_timestamp() unless p_now pins it.
create or replace function queen.log_dedup_purge_step_v1(
  p_limit integer default 10000,
  p_now timestamptz default null
) returns jsonb
language plpgsql volatile
set search_path = queen, pg_catalog
set lock_timeout = '1s'
as $$
declare
  v_now timestamptz := coalesce(p_now, clock_timestamp());
  v_deleted integer;
begin
  with doomed as (
    select partition_id, txn_hash from log_txns
     where expires_at <= v_now
     order by expires_at
     limit greatest(p_limit, 1)
     for update skip locked
  )
  delete from log_txns t using doomed d
   where t.partition_id = d.partition_id and t.txn_hash = d.txn_hash;
  get diagnostics v_deleted = row_count;
  return jsonb_build_object('processed', v_deleted,
                            'next', case when v_deleted >= greatest(p_limit, 1) then 'more' end);
end
$$;
