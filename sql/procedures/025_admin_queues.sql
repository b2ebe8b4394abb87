-- Queue administration: deleting a queue with everything it holds, clearing a queue or one
-- partition by advancing its log start, and the partition listing with depth (the last two are
-- admin routes Queen's clients call beyond the original route table).

-- queue_clear_v1: DELETE /api/v1/queues/:queue/clear[?partition=] (admin, design decision 44).
-- Removes every retained frame of each partition in scope with retention's delete-and-advance
-- (_log_delete_and_advance, 017_retention.sql): segments go, log_start moves to last_offset + 1, so
-- offsets never get a hole, the next push continues the sequence, and every cursor stays valid (pop
-- and ack rebase a cursor below log_start, design decision 11). DLQ rows are copies and are kept;
-- the dedup hashes are kept too (a repeat push inside its window still reports the original). count
-- is the number of retained, undeleted frames removed.
-- Returns: {cleared:true, count, queue, partition:<name>|"all"}.
-- Raises: QM404 for an unknown queue, QMNFP for an unknown partition. Concurrency: each partition's allocator row is locked FOR NO KEY
-- UPDATE in id order (design decision 4), waiting for a push in flight, so the lock held makes the
-- helper's SKIP LOCKED find its own row; a push after the clear lands above the new log start.
create or replace function queen.queue_clear_v1(p_tenant text, p_queue text, p_partition text default null)
returns jsonb
language plpgsql volatile
set search_path = queen, pg_catalog
as $$
declare
  v_qid uuid;
  v_count bigint := 0::bigint;
  v_n bigint;
  r record;
begin
  select id into v_qid from queues where tenant_id = p_tenant and name = p_queue;
  if v_qid is null then
    raise exception using errcode = 'QM404', message = 'queue not found';
  end if;
  if p_partition is not null and not exists (select 1 from log_partitions where queue_id = v_qid and name = p_partition) then
    raise exception using errcode = 'QMNFP', message = 'partition not found';
  end if;

  for r in
    select p.id from log_partitions p
     where p.queue_id = v_qid and (p_partition is null or p.name = p_partition)
     order by p.id
       for no key update
  loop
    select p.last_offset + 1 - p.log_start
           - (select count(*) from log_tombstones t where t.partition_id = p.id and t.frame_offset >= p.log_start)
      into v_n
      from log_partitions p where p.id = r.id;
    v_count := v_count + greatest(v_n, 0);
    -- 'infinity' as the age cutoff matches every segment; the budget covers the whole partition.
    perform _log_delete_and_advance(r.id, v_qid, 'infinity'::timestamptz, null, 2147483647);
  end loop;

  return jsonb_build_object('cleared', true, 'count', v_count, 'queue', p_queue, 'partition', coalesce(p_partition, 'all'));
end
$$;

-- partition_list_v1: GET /api/v1/resources/partitions, the older Node server's shape. One page of
-- the tenant's partitions (of one queue when p_filter.queue is set; an unknown queue is an empty
-- page, design decision 30), ordered by queue then partition name, with depth = pending and
-- processing of the worst cursor among the queue's registered groups (_partition_depth, the status
-- detail's numbers) and total = retained frames (hw − log_start). minDepth keeps partitions whose
-- depth is at least that. p_filter {queue?, minDepth, limit, offset}.
-- Returns: {partitions:[{id, name, queue, namespace, task, queuePriority, createdAt, depth,
-- processing, total}], pagination:{limit, offset, total}}. Raises: nothing. VOLATILE (no pooler
-- cache). Cost: every partition of the queues in scope (index-only arithmetic, no segments).
-- Clock: p_now decides which leases are live.
create or replace function queen.partition_list_v1(p_tenant text, p_filter jsonb, p_now timestamptz default null)
returns jsonb
language sql volatile
set search_path = queen, pg_catalog
as $$
  with rows as (
    select d.partition_id, d.name, q.name as queue, q.namespace, q.task, q.priority, d.created_at,
           d.pending, d.processing, d.hw - d.log_start as total
      from queues q
      cross join lateral _partition_depth(q.id, null, coalesce(p_now, now())) d
     where q.tenant_id = p_tenant
       and (p_filter ->> 'queue' is null or q.name = p_filter ->> 'queue')
       and d.pending >= coalesce((p_filter ->> 'minDepth')::bigint, 0)
  ), page as (
    select * from rows order by queue, name
     limit (p_filter ->> 'limit')::int offset (p_filter ->> 'offset')::bigint
  )
  select jsonb_build_object(
    'partitions', coalesce((select jsonb_agg(jsonb_build_object(
        'id', partition_id, 'name', name, 'queue', queue, 'namespace', namespace, 'task', task,
        'queuePriority', priority, 'createdAt', _iso_ms(created_at), 'depth', pending, 'processing', processing,
        'total', total) order by queue, name) from page), '[]'),
    'pagination', jsonb_build_object('limit', (p_filter ->> 'limit')::int, 'offset', (p_filter ->> 'offset')::bigint,
                                     'total', (select count(*) from rows)))
$$;

-- delete_queue_v1: the whole delete in one transaction. log_txns and log_dlq carry no foreign key
-- (the purge path must never pay FK-trigger cost), so their rows go first, explicitly, while the
-- partitions still resolve; then the queues row, whose cascade removes partitions, segments,
-- cursors, group metadata, stats and metrics. Traces and kv entries are kept.
-- Returns: {deleted:true, queue, existed:true} or {deleted:false, queue, existed:false, message}.
-- Raises: nothing. Concurrency: the queue row is locked first, so a concurrent configure or a push
-- creating a partition waits and then finds the queue gone (a push re-creates it, as any first
-- push would).
create or replace function queen.delete_queue_v1(p_tenant text, p_queue text)
returns jsonb
language plpgsql volatile
set search_path = queen, pg_catalog
as $$
declare
  v_id uuid;
begin
  select id into v_id from queues where tenant_id = p_tenant and name = p_queue for update;
  if v_id is null then
    return jsonb_build_object('deleted', false, 'queue', p_queue, 'existed', false,
                              'message', 'Queue not found, nothing was deleted');
  end if;
  delete from log_txns t using log_partitions p where p.queue_id = v_id and t.partition_id = p.id;
  delete from log_dlq where queue_id = v_id;
  delete from queues where id = v_id;
  return jsonb_build_object('deleted', true, 'queue', p_queue, 'existed', true);
end
$$;
