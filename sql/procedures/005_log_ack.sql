-- Ack, retry and the dead-letter queue: log_ack_v1 chooses one of three paths, each in its own
-- file, which give the same verdicts in different shapes (src/db/procedures.ts reads all three):
--   005_log_ack_plain.sql     one cursor row's common batch, settled by set arithmetic;
--   005_log_ack_per_row.sql   several rows (a fused call), each settled the plain way if it can be;
--   005_log_ack_per_item.sql  the general path, item by item, for everything else.
-- The cursor state machine they share is 004_log_cursor.sql. All four files are plpgsql, which
-- finds the functions it calls when it runs, so the order of these files does not matter.

-- log_ack_v1: POST /api/v1/ack and /ack/batch. Per-item verdicts are JSON, never raised, so one bad
-- item cannot roll back its neighbours (in its batch or its fused call). Clock: clock_timestamp()
-- unless p_now.
-- Returns _log_ack_plain's compact answer when the batch is the common shape of one row, else
-- _log_ack_leases' answer (several rows) or _log_ack's array.
create or replace function queen.log_ack_v1(p_tenant text, p_acks jsonb, p_now timestamptz default null)
returns jsonb
language plpgsql volatile
set search_path = queen, pg_catalog
as $$
declare
  v_now timestamptz := coalesce(p_now, clock_timestamp());
  v_last integer := jsonb_array_length(p_acks) - 1;
begin
  -- A batch whose first and last items name different rows is not one row's: it skips
  -- _log_ack_plain's whole-batch shape check, which would only decline it.
  if v_last > 0 and ((p_acks->0->>'partitionId') is distinct from (p_acks->v_last->>'partitionId')
                     or (p_acks->0->>'consumerGroup') is distinct from (p_acks->v_last->>'consumerGroup')) then
    return _log_ack_leases(p_tenant, p_acks, v_now);
  end if;
  return coalesce(_log_ack_plain(p_tenant, p_acks, v_now), _log_ack_leases(p_tenant, p_acks, v_now));
end
$$;
