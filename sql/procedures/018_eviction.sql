-- log_evict_max_wait_step_v1: one bounded step of the eviction lane (docs/retention.md):
-- maxWaitTimeSeconds deletes messages. Delete-and-advance on every queue with
-- max_wait_time_seconds > 0, cutoff now - max_wait_time_seconds: not gated by retentionEnabled,
-- not floored by the sink hold, blind to groups and live leases. Deliberate data loss: an evicted
-- frame is neither delivered nor dead-lettered; cursors and leases below the new log start resume
-- at the next existing offset on their next pop, and an ack of an evicted offset answers evicted.
-- Returns: {"processed": <segments deleted>, "next": '<queue id>/<partition id>' | null at pass end}.
-- Raises: nothing of its own (55P03 after the 1 s lock_timeout backstop). Concurrency and
-- idempotence as log_retention_step_v1. Clock: clock_timestamp() unless p_now pins it.
create or replace function queen.log_evict_max_wait_step_v1(
  p_next text default null,
  p_limit integer default 1000,
  p_now timestamptz default null
) returns jsonb
language plpgsql volatile
set search_path = queen, pg_catalog
set lock_timeout = '1s'
as $$
begin
  return _log_trim_step('eviction', p_next, p_limit, coalesce(p_now, clock_timestamp()));
end
$$;
