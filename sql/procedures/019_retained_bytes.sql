-- log_retained_bytes_step_v1: one bounded step of the retained_bytes lane (docs/retention.md). For
-- each queue, in id order after p_next, one scan of its segments gives segment_count and
-- retained_bytes = sum(pg_column_size(frames)) (stored bytes: a TOASTed array is measured without
-- being detoasted), and log_dlq gives dlq_total. The stats row is upserted touching only these
-- columns and bytes_computed_at: stats_refresh owns the others of the same row.
-- p_limit bounds the segments counted per step; a step always finishes the queue it started, so a
-- queue larger than p_limit is one (longer) step.
-- Returns: {"processed": <queues written>, "next": <last queue id> | null at pass end}.
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
  v_after uuid := case when _is_uuid(p_next) then p_next::uuid end;
  v_left bigint := greatest(coalesce(p_limit, 1), 1)::bigint;
  v_processed integer := 0;
  v_last uuid;
  v_segments bigint;
  v_bytes bigint;
  v_dlq bigint;
  r record;
begin
  for r in select id, tenant_id from queues where v_after is null or id > v_after order by id loop
    if v_left <= 0 then
      return jsonb_build_object('processed', v_processed, 'next', v_last);
    end if;
    perform 1 from queues where id = r.id for key share skip locked;
    if found then
      select count(*), coalesce(sum(pg_column_size(s.frames)), 0)
        into v_segments, v_bytes
        from log_partitions p
        join log_segments s on s.partition_id = p.id
       where p.queue_id = r.id;
      select count(*) into v_dlq from log_dlq where queue_id = r.id;
      insert into stats (queue_id, tenant_id, segment_count, retained_bytes, dlq_total, bytes_computed_at)
      values (r.id, r.tenant_id, v_segments, v_bytes, v_dlq, v_now)
      on conflict (queue_id) do update
         set segment_count = excluded.segment_count, retained_bytes = excluded.retained_bytes,
             dlq_total = excluded.dlq_total, bytes_computed_at = excluded.bytes_computed_at;
      v_processed := v_processed + 1;
      v_left := v_left - greatest(v_segments, 1);
    end if;
    v_last := r.id;
  end loop;
  return jsonb_build_object('processed', v_processed, 'next', null);
end
$$;
