-- _ensure_queue: the one auto-create path for queues (design decision 28), used by push,
-- transaction pushes and queue-scoped pops. Every column takes its default except namespace and
-- task, which are derived from a dotted name, so a queue first created by a consumer is still found
-- by discovery.
-- Returns: the queue's id. Raises: nothing. Concurrency: INSERT … ON CONFLICT DO NOTHING waits for a
-- racing creator to commit; the follow-up SELECT runs under a fresh snapshot (VOLATILE) and sees it.
-- The row is held FOR KEY SHARE (rank 1 of the lock order, design decision 4) until the caller
-- commits, so a concurrent delete_queue_v1 waits for this push or pop instead of deleting the queue
-- between its statements (which would fail their partition and group inserts on the foreign key). A
-- delete that won the race is seen here as a missing row, and the queue is created afresh.
create or replace function queen._ensure_queue(p_tenant text, p_queue text)
returns uuid
language plpgsql volatile
set search_path = queen, pg_catalog
as $$
declare
  v_id uuid;
begin
  loop
    select id into v_id from queues where tenant_id = p_tenant and name = p_queue for key share;
    exit when found;
    insert into queues (tenant_id, name, namespace, task)
    values (p_tenant, p_queue, _derive_namespace(p_queue), _derive_task(p_queue))
    on conflict (tenant_id, name) do nothing
    returning id into v_id;
    exit when v_id is not null;
  end loop;
  return v_id;
end
$$;
