-- log_fetch_v1 (POST /api/v1/fetch, docs/sink-protocol.md): the read half of partitions/changed.
-- Reads frames of partition logs by offset; no lease, cursor, group or subscription; writes
-- nothing.
-- Each entry {queue, partition, fromOffset, limit?, maxBytes?} answers {queue, partition,
-- logStart, lastOffset, fromOffset, nextOffset, frames:[{offset, id, transactionId, traceId,
-- producerSub, createdAt, enc, data}]}, or {queue, partition, error:"QUEUE_NOT_FOUND" |
-- "PARTITION_NOT_FOUND", message}. fromOffset is raised to logStart (a gap retention removed);
-- frames stop at limit (default 1000, clamped to [1, 10000]), at maxBytes of stored frame bytes
-- (default 1 MiB, clamped to [1, 8 MiB]) or when 8 MiB across all entries is spent, and include at
-- least one frame whenever one exists and budget remains, so paging always progresses.
-- Tombstoned (deleted) frames are skipped (design decision 43). `enc` tells the route which
-- payloads to decrypt.
-- Returns: {entries:[…]} in request order. Raises: QM400 for a malformed entry (the route refuses
-- those first). VOLATILE, so a caching pooler (Hyperdrive) never answers it from cache; offsets
-- below hw are immutable, so a concurrent push or ack never changes what a range read returns.
-- Clock: none.
create or replace function queen.log_fetch_v1(p_tenant text, p_entries jsonb)
returns jsonb
language plpgsql volatile
set search_path = queen, pg_catalog
as $$
declare
  c_request_budget constant bigint := 8388608::bigint;
  v_spent bigint := 0::bigint;
  v_entry jsonb;
  -- One element per entry, turned into the answer's array once at the end: appending to a jsonb
  -- array copies it whole, so a call of 100 full entries cost a quadratic copy (about 1 s).
  v_out jsonb[] := '{}'::jsonb[];
  v_queue text;
  v_partition text;
  v_queue_id uuid;
  v_part log_partitions;
  v_from bigint;
  v_limit int;
  v_max_bytes bigint;
  v_bytes bigint;
  v_items jsonb[];
  v_count int;
  v_next bigint;
  v_seg record;
  v_first bigint;
  v_slice jsonb[];
  v_frame jsonb;
  v_offset bigint;
  v_size bigint;
  v_created text;
begin
  if jsonb_typeof(p_entries) is distinct from 'array' then
    raise exception using errcode = 'QM400', message = 'entries: must be an array';
  end if;

  for v_entry in select e from jsonb_array_elements(p_entries) e loop
    v_queue := v_entry ->> 'queue';
    v_partition := v_entry ->> 'partition';
    v_limit := least(greatest(coalesce((v_entry ->> 'limit')::numeric, 1000), 1), 10000)::int;
    v_max_bytes := least(greatest(coalesce((v_entry ->> 'maxBytes')::numeric, 1048576), 1), 8388608)::bigint;

    select id into v_queue_id from queues where tenant_id = p_tenant and name = v_queue;
    if v_queue_id is null then
      v_out := v_out || (jsonb_build_object('queue', v_queue, 'partition', v_partition,
        'error', 'QUEUE_NOT_FOUND', 'message', 'Queue not found'));
      continue;
    end if;
    select * into v_part from log_partitions where queue_id = v_queue_id and name = v_partition;
    if v_part.id is null then
      v_out := v_out || (jsonb_build_object('queue', v_queue, 'partition', v_partition,
        'error', 'PARTITION_NOT_FOUND', 'message', 'Partition not found'));
      continue;
    end if;

    v_from := greatest((v_entry ->> 'fromOffset')::bigint, v_part.log_start);
    v_items := '{}';
    v_count := 0;
    v_bytes := 0;
    v_next := v_from;
    -- Segment by segment in offset order (the primary key's order, so nothing is sorted), each read
    -- as one slice of its frames array: a page costs its own frames, whatever lies beyond it. The
    -- loop stops early, so only the segments it reaches are detoasted.
    <<segments>>
    for v_seg in
      select s.base_offset, s.created_at
        from log_segments s
       where s.partition_id = v_part.id
         and s.base_offset >= coalesce((select max(base_offset) from log_segments
                                         where partition_id = v_part.id and base_offset <= v_from), 0)
         and s.base_offset <= v_part.last_offset
       order by s.base_offset
    loop
      exit when v_spent >= c_request_budget or v_count >= v_limit;
      v_first := greatest(v_from, v_seg.base_offset);
      -- To the segment's end, not the page's: tombstoned frames in it do not count toward the limit.
      -- The whole array is detoasted either way.
      select s.frames[(v_first - s.base_offset + 1)::int : (least(s.last_offset, v_part.last_offset) - s.base_offset + 1)::int]
        into v_slice
        from log_segments s
       where s.partition_id = v_part.id and s.base_offset = v_seg.base_offset;
      v_created := _iso_us(v_seg.created_at);
      v_offset := v_first - 1;
      foreach v_frame in array coalesce(v_slice, '{}') loop
        v_offset := v_offset + 1;
        continue when exists (select 1 from log_tombstones t
                               where t.partition_id = v_part.id and t.frame_offset = v_offset);
        v_size := octet_length(v_frame::text)::bigint;
        exit segments when v_count > 0 and (v_bytes + v_size > v_max_bytes or v_spent + v_size > c_request_budget);
        -- Appending to a plpgsql array is amortised constant time; one jsonb array is built at the end.
        v_items := v_items || jsonb_build_object(
          'offset', v_offset, 'id', v_frame -> 'id', 'transactionId', v_frame -> 'txn', 'traceId', v_frame -> 'trace',
          'producerSub', v_frame -> 'sub', 'createdAt', v_created,
          'enc', coalesce((v_frame ->> 'enc')::boolean, false), 'data', v_frame -> 'data');
        v_count := v_count + 1;
        v_bytes := v_bytes + v_size;
        v_spent := v_spent + v_size;
        v_next := v_offset + 1;
        exit segments when v_count >= v_limit;
      end loop;
    end loop;

    v_out := v_out || (jsonb_build_object(
      'queue', v_queue, 'partition', v_partition, 'logStart', v_part.log_start, 'lastOffset', v_part.last_offset,
      'fromOffset', v_from, 'nextOffset', v_next, 'frames', to_jsonb(v_items)));
  end loop;

  return jsonb_build_object('entries', to_jsonb(v_out));
end
$$;
