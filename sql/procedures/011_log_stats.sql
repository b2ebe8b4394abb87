-- Backlog arithmetic (design decision 10) and the stats lane (docs/resources.md). Everything here
-- reads log_partitions, log_consumers and consumer_groups only (never log_segments, apart from the
-- two documented probes), so its cost follows the partition count, never the segment count.

-- Per partition of p_queue_id: hw, total and the backlog of one cursor. With p_group, that
-- group's cursor (a missing row, or a group that never registered, owes the whole retained range:
-- c = log_start). Without it, the worst cursor among the queue's registered groups: minimum c,
-- processing from that same row, c = log_start for a registered group without a row and for a
-- queue with no registered groups. Groups tied on the worst cursor resolve to the one with the
-- least leased: work one consumer could take now is ready, whatever another group has leased.
--   pending = hw − c;  processing = live lease ? clamp(lease_to + 1 − c, 0, pending) : 0
-- Returns: (partition_id, name, created_at, log_start, hw, head_at, c, pending, processing).
-- Raises: nothing. STABLE. Clock: p_now decides which leases are live.
create or replace function queen._partition_depth(p_queue_id uuid, p_group text, p_now timestamptz)
returns table (partition_id uuid, name text, created_at timestamptz, log_start bigint, hw bigint, head_at timestamptz,
               c bigint, pending bigint, processing bigint)
language sql stable
set search_path = queen, pg_catalog
as $$
  with groups as (
    select p_group as consumer_group where p_group is not null
    union all
    select g.consumer_group from consumer_groups g where p_group is null and g.queue_id = p_queue_id
  )
  select p.id, p.name, p.created_at, p.log_start, p.last_offset + 1, p.head_at, w.c,
         greatest(p.last_offset + 1 - w.c, 0), w.processing
    from log_partitions p
    cross join lateral (
      select x.c, x.processing
        from (
          select greatest(coalesce(lc.committed_offset, p.log_start), p.log_start) as c,
                 case when lc.lease_id is not null and lc.lease_expires_at > p_now
                      then least(greatest(lc.lease_to + 1 - greatest(lc.committed_offset, p.log_start), 0),
                                 greatest(p.last_offset + 1 - greatest(lc.committed_offset, p.log_start), 0))
                      else 0 end as processing
            from groups g
            left join log_consumers lc on lc.partition_id = p.id and lc.consumer_group = g.consumer_group
          union all
          select p.log_start, 0 where not exists (select 1 from groups)
        ) x
       order by x.c, x.processing
       limit 1
    ) w
   where p.queue_id = p_queue_id
$$;

-- _partition_detail: the per-partition rows both detail routes show (GET /api/v1/resources/queues/
-- :queue and GET /api/v1/status/queues/:queue): _partition_depth's worst cursor (no group), plus
-- total = hw − log_start, completed = greatest(0, total − pending − processing), the published
-- formula (design decision 10), dead_letter (distinct dead-lettered offsets) and oldest (created_at
-- of the segment holding log_start, a primary-key probe).
-- Returns: _partition_depth's columns, then total, completed, dead_letter, oldest. Raises: nothing.
-- STABLE. Clock: p_now decides which leases are live.
create or replace function queen._partition_detail(p_queue_id uuid, p_now timestamptz)
returns table (partition_id uuid, name text, created_at timestamptz, log_start bigint, hw bigint, head_at timestamptz,
               c bigint, pending bigint, processing bigint, total bigint, completed bigint, dead_letter bigint,
               oldest timestamptz)
language sql stable
set search_path = queen, pg_catalog
as $$
  select x.*, x.hw - x.log_start, greatest(x.hw - x.log_start - x.pending - x.processing, 0),
         (select count(distinct l.frame_offset) from log_dlq l where l.partition_id = x.partition_id),
         (select s.created_at from log_segments s where s.partition_id = x.partition_id and s.base_offset <= x.log_start
           order by s.base_offset desc limit 1)
    from _partition_depth(p_queue_id, null, p_now) x
$$;

