-- Finding a message by its key (partition, transactionId), for message detail, message delete and
-- traces. A key may have several retained frames (a repeat after its dedup window,
-- or with dedup off); readers want the newest, delete wants them all.

-- Every retained, not deleted frame of p_partition_id whose transaction id is p_txn, newest first.
-- Cost: a backward scan of the partition's segments, stopping as soon as a caller's LIMIT is met;
-- recent messages, the common case, are found in the newest segments.
-- Returns: (frame_offset, created_at, frame). Raises: nothing. STABLE: reads only.
create or replace function queen._frames_by_txn(p_partition_id uuid, p_txn text)
returns table (frame_offset bigint, created_at timestamptz, frame jsonb)
language sql stable
set search_path = queen, pg_catalog
as $$
  select s.base_offset + u.n - 1, s.created_at, u.f
    from log_segments s
    cross join lateral unnest(s.frames) with ordinality as u(f, n)
   where s.partition_id = p_partition_id
     and u.f ->> 'txn' = p_txn
     and not exists (select 1 from log_tombstones t
                      where t.partition_id = p_partition_id and t.frame_offset = s.base_offset + u.n - 1)
   order by s.base_offset desc, u.n desc
$$;

-- The partition p_partition_id if it belongs to a queue of p_tenant, else no row: every route that
-- takes a partition id checks tenancy through this.
-- Returns: (partition_id, partition_name, queue_id, queue_name, log_start, last_offset). STABLE.
create or replace function queen._tenant_partition(p_tenant text, p_partition_id uuid)
returns table (partition_id uuid, partition_name text, queue_id uuid, queue_name text, log_start bigint, last_offset bigint)
language sql stable
set search_path = queen, pg_catalog
as $$
  select p.id, p.name, q.id, q.name, p.log_start, p.last_offset
    from log_partitions p join queues q on q.id = p.queue_id
   where p.id = p_partition_id and q.tenant_id = p_tenant
$$;
