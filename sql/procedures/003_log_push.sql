-- Push (docs/engine.md). `_log_push` is the body shared by log_push_v1 and transaction pushes; the
-- public function adds the maintenance refusal.
--
-- Each item is {index, queue, partition, transactionId?, traceId?, producerSub?, enc, data, id?}; the
-- route has validated types and sizes, stamped producerSub from the token and encrypted `data` when it
-- believed the queue encrypted (`enc`). `id` is set by the timer fire only (never from a request): the
-- message id minted when the timer was scheduled, used instead of a fresh one. Timer items always
-- name a transaction id, so only the general statement reads it.
-- Returns {columns:{index[], status[]?, queue[]?, partitionId[], offset[], messageId[], transactionId[]?,
--   traceId[]}, partitionQueue?:{<partitionId>: queue}, queues:[{name, encryptionEnabled}]}: one array
--   per field of the answer's items {index, status:"queued"|"duplicate", queue, …}, in index order
--   (`status` absent: all queued; `transactionId` absent: each is its messageId; `queue` absent: the
--   item's partition names it in partitionQueue; `columns` null for no items). The batches without
--   client transaction ids omit those three. src/db/procedures.ts expands them into the items, and
--   _log_push_items does in SQL: an eight-key object per item was ~16 % of a 100-frame push's CPU.
-- Raises QMENC (DETAIL {"queues":[{name, encryptionEnabled}]}) when an item's `enc` disagrees with its
-- queue's flag, before anything is written; QMMNT in push maintenance (log_push_v1 only).
-- Concurrency: queues and partitions are created first (no locks held), then every named partition's
-- allocator row is locked FOR NO KEY UPDATE in id order (design decision 4) and held to commit, so
-- offsets become visible gap-free in commit order (design decision 9) and check-then-insert dedup
-- cannot race (design decision 22).
-- Clock: clock_timestamp() read after the locks are granted, unless p_now pins it.
create or replace function queen._log_push(p_tenant text, p_items jsonb, p_now timestamptz default null)
returns jsonb
language plpgsql volatile
set search_path = queen, pg_catalog
-- Generic plans: with custom plans PostgreSQL planned the push statement again on every call
-- (~13 % of a 100-frame push's CPU in a perf profile), and no plan here depends on parameter values.
set plan_cache_mode = force_generic_plan
as $$
declare
  v_pids uuid[];
  v_bad jsonb;
  v_clock timestamptz;
  v_result jsonb;
  v_any_txn boolean;
  v_qids uuid[];
  v_found_all boolean;
begin
  if p_items is null or jsonb_array_length(p_items) = 0 then
    return jsonb_build_object('columns', null, 'queues', '[]'::jsonb);
  end if;

  -- Distinct (queue, partition) names first, then one lookup each: joined per item, a 1000-item
  -- push made 1000 index probes here and again in the statement below. In steady state the lookup
  -- finds every partition, and only the queue rows' FOR KEY SHARE (rank 1 of the lock order,
  -- design decision 4, as _ensure_queue takes it) is needed before the allocator locks: creating
  -- the targets every time, an insert that found every row present, was ~11 % of a 100-frame push
  -- (issue #9). A queue deleted since the lookup locks no row (a recreated one has another id), so
  -- that push, like one naming something new, creates its targets and looks again.
  loop
    select l.pids, l.qids, l.any_txn, l.found_all into v_pids, v_qids, v_any_txn, v_found_all
      from _log_push_lookup(p_tenant, p_items) l;
    if v_found_all then
      select count(*) = cardinality(v_qids) into v_found_all
        from (select 1 from queues where id = any (v_qids) order by id for key share) locked;
    end if;
    exit when v_found_all;
    perform _log_create_targets(p_tenant, p_items);
  end loop;

  perform 1 from log_partitions where id = any (v_pids) order by id for no key update;

  -- A fresh statement after the locks: a flipping configure has either committed (seen here) or
  -- waits for this push, so no push stores plaintext for an encrypted queue (design decision 24).
  select jsonb_agg(distinct jsonb_build_object('name', q.name, 'encryptionEnabled', q.encryption_enabled))
    into v_bad
    from (select distinct e->>'queue' as qn, coalesce((e->>'enc')::boolean, false) as enc
            from jsonb_array_elements(p_items) e) d
    join queues q on q.tenant_id = p_tenant and q.name = d.qn
   where d.enc <> q.encryption_enabled;
  if v_bad is not null then
    raise exception using errcode = 'QMENC', message = 'queue encryption flag differs from the push',
      detail = jsonb_build_object('queues', v_bad)::text;
  end if;

  v_clock := coalesce(p_now, clock_timestamp());

  if not v_any_txn then
    -- No item names a transaction id, so none can be a duplicate (design decision 22): every item
    -- is fresh, and the dedup machinery of the general statement below (hash lookups, winner
    -- windows, four more materialised copies of every frame) is skipped. Same result shape and
    -- allocation.
    with targets as materialized (
      -- Each partition's next offset and the createdAt its new segment gets (alloc below computes the
      -- same from the same locked row), so a frame's id can be minted from its place in the log.
      select q.name as queue_name, p.name as pname, p.id as partition_id, p.last_offset + 1 as base,
             greatest(v_clock, p.head_at + interval '1 microsecond') as created_at
        from log_partitions p join queues q on q.id = p.queue_id
       where p.id = any (v_pids)
    ), placed as (
      select coalesce((x.e->>'index')::int, (x.ord - 1)::int) as idx, x.e, t.queue_name, t.partition_id, t.base, t.created_at,
             row_number() over (partition by t.partition_id order by coalesce((x.e->>'index')::int, (x.ord - 1)::int)) - 1 as pos
        from jsonb_array_elements(p_items) with ordinality as x(e, ord)
        join targets t on t.queue_name = x.e->>'queue' and t.pname = coalesce(nullif(x.e->>'partition', ''), 'Default')
    ), framed as materialized (
      -- One pass: mint, build the frame and place it. The LATERALs hold volatile calls, so each runs
      -- once per item. pos is numbered first, over the bare items, because the id is minted from it.
      select p.idx, p.queue_name, p.partition_id, ids.new_id, nullif(p.e->>'traceId', '') as trace, fr.frame, fr.bytes, p.pos,
             (sum(fr.bytes) over w - fr.bytes)::bigint / 1048576 as byte_piece
        from placed p
        -- One id per frame (_uuid_v7_at: rising with the offset): the message id, and also its
        -- transaction id, since no item here names one (a minted transaction id only has to be a fresh
        -- UUIDv7, design decision 22). Fenced so the volatile call runs once per item even though both
        -- columns read it.
        cross join lateral (select m.id as new_id, m.id::text as txn
                              from (select _uuid_v7_at(p.created_at, p.base + p.pos) as id offset 0) m) ids
        -- OFFSET 0 keeps each subquery a fence: pulled up, every reference to `frame` would build
        -- the object again. The frame is to_jsonb of a row whose columns are its keys (in jsonb's key
        -- order): the same jsonb as jsonb_build_object, without categorising and converting twelve
        -- arguments per frame (issue #9).
        -- bytes is the frame's jsonb size, not its text length: serialising every frame to text
        -- only to count it was ~6 % of a push's CPU. It sizes the 1 MiB split and byte_size (which
        -- nothing reads back); pop and fetch budget with their own text lengths.
        cross join lateral (select z.frame, pg_column_size(z.frame)::bigint as bytes
                              from (select to_jsonb(k) as frame
                                      from (select ids.new_id as id, coalesce((p.e->>'enc')::boolean, false) as enc,
                                                   nullif(p.e->>'producerSub', '') as sub, ids.txn as txn,
                                                   coalesce(p.e->'data', 'null'::jsonb) as data,
                                                   nullif(p.e->>'traceId', '') as trace) k
                                     offset 0) z
                            offset 0) fr
      window w as (partition by p.partition_id order by p.pos)
    ), alloc as (
      -- alloc and seg repeat the dedup path's below on purpose: a CTE cannot be shared between two
      -- statements, and moving them into a function would put a call and a materialisation back
      -- into the path this fast path exists to keep short. Change both together.
      update log_partitions lp
         set last_offset = lp.last_offset + f.n,
             head_at = greatest(v_clock, lp.head_at + interval '1 microsecond'),
             last_write_at = greatest(lp.last_write_at,
                                      date_trunc('second', greatest(v_clock, lp.head_at + interval '1 microsecond')))
        from (select partition_id, count(*) as n from framed group by 1) f
       where lp.id = f.partition_id
      returning lp.id, lp.last_offset - f.n + 1 as base, lp.head_at as created_at
    ), seg as (
      insert into log_segments (partition_id, base_offset, last_offset, frame_count, created_at, byte_size, frames)
      select a.id, a.base + min(pc.pos), a.base + max(pc.pos), count(*), a.created_at, sum(pc.bytes),
             array_agg(pc.frame order by pc.pos)
        from framed pc join alloc a on a.id = pc.partition_id
       group by a.id, a.base, a.created_at, pc.pos / 1000, pc.byte_piece
      returning 1
    )
    -- Every item is fresh, so the answer omits `status` (all queued) and `transactionId` (each is
    -- its message id), and names each partition's queue once (`partitionQueue`) instead of per item:
    -- every text array is ~100 conversions per 100 frames. The columns aggregate rows sorted once
    -- below (a subquery with ORDER BY is never pulled up, so each aggregate reads the sort's output
    -- in order): an ORDER BY inside each of seven aggregates sorted the items seven times, ~7 % of a
    -- 100-frame push (issue #9).
    select jsonb_build_object(
             'columns', jsonb_build_object(
               'index', to_jsonb(array_agg(s.idx)),
               'partitionId', to_jsonb(array_agg(s.partition_id)),
               'offset', to_jsonb(array_agg(s.off)),
               'messageId', to_jsonb(array_agg(s.new_id)),
               'traceId', to_jsonb(array_agg(s.trace))),
             'partitionQueue', (select jsonb_object_agg(t.partition_id, t.queue_name) from targets t),
             -- By the ids the lookup found (every queue this push names), key probes: as a semi-join
             -- on names the generic plan nested-looped over the targets, quadratic in a bulk create.
             'queues', (select jsonb_agg(distinct jsonb_build_object('name', q.name, 'encryptionEnabled', q.encryption_enabled))
                          from queues q
                         where q.id = any (v_qids)))
      into v_result
      from (select f.idx, f.partition_id, a.base + f.pos as off, f.new_id, f.trace
              from framed f join alloc a on a.id = f.partition_id
             order by f.idx) s;
    return v_result;
  end if;

  -- One pass of window functions instead of self-joins: CTE scans carry no statistics, so joins
  -- between them plan as nested loops, which made a 1000-item push quadratic.
  with raw as (
    select coalesce((x.e->>'index')::int, (x.ord - 1)::int) as idx, x.e
      from jsonb_array_elements(p_items) with ordinality as x(e, ord)
  ), items as materialized (
    select r.idx, q.name as queue_name, p.id as partition_id, q.dedup_window_seconds as win,
           -- A window of 0 disables dedup entirely, inside one request too (design decision 22).
           (nullif(r.e->>'transactionId', '') is not null and q.dedup_window_seconds > 0) as dedup,
           -- The item's own transaction id; one without gets its minted message id (`placed`).
           nullif(r.e->>'transactionId', '') as given_txn,
           (r.e->>'id')::uuid as given_id,
           -- The partition's next offset and its new segment's createdAt, as in the fast path.
           p.last_offset + 1 as base, greatest(v_clock, p.head_at + interval '1 microsecond') as created_at,
           nullif(r.e->>'traceId', '') as trace,
           nullif(r.e->>'producerSub', '') as sub,
           coalesce((r.e->>'enc')::boolean, false) as enc,
           coalesce(r.e->'data', 'null'::jsonb) as data
      from raw r
      join queues q on q.tenant_id = p_tenant and q.name = r.e->>'queue'
      join log_partitions p on p.queue_id = q.id and p.name = coalesce(nullif(r.e->>'partition', ''), 'Default')
  ), keyed as materialized (
    -- Live hashes from earlier calls; expired ones are ignored whether or not the purge ran
    -- (design decision 8).
    select i.*, case when i.dedup then md5(i.given_txn)::uuid end as h, t.frame_offset as prior_off, t.message_id as prior_msg,
           case when i.dedup then row_number() over (partition by i.partition_id, i.given_txn order by i.idx) else 1 end as dup_rank
      from items i
      left join log_txns t on i.dedup and t.partition_id = i.partition_id and t.txn_hash = md5(i.given_txn)::uuid
                          and t.expires_at > v_clock
  ), fresh_flag as materialized (
    select k.*, (k.dup_rank = 1 and k.prior_off is null) as is_fresh
      from keyed k
  ), numbered as materialized (
    select f.*, sum(case when f.is_fresh then 1 else 0 end)
                  over (partition by f.partition_id order by f.idx rows unbounded preceding)::bigint - 1 as pos
      from fresh_flag f
  ), placed as materialized (
    -- A stored item's id rises with its offset (_uuid_v7_at), as in the fast path, unless the item
    -- brings the id a timer was scheduled under; it is also the transaction id of an item that
    -- names none (such an item is never a duplicate).
    select n.*, m.id as new_id, coalesce(n.given_txn, m.id::text) as txn
      from numbered n
      cross join lateral (select case when n.is_fresh then coalesce(n.given_id, _uuid_v7_at(n.created_at, n.base + n.pos)) end as id offset 0) m
  ), won as materialized (
    -- Every item learns its winner: itself, the first occurrence in this call, or a stored hash.
    select pl.*,
           case when pl.dedup then first_value(pl.is_fresh) over w else pl.is_fresh end as win_fresh,
           case when pl.dedup then first_value(pl.new_id) over w else pl.new_id end as win_id,
           case when pl.dedup then first_value(pl.pos) over w else pl.pos end as win_pos,
           case when pl.dedup then first_value(pl.prior_off) over w else pl.prior_off end as win_prior_off,
           case when pl.dedup then first_value(pl.prior_msg) over w else pl.prior_msg end as win_prior_msg
      from placed pl
    window w as (partition by pl.partition_id, pl.txn order by pl.idx)
  ), framed as materialized (
    select w.partition_id, w.pos, w.h, w.dedup, w.win, w.new_id, fr.frame, fr.bytes
      from won w
      -- Fenced (OFFSET 0) so the object is built once, built and sized as in the fast path above.
      cross join lateral (select z.frame, pg_column_size(z.frame)::bigint as bytes
                            from (select to_jsonb(k) as frame
                                    from (select w.new_id as id, w.enc as enc, w.sub as sub, w.txn as txn,
                                                 w.data as data, w.trace as trace) k
                                   offset 0) z
                          offset 0) fr
     where w.is_fresh
  ), pieced as (
    -- Segments split at 1000 frames or once 1 MiB is reached (design decision 9); both keys grow
    -- with pos, so each distinct pair is one run of consecutive offsets.
    select fm.*, ((sum(fm.bytes) over (partition by fm.partition_id order by fm.pos))::bigint - fm.bytes) / 1048576 as byte_piece
      from framed fm
  ), alloc as (
    update log_partitions lp
       set last_offset = lp.last_offset + f.n,
           head_at = greatest(v_clock, lp.head_at + interval '1 microsecond'),
           last_write_at = greatest(lp.last_write_at,
                                    date_trunc('second', greatest(v_clock, lp.head_at + interval '1 microsecond')))
      from (select partition_id, count(*) as n from framed group by 1) f
     where lp.id = f.partition_id
    returning lp.id, lp.last_offset - f.n + 1 as base, lp.head_at as created_at
  ), seg as (
    insert into log_segments (partition_id, base_offset, last_offset, frame_count, created_at, byte_size, frames)
    select a.id, a.base + min(pc.pos), a.base + max(pc.pos), count(*), a.created_at, sum(pc.bytes),
           array_agg(pc.frame order by pc.pos)
      from pieced pc join alloc a on a.id = pc.partition_id
     group by a.id, a.base, a.created_at, pc.pos / 1000, pc.byte_piece
    returning 1
  ), hashes as (
    insert into log_txns (partition_id, txn_hash, frame_offset, message_id, expires_at)
    select f.partition_id, f.h, a.base + f.pos, f.new_id, a.created_at + make_interval(secs => f.win)
      from framed f join alloc a on a.id = f.partition_id
     where f.dedup
    on conflict (partition_id, txn_hash) do update
       set frame_offset = excluded.frame_offset, message_id = excluded.message_id, expires_at = excluded.expires_at
     where log_txns.expires_at <= v_clock
    returning 1
  ), answer as (
    select w.idx, w.queue_name, w.partition_id, w.txn, w.trace,
           case when w.is_fresh then 'queued' else 'duplicate' end as status,
           case when w.win_fresh then w.win_id else w.win_prior_msg end as message_id,
           case when w.win_fresh then a.base + w.win_pos else w.win_prior_off end as off
      from won w
      left join alloc a on a.id = w.partition_id
  )
  -- Sorted once, as in the fast path above.
  select jsonb_build_object(
           'columns', jsonb_build_object(
             'index', to_jsonb(array_agg(a.idx)),
             'status', to_jsonb(array_agg(a.status)),
             'queue', to_jsonb(array_agg(a.queue_name)),
             'partitionId', to_jsonb(array_agg(a.partition_id)),
             'offset', to_jsonb(array_agg(a.off)),
             'messageId', to_jsonb(array_agg(a.message_id)),
             'transactionId', to_jsonb(array_agg(a.txn)),
             'traceId', to_jsonb(array_agg(a.trace))),
           'queues', (select jsonb_agg(distinct jsonb_build_object('name', q.name, 'encryptionEnabled', q.encryption_enabled))
                        from queues q
                       where q.id = any (v_qids)))
    into v_result
    from (select * from answer order by idx) a;
  return v_result;
end
$$;

-- _log_push_items: the items of _log_push's compact answer as the push answer's objects, in index
-- order, for callers in SQL (transaction pushes).
create or replace function queen._log_push_items(p_result jsonb)
returns setof jsonb
language sql immutable
set search_path = queen, pg_catalog
as $$
  select jsonb_build_object('index', c->'index'->i, 'status', coalesce(c->'status'->>i, 'queued'),
                            'queue', coalesce(c->'queue'->i, r.pq->(c->'partitionId'->>i)),
                            'partitionId', c->'partitionId'->i, 'offset', c->'offset'->i,
                            'messageId', c->'messageId'->i,
                            'transactionId', coalesce(c->'transactionId'->i, c->'messageId'->i),
                            'traceId', c->'traceId'->i)
    from (select p_result->'columns' as c, p_result->'partitionQueue' as pq) r
    cross join lateral generate_series(0, coalesce(jsonb_array_length(r.c->'index'), 0) - 1) as i
   order by i
$$;

-- _log_push_lookup: the partitions and queues a batch of push items names, as far as they exist
-- (_log_push's first step): distinct (queue, partition) names, then one key probe each (LATERAL …
-- LIMIT 1: as plain left joins the generic plan hash-joined a sequential scan of every partition
-- in the database). Its own function for the SET below, which the rest of the push must not carry
-- (it made the dedup statement's plan 1.7× dearer).
-- Returns: one row: partition ids (sorted), queue ids, whether any item names a transaction id,
-- and whether every named partition was found. Raises: nothing. STABLE: the caller's statement
-- takes a fresh snapshot, so a lookup after _log_create_targets sees what it created.
create or replace function queen._log_push_lookup(p_tenant text, p_items jsonb)
returns table (pids uuid[], qids uuid[], any_txn boolean, found_all boolean)
language plpgsql stable
set search_path = queen, pg_catalog
set plan_cache_mode = force_generic_plan
-- Keyed probes whatever the last ANALYZE saw: a generic plan made while queues and log_partitions
-- held two rows probed them with a sequential scan per name, and one push naming 10 000 new queues
-- then scanned the grown tables 20 000 times (49 s). Index probes cost the same at two rows.
set enable_seqscan = off
as $$
begin
  return query
  select array_agg(p.id order by p.id), array_agg(distinct q.id), coalesce(bool_or(d.has_txn), false),
         count(p.id) = count(*)
    from (select e->>'queue' as qn, coalesce(nullif(e->>'partition', ''), 'Default') as pn,
                 bool_or(nullif(e->>'transactionId', '') is not null) as has_txn
            from jsonb_array_elements(p_items) e group by 1, 2) d
    left join lateral (select q1.id from queues q1 where q1.tenant_id = p_tenant and q1.name = d.qn limit 1) q on true
    left join lateral (select p1.id from log_partitions p1 where p1.queue_id = q.id and p1.name = d.pn limit 1) p on true;
end
$$;

-- _log_create_targets: the queues and partitions a batch of push items names, created if missing,
-- shared by push, transaction pushes and stream cycles. Set-based: one insert of the missing queues
-- and one of the missing partitions, whatever the batch names (a push creating 10 000 queues made
-- 10 000 calls of _ensure_queue before). Queue rows are then held FOR KEY SHARE (rank 1 of the lock
-- order, design decision 4, as _ensure_queue holds them), so a concurrent delete_queue_v1 waits for
-- this transaction; a queue such a delete removed between the two statements is not locked, and the
-- loop creates it afresh. Everything is taken in name order, so two pushes creating the same queues
-- or partitions wait in one order, and partitions are inserted before any allocator lock, so a push
-- never takes a queue row's lock after a partition's (a flipping configure takes them in that
-- order, design decision 24).
-- Returns: nothing. Raises: nothing.
create or replace function queen._log_create_targets(p_tenant text, p_items jsonb)
returns void
language plpgsql volatile
set search_path = queen, pg_catalog
-- Keyed probes whatever the last ANALYZE saw (_log_push_lookup says why).
set enable_seqscan = off
as $$
declare
  v_names text[];
  v_held bigint;
begin
  select array_agg(distinct e->>'queue' order by e->>'queue') into v_names from jsonb_array_elements(p_items) e;
  if v_names is null then
    return; -- no items: nothing to create (the loop below would never see every name held)
  end if;
  loop
    insert into queues (tenant_id, name, namespace, task)
    select p_tenant, n, _derive_namespace(n), _derive_task(n)
      from unnest(v_names) n
     where not exists (select 1 from queues q where q.tenant_id = p_tenant and q.name = n)
     order by n
    on conflict (tenant_id, name) do nothing;
    select count(*) into v_held
      from (select 1 from queues where tenant_id = p_tenant and name = any (v_names) order by name for key share) locked;
    exit when v_held = cardinality(v_names);
  end loop;
  insert into log_partitions (queue_id, name)
  select distinct q.id, coalesce(nullif(e->>'partition', ''), 'Default')
    from jsonb_array_elements(p_items) e
    join queues q on q.tenant_id = p_tenant and q.name = e->>'queue'
   order by 1, 2
  on conflict (queue_id, name) do nothing;
end
$$;

-- log_push_v1: POST /api/v1/push. One call, one transaction: every item ends queued or
-- duplicate, or the call raises and nothing is stored.
create or replace function queen.log_push_v1(p_tenant text, p_items jsonb, p_now timestamptz default null)
returns jsonb
language plpgsql volatile
set search_path = queen, pg_catalog
as $$
begin
  if (select value from system_state where key = 'maintenance') = 'true'::jsonb then
    raise exception using errcode = 'QMMNT', message = 'push maintenance is on';
  end if;
  return _log_push(p_tenant, p_items, p_now);
end
$$;