-- log_queue_depth_v1: GET /api/v1/resources/queues/:queue/depth, live, from the arithmetic above.
-- Returns: {queue, group, pending, processing, ready, partitionsPending, partitionsReady,
-- conflation, effectivePending, effectiveReady, partitions:[{partition, pending, processing,
-- ready}]}. Raises: QM404 for an unknown queue. VOLATILE, so a caching pooler never answers it from cache. Clock: p_now (default now()).
create or replace function queen.log_queue_depth_v1(p_tenant text, p_queue text, p_group text default null, p_now timestamptz default null)
returns jsonb
language sql volatile
set search_path = queen, pg_catalog
as $$
  with q as (
    select id, name from queues where tenant_id = p_tenant and name = p_queue
  ), d as (
    select x.* from q cross join lateral _partition_depth(q.id, p_group, coalesce(p_now, now())) x
  ), sums as (
    select coalesce(sum(pending), 0) as pending, coalesce(sum(processing), 0) as processing,
           count(*) filter (where pending > 0) as partitions_pending,
           count(*) filter (where pending - processing > 0) as partitions_ready
      from d
  ), conflating as (
    select coalesce((select g.delivery = 'conflate' from consumer_groups g, q
                      where g.queue_id = q.id and g.consumer_group = p_group), false) as on
  )
  select coalesce((select jsonb_build_object(
           'queue', q.name, 'group', p_group,
           'pending', s.pending, 'processing', s.processing, 'ready', s.pending - s.processing,
           'partitionsPending', s.partitions_pending, 'partitionsReady', s.partitions_ready,
           'conflation', cf.on,
           'effectivePending', case when cf.on then s.partitions_pending else s.pending end,
           'effectiveReady', case when cf.on then s.partitions_ready else s.pending - s.processing end,
           'partitions', coalesce((select jsonb_agg(jsonb_build_object('partition', name, 'pending', pending,
                                                   'processing', processing, 'ready', pending - processing) order by name)
                                     from d), '[]'))
    from q, sums s, conflating cf), _raise('QM404', 'queue not found'))
$$;

-- Seconds since the stats rows in scope were computed (the oldest of them), or -1 when none has
-- been computed yet: a large value means "the stats lane is not running", not "idle".
-- Returns: numeric. Raises: nothing. STABLE.
create or replace function queen._stats_age(p_computed_at timestamptz, p_now timestamptz)
returns numeric
language sql stable
set search_path = queen, pg_catalog
as $$
  select case when p_computed_at is null then -1
              else round(greatest(extract(epoch from p_now - p_computed_at), 0)::numeric, 3) end
$$;

-- log_queue_detail_v1: GET /api/v1/resources/queues/:queue. Live per partition, plus
-- oldestMessage (a primary-key probe at log_start), newestMessage (head_at), an exact segment
-- count, deadLetter from log_dlq and retainedBytes from stats. Per partition: _partition_detail.
-- Returns: the detail object. Raises: QM404 for an unknown queue. VOLATILE (no pooler cache).
create or replace function queen.log_queue_detail_v1(p_tenant text, p_queue text, p_now timestamptz default null)
returns jsonb
language sql volatile
set search_path = queen, pg_catalog
as $$
  with q as (
    select * from queues where tenant_id = p_tenant and name = p_queue
  ), d as (
    select x.* from q cross join lateral _partition_detail(q.id, coalesce(p_now, now())) x
  ), seg as (
    select count(*) as segments, coalesce(sum(s.frame_count), 0) as messages
      from d join log_segments s on s.partition_id = d.partition_id
  ), stats_of as (
    select coalesce((select st.retained_bytes from stats st, q where st.queue_id = q.id), 0) as retained_bytes
  )
  select coalesce((select jsonb_build_object(
           'id', q.id, 'name', q.name, 'namespace', q.namespace, 'task', q.task, 'createdAt', _iso_ms(q.created_at),
           'options', (select _queue_options(x)::jsonb from queues x where x.id = q.id),
           'partitions', coalesce((select jsonb_agg(jsonb_build_object(
               'id', d.partition_id, 'name', d.name, 'createdAt', _iso_ms(d.created_at),
               'stats', jsonb_build_object('total', d.total, 'pending', d.pending, 'processing', d.processing,
                                           'completed', d.completed,
                                           'failed', null, 'deadLetter', d.dead_letter),
               'oldestMessage', case when d.total > 0 then _iso_ms(d.oldest) end,
               'newestMessage', case when d.total > 0 then _iso_ms(d.head_at) end) order by d.name) from d), '[]'),
           'totals', (select jsonb_build_object('total', coalesce(sum(total), 0), 'pending', coalesce(sum(pending), 0),
                                                'processing', coalesce(sum(processing), 0),
                                                'completed', coalesce(sum(completed), 0),
                                                'failed', null, 'deadLetter', coalesce(sum(dead_letter), 0)) from d),
           'retainedBytes', so.retained_bytes,
           'segments', jsonb_build_object('segments', seg.segments, 'messages', seg.messages))
    from q, seg, stats_of so), _raise('QM404', 'queue not found'))
