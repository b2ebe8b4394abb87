-- Stream processing (issue #21, docs/streams.md): the three procedures Queen's streams SDKs reach through
-- /streams/v1/* (register, state read, cycle), plus the query listing and delete. Every procedure
-- is scoped to p_tenant: a query id of another tenant is as absent as an unknown one (design decision 46).
-- Tables: 0005_streams.sql. Raised SQLSTATEs: QMMNT (push maintenance, cycle with sink items) and
-- whatever the engine's push raises (QMENC); business failures of a cycle are answers, never raises.

-- _streams_prefix_end: the smallest text greater than every text that starts with p_prefix, in the
-- "C" collation (code point order), or NULL when there is none (a prefix of only U+10FFFF). With
-- it, a literal prefix match (design decision 46) is the key range [p_prefix, end): an index range scan, and `%`
-- or `_` in the prefix are plain characters. Surrogates are not characters, so U+D7FF is followed
-- by U+E000. IMMUTABLE: a pure function of its argument. Raises nothing.
create or replace function queen._streams_prefix_end(p_prefix text)
returns text
language plpgsql immutable
set search_path = queen, pg_catalog
as $$
declare
  v text := p_prefix;
  v_last integer;
begin
  while char_length(v) > 0 loop
    v_last := ascii(right(v, 1));
    if v_last < 1114111 then
      return left(v, -1) || chr(case when v_last + 1 between 55296 and 57343 then 57344 else v_last + 1 end);
    end if;
    v := left(v, -1);
  end loop;
  return null;
end
$$;

-- streams_register_query_v1: POST /streams/v1/queries. Creates the tenant's query
-- `p_name`, or finds it: the same config hash updates source and sink only (reset ignored); another
-- hash with p_reset wipes the query's state and shards (a fresh deterministic-id epoch) and stores
-- the new hash; another hash without reset changes nothing.
-- Returns {success:true, query_id, name, config_hash, fresh, reset} or {success:false, query_id,
-- name, error} for a hash mismatch (the route answers 409). Raises nothing of its own.
-- Concurrency: two first registrations race on the (tenant, name) key, the loser finds the winner's
-- row; the found row is locked FOR UPDATE, which waits for running cycles (they hold it FOR KEY
-- SHARE), so a reset never interleaves with a cycle of the same query.
-- Clock: updated_at/created_at are clock_timestamp() unless p_now pins them.
create or replace function queen.streams_register_query_v1(p_tenant text, p_name text, p_source_queue text, p_sink_queue text,
                                                          p_config_hash text, p_reset boolean default false,
                                                          p_now timestamptz default null)
returns jsonb
language plpgsql volatile
set search_path = queen, pg_catalog
as $$
declare
  v_now timestamptz := coalesce(p_now, clock_timestamp());
  v_sink text := nullif(p_sink_queue, '');
  v_id uuid;
  v_q stream_queries;
begin
  insert into stream_queries (tenant_id, name, source_queue, sink_queue, config_hash, created_at, updated_at)
  values (p_tenant, p_name, p_source_queue, v_sink, p_config_hash, v_now, v_now)
  on conflict (tenant_id, name) do nothing
  returning id into v_id;
  if v_id is not null then
    return jsonb_build_object('success', true, 'query_id', v_id, 'name', p_name, 'config_hash', p_config_hash,
                              'fresh', true, 'reset', false);
  end if;

  select * into v_q from stream_queries where tenant_id = p_tenant and name = p_name for update;
  if v_q.config_hash = p_config_hash then
    update stream_queries set source_queue = p_source_queue, sink_queue = v_sink, updated_at = v_now where id = v_q.id;
    return jsonb_build_object('success', true, 'query_id', v_q.id, 'name', p_name, 'config_hash', p_config_hash,
                              'fresh', false, 'reset', false);
  end if;
  if coalesce(p_reset, false) then
    delete from stream_state where query_id = v_q.id;
    delete from stream_shards where query_id = v_q.id;
    update stream_queries set source_queue = p_source_queue, sink_queue = v_sink, config_hash = p_config_hash, updated_at = v_now
     where id = v_q.id;
    return jsonb_build_object('success', true, 'query_id', v_q.id, 'name', p_name, 'config_hash', p_config_hash,
                              'fresh', false, 'reset', true);
  end if;
  return jsonb_build_object('success', false, 'query_id', v_q.id, 'name', p_name,
    'error', format('config_hash mismatch: operator chain changed for queryId ''%s''. Pass reset:true to wipe existing state, or use a new queryId.', p_name));
end
$$;

-- streams_state_get_v1: POST /streams/v1/state/get. The state rows of one
-- (query, source partition), ordered by key, filtered by every filter given (ANDed): p_keys (empty:
-- no filter), p_key_prefix (literal, '' or NULL: no filter), p_ripe_at_or_before (rows whose
-- value.windowEnd is a JSON number at or before it).
-- Returns {rows:[{key, value, updated_at}]}; rows is empty for a query of another tenant or none.
-- The statement is assembled from fixed fragments (never from input; values travel as parameters)
-- and planned for the filters at hand, so each filter is an index range: keys and the prefix on the
-- primary key, ripe_at_or_before on stream_state_window_end_idx (whose expression and predicate the
-- fragment repeats), and a 100 000-key partition is never read whole for a few rows.
-- The flush fence (streams_cycle_v1): a read made while no batch of the shard's source partition has
-- been leased since the shard's last cycle (an idle flush's read, not the runner's read of its
-- batch) records the shard version it saw in read_version, before reading the rows and holding the
-- shard's row lock to commit, so no cycle applies between the two: the rows are that version's.
-- Raises nothing of its own. VOLATILE like every API function (a caching pooler never answers it).
-- Clock: clock_timestamp() (lease liveness) unless p_now pins it.
drop function if exists queen.streams_state_get_v1(text, uuid, uuid, jsonb, text, numeric);
create or replace function queen.streams_state_get_v1(p_tenant text, p_query_id uuid, p_partition_id uuid,
                                                     p_keys jsonb default '[]', p_key_prefix text default null,
                                                     p_ripe_at_or_before numeric default null,
                                                     p_now timestamptz default null)
returns jsonb
language plpgsql volatile
set search_path = queen, pg_catalog
as $$
declare
  v_now timestamptz := coalesce(p_now, clock_timestamp());
  v_qid uuid;
  v_keys text[] := array(select jsonb_array_elements_text(case when jsonb_typeof(p_keys) = 'array' then p_keys else '[]' end));
  v_prefix text := nullif(p_key_prefix, '');
  v_end text := _streams_prefix_end(nullif(p_key_prefix, ''));
  v_rows jsonb;
begin
  select q.id into v_qid from stream_queries q where q.id = p_query_id and q.tenant_id = p_tenant;
  if v_qid is null then
    return jsonb_build_object('rows', '[]'::jsonb);
  end if;
  update stream_shards h set read_version = h.version
   where h.query_id = v_qid and h.partition_id = p_partition_id
     and h.read_version is distinct from h.version
     and not exists (select 1 from log_consumers c
                      where c.partition_id = p_partition_id and c.consumer_group = h.source_group
                        and (c.lease_expires_at > v_now
                             or coalesce(c.lease_id, c.released_lease_id) is distinct from h.lease_seen));
  execute 'select coalesce(jsonb_agg(jsonb_build_object(''key'', s.key, ''value'', s.value, ''updated_at'', _iso_ms(s.updated_at))'
          || ' order by s.key), ''[]''::jsonb) from stream_state s where s.query_id = $1 and s.partition_id = $2'
          || case when cardinality(v_keys) > 0 then ' and s.key = any ($3)' else '' end
          || case when v_prefix is not null then ' and s.key >= $4' else '' end
          || case when v_end is not null then ' and s.key < $5' else '' end
          || case when p_ripe_at_or_before is not null
                  then ' and jsonb_typeof(s.value -> ''windowEnd'') = ''number'''
                       ' and (case when jsonb_typeof(s.value -> ''windowEnd'') = ''number'' then (s.value ->> ''windowEnd'')::numeric end) <= $6'
                  else '' end
    into v_rows
    using v_qid, p_partition_id, v_keys, v_prefix, v_end, p_ripe_at_or_before;
  return jsonb_build_object('rows', v_rows);
end
$$;

-- _streams_cycle_ack: a cycle's ack of its source batch through the engine's own ack (design decision 46):
-- contiguous commit of every unsettled frame of the (partition, group) cursor from the committed
-- frontier through the acked frame, as the original moves its cursor to the acked message, and
-- through `count` frames when the lease is live (a batch is the leased range from the frontier):
-- the SDK names the last message of its (createdAt, id) sort, which is the batch's highest offset
-- now that ids rise with offsets (_uuid_v7_at), but not among frames stored before; count covers
-- the batch either way, and never reaches past the lease. The
-- frames are found by one slice read of the leased range and handed to _log_ack_plain (the set-based common path) when
-- they are the shape it settles exactly (live lease starting at the frontier, distinct ids), else to
-- _log_ack with their offsets (verified, design decision 18). failed/dlq: the other frames of the batch complete,
-- the acked one is a terminal verdict (dead-lettered by the queue's DLQ switch, lease released).
-- release_lease:true also releases a lease the commit did not end, but only the lease the ack names
-- (design decision 17); false leaves it for the gate's redelivery at expiry. An id found nowhere unsettled is
-- handed to _log_ack as it is, whose verdict stands: Message not found, a lease refusal, or the
-- no-op success of a frame settled already.
-- Returns {success, count (frames completed), lease_released, dlq, error?}. The caller holds the
-- cursor row's creation (_log_ensure_cursors) and runs inside its transaction.
create or replace function queen._streams_cycle_ack(p_tenant text, p_pid uuid, p_group text, p_ack jsonb, p_release boolean,
                                                    p_now timestamptz)
returns jsonb
language plpgsql volatile
set search_path = queen, pg_catalog
as $$
declare
  v_txn text := p_ack->>'transactionId';
  v_status text := lower(coalesce(nullif(p_ack->>'status', ''), 'completed'));
  v_lease text := lower(nullif(p_ack->>'leaseId', ''));
  v_c log_consumers;
  v_log_start bigint;
  v_last bigint;
  v_live boolean := false;
  v_lo bigint;
  v_hi bigint;
  v_off bigint;
  v_end bigint;
  v_offs bigint[];
  v_txns text[];
  v_distinct boolean;
  v_n integer;
  v_items jsonb;
  v_plain jsonb;
  v_res jsonb;
  v_bad jsonb;
  v_released boolean := false;
  v_dlq boolean := false;
begin
  select c.* into v_c from log_consumers c where c.partition_id = p_pid and c.consumer_group = p_group for update;
  select t.log_start, t.last_offset into v_log_start, v_last from _tenant_partition(p_tenant, p_pid) t;
  if v_c.partition_id is not null and v_log_start is not null then
    v_live := v_c.lease_id is not null and v_c.lease_expires_at > p_now;
    v_lo := greatest(v_c.committed_offset, v_log_start);
    v_hi := case when v_live then least(v_c.lease_to, v_last) else least(v_last, v_lo + 9999) end;
    -- Every frame of [v_lo, v_hi] with its transaction id, by one seek-then-slice read: it finds
    -- the acked frame (the lowest offset carrying the id) and names the frames to commit.
    select array_agg(sl.off order by sl.off), array_agg(sl.txn order by sl.off)
      into v_offs, v_txns
      from (select s.base_offset + greatest(v_lo - s.base_offset, 0) + o.i - 1 as off, o.frame->>'txn' as txn
              from log_segments s
              cross join lateral unnest(s.frames[greatest(v_lo - s.base_offset + 1, 1) : (v_hi - s.base_offset + 1)])
                                 with ordinality as o(frame, i)
             where v_lo <= v_hi
               and s.partition_id = p_pid
               and s.base_offset >= coalesce((select max(s2.base_offset) from log_segments s2
                                               where s2.partition_id = p_pid and s2.base_offset <= v_lo), -1)
               and s.base_offset <= v_hi) sl;
    v_off := v_offs[array_position(v_txns, v_txn)];
  end if;

  if v_off is null then
    v_res := _log_ack(p_tenant, jsonb_build_array(jsonb_build_object(
               'index', 0, 'partitionId', p_pid, 'transactionId', v_txn, 'consumerGroup', p_group, 'leaseId', v_lease,
               'status', v_status, 'error', p_ack->>'error')), p_now, true)->0;
    return jsonb_build_object('success', (v_res->>'success')::boolean, 'error', v_res->>'error', 'count', 0,
                              'lease_released', coalesce((v_res->>'leaseReleased')::boolean, false),
                              'dlq', coalesce((v_res->>'dlq')::boolean, false));
  end if;

  v_end := case when v_live then greatest(v_off, least(v_lo + greatest(coalesce((p_ack->>'count')::bigint, 1), 1) - 1, v_hi))
                else v_off end;
  v_n := (select count(*)::integer from unnest(v_offs) o where o <= v_end);
  v_distinct := (select count(distinct t) = count(*) from unnest(v_offs, v_txns) as u(o, t) where u.o <= v_end);

  if v_status in ('completed', 'success') and v_live and v_distinct and v_c.lease_from = v_lo then
    -- Without offsets: _log_ack_plain maps each id to its lowest offset in the leased range, which
    -- is its own offset exactly when the range starts at the frontier and the ids are distinct.
    select jsonb_agg(jsonb_build_object('index', u.i - 1, 'partitionId', p_pid, 'transactionId', u.t,
                                        'consumerGroup', p_group, 'leaseId', v_lease) order by u.i)
      into v_items
      from unnest(v_offs, v_txns) with ordinality as u(o, t, i)
     where u.o <= v_end;
    v_plain := _log_ack_plain(p_tenant, v_items, p_now);
  end if;
  if v_plain is not null then
    v_released := v_plain->'plain'->>'releasedIndex' is not null;
  else
    -- The general path, by offset (verified, design decision 18); the acked frame carries a failed/dlq verdict.
    select jsonb_agg(jsonb_build_object('index', u.i - 1, 'partitionId', p_pid, 'transactionId', u.t, 'offset', u.o,
                                        'consumerGroup', p_group, 'leaseId', v_lease,
                                        'status', case when u.o = v_off then v_status else 'completed' end,
                                        'error', case when u.o = v_off then p_ack->>'error' end) order by u.i)
      into v_items
      from unnest(v_offs, v_txns) with ordinality as u(o, t, i)
     where u.o <= v_end;
    v_res := _log_ack(p_tenant, v_items, p_now, true);
    if v_status in ('failed', 'dlq') then
      v_dlq := coalesce((select bool_or((x->>'dlq')::boolean) from jsonb_array_elements(v_res) x), false);
      v_n := v_n - 1;
    end if;
  end if;

  if v_res is not null then
    select x into v_bad from jsonb_array_elements(v_res) x where not (x->>'success')::boolean order by (x->>'index')::integer limit 1;
    if v_bad is not null then
      return jsonb_build_object('success', false, 'error', v_bad->>'error', 'count', 0, 'lease_released', false, 'dlq', false);
    end if;
    v_released := coalesce((select bool_or((x->>'leaseReleased')::boolean) from jsonb_array_elements(v_res) x), false);
  end if;

  if p_release and not v_released and v_lease is not null then
    update log_consumers set lease_id = null, lease_expires_at = null
     where partition_id = p_pid and consumer_group = p_group and lease_id::text = v_lease and lease_expires_at > p_now;
    v_released := found;
  end if;
  return jsonb_build_object('success', true, 'count', v_n, 'lease_released', v_released, 'dlq', v_dlq);
end
$$;

-- streams_cycle_v1: POST /streams/v1/cycle (design decision 46). One call, one transaction: the
-- state ops in order, the sink pushes through the engine's own push (_log_push: auto-created
-- queues and partitions, dedup, gap-free offsets), then the source ack through the engine's own
-- ack (_streams_cycle_ack). Any business failure (unknown query, an ack the engine refuses, a bad
-- op) rolls back all three and is answered {success:false, error} with the work counted before it.
-- p_body: {query_id, partition_id, consumer_group?, release_lease?, state_ops, push_items, ack|null}
--   as the route validated it (push items as _log_push takes them, encrypted where their queue is).
-- p_cycle_hash: the route's digest of the request as the client sent it (before encryption).
-- Exactly once on replay: sink items without a transactionId get one derived from the shard's
-- epoch, the acked transaction id (or, for an ack-less cycle, the shard's version) and the item's
-- index, so a replayed push answers `duplicate`; a replay of the shard's newest applied cycle (same
-- digest) gets its stored answer, and one of its last 32 applies nothing and answers success, but
-- for a flush identical to an older one that finds the very rows that one deleted again: that is a
-- new flush of a window re-created exactly, and it goes on.
-- The flush fence (issue #34, docs/streams.md): a flush (an ack-less cycle whose state ops only
-- delete, as a window runtime's idle flush is) is computed from a state read that the runner's
-- cycles may overtake. It applies only when (a) no cycle of the shard applied since the latest state
-- read made between batches (read_version, recorded by streams_state_get_v1), (b) every key it
-- deletes is there, and (c) no batch of the source partition is leased to the runner's group at
-- commit, the cursor row held FOR SHARE to commit so no pop leases one before the flush is visible.
-- The runner's cycle of a leased batch needs no fence: no flush applies while it holds the lease,
-- and an expired or lost lease refuses its ack. A flush that fails the fence applies nothing and
-- answers success with `deferred: true`: the rows it would have closed are still in state, for the
-- next flush or cycle.
-- Returns {success, query_id, partition_id, queueName, state_ops_applied, push_results:[_log_push's
--   items], ack_result|null, queues (encryption flags), error?, replayed?, deferred?}.
-- Raises QMMNT (push maintenance with sink items), QMENC (the route re-encodes) and any
-- non-business error, so the route can answer 503 or 500 without leaking SQL text.
-- Concurrency: the query row FOR KEY SHARE (a reset or delete waits for the cycle), then the shard
-- row FOR UPDATE (cycles of one shard run one at a time; engine paths never take it, so it is first
-- in every lock order), then the engine's own order: targets and cursor rows created before any
-- engine lock, allocator rows by _log_push, the cursor row by the ack (or, for a flush, FOR SHARE by
-- the fence at the same point). The cycle's ack is the guard between two runners: the second one's
-- lease is refused and its whole cycle rolls back.
-- Clock: clock_timestamp() unless p_now pins it.
create or replace function queen.streams_cycle_v1(p_tenant text, p_body jsonb, p_cycle_hash text, p_now timestamptz default null)
returns jsonb
language plpgsql volatile
set search_path = queen, pg_catalog
as $$
declare
  v_now timestamptz := coalesce(p_now, clock_timestamp());
  v_pid uuid := (p_body->>'partition_id')::uuid;
  v_group text := coalesce(nullif(p_body->>'consumer_group', ''), '__QUEUE_MODE__');
  v_release boolean := coalesce((p_body->>'release_lease')::boolean, true);
  v_ops jsonb := coalesce(p_body->'state_ops', '[]'::jsonb);
  v_items jsonb := coalesce(p_body->'push_items', '[]'::jsonb);
  v_ack jsonb := case when jsonb_typeof(p_body->'ack') = 'object' then p_body->'ack' end;
  v_qid uuid;
  v_queue text;
  v_shard stream_shards;
  v_basis text;
  v_applied integer := 0;
  v_rows_delta bigint := 0::bigint;
  v_bytes_delta bigint := 0::bigint;
  v_push jsonb;
  v_push_results jsonb := '[]'::jsonb;
  v_flags jsonb := '[]'::jsonb;
  v_ack_result jsonb;
  v_error text;
  v_answer jsonb;
  v_deletes text[];
  v_flush boolean;
  v_found bigint;
  v_rows_hash text;
  v_deferred boolean := false;
begin
  -- The partition's tenant first, before any lock: a partition of another tenant (or none) reads as
  -- not this tenant's (v_queue null), and then no engine row of it is locked or read below; its
  -- state ops stay the caller's own rows, keyed by the caller's query.
  select t.queue_name into v_queue from _tenant_partition(p_tenant, v_pid) t;
  select q.id into v_qid from stream_queries q
   where q.id = (p_body->>'query_id')::uuid and q.tenant_id = p_tenant
     for key share;
  if v_qid is null then
    return jsonb_build_object('success', false, 'query_id', p_body->>'query_id', 'partition_id', v_pid, 'queueName', v_queue,
                              'state_ops_applied', 0, 'push_results', '[]'::jsonb, 'ack_result', null, 'queues', '[]'::jsonb,
                              'error', 'Stream query not found: ' || (p_body->>'query_id'));
  end if;
  if jsonb_array_length(v_items) > 0 and (select value from system_state where key = 'maintenance') = 'true'::jsonb then
    raise exception using errcode = 'QMMNT', message = 'push maintenance is on';
  end if;

  insert into stream_shards (query_id, partition_id) values (v_qid, v_pid) on conflict do nothing;
  select * into v_shard from stream_shards where query_id = v_qid and partition_id = v_pid for update;
  -- A flush, as a window runtime's idle flush is: no ack, and state ops that only delete (each key's
  -- last op decides). The rows it deletes as they are now, hashed with their values, and how many
  -- are there. State rows change only under the shard's row lock, which this cycle holds.
  select coalesce(array_agg(d.key order by d.key) filter (where d.type = 'delete'), '{}'),
         v_ack is null and count(*) filter (where d.type = 'delete') > 0 and count(*) filter (where d.type <> 'delete') = 0
    into v_deletes, v_flush
    from (select distinct on (o->>'key') o->>'key' as key, o->>'type' as type
            from jsonb_array_elements(v_ops) with ordinality as x(o, ord)
           order by o->>'key', x.ord desc) d;
  if v_flush then
    select count(s.key), md5(jsonb_agg(jsonb_build_array(k.key, s.value) order by k.key)::text)
      into v_found, v_rows_hash
      from unnest(v_deletes) k(key)
      left join stream_state s on s.query_id = v_qid and s.partition_id = v_pid and s.key = k.key;
  end if;

  if v_shard.recent[cardinality(v_shard.recent)] = p_cycle_hash then
    return v_shard.last_answer || jsonb_build_object('replayed', true);
  elsif p_cycle_hash = any (v_shard.recent) and not (v_flush and (p_cycle_hash || ':' || v_rows_hash) = any (v_shard.flushed)) then
    return jsonb_build_object('success', true, 'query_id', v_qid, 'partition_id', v_pid, 'queueName', v_queue,
                              'state_ops_applied', 0, 'push_results', '[]'::jsonb, 'ack_result', null, 'queues', '[]'::jsonb,
                              'replayed', true);
  end if;
  if v_flush and (v_shard.read_version is distinct from v_shard.version or v_found < cardinality(v_deletes)) then
    return jsonb_build_object('success', true, 'query_id', v_qid, 'partition_id', v_pid, 'queueName', v_queue,
                              'state_ops_applied', 0, 'push_results', '[]'::jsonb, 'ack_result', null, 'queues', '[]'::jsonb,
                              'deferred', true);
  end if;

  v_basis := case when v_ack is not null then 'a:' || (v_ack->>'transactionId') else 'v:' || v_shard.version end;
  select coalesce(jsonb_agg(e || jsonb_build_object(
                    'index', x.ord - 1,
                    'transactionId', coalesce(nullif(e->>'transactionId', ''),
                                              md5(v_shard.epoch::text || ':' || v_basis || ':' || (x.ord - 1))::uuid::text))
                  order by x.ord), '[]'::jsonb)
    into v_items
    from jsonb_array_elements(v_items) with ordinality as x(e, ord);

  begin
    -- Creation first, before any engine row lock (docs/design.md#4), as the transaction route does.
    if jsonb_array_length(v_items) > 0 then
      perform _log_create_targets(p_tenant, v_items);
    end if;
    if v_ack is not null then
      perform _log_ensure_cursors(p_tenant, jsonb_build_array(jsonb_build_object('partitionId', v_pid, 'consumerGroup', v_group)));
    end if;

    if exists (select 1 from jsonb_array_elements(v_ops) o where o->>'type' not in ('upsert', 'delete') or o->>'key' is null) then
      v_error := 'Unknown state op type or missing key';
      raise exception using errcode = 'QMSTR', message = v_error;
    end if;
    -- Ops apply in order; per key only the last one decides, so applying each key's last op is the
    -- same as applying all of them one by one. Every touched key ends as its upsert's row or as no
    -- row, so the shard's counters move by (upserts − old rows) and (new sizes − old sizes); `old`
    -- reads the rows as they were before this statement (one snapshot for every part of it).
    with last_op as (
      select distinct on (o->>'key') o->>'key' as key, o->>'type' as type, coalesce(o->'value', '{}'::jsonb) as value
        from jsonb_array_elements(v_ops) with ordinality as x(o, ord)
       order by o->>'key', x.ord desc
    ), old as (
      select s.size from stream_state s join last_op l on s.key = l.key
       where s.query_id = v_qid and s.partition_id = v_pid
    ), removed as (
      delete from stream_state s using last_op l
       where l.type = 'delete' and s.query_id = v_qid and s.partition_id = v_pid and s.key = l.key
      returning 1
    ), written as (
      insert into stream_state (query_id, partition_id, key, value, updated_at, size)
      select v_qid, v_pid, l.key, l.value, v_now, octet_length(l.key) + octet_length(l.value::text) from last_op l where l.type = 'upsert'
      on conflict (query_id, partition_id, key) do update set value = excluded.value, updated_at = excluded.updated_at, size = excluded.size
      returning size
    )
    select (select count(*) from written) - (select count(*) from old),
           (select coalesce(sum(size), 0) from written) - (select coalesce(sum(size), 0) from old)
      into v_rows_delta, v_bytes_delta;
    v_applied := jsonb_array_length(v_ops);

    if jsonb_array_length(v_items) > 0 then
      v_push := _log_push(p_tenant, v_items, p_now);
      select coalesce(jsonb_agg(i order by (i->>'index')::integer), '[]'::jsonb) into v_push_results from _log_push_items(v_push) i;
      v_flags := coalesce(v_push->'queues', '[]'::jsonb);
    end if;

    if v_ack is not null then
      v_ack_result := _streams_cycle_ack(p_tenant, v_pid, v_group, v_ack, v_release, v_now);
      if not (v_ack_result->>'success')::boolean then
        v_error := coalesce(v_ack_result->>'error', 'Ack failed');
        v_ack_result := null;
        raise exception using errcode = 'QMSTR', message = v_error;
      end if;
      v_ack_result := v_ack_result - 'error';
    end if;

    if v_flush and v_queue is not null and exists (select 1 from log_consumers c
                            where c.partition_id = v_pid and c.consumer_group = coalesce(v_shard.source_group, v_group)
                              and c.lease_expires_at > v_now
                              for share) then
      v_deferred := true;
      raise exception using errcode = 'QMSTR', message = 'a batch of the source partition is leased';
    end if;
  exception when sqlstate 'QMSTR' then
    if v_deferred then
      return jsonb_build_object('success', true, 'query_id', v_qid, 'partition_id', v_pid, 'queueName', v_queue,
                                'state_ops_applied', 0, 'push_results', '[]'::jsonb, 'ack_result', null, 'queues', '[]'::jsonb,
                                'deferred', true);
    end if;
    return jsonb_build_object('success', false, 'query_id', v_qid, 'partition_id', v_pid, 'queueName', v_queue,
                              'state_ops_applied', v_applied, 'push_results', v_push_results, 'ack_result', null,
                              'queues', v_flags, 'error', v_error);
  end;

  v_answer := jsonb_build_object('success', true, 'query_id', v_qid, 'partition_id', v_pid, 'queueName', v_queue,
                                 'state_ops_applied', v_applied, 'push_results', v_push_results, 'ack_result', v_ack_result,
                                 'queues', v_flags);
  update stream_shards h
     set version = h.version + 1, recent = (h.recent || p_cycle_hash)[greatest(cardinality(h.recent) - 30, 1):],
         last_answer = v_answer, updated_at = v_now,
         state_rows = h.state_rows + v_rows_delta, state_bytes = h.state_bytes + v_bytes_delta,
         flushed = case when v_flush then (h.flushed || (p_cycle_hash || ':' || v_rows_hash))[greatest(cardinality(h.flushed) - 30, 1):]
                        else h.flushed end,
         source_group = case when v_ack is not null then v_group else h.source_group end,
         lease_seen = (select coalesce(c.lease_id, c.released_lease_id) from log_consumers c
                        where v_queue is not null and c.partition_id = v_pid
                          and c.consumer_group = case when v_ack is not null then v_group else coalesce(h.source_group, v_group) end)
   where h.query_id = v_qid and h.partition_id = v_pid;
  return v_answer;
end
$$;

-- streams_queries_v1: GET /streams/v1/queries. The tenant's queries by name, each with its
-- state size (rows and bytes: key plus stored value), its shard count, and the pending frames of
-- its source group streams.<name> (what the SDK's runner pops with) on the source queue: per
-- partition, last offset + 1 minus the group's frontier (the log start where the group has no
-- cursor yet). State size comes from the shards' counters (0006_stream_state_size.sql): bytes are
-- logical, the key's plus the value's JSON text. Cost: the query's shard rows and source cursors.
-- Returns [{query_id, name, source_queue, sink_queue, config_hash, created_at, updated_at,
--   state_rows, state_bytes, partitions, source_group, lag}]. Reads only. Raises nothing.
create or replace function queen.streams_queries_v1(p_tenant text)
returns jsonb
language sql volatile
set search_path = queen, pg_catalog
as $$
  select coalesce(jsonb_agg(jsonb_build_object(
           'query_id', q.id, 'name', q.name, 'source_queue', q.source_queue, 'sink_queue', q.sink_queue,
           'config_hash', q.config_hash, 'created_at', _iso_ms(q.created_at), 'updated_at', _iso_ms(q.updated_at),
           'state_rows', sh.rows, 'state_bytes', sh.bytes, 'partitions', sh.n, 'source_group', 'streams.' || q.name,
           'lag', lag.n)
         order by q.name), '[]'::jsonb)
    from stream_queries q
    cross join lateral (select count(*) as n, coalesce(sum(h.state_rows), 0)::bigint as rows,
                               coalesce(sum(h.state_bytes), 0)::bigint as bytes
                          from stream_shards h where h.query_id = q.id) sh
    cross join lateral (select coalesce(sum(greatest(0, p.last_offset + 1 - coalesce(c.committed_offset, p.log_start))), 0)::bigint as n
                          from queues sq
                          join log_partitions p on p.queue_id = sq.id
                          left join log_consumers c on c.partition_id = p.id and c.consumer_group = 'streams.' || q.name
                         where sq.tenant_id = p_tenant and sq.name = q.source_queue) lag
   where q.tenant_id = p_tenant
$$;

-- streams_query_delete_v1: DELETE /streams/v1/queries/:name. Deletes the tenant's query and,
-- by cascade, its state and shards; waits for the query's running cycles (they hold its row FOR
-- KEY SHARE). The source queue and the source group's cursor stay. Returns {deleted, state_rows}.
create or replace function queen.streams_query_delete_v1(p_tenant text, p_name text)
returns jsonb
language plpgsql volatile
set search_path = queen, pg_catalog
as $$
declare
  v_id uuid;
  v_rows bigint;
begin
  select id into v_id from stream_queries where tenant_id = p_tenant and name = p_name for update;
  if v_id is null then
    return jsonb_build_object('deleted', false, 'state_rows', 0);
  end if;
  select count(*) into v_rows from stream_state where query_id = v_id;
  delete from stream_queries where id = v_id;
  return jsonb_build_object('deleted', true, 'state_rows', v_rows);
end
$$;
