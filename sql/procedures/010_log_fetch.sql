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
  v_out jsonb := '[]'::jsonb;
  v_queue text;
  v_partition text;
  v_queue_id uuid;
  v_part log_partitions;
  v_from bigint;
  v_limit int;
  v_max_bytes bigint;
  v_bytes bigint;
  v_frames jsonb;
  v_count int;
  v_next bigint;
  r record;
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
      v_out := v_out || jsonb_build_array(jsonb_build_object('queue', v_queue, 'partition', v_partition,
        'error', 'QUEUE_NOT_FOUND', 'message', 'Queue not found'));
      continue;
    end if;
    select * into v_part from log_partitions where queue_id = v_queue_id and name = v_partition;
    if v_part.id is null then
      v_out := v_out || jsonb_build_array(jsonb_build_object('queue', v_queue, 'partition', v_partition,
        'error', 'PARTITION_NOT_FOUND', 'message', 'Partition not found'));
      continue;
    end if;

    v_from := greatest((v_entry ->> 'fromOffset')::bigint, v_part.log_start);
    v_frames := '[]';
    v_count := 0;
    v_bytes := 0;
    v_next := v_from;
    if v_spent < c_request_budget then
      -- From the segment holding v_from (the newest base at or below it), in offset order; the
      -- loop stops early, so only the segments it reaches are detoasted.
      for r in
        select s.base_offset + o.i - 1 as frame_offset, s.created_at, o.f, octet_length(o.f::text) as size
          from log_segments s
          cross join lateral unnest(s.frames) with ordinality as o(f, i)
         where s.partition_id = v_part.id
           and s.base_offset >= coalesce((select max(base_offset) from log_segments
                                           where partition_id = v_part.id and base_offset <= v_from), 0)
           and s.base_offset + o.i - 1 >= v_from
           and s.base_offset + o.i - 1 <= v_part.last_offset
           and not exists (select 1 from log_tombstones t
                            where t.partition_id = v_part.id and t.frame_offset = s.base_offset + o.i - 1)
         order by s.base_offset, o.i
      loop
        exit when v_count > 0 and (v_bytes + r.size > v_max_bytes or v_spent + r.size > c_request_budget);
        v_frames := v_frames || jsonb_build_array(jsonb_build_object(
          'offset', r.frame_offset, 'id', r.f -> 'id', 'transactionId', r.f -> 'txn', 'traceId', r.f -> 'trace',
          'producerSub', r.f -> 'sub', 'createdAt', _iso_us(r.created_at),
          'enc', coalesce((r.f ->> 'enc')::boolean, false), 'data', r.f -> 'data'));
        v_count := v_count + 1;
        v_bytes := v_bytes + r.size;
        v_spent := v_spent + r.size;
        v_next := r.frame_offset + 1;
        exit when v_count >= v_limit;
      end loop;
    end if;

    v_out := v_out || jsonb_build_array(jsonb_build_object(
      'queue', v_queue, 'partition', v_partition, 'logStart', v_part.log_start, 'lastOffset', v_part.last_offset,
      'fromOffset', v_from, 'nextOffset', v_next, 'frames', v_frames));
  end loop;

  return jsonb_build_object('entries', v_out);
end
$$;