$$;

-- log_queue_stats_all_v1: GET /api/v1/resources/queues. Three clocks (docs/resources.md):
-- partitions and messages.total live from the watermarks (one pass over the tenant's partitions);
-- segments and retainedBytes from the retained-bytes lane's stats columns; pending and processing
-- from the stats lane's. p_cached answers log_queue_stats_cached_v1's pre-rendered listing instead
-- (kept for brokers that still call it so while a deploy rolls out).
-- Returns: {queues:[…], statsAge}. Raises: nothing. VOLATILE (no pooler cache).
create or replace function queen.log_queue_stats_all_v1(p_tenant text, p_cached boolean default false, p_now timestamptz default null)
returns jsonb
language plpgsql volatile
set search_path = queen, pg_catalog
as $$
begin
  if p_cached then
    -- "<version>\t<statsAge>\t<queues>": JSON text has no raw tab, so the fields split cleanly.
    return (select ('{"queues":' || split_part(a, E'\t', 3) || ',"statsAge":' || split_part(a, E'\t', 2) || '}')::jsonb
              from log_queue_stats_cached_v1(p_tenant, null, p_now) a);
  end if;
  return (
    with q as (
      select q.id, q.name, q.namespace, q.task, q.created_at, st.pending, st.processing,
             st.segment_count, st.retained_bytes, st.computed_at
        from queues q left join stats st on st.queue_id = q.id
       where q.tenant_id = p_tenant
    ), live as (
      select p.queue_id, count(*) as partitions, sum(p.last_offset + 1 - p.log_start) as total
        from log_partitions p
       where p.queue_id in (select id from q)
       group by p.queue_id
    ), rows as (
      select q.*, coalesce(l.partitions, 0) as n_partitions, coalesce(l.total, 0) as n_total
        from q left join live l on l.queue_id = q.id
    )
    select jsonb_build_object(
      'queues', coalesce((select jsonb_agg(jsonb_build_object(
          'id', id, 'name', name, 'namespace', namespace, 'task', task, 'createdAt', _iso_ms(created_at),
          'partitions', n_partitions, 'retainedBytes', coalesce(retained_bytes, 0),
          'segments', jsonb_build_object('segments', coalesce(segment_count, 0), 'messages', n_total),
          'messages', jsonb_build_object('total', n_total, 'pending', coalesce(pending, 0), 'processing', coalesce(processing, 0)))
          order by name) from rows), '[]'),
      'statsAge', _stats_age((select min(computed_at) from q), coalesce(p_now, now()))));
end
$$;

-- log_queue_stats_cached_v1: GET /api/v1/resources/queues?stats=cached, for pollers, which must be
-- answered without computing anything per call. The tenant's pre-rendered listing
-- (queen.stats_listings), rendered here first when the tenant has none, where building the answer
-- from 10 000 stats rows took 0.6-1.2 s (BENCHMARKS.md, scale). Every number is queen.stats as it
-- stood when the listing (or, for a queue patched in, that queue's entry) was rendered: the end of
-- the stats lane's last pass, or POST /stats/refresh. A queue created, deleted or renamed since then
-- makes the listing stale (_stats_listing_changed), so the set of queues is always current: a stale
-- listing gets the changed queues patched in (_stats_listing_patch), the others keep their numbers.
-- p_known is the listing version the broker already holds: when it is the current one, the text is
-- not read or sent again.
-- Returns text "<version>\t<statsAge>\t<queues>", where <queues> is the answer's queues array as
-- JSON text, or empty when it is p_known's. Raises: nothing. VOLATILE (it may write the listing; no
-- pooler cache).
create or replace function queen.log_queue_stats_cached_v1(p_tenant text, p_known uuid default null, p_now timestamptz default null)
returns text
language plpgsql volatile
set search_path = queen, pg_catalog
as $$
declare
  v_version uuid;
  v_computed_at timestamptz;
  v_queues text;
begin
  -- Stale when a committed queue change came from a transaction the render's snapshot did not see
  -- (in progress or not yet begun). A change still in progress is invisible here, like its queue.
  -- The text is detoasted only when it is to be sent.
  select l.version, l.computed_at, case when l.version is distinct from p_known then l.queues end
    into v_version, v_computed_at, v_queues
    from stats_listings l
   where l.tenant_id = p_tenant
     and not exists (select 1 from stats_listing_changes c
                      where c.tenant_id = p_tenant
                        and not pg_visible_in_snapshot(c.xid::text::xid8, l.snapshot::pg_snapshot));
  if not found then
    select r.version, r.computed_at, r.queues into v_version, v_computed_at, v_queues from _stats_listing_patch(p_tenant) r;
  end if;
  return v_version || E'\t' || _stats_age(v_computed_at, coalesce(p_now, now()))
         || E'\t' || case when v_version = p_known then '' else v_queues end;
end
$$;

-- _stats_listing_entries: the listing's entry of each of the tenant's queues (all of them, or those
-- of p_ids), as JSON text: the fields of log_queue_stats_all_v1, every number from queen.stats.
-- The one definition a full render and a patch share, so a patched listing is the text a render
-- would make from the same numbers. STABLE: it reads in its caller's snapshot.
-- Returns: (id, name, computed_at, entry), unordered.
create or replace function queen._stats_listing_entries(p_tenant text, p_ids uuid[] default null)
returns table (id uuid, name text, computed_at timestamptz, entry text)
language sql stable
-- No SET clause and a schema-qualified body, so PostgreSQL inlines it into its caller's statement:
-- the render's null p_ids then folds away, and a patch's few ids are probed by primary key instead
-- of every queue of the tenant being scanned and filtered.
as $$
  select q.id, q.name, st.computed_at, pg_catalog.row_to_json(x)::text
    from queen.queues q
    left join queen.stats st on st.queue_id = q.id
    -- The answer's object for one queue: the row's columns are its keys, id first (a patch finds an
    -- entry by its opening `{"id":"<uuid>"`, which no escaped string value can contain).
    cross join lateral (
      select q.id, q.name, q.namespace, q.task, queen._iso_ms(q.created_at) as "createdAt",
             coalesce(st.partition_count, 0) as partitions, coalesce(st.retained_bytes, 0) as "retainedBytes",
             ('{"segments":' || coalesce(st.segment_count, 0) || ',"messages":' || coalesce(st.total, 0) || '}')::json as segments,
             ('{"total":' || coalesce(st.total, 0) || ',"pending":' || coalesce(st.pending, 0)
               || ',"processing":' || coalesce(st.processing, 0) || '}')::json as messages) x
   where q.tenant_id = p_tenant and (p_ids is null or q.id = any (p_ids))
$$;

-- _stats_listing_render: renders and stores one tenant's listing from queen.queues and queen.stats
-- alone (_stats_listing_entries, every number cached), with the snapshot it was read in. JSON text
-- built per row and joined: one jsonb_agg of 10 000 objects was ~75 % of the old cached call. A
-- concurrent render may store an older snapshot over a newer one; the changes it did not see are
-- still there, so the next call finds it stale.
-- Returns: the stored row.
create or replace function queen._stats_listing_render(p_tenant text)
returns queen.stats_listings
language plpgsql volatile
set search_path = queen, pg_catalog
as $$
declare
  v_listing stats_listings;
begin
  -- One statement, so the snapshot recorded is the one the queues and stats were read in (the
  -- entries function is STABLE: it reads in this statement's snapshot).
  select p_tenant, '[' || coalesce(string_agg(e.entry, ',' order by e.name), '') || ']',
         min(e.computed_at), clock_timestamp(), pg_current_snapshot()::text, null::uuid
    into v_listing
    from _stats_listing_entries(p_tenant) e;
  v_listing := _stats_listing_store(v_listing);
  return v_listing;
end
$$;

-- _stats_listing_store: stores a tenant's listing (a render's or a patch's), keeping its version when
-- the text is the one stored, and prunes the changes it has seen. Changes are pruned once the stored
-- listing has seen them and they are 5 minutes old: every render or patch still to store began
-- within the statement timeout (at most 60 s, design decision 34), after they committed, so it sees
-- them too.
-- Returns: the row as stored (its version filled in).
create or replace function queen._stats_listing_store(p_listing queen.stats_listings)
returns queen.stats_listings
language plpgsql volatile
set search_path = queen, pg_catalog
as $$
declare
  v_listing stats_listings := p_listing;
begin
  -- The version changes only with the text, so brokers keep what they hold across idle passes.
  insert into stats_listings as l (tenant_id, queues, computed_at, rendered_at, snapshot, version)
  values (v_listing.tenant_id, v_listing.queues, v_listing.computed_at, v_listing.rendered_at, v_listing.snapshot,
          gen_random_uuid())
  on conflict (tenant_id) do update
    set queues = excluded.queues, computed_at = excluded.computed_at, rendered_at = excluded.rendered_at,
        snapshot = excluded.snapshot,
        version = case when l.queues = excluded.queues then l.version else excluded.version end
  returning l.version into v_listing.version;
  delete from stats_listing_changes
   where tenant_id = v_listing.tenant_id and created_at < clock_timestamp() - interval '5 minutes'
     and pg_visible_in_snapshot(xid::text::xid8, v_listing.snapshot::pg_snapshot);
  delete from stats_listing_changed_queues
   where tenant_id = v_listing.tenant_id and created_at < clock_timestamp() - interval '5 minutes'
     and pg_visible_in_snapshot(xid::text::xid8, v_listing.snapshot::pg_snapshot);
  return v_listing;
end
$$;

-- _stats_listing_patch: brings a tenant's stale listing up to date with its set of queues by
-- patching in only the queues changed since the listing's snapshot (stats_listing_changed_queues):
-- each one's old entry is cut out and, if the queue still exists, its entry rendered and put back in
-- name order. The other entries keep their numbers, as they would until the stats lane's next pass.
-- A patch is a few cuts of the text (about 1 ms each at 10 000 queues) where a render reads and
-- formats every queue (75 ms), so a tenant creating queues between polls no longer makes each poll
-- pay a render; past PATCH_MAX changed queues (a bulk creation) a render is cheaper, and is done.
-- The listing row is locked first, so polls that find it stale together patch it once. The stored
-- snapshot is taken after the lock: the changes patched are exactly those it sees.
-- Renders when the tenant has no listing yet. Returns: the stored row.
create or replace function queen._stats_listing_patch(p_tenant text)
returns queen.stats_listings
language plpgsql volatile
set search_path = queen, pg_catalog
as $$
declare
  PATCH_MAX constant integer := 64;
  v_listing stats_listings;
  v_snapshot pg_snapshot;
  v_ids uuid[];
  v_text bytea;
  v_marker bytea;
  v_at integer;
  v_length integer;
  v_tail integer;
  v_computed_at timestamptz;
  v_id uuid;
  e record;
  s record;
begin
  select * into v_listing from stats_listings where tenant_id = p_tenant for update;
  if not found then
    return _stats_listing_render(p_tenant);
  end if;
  v_snapshot := pg_current_snapshot();
  -- Never null: a render that landed between the caller's staleness check and this lock can leave
  -- nothing to patch, and a null would ask _stats_listing_entries for every queue, each one then
  -- put in a second time.
  select coalesce(array_agg(distinct c.queue_id), '{}') into v_ids
    from stats_listing_changed_queues c
   where c.tenant_id = p_tenant
     and not pg_visible_in_snapshot(c.xid::text::xid8, v_listing.snapshot::pg_snapshot)
     and pg_visible_in_snapshot(c.xid::text::xid8, v_snapshot);
  if cardinality(v_ids) > PATCH_MAX then
    return _stats_listing_render(p_tenant);
  end if;

  -- Bytes, not text: positions and cuts are then byte offsets, with no walk over multibyte text.
  v_text := convert_to(v_listing.queues, 'UTF8');
  -- Out: each changed queue's entry, with the comma that joined it to a neighbour.
  foreach v_id in array v_ids loop
    v_marker := convert_to('{"id":"' || v_id || '"', 'UTF8');
    v_at := position(v_marker in v_text);
    continue when v_at = 0;
    v_length := position(convert_to(',{"id":"', 'UTF8') in substring(v_text from v_at + 1));
    if v_length > 0 then
      v_text := overlay(v_text placing '' from v_at for v_length + 1);   -- the entry and its comma
    else
      v_length := length(v_text) - v_at;                                 -- the last entry: up to ']'
      v_tail := case when get_byte(v_text, v_at - 2) = 44 then 1 else 0 end;  -- ',' before it
      v_text := overlay(v_text placing '' from v_at - v_tail for v_length + v_tail);
    end if;
  end loop;

  -- In: the entries of the changed queues that exist now, the last name first, each before the
  -- first entry of a greater name the text holds (queues created since this snapshot may not be in
  -- it yet: they are passed over, and patched in by the next call).
  v_computed_at := v_listing.computed_at;
  for e in select * from _stats_listing_entries(p_tenant, v_ids) order by name desc loop
    v_at := 0;
    for s in select q.id from queues q where q.tenant_id = p_tenant and q.name > e.name order by q.name loop
      v_at := position(convert_to('{"id":"' || s.id || '"', 'UTF8') in v_text);
      exit when v_at > 0;
    end loop;
    if v_at > 0 then
      v_text := overlay(v_text placing convert_to(e.entry || ',', 'UTF8') from v_at for 0);
    elsif length(v_text) = 2 then
      v_text := convert_to('[' || e.entry || ']', 'UTF8');
    else
      v_text := overlay(v_text placing convert_to(',' || e.entry, 'UTF8') from length(v_text) for 0);
    end if;
    v_computed_at := least(v_computed_at, e.computed_at);
  end loop;

  v_listing.queues := convert_from(v_text, 'UTF8');
  v_listing.computed_at := v_computed_at;
  v_listing.snapshot := v_snapshot::text;
  return _stats_listing_store(v_listing);
end
$$;

-- stats_listing_render_step_v1: one step of the stats lane's last stage (cron/stats-refresh.ts):
-- after a pass over every queue, each tenant that has a listing gets it rendered again from the
-- fresh stats, one tenant a step, in tenant order after p_after (null: from the first).
-- Returns: {"processed": <queues listed>, "next": <tenant rendered> | null when none was left}.
-- Raises: nothing.
create or replace function queen.stats_listing_render_step_v1(p_after text default null)
returns jsonb
language plpgsql volatile
set search_path = queen, pg_catalog
as $$
declare
  v_tenant text;
begin
  select tenant_id into v_tenant from stats_listings
   where p_after is null or tenant_id > p_after
   order by tenant_id limit 1;
  if not found then
    return jsonb_build_object('processed', 0, 'next', null);
  end if;
  perform _stats_listing_render(v_tenant);
  return jsonb_build_object('processed', (select count(*) from queues where tenant_id = v_tenant), 'next', v_tenant);
end
$$;

-- _stats_listing_changed: trigger on queen.queues, for a rename (name, namespace, task) of one
-- queue. Records that this transaction changed the tenant's set of queues (once per transaction and
-- tenant: the staleness check reads these) and which queue (a stale listing patches in only the
-- queues changed). It never waits: the keys hold this transaction's own id, which no other
-- transaction writes.
-- Returns: null (AFTER trigger).
create or replace function queen._stats_listing_changed()
returns trigger
language plpgsql volatile
set search_path = queen, pg_catalog
as $$
begin
  insert into stats_listing_changes (tenant_id, xid)
  values (new.tenant_id, pg_current_xact_id()::text::bigint)
  on conflict do nothing;
  insert into stats_listing_changed_queues (tenant_id, xid, queue_id)
  values (new.tenant_id, pg_current_xact_id()::text::bigint, new.id)
  on conflict do nothing;
  return null;
end
$$;

-- _stats_listing_set_changed: statement trigger on queen.queues for queues created or deleted,
-- over the statement's transition table `changed`: the same records as _stats_listing_changed, in
-- two inserts for the whole statement, so a push creating 10 000 queues does not pay a trigger
-- call and two inserts per queue.
-- Returns: null (AFTER trigger).
create or replace function queen._stats_listing_set_changed()
returns trigger
language plpgsql volatile
set search_path = queen, pg_catalog
as $$
begin
  insert into stats_listing_changes (tenant_id, xid)
  select distinct c.tenant_id, pg_current_xact_id()::text::bigint from changed c
  on conflict do nothing;
  insert into stats_listing_changed_queues (tenant_id, xid, queue_id)
  select c.tenant_id, pg_current_xact_id()::text::bigint, c.id from changed c
  on conflict do nothing;
  return null;
end
$$;

-- Creations and deletions per statement (the row trigger they replace is dropped).
drop trigger if exists queues_stats_listing_created_deleted on queen.queues;
create or replace trigger queues_stats_listing_created
  after insert on queen.queues referencing new table as changed
  for each statement execute function queen._stats_listing_set_changed();
create or replace trigger queues_stats_listing_deleted
  after delete on queen.queues referencing old table as changed
  for each statement execute function queen._stats_listing_set_changed();
create or replace trigger queues_stats_listing_renamed
  after update of name, namespace, task on queen.queues
  for each row when (old.name is distinct from new.name or old.namespace is distinct from new.namespace
                     or old.task is distinct from new.task)
  execute function queen._stats_listing_changed();

-- log_stats_refresh_step_v1: one bounded step of the stats_refresh lane, or the whole of one tenant
-- for POST /api/v1/stats/refresh (p_tenant, design decision 41). For the queues after p_after (by
-- id), as long as the rows read stay within p_limit (each queue counts one, and one more per
-- partition, since the arithmetic and the lag probe read one cursor and one segment a partition),
-- it writes the group-less arithmetic into queen.stats and folds the deltas into
-- the current queue_metrics minute: pushed += Δhw_total, consumed += max(0, Δcommitted_total),
-- dead_lettered = DLQ rows failed in that minute (the previous pass's minute recounted when a new
-- minute began), pending/processing, and max_lag_seconds (the age of the frame at the worst cursor
-- of the most lagging partition).
-- A queue is always finished once begun (its figures and deltas are one consistent reading), so
-- a step reads at most p_limit rows plus one queue's partitions; the first queue is always done.
-- Rows alone do not bound a step's time: a queue costs about five times a partition to read, and
-- a busy database slows every row, so a step of 1 000 rows took up to 4.3 s at 10 M frames
-- (BENCHMARKS.md). A lane step therefore also stops at the first queue that ends past p_max_ms of
-- wall clock since the step began (clock_timestamp(), not p_now, which may be a test's clock), and
-- the next step resumes after it, as it does after the row limit. A whole tenant's refresh has no
-- budget: it is one answer.
-- Returns: {"processed": n, "next": <last queue id> | null}. Idempotent: a repeat rewrites equal
-- stats and adds zero deltas. Raises: nothing (lock_timeout backstop). Clock: p_now.
-- The signature before p_max_ms is dropped, so a call by name resolves to one function.
drop function if exists queen.log_stats_refresh_step_v1(uuid, integer, text, timestamptz);
create or replace function queen.log_stats_refresh_step_v1(
  p_after uuid default null,
  p_limit integer default 1000,
  p_tenant text default null,
  p_now timestamptz default null,
  p_max_ms integer default 250
) returns jsonb
language plpgsql volatile
set search_path = queen, pg_catalog
set lock_timeout = '1s'
as $$
declare
  v_now timestamptz := coalesce(p_now, clock_timestamp());
  v_deadline timestamptz := clock_timestamp() + make_interval(secs => greatest(p_max_ms, 0) / 1000.0);
  v_minute timestamptz := date_trunc('minute', v_now);
  v_count integer := 0;
  v_rows bigint := 0::bigint;
  v_full boolean := false;
  v_last uuid;
  r record;
begin
  for r in
    select q.id, q.tenant_id, st.hw_total as old_hw, st.committed_total as old_committed, st.computed_at as old_at,
           a.partitions, a.total, a.pending, a.processing, a.hw_total, a.committed_total, a.max_lag
      from queues q
      left join stats st on st.queue_id = q.id
      cross join lateral (
        select count(*) as partitions, coalesce(sum(d.hw - d.log_start), 0) as total,
               coalesce(sum(d.pending), 0) as pending, coalesce(sum(d.processing), 0) as processing,
               coalesce(sum(d.hw), 0) as hw_total, coalesce(sum(d.c), 0) as committed_total,
               coalesce(max(extract(epoch from v_now - (
                 select s.created_at from log_segments s
                  where s.partition_id = d.partition_id and s.base_offset <= d.c
                  order by s.base_offset desc limit 1))) filter (where d.pending > 0), 0) as max_lag
          from _partition_depth(q.id, null, v_now) d
      ) a
     where (p_tenant is null or q.tenant_id = p_tenant)
       and (p_after is null or q.id > p_after)
     order by q.id
     limit case when p_tenant is null then greatest(p_limit, 1) end
  loop
    -- A queue deleted since the scan began is skipped: the key-share lock waits for a deleting
    -- transaction (as the foreign-key check below would) and then finds no row, where the insert
    -- would have raised 23503 (a 500 of POST /stats/refresh racing a queue delete, found by the fuzzer).
    v_rows := v_rows + 1 + r.partitions;
    v_last := r.id;
    v_full := p_tenant is null and (v_rows >= greatest(p_limit, 1) or clock_timestamp() >= v_deadline);
    perform 1 from queues where id = r.id for key share;
    if not found then
      exit when v_full;
      continue;
    end if;
    insert into stats as s (queue_id, tenant_id, partition_count, total, pending, processing, hw_total, committed_total, computed_at)
    values (r.id, r.tenant_id, r.partitions, r.total, r.pending, r.processing, r.hw_total, r.committed_total, v_now)
    on conflict (queue_id) do update
      set partition_count = excluded.partition_count, total = excluded.total, pending = excluded.pending,
          processing = excluded.processing, hw_total = excluded.hw_total, committed_total = excluded.committed_total,
          computed_at = excluded.computed_at;

    insert into queue_metrics as m (queue_id, bucket, pushed, consumed, dead_lettered, pending, processing, max_lag_seconds)
    values (r.id, v_minute,
            greatest(r.hw_total - coalesce(r.old_hw, 0), 0),
            greatest(r.committed_total - coalesce(r.old_committed, 0), 0),
            (select count(*) from log_dlq l where l.queue_id = r.id and l.failed_at >= v_minute and l.failed_at < v_minute + interval '1 minute'),
            r.pending, r.processing, r.max_lag)
    on conflict (queue_id, bucket) do update
      set pushed = m.pushed + excluded.pushed, consumed = m.consumed + excluded.consumed,
          dead_lettered = excluded.dead_lettered, pending = excluded.pending, processing = excluded.processing,
          max_lag_seconds = excluded.max_lag_seconds;
    -- dead_lettered is counted by failure minute, so when this pass is the first of a new minute
    -- every minute from the previous pass's up to this one is counted once more: a message
    -- dead-lettered after that pass would otherwise never be counted anywhere, above all in a
    -- minute no pass ran in (its bucket is made here). Minutes without a dead letter are untouched.
    if r.old_at is not null and date_trunc('minute', r.old_at) < v_minute then
      insert into queue_metrics as m (queue_id, bucket, dead_lettered)
      select r.id, date_trunc('minute', l.failed_at), count(*)
        from log_dlq l
       where l.queue_id = r.id and l.failed_at >= date_trunc('minute', r.old_at) and l.failed_at < v_minute
       group by date_trunc('minute', l.failed_at)
      on conflict (queue_id, bucket) do update set dead_lettered = excluded.dead_lettered;
    end if;

    v_count := v_count + 1;
    -- The time budget is checked again after the queue's writes, which are part of its cost.
    v_full := p_tenant is null and (v_full or clock_timestamp() >= v_deadline);
    exit when v_full;
  end loop;

  -- A whole tenant's refresh is a pass of its own: its listing, if it has one, shows it at once.
  if p_tenant is not null and exists (select 1 from stats_listings where tenant_id = p_tenant) then
    perform _stats_listing_render(p_tenant);
  end if;

  return jsonb_build_object('processed', v_count, 'next', case when v_full then v_last end);
end
$$;

-- log_stats_refresh_v1: POST /api/v1/stats/refresh, every queue of one tenant at once (the lane's
-- step above with p_tenant, without the lane's claim), so the route calls a procedure about its
-- own tenant rather than a broker-wide step with a tenant filled in.
-- Returns: {"processed": n, "next": null}. Raises: nothing (the step's lock_timeout backstop).
-- Clock: p_now (default the step's clock_timestamp()).
create or replace function queen.log_stats_refresh_v1(p_tenant text, p_now timestamptz default null)
returns jsonb
language sql volatile
set search_path = queen, pg_catalog
as $$
  select log_stats_refresh_step_v1(p_tenant => p_tenant, p_now => p_now)
$$;
