-- log_retained_bytes_step_v1: one bounded step of the retained_bytes lane (docs/retention.md). For
-- each queue, in id order after p_next, a walk of its segments gives segment_count and
-- retained_bytes = sum(pg_column_size(frames)) (stored bytes: a TOASTed array is measured without
-- being detoasted), and log_dlq gives dlq_total. The stats row is upserted touching only these
-- columns and bytes_computed_at: stats_refresh owns the others of the same row.
-- p_limit bounds the rows a step reads: each segment counts one, and so does each partition and
-- queue visited. A queue larger than that is walked over several steps, partition by partition in
-- id order and each by base_offset, its partial sums carried in p_next: a queue of millions of
-- segments no longer makes one step of seconds. Its figure is then the sum over the steps that
-- walked it, as a pass's figures always were a sum over moments (the lane runs every few minutes).
-- p_next: null (from the first queue), a queue id (resume after it), or the token this function
-- returned mid-queue: {"queue", "partition", "base", "segments", "bytes"}.
-- Returns: {"processed": <queues written>, "next": <resume token> | null at pass end}.
-- Raises: nothing of its own (55P03 after the 1 s lock_timeout backstop). Concurrency: the queue
-- row is KEY SHARE locked (SKIP LOCKED) before the upsert, so a queue being deleted or configured
-- right now is skipped until the next pass rather than tripping the stats foreign key or making
-- the step wait; rerunning rewrites equal values. Clock: bytes_computed_at is clock_timestamp()
-- unless p_now pins it.
create or replace function queen.log_retained_bytes_step_v1(
  p_next text default null,
  p_limit integer default 200000,
  p_now timestamptz default null
) returns jsonb
language plpgsql volatile
set search_path = queen, pg_catalog
set lock_timeout = '1s'
as $$
declare
  v_now timestamptz := coalesce(p_now, clock_timestamp());
  v_token jsonb := case when left(p_next, 1) = '{' then p_next::jsonb end;
  v_after uuid := case when _is_uuid(p_next) then p_next::uuid end;
  v_left bigint := greatest(coalesce(p_limit, 1), 1)::bigint;
  v_processed integer := 0;
  v_queue queues;
  v_partition uuid := (v_token ->> 'partition')::uuid;
  v_base bigint := coalesce((v_token ->> 'base')::bigint, -1);
  v_segments bigint := coalesce((v_token ->> 'segments')::bigint, 0);
  v_bytes bigint := coalesce((v_token ->> 'bytes')::bigint, 0);
  v_read bigint;
  v_read_bytes bigint;
  v_last_base bigint;
  v_dlq bigint;
  p record;
begin
  if v_token is not null then
    select * into v_queue from queues where id = (v_token ->> 'queue')::uuid;
    if not found then
      -- Deleted mid-walk: go on after it.
      select * into v_queue from queues where id > (v_token ->> 'queue')::uuid order by id limit 1;
      v_partition := null;
      v_base := -1;
      v_segments := 0;
      v_bytes := 0;
    end if;
  else
    select * into v_queue from queues where v_after is null or id > v_after order by id limit 1;
  end if;

  while v_queue.id is not null loop
    for p in select id from log_partitions
              where queue_id = v_queue.id and (v_partition is null or id >= v_partition) order by id loop
      if v_left <= 0 then
        return jsonb_build_object('processed', v_processed, 'next', jsonb_build_object(
          'queue', v_queue.id, 'partition', p.id, 'base', case when p.id = v_partition then v_base else -1 end,
          'segments', v_segments, 'bytes', v_bytes)::text);
      end if;
      select count(*), coalesce(sum(x.size), 0), max(x.base_offset) into v_read, v_read_bytes, v_last_base
        from (select s.base_offset, pg_column_size(s.frames) as size
                from log_segments s
               where s.partition_id = p.id and s.base_offset > case when p.id = v_partition then v_base else -1 end
               order by s.base_offset
               limit v_left) x;
      v_segments := v_segments + v_read;
      v_bytes := v_bytes + v_read_bytes;
      v_left := v_left - greatest(v_read, 1);
      if v_read > 0 and v_left <= 0 then
        -- The budget ran out inside this partition: resume after the last segment read.
        return jsonb_build_object('processed', v_processed, 'next', jsonb_build_object(
          'queue', v_queue.id, 'partition', p.id, 'base', v_last_base, 'segments', v_segments, 'bytes', v_bytes)::text);
      end if;
    end loop;

    perform 1 from queues where id = v_queue.id for key share skip locked;
    if found then
      select count(*) into v_dlq from log_dlq where queue_id = v_queue.id;
      insert into stats (queue_id, tenant_id, segment_count, retained_bytes, dlq_total, bytes_computed_at)
      values (v_queue.id, v_queue.tenant_id, v_segments, v_bytes, v_dlq, v_now)
      on conflict (queue_id) do update
         set segment_count = excluded.segment_count, retained_bytes = excluded.retained_bytes,
             dlq_total = excluded.dlq_total, bytes_computed_at = excluded.bytes_computed_at;
      v_processed := v_processed + 1;
    end if;
    v_left := v_left - 1;
    if v_left <= 0 then
      return jsonb_build_object('processed', v_processed, 'next', v_queue.id::text);
    end if;
    select * into v_queue from queues where id > v_queue.id order by id limit 1;
    v_partition := null;
    v_base := -1;
    v_segments := 0;
    v_bytes := 0;
  end loop;
  return jsonb_build_object('processed', v_processed, 'next', null);
end
$$;
