-- _ensure_queue: the one auto-create path for queues (ENGINE 2.1, D11), used by push, transaction
-- pushes and queue-scoped pops. Every column takes its default except namespace and task, which are
-- derived from a dotted name, so a queue first created by a consumer is still found by discovery.
-- Returns: the queue's id. Raises: nothing. Concurrency: INSERT … ON CONFLICT DO NOTHING waits for a
-- racing creator to commit; the follow-up SELECT runs under a fresh snapshot (VOLATILE) and sees it.
-- The row is held FOR KEY SHARE (rank 1 of ENGINE 1.4's order) until the caller commits, so a
-- concurrent delete_queue_v1 waits for this push or pop instead of deleting the queue between its
-- statements (which would fail their partition and group inserts on the foreign key). A delete
-- that won the race is seen here as a missing row, and the queue is created afresh.
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

-- _iso_us: the wire form of a frame's createdAt, UTC with microseconds (API 1.7).
create or replace function queen._iso_us(p_at timestamptz)
returns text
language sql stable
-- STABLE with no SET clause and a schema-qualified body, so PostgreSQL inlines it: pop formats one
-- per delivered frame, and the SET clause made each a full call (4.5 µs instead of 1.1 µs).
-- (to_char is STABLE, so an IMMUTABLE declaration would also forbid inlining.)
as $$
  select pg_catalog.to_char(p_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')
$$;

-- _iso_ms: every other timestamp on the wire, UTC with milliseconds (API 1.7).
create or replace function queen._iso_ms(p_at timestamptz)
returns text
language sql stable
-- STABLE with no SET clause and a schema-qualified body, so PostgreSQL inlines it: pop formats one
-- per delivered frame, and the SET clause made each a full call (4.5 µs instead of 1.1 µs).
-- (to_char is STABLE, so an IMMUTABLE declaration would also forbid inlining.)
as $$
  select pg_catalog.to_char(p_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
$$;

-- _is_uuid: whether client text may be cast to uuid. A malformed id is "not found", never a 22P02
-- (API 2.2: deterministic problems are 4xx or per-item verdicts).
create or replace function queen._is_uuid(p_text text)
returns boolean
language sql immutable
-- No SET clause, so it is inlined (see _uuid_v7); `~*` is pg_catalog's text operator.
as $$
  select p_text operator(pg_catalog.~*) '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$'
$$;
