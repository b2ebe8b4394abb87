-- Ephemeral queues (docs/ephemeral.md): per-queue rings of messages in UNLOGGED tables, per-group
-- cursors and leases, bounds with a reject or dropOldest policy, a TTL, redelivery up to a retry
-- limit, and a broker-wide kill switch. The routes validate shapes first; the QME* raises here are
-- the backstop and the verdicts only the data can give (a full queue, a missing queue).
-- Error codes: QMEOF ephemeral surface switched off (503), QMEFL queue full (429), QMENF queue not
-- found (404), QMEBR bad request (400).

-- _eph_check_on: raises QMEOF when an operator switched the surface off. An absent row means on.
create or replace function queen._eph_check_on()
returns void
language plpgsql stable
set search_path = queen, pg_catalog
as $$
begin
  if coalesce((select value = 'false'::jsonb from system_state where key = 'ephemeral'), false) then
    raise exception using errcode = 'QMEOF', message = 'Ephemeral queues are paused by an operator; retry later';
  end if;
end
$$;

-- _eph_check_name: queue, partition and group names are at most 512 bytes without control
-- characters (the routes refuse them first).
create or replace function queen._eph_check_name(p_what text, p_name text)
returns void
language plpgsql immutable
set search_path = queen, pg_catalog
as $$
begin
  if p_name is null or p_name = '' or octet_length(p_name) > 512 or p_name ~ '[\x01-\x1f\x7f]' then
    raise exception using errcode = 'QMEBR', message = p_what || ': must be 1 to 512 bytes without control characters';
  end if;
end
$$;

-- _eph_epoch: this database's ephemeral incarnation, minted when absent (first use, or after a
-- crash emptied the unlogged row). Concurrent first uses agree on one row.
create or replace function queen._eph_epoch()
returns text
language plpgsql volatile
set search_path = queen, pg_catalog
as $$
declare
  v_epoch text;
begin
  select epoch into v_epoch from ephemeral_incarnation where id = 1;
  if v_epoch is null then
    insert into ephemeral_incarnation (id, epoch) values (1, substr(md5(random()::text || clock_timestamp()::text), 1, 12))
    on conflict (id) do nothing;
    select epoch into v_epoch from ephemeral_incarnation where id = 1;
  end if;
  return v_epoch;
end
$$;

-- _eph_options: the options in force for a queue: what was declared, defaults for the rest, each
-- clamped to the broker's ceilings (the declaration itself keeps what was sent). plpgsql, as is
-- _eph_options_of, so each backend plans their statements once: a SQL function with its own
-- search_path is never inlined and was planned again on every call, a fifth of a pop's time.
create or replace function queen._eph_options(p_declared jsonb)
returns jsonb
language plpgsql immutable
set search_path = queen, pg_catalog
as $$
begin
  return jsonb_build_object(
    'maxBytes', least(coalesce((p_declared->>'maxBytes')::bigint, 16777216), 268435456),
    'maxLength', least(coalesce((p_declared->>'maxLength')::bigint, 10000), 1000000),
    'policy', coalesce(p_declared->>'policy', 'reject'),
    'ttlSeconds', least(coalesce((p_declared->>'ttlSeconds')::bigint, 0), 604800),
    'leaseSeconds', greatest(least(coalesce((p_declared->>'leaseSeconds')::bigint, 30), 3600), 1),
    'retryLimit', least(coalesce((p_declared->>'retryLimit')::bigint, 5), 1000),
    'windowBuffer', case when jsonb_typeof(p_declared->'windowBuffer') = 'object' then jsonb_build_object(
      'ms', least(coalesce((p_declared->'windowBuffer'->>'ms')::bigint, 0), 300000),
      'count', least(coalesce((p_declared->'windowBuffer'->>'count')::bigint, 0), 10000)) end);
end
$$;

-- _eph_options_of: the options in force for one queue of a tenant.
create or replace function queen._eph_options_of(p_tenant text, p_queue text)
returns jsonb
language plpgsql stable
set search_path = queen, pg_catalog
as $$
begin
  return _eph_options((select options from ephemeral_declarations where tenant_id = p_tenant and queue = p_queue));
end
$$;

-- _eph_trim: deletes the messages of one partition that every group of the queue has delivered
-- and none holds a lease on. Nothing goes while the queue has no group: the first consumer sees
-- what was pushed before it. The caller holds the partition's row and updates the ring's counters.
-- Returns (n, bytes) deleted.
create or replace function queen._eph_trim(p_tenant text, p_queue text, p_partition text, out n bigint, out bytes bigint)
returns record
language plpgsql volatile
set search_path = queen, pg_catalog
as $$
declare
  v_bound bigint;
begin
  select min(least(coalesce(c.last_seq, 0),
                   coalesce((select min(u.seq) - 1 from ephemeral_leases l
                                     cross join lateral unnest(l.seqs, l.partitions) u(seq, part)
                              where l.tenant_id = p_tenant and l.queue = p_queue and l.grp = g.grp and u.part = p_partition),
                            9223372036854775807)))
    into v_bound
    from ephemeral_groups g
    left join ephemeral_cursors c
      on c.tenant_id = g.tenant_id and c.queue = g.queue and c.grp = g.grp and c.partition = p_partition
   where g.tenant_id = p_tenant and g.queue = p_queue;
  n := 0;
  bytes := 0;
  if coalesce(v_bound, 0) <= 0 then
    return;
  end if;
  with gone as (
    delete from ephemeral_messages m
     where m.tenant_id = p_tenant and m.queue = p_queue and m.partition = p_partition and m.seq <= v_bound
    returning m.bytes
  )
  select count(*), coalesce(sum(gone.bytes), 0) into n, bytes from gone;
end
$$;

-- _eph_lease_drop: takes the numbers p_seqs out of the group's lease rows keyed p_rows (a lease
-- row holds the numbers one pop delivered): a row left empty is deleted, the others rewritten
-- without them. The caller holds those rows locked. Members are matched by hash join, so taking
-- thousands costs in proportion to the members, not to their product.
create or replace function queen._eph_lease_drop(p_tenant text, p_queue text, p_group text, p_rows bigint[], p_seqs bigint[])
returns void
language plpgsql volatile
set search_path = queen, pg_catalog
as $$
begin
  if cardinality(p_rows) = 0 or cardinality(p_seqs) = 0 then
    return;
  end if;
  with k as (
    select l.lo, u.seq, u.part, u.att, d.seq is not null as taken
      from ephemeral_leases l
     cross join lateral unnest(l.seqs, l.partitions, l.attempts) u(seq, part, att)
      left join unnest(p_seqs) d(seq) on d.seq = u.seq
     where l.tenant_id = p_tenant and l.queue = p_queue and l.grp = p_group and l.lo = any(p_rows)
  ), cut as (
    select k.lo,
           array_agg(k.seq order by k.seq) filter (where not k.taken) as seqs,
           array_agg(k.part order by k.seq) filter (where not k.taken) as parts,
           array_agg(k.att order by k.seq) filter (where not k.taken) as atts
      from k
     group by k.lo
    having bool_or(k.taken)
  ), kept as (
    update ephemeral_leases l
       set lo = c.seqs[1], hi = c.seqs[cardinality(c.seqs)], seqs = c.seqs, partitions = c.parts, attempts = c.atts
      from cut c
     where l.tenant_id = p_tenant and l.queue = p_queue and l.grp = p_group and l.lo = c.lo and c.seqs is not null
  )
  delete from ephemeral_leases l
   using cut c
   where l.tenant_id = p_tenant and l.queue = p_queue and l.grp = p_group and l.lo = c.lo and c.seqs is null;
end
$$;

-- _eph_lock_partitions: locks the rows of partitions p_parts of a queue, making those that are
-- absent, and with p_all every other partition of the queue too, one row at a time in partition
-- order. A push holds its partitions' rows from numbering its messages to its commit, so within a
-- partition numbers follow commit order (a cursor never passes a message committed later), while
-- pushes to other partitions run beside it. Every taker locks partition rows in this one order
-- and the ring row only after them, so no two of them wait on each other in a circle.
create or replace function queen._eph_lock_partitions(p_tenant text, p_queue text, p_parts text[], p_all boolean)
returns void
language plpgsql volatile
set search_path = queen, pg_catalog
as $$
begin
  insert into ephemeral_partitions as p (tenant_id, queue, partition)
  select p_tenant, p_queue, x.part
    from (select u.part from unnest(p_parts) u(part)
          union
          select e.partition from ephemeral_partitions e where p_all and e.tenant_id = p_tenant and e.queue = p_queue) x
   order by x.part
  on conflict (tenant_id, queue, partition) do update set last_seq = p.last_seq;
end
$$;

-- _eph_ring_exists: makes the queue's ring when absent, before any partition row is locked (a
-- first push's uncommitted ring holds back the others' until it commits, and they hold nothing then).
create or replace function queen._eph_ring_exists(p_tenant text, p_queue text)
returns void
language plpgsql volatile
set search_path = queen, pg_catalog
as $$
begin
  if not exists (select 1 from ephemeral_rings where tenant_id = p_tenant and queue = p_queue) then
    insert into ephemeral_rings (tenant_id, queue) values (p_tenant, p_queue) on conflict do nothing;
  end if;
end
$$;

-- _eph_push_side: the push that runs beside pushes to other partitions of the queue. p_groups is a
-- JSON array of well-formed {"partition", "payloads"} (p_n payloads of p_bytes bytes in all, to
-- the partitions p_parts); the caller made the ring. Locks only those partitions' rows, drops what
-- the TTL expired there and trims what every group consumed there, numbers each group's payloads
-- from a value of its own of ephemeral_numbers (in the groups' order), writes them, and books the
-- difference in the ring's counters last, so the ring row is held only from that update to the
-- commit. When the counters then stand past maxLength or maxBytes, everything it did is undone
-- (locks included) and it answers false: the caller takes the serial path, which decides with the
-- whole queue in view, as every push did before.
create or replace function queen._eph_push_side(p_tenant text, p_queue text, p_groups jsonb, p_parts text[], p_n bigint, p_bytes bigint, p_opt jsonb)
returns boolean
language plpgsql volatile
set search_path = queen, pg_catalog
as $$
declare
  v_ttl bigint := (p_opt->>'ttlSeconds')::bigint;
  v_cutoff timestamptz;
  v_ttl_n bigint := 0::bigint;
  v_ttl_bytes bigint := 0::bigint;
  v_gone bigint := 0::bigint;
  v_gone_bytes bigint := 0::bigint;
  v_t record;
  v_part text;
  v_bases bigint[];
  v_depth bigint;
  v_bytes bigint;
begin
  begin
    perform _eph_lock_partitions(p_tenant, p_queue, p_parts, false);
    -- TTL: only when the oldest message of one of these partitions has expired does the sweep scan.
    if v_ttl > 0 then
      v_cutoff := clock_timestamp() - make_interval(secs => v_ttl);
      if exists (
        select 1 from unnest(p_parts) u(part)
         cross join lateral (select m.created_at from ephemeral_messages m
                              where m.tenant_id = p_tenant and m.queue = p_queue and m.partition = u.part
                              order by m.seq limit 1) o
         where o.created_at < v_cutoff) then
        with gone as (
          delete from ephemeral_messages m
           where m.tenant_id = p_tenant and m.queue = p_queue and m.partition = any(p_parts) and m.created_at < v_cutoff
          returning m.bytes
        )
        select count(*), coalesce(sum(gone.bytes), 0) into v_ttl_n, v_ttl_bytes from gone;
      end if;
    end if;
    foreach v_part in array p_parts loop
      select t.n, t.bytes into v_t from _eph_trim(p_tenant, p_queue, v_part) t;
      v_gone := v_gone + v_t.n;
      v_gone_bytes := v_gone_bytes + v_t.bytes;
    end loop;

    -- One value per group, ascending in the groups' order; a group's payloads are numbered on from it.
    select array_agg(s.b order by s.b) into v_bases
      from (select nextval('queen.ephemeral_numbers') as b from jsonb_array_elements(p_groups)) s;
    insert into ephemeral_messages (tenant_id, queue, partition, seq, payload, bytes)
    select p_tenant, p_queue, g.value->>'partition', v_bases[g.ord] + e.ord - 1, e.value, octet_length(e.value::text)
      from jsonb_array_elements(p_groups) with ordinality g(value, ord)
     cross join lateral jsonb_array_elements(g.value->'payloads') with ordinality e(value, ord);
    update ephemeral_partitions p
       set last_seq = x.last_seq
      from (select g.value->>'partition' as part, max(v_bases[g.ord] + jsonb_array_length(g.value->'payloads') - 1) as last_seq
              from jsonb_array_elements(p_groups) with ordinality g(value, ord)
             where jsonb_array_length(g.value->'payloads') > 0
             group by g.value->>'partition') x
     where p.tenant_id = p_tenant and p.queue = p_queue and p.partition = x.part;

    -- The queue's counters last. A concurrent delete may have taken the ring: this push then makes it again.
    insert into ephemeral_rings as r (tenant_id, queue, depth, bytes, drops_ttl)
    values (p_tenant, p_queue, p_n - v_ttl_n - v_gone, p_bytes - v_ttl_bytes - v_gone_bytes, v_ttl_n)
    on conflict (tenant_id, queue) do update
       set depth = r.depth + excluded.depth,
           bytes = r.bytes + excluded.bytes,
           drops_ttl = r.drops_ttl + excluded.drops_ttl,
           touched_at = clock_timestamp()
    returning r.depth, r.bytes into v_depth, v_bytes;
    if v_depth > (p_opt->>'maxLength')::bigint or v_bytes > (p_opt->>'maxBytes')::bigint then
      raise exception using errcode = 'QMEOV', message = 'past the bounds: take the serial path';
    end if;
    return true;
  exception when sqlstate 'QMEOV' then
    return false;
  end;
end
$$;

-- _eph_push_input: what every push of one partition checks first (the surface is on, the names
-- and the payloads are well formed, raising QMEOF or QMEBR) and the payloads' count and bytes.
create or replace function queen._eph_push_input(p_queue text, p_partition text, p_payloads jsonb, out n bigint, out bytes bigint)
returns record
language plpgsql stable
set search_path = queen, pg_catalog
as $$
declare
  v_n bigint := coalesce(jsonb_array_length(p_payloads), 0)::bigint;
begin
  perform _eph_check_on();
  perform _eph_check_name('queue', p_queue);
  perform _eph_check_name('partition', p_partition);
  if jsonb_typeof(p_payloads) is distinct from 'array' or v_n > 10000 then
    raise exception using errcode = 'QMEBR', message = 'messages: must be an array of at most 10000';
  end if;
  n := v_n;
  bytes := 0;
  if v_n > 0 then
    select coalesce(sum(octet_length(e.value::text)), 0) into bytes from jsonb_array_elements(p_payloads) e;
  end if;
end
$$;

-- _eph_push_serial: ephemeral_push_v1's push with the whole queue in view, for when the queue is at
-- or near its bounds: the TTL, the trim, the bounds and dropOldest as described there, dropOldest
-- taking the lowest numbers of the whole queue first. Holds every partition row of the queue and
-- then the ring row, so no other push of the queue runs meanwhile. Returns the number pushed.
create or replace function queen._eph_push_serial(p_tenant text, p_queue text, p_partition text, p_payloads jsonb)
returns bigint
language plpgsql volatile
set search_path = queen, pg_catalog
as $$
declare
  v_n bigint;
  v_bytes bigint;
  v_ring ephemeral_rings;
  v_opt jsonb;
  v_ttl bigint;
  v_max_len bigint;
  v_max_bytes bigint;
  v_gone bigint := 0::bigint;
  v_gone_bytes bigint := 0::bigint;
  v_ttl_n bigint := 0::bigint;
  v_ttl_bytes bigint := 0::bigint;
  v_drop_n bigint := 0::bigint;
  v_drop_bytes bigint := 0::bigint;
  v_t record;
  v_part text;
  v_cut bigint;
  v_base bigint;
begin
  select i.n, i.bytes into v_n, v_bytes from _eph_push_input(p_queue, p_partition, p_payloads) i;
  if v_n = 0 then
    return 0::bigint;
  end if;

  perform _eph_ring_exists(p_tenant, p_queue);
  perform _eph_lock_partitions(p_tenant, p_queue, array[p_partition], true);
  select * into v_ring from ephemeral_rings where tenant_id = p_tenant and queue = p_queue for update;
  v_opt := _eph_options_of(p_tenant, p_queue);
  v_ttl := (v_opt->>'ttlSeconds')::bigint;
  v_max_len := (v_opt->>'maxLength')::bigint;
  v_max_bytes := (v_opt->>'maxBytes')::bigint;

  -- TTL: only when the oldest message of some partition has expired does the sweep scan.
  if v_ttl > 0 and exists (
    select 1 from ephemeral_partitions p
     cross join lateral (select m.created_at from ephemeral_messages m
                          where m.tenant_id = p.tenant_id and m.queue = p.queue and m.partition = p.partition
                          order by m.seq limit 1) o
     where p.tenant_id = p_tenant and p.queue = p_queue and o.created_at < clock_timestamp() - make_interval(secs => v_ttl)) then
    with gone as (
      delete from ephemeral_messages m
       where m.tenant_id = p_tenant and m.queue = p_queue and m.created_at < clock_timestamp() - make_interval(secs => v_ttl)
      returning m.bytes
    )
    select count(*), coalesce(sum(gone.bytes), 0) into v_ttl_n, v_ttl_bytes from gone;
  end if;

  select t.n, t.bytes into v_t from _eph_trim(p_tenant, p_queue, p_partition) t;
  v_gone := v_t.n;
  v_gone_bytes := v_t.bytes;

  -- Over the bounds: trim every partition a group has consumed from, then decide.
  if v_ring.depth - v_ttl_n - v_gone + v_n > v_max_len or v_ring.bytes - v_ttl_bytes - v_gone_bytes + v_bytes > v_max_bytes then
    for v_part in
      select distinct c.partition from ephemeral_cursors c
       where c.tenant_id = p_tenant and c.queue = p_queue and c.partition <> p_partition
    loop
      select t.n, t.bytes into v_t from _eph_trim(p_tenant, p_queue, v_part) t;
      v_gone := v_gone + v_t.n;
      v_gone_bytes := v_gone_bytes + v_t.bytes;
    end loop;
  end if;
  if v_ring.depth - v_ttl_n - v_gone + v_n > v_max_len or v_ring.bytes - v_ttl_bytes - v_gone_bytes + v_bytes > v_max_bytes then
    if v_opt->>'policy' <> 'dropOldest' or v_n > v_max_len or v_bytes > v_max_bytes then
      raise exception using errcode = 'QMEFL',
        message = format('Ephemeral queue %s is full (maxLength %s, maxBytes %s)', p_queue, v_max_len, v_max_bytes);
    end if;
    -- dropOldest: the shortest prefix (by number, which follows push order across the queue) whose removal makes room.
    select min(o.seq) into v_cut from (
      select m.seq,
             count(*) over (order by m.seq) as n_before,
             sum(m.bytes) over (order by m.seq) as bytes_before
        from ephemeral_messages m where m.tenant_id = p_tenant and m.queue = p_queue) o
     where v_ring.depth - v_ttl_n - v_gone - o.n_before + v_n <= v_max_len
       and v_ring.bytes - v_ttl_bytes - v_gone_bytes - o.bytes_before + v_bytes <= v_max_bytes;
    with gone as (
      delete from ephemeral_messages m
       where m.tenant_id = p_tenant and m.queue = p_queue and (v_cut is null or m.seq <= v_cut)
      returning m.bytes
    )
    select count(*), coalesce(sum(gone.bytes), 0) into v_drop_n, v_drop_bytes from gone;
  end if;

  v_base := nextval('queen.ephemeral_numbers');
  insert into ephemeral_messages (tenant_id, queue, partition, seq, payload, bytes)
  select p_tenant, p_queue, p_partition, v_base + e.ord - 1, e.value, octet_length(e.value::text)
    from jsonb_array_elements(p_payloads) with ordinality e(value, ord);
  update ephemeral_partitions set last_seq = v_base + v_n - 1
   where tenant_id = p_tenant and queue = p_queue and partition = p_partition;

  update ephemeral_rings
     set depth = depth - v_ttl_n - v_gone - v_drop_n + v_n,
         bytes = bytes - v_ttl_bytes - v_gone_bytes - v_drop_bytes + v_bytes,
         drops_ttl = drops_ttl + v_ttl_n,
         drops_bounds = drops_bounds + v_drop_n,
         touched_at = clock_timestamp()
   where tenant_id = p_tenant and queue = p_queue;
  return v_n;
end
$$;

-- _eph_fits: whether the queue's committed counters leave room for p_n more payloads of p_bytes
-- (what a push beside others may try; the serial path decides the rest).
create or replace function queen._eph_fits(p_tenant text, p_queue text, p_n bigint, p_bytes bigint, p_opt jsonb)
returns boolean
language plpgsql stable
set search_path = queen, pg_catalog
as $$
begin
  return coalesce((select r.depth + p_n <= (p_opt->>'maxLength')::bigint and r.bytes + p_bytes <= (p_opt->>'maxBytes')::bigint
                     from ephemeral_rings r where r.tenant_id = p_tenant and r.queue = p_queue), false);
end
$$;

-- ephemeral_push_v1: appends p_payloads (a JSON array of payloads) to one partition, all or
-- nothing. Creates the queue's ring when absent. Before checking the bounds it drops what the TTL
-- expired and trims what every group has consumed; a breach under policy 'reject' (or a request
-- larger than the bounds themselves) raises QMEFL and writes nothing, under 'dropOldest' the oldest
-- messages go, counted as bounds drops.
-- Returns {"pushed"}. Concurrency: pushes to one partition serialise on its row, which they hold
-- from numbering to commit, so numbers follow commit order within a partition and a cursor never
-- passes a message committed later; pushes to other partitions of the queue run beside it and
-- meet only at the ring's counters, written last. While the queue's counters leave room it takes
-- only its partition's row (_eph_push_side), otherwise every row of the queue (_eph_push_serial).
-- Writes no WAL (every table it writes is unlogged), so its commit never waits for a flush.
create or replace function queen.ephemeral_push_v1(p_tenant text, p_queue text, p_partition text, p_payloads jsonb)
returns jsonb
language plpgsql volatile
set search_path = queen, pg_catalog
as $$
declare
  v_n bigint;
  v_bytes bigint;
  v_opt jsonb;
begin
  select i.n, i.bytes into v_n, v_bytes from _eph_push_input(p_queue, p_partition, p_payloads) i;
  if v_n = 0 then
    return jsonb_build_object('pushed', 0);
  end if;
  perform _eph_ring_exists(p_tenant, p_queue);
  v_opt := _eph_options_of(p_tenant, p_queue);
  if _eph_fits(p_tenant, p_queue, v_n, v_bytes, v_opt)
     and _eph_push_side(p_tenant, p_queue, jsonb_build_array(jsonb_build_object('partition', p_partition, 'payloads', p_payloads)),
                        array[p_partition], v_n, v_bytes, v_opt) then
    return jsonb_build_object('pushed', v_n);
  end if;
  return jsonb_build_object('pushed', _eph_push_serial(p_tenant, p_queue, p_partition, p_payloads));
end
$$;

-- ephemeral_push_many_v1: several pushes to one queue in one transaction, as a Node broker fuses
-- them (src/db/ephemeral-push-fusion.ts): p_groups is a JSON array of {"partition", "payloads"},
-- applied in order as ephemeral_push_v1 would apply each, so the whole batch commits once. All or
-- nothing: any group's error (QMEFL, QMEBR, ...) raises and writes nothing, and the broker then
-- retries each push alone so only the one at fault sees it. While the queue's counters leave room
-- for the whole, the bookkeeping is done once for the call (_eph_push_side: one TTL sweep, one trim
-- of each partition it pushes to, one insert, one update of the ring) holding only the rows of the
-- partitions it pushes to. Otherwise, or when a group is malformed, it holds every partition row of
-- the queue and applies the groups one by one as separate pushes would (_eph_push_serial), which
-- decides each refusal and each dropOldest cut exactly as they would.
-- Returns {"pushed": [n, ...]}, one count per group in order.
create or replace function queen.ephemeral_push_many_v1(p_tenant text, p_queue text, p_groups jsonb)
returns jsonb
language plpgsql volatile
set search_path = queen, pg_catalog
as $$
declare
  v_counts jsonb := '[]'::jsonb;
  v_group jsonb;
  v_valid boolean;
  v_n bigint;
  v_bytes bigint;
  v_parts text[];
  v_opt jsonb;
begin
  if jsonb_typeof(p_groups) is distinct from 'array' then
    raise exception using errcode = 'QMEBR', message = 'groups: must be an array';
  end if;
  -- Every group well formed (what ephemeral_push_v1 would refuse sends the call down the
  -- one-by-one path, which raises that group's own error), its payload count and bytes, and the
  -- partitions with something to push, in the order their rows are locked.
  select coalesce(bool_and(
           jsonb_typeof(g.value) = 'object'
           and jsonb_typeof(g.value->'partition') = 'string'
           and g.value->>'partition' <> '' and octet_length(g.value->>'partition') <= 512
           and g.value->>'partition' !~ '[\x01-\x1f\x7f]'
           and jsonb_typeof(g.value->'payloads') = 'array' and jsonb_array_length(g.value->'payloads') <= 10000), true)
    into v_valid
    from jsonb_array_elements(p_groups) g;
  -- The partitions of the well-formed groups with something to push, in the order their rows are locked.
  select coalesce(array_agg(distinct g.value->>'partition' order by g.value->>'partition'), '{}')
    into v_parts
    from jsonb_array_elements(p_groups) g
   where jsonb_typeof(g.value) = 'object'
     and jsonb_typeof(g.value->'partition') = 'string'
     and g.value->>'partition' <> '' and octet_length(g.value->>'partition') <= 512
     and g.value->>'partition' !~ '[\x01-\x1f\x7f]'
     and jsonb_typeof(g.value->'payloads') = 'array' and jsonb_array_length(g.value->'payloads') between 1 and 10000;
  if v_valid then
    select count(*), coalesce(sum(octet_length(e.value::text)), 0) into v_n, v_bytes
      from jsonb_array_elements(p_groups) g
     cross join lateral jsonb_array_elements(g.value->'payloads') e;
  end if;
  perform _eph_check_on();
  perform _eph_check_name('queue', p_queue);
  if v_valid and v_n > 0 then
    perform _eph_ring_exists(p_tenant, p_queue);
    v_opt := _eph_options_of(p_tenant, p_queue);
    if _eph_fits(p_tenant, p_queue, v_n, v_bytes, v_opt)
       and _eph_push_side(p_tenant, p_queue, p_groups, v_parts, v_n, v_bytes, v_opt) then
      select jsonb_agg(jsonb_array_length(g.value->'payloads') order by g.ord) into v_counts
        from jsonb_array_elements(p_groups) with ordinality g(value, ord);
      return jsonb_build_object('pushed', v_counts);
    end if;
  end if;
  -- One by one, every partition row of the queue (and those this call makes) locked first, in order.
  if cardinality(v_parts) > 0 then
    perform _eph_ring_exists(p_tenant, p_queue);
    perform _eph_lock_partitions(p_tenant, p_queue, v_parts, true);
  end if;
  for v_group in select g.value from jsonb_array_elements(p_groups) g loop
    v_counts := v_counts || jsonb_build_array(_eph_push_serial(p_tenant, p_queue, v_group->>'partition', v_group->'payloads'));
  end loop;
  return jsonb_build_object('pushed', v_counts);
end;
$$;

-- _eph_pop: takes up to p_batch messages for group p_group ('' = queue mode) of one queue,
-- from p_partition or (null) every partition. Redeliverable leases of the group come first (their
-- attempts + 1; beyond retryLimit a message is dropped for the group and counted), then messages the
-- group has not been given, in push order. Without p_auto_ack each delivery takes a lease of
-- leaseSeconds; with it the cursor alone advances. Creates the ring and the group when absent.
-- Messages older than ttlSeconds are never delivered. Never sleeps: the route waits.
-- Returns the deliveries as parallel arrays in delivery order (number, partition, attempts, payload),
-- this database's incarnation, and the queue's windowBuffer ({ms, count} or null); the public
-- procedures below shape them.
-- Concurrency: pops of one group serialise on its group row. Writes one lease row per call (not per
-- message): the numbers it delivered, each with its partition and attempt count. p_shares (null:
-- one) splits a fused call's deliveries, in order, into the batches of the pops it stands for
-- (summing to p_batch), each leased in a row of its own: each consumer's ack then deletes its own
-- row, where one row for all of them was rewritten by every ack, one ack at a time.
create or replace function queen._eph_pop(p_tenant text, p_queue text, p_partition text, p_group text, p_batch integer, p_auto_ack boolean,
                                         p_shares integer[],
                                         out o_epoch text, out o_seqs bigint[], out o_partitions text[], out o_attempts integer[],
                                         out o_payloads jsonb[], out o_window_buffer jsonb)
returns record
language plpgsql volatile
set search_path = queen, pg_catalog
as $$
declare
  v_opt jsonb;
  v_epoch text;
  v_now timestamptz := clock_timestamp();
  v_until timestamptz;
  v_cutoff timestamptz;
  v_retry_limit integer;
  v_share_of integer[];
  v_out_seq bigint[] := '{}'::bigint[];
  v_out_part text[] := '{}'::text[];
  v_out_att integer[] := '{}'::integer[];
  v_out_payload jsonb[] := '{}'::jsonb[];
  v_retry_drops bigint := 0::bigint;
  v_left integer;
  v_rows bigint[];
  v_taken bigint[] := '{}'::bigint[];
  v_lease_seq bigint[] := '{}'::bigint[];
  v_lease_part text[] := '{}'::text[];
  v_lease_att integer[] := '{}'::integer[];
  v_new_seq bigint[] := '{}'::bigint[];
  v_new_part text[] := '{}'::text[];
  v_new_payload jsonb[] := '{}'::jsonb[];
  v_win_seq bigint[];
  v_win_payload jsonb[];
  v_heads bigint[] := '{}'::bigint[];
  v_heads_part text[] := '{}'::text[];
  v_known bigint[];
  v_known_part text[];
  v_known_at jsonb;
  v_cursors jsonb;
  v_part text;
  v_at integer;
  v_lo bigint;
  v_hi bigint;
  r record;
begin
  perform _eph_check_on();
  perform _eph_check_name('queue', p_queue);
  if p_partition is not null then
    perform _eph_check_name('partition', p_partition);
  end if;
  if p_group <> '' then
    perform _eph_check_name('group', p_group);
  end if;
  if p_batch is null or p_batch not between 1 and 10000 then
    raise exception using errcode = 'QMEBR', message = 'batch must be 1 to 10000';
  end if;
  if p_shares is not null then
    if cardinality(p_shares) = 0 or array_position(p_shares, null) is not null
       or (select min(n) from unnest(p_shares) n) < 1 or (select sum(n) from unnest(p_shares) n) <> p_batch then
      raise exception using errcode = 'QMEBR', message = 'shares: positive batches that sum to batch';
    end if;
    -- Which share each delivery position (1 .. p_batch) falls in.
    select array_agg(s.i::integer order by s.i, g) into v_share_of
      from unnest(p_shares) with ordinality s(n, i)
     cross join lateral generate_series(1, s.n) g;
  end if;

  if not exists (select 1 from ephemeral_rings where tenant_id = p_tenant and queue = p_queue) then
    insert into ephemeral_rings (tenant_id, queue) values (p_tenant, p_queue) on conflict do nothing;
  end if;
  if not exists (select 1 from ephemeral_groups where tenant_id = p_tenant and queue = p_queue and grp = p_group) then
    insert into ephemeral_groups (tenant_id, queue, grp) values (p_tenant, p_queue, p_group) on conflict do nothing;
  end if;
  select g.heads_parts, g.heads into v_known_part, v_known
    from ephemeral_groups g where g.tenant_id = p_tenant and g.queue = p_queue and g.grp = p_group for update;

  v_opt := _eph_options_of(p_tenant, p_queue);
  v_epoch := _eph_epoch();
  v_until := v_now + make_interval(secs => (v_opt->>'leaseSeconds')::bigint);
  v_retry_limit := (v_opt->>'retryLimit')::integer;
  if (v_opt->>'ttlSeconds')::bigint > 0 then
    v_cutoff := v_now - make_interval(secs => (v_opt->>'ttlSeconds')::bigint);
  end if;

  -- Redeliveries: members of the group's lease rows that expired or were handed back, those
  -- handed back or expired longest ago first. The expired rows are found by the expiry index and
  -- locked first, so an ack settling a member of one of them meanwhile either finishes before this
  -- reads the row or finds the member gone.
  select coalesce(array_agg(x.lo), '{}') into v_rows
    from (select l.lo from ephemeral_leases l
           where l.tenant_id = p_tenant and l.queue = p_queue and l.grp = p_group and l.lease_until <= v_now
           order by l.lo
             for update) x;
  if cardinality(v_rows) > 0 then
    for r in
      select u.seq, u.part as partition, u.att as attempts, m.payload, m.created_at, m.seq is not null as present
        from ephemeral_leases l
       cross join lateral unnest(l.seqs, l.partitions, l.attempts) u(seq, part, att)
        left join ephemeral_messages m on m.tenant_id = l.tenant_id and m.queue = l.queue and m.partition = u.part and m.seq = u.seq
       where l.tenant_id = p_tenant and l.queue = p_queue and l.grp = p_group and l.lo = any(v_rows)
         and l.lease_until <= v_now
         and (p_partition is null or u.part = p_partition)
       order by l.lease_until, u.seq
       limit p_batch
    loop
      -- Every member read leaves its old row; those redelivered without autoAck join this pop's.
      v_taken := array_append(v_taken, r.seq);
      if not r.present or (v_cutoff is not null and r.created_at < v_cutoff) or r.attempts + 1 > v_retry_limit then
        if r.present and r.attempts + 1 > v_retry_limit then
          v_retry_drops := v_retry_drops + 1;
        end if;
        continue;
      end if;
      if not p_auto_ack then
        v_lease_seq := array_append(v_lease_seq, r.seq);
        v_lease_part := array_append(v_lease_part, r.partition);
        v_lease_att := array_append(v_lease_att, r.attempts + 1);
      end if;
      v_out_seq := array_append(v_out_seq, r.seq);
      v_out_part := array_append(v_out_part, r.partition);
      v_out_att := array_append(v_out_att, r.attempts + 1);
      v_out_payload := array_append(v_out_payload, r.payload);
    end loop;
    perform _eph_lease_drop(p_tenant, p_queue, p_group, v_rows, v_taken);
  end if;
  if v_retry_drops > 0 then
    update ephemeral_groups set drops_retry = drops_retry + v_retry_drops
     where tenant_id = p_tenant and queue = p_queue and grp = p_group;
  end if;

  -- New messages: those past the group's cursor of their partition, oldest first. They are read in
  -- windows of consecutive numbers no wider than what is left of the batch (a push numbers its
  -- messages without gaps, so a window usually holds a whole push), each starting at the lowest
  -- number left, found by the index; the gaps between pushes (and what a TTL filters) cost a probe
  -- for the next number, never a wider window. Every statement is then bounded by its window
  -- whatever the planner believes of the table's size: an unbounded "past the cursor, in number
  -- order" read was planned, before a fresh table's first statistics, as "read every row of the
  -- queue and sort", and cost a pop over a large backlog hundreds of milliseconds until
  -- autovacuum's first ANALYZE; and a window widened past the gaps between pushes was planned,
  -- after it, as a bitmap scan of the partition's whole backlog and a sort.
  -- A queue-wide pop merges the partitions by number: it keeps, for each partition with something
  -- past the group's cursor, its lowest such number (its head), and reads from the partition with
  -- the lowest head up to the next lowest, so messages come in number order (push order) across
  -- partitions, and a partition whose pushes commit late is still read from its own cursor on.
  v_left := p_batch - cardinality(v_out_seq);
  if v_left > 0 then
    if p_partition is null then
      -- A head is a lower bound of the partition's next number: the one the group's last queue-wide
      -- pop left (see ephemeral_groups.heads) or the number past the cursor, whichever is higher;
      -- the windows below find the messages from it. The partitions written past the group's cursor
      -- are those with something left. The group's cursors are read once, by their key's prefix,
      -- into an object keyed by partition, and so are the known heads: the plan is then two index
      -- range scans and no join, whatever the statistics say. As a join it depended on them: a plan
      -- cached while the cursors were few scanned every cursor of the group for each partition, and
      -- a pop of a queue with 2 000 drained partitions took 240 ms until the next ANALYZE.
      select coalesce(jsonb_object_agg(c.partition, c.last_seq), '{}'::jsonb) into v_cursors
        from ephemeral_cursors c
       where c.tenant_id = p_tenant and c.queue = p_queue and c.grp = p_group;
      v_known_at := coalesce(jsonb_object(v_known_part, v_known::text[]), '{}'::jsonb);
      select coalesce(array_agg(h.part order by h.head), '{}'), coalesce(array_agg(h.head order by h.head), '{}')
        into v_heads_part, v_heads
        from (select x.part, greatest((v_known_at->>x.part)::bigint, coalesce(x.cur, 0) + 1) as head
                from (select p.partition as part, p.last_seq as tail, (v_cursors->>p.partition)::bigint as cur
                        from ephemeral_partitions p
                       where p.tenant_id = p_tenant and p.queue = p_queue
                      offset 0) x
               where x.tail > coalesce(x.cur, 0)) h;
    else
      select min(m.seq) into v_lo from ephemeral_messages m
       where m.tenant_id = p_tenant and m.queue = p_queue and m.partition = p_partition
         and m.seq > coalesce((select c.last_seq from ephemeral_cursors c
                                where c.tenant_id = p_tenant and c.queue = p_queue and c.grp = p_group and c.partition = p_partition), 0);
      if v_lo is not null then
        v_heads_part := array[p_partition];
        v_heads := array[v_lo];
      end if;
    end if;
    while cardinality(v_heads) > 0 loop
      v_part := v_heads_part[1];
      v_lo := v_heads[1];
      v_hi := v_lo + v_left - 1;
      if cardinality(v_heads) > 1 then
        v_hi := least(v_hi, v_heads[2] - 1);
      end if;
      select coalesce(array_agg(w.seq order by w.seq), '{}'), coalesce(array_agg(w.payload order by w.seq), '{}')
        into v_win_seq, v_win_payload
        from (select m.seq, m.payload
                from ephemeral_messages m
               where m.tenant_id = p_tenant and m.queue = p_queue and m.partition = v_part and m.seq >= v_lo and m.seq <= v_hi
                 and (v_cutoff is null or m.created_at >= v_cutoff)
               order by m.seq
               limit v_left) w;
      v_new_seq := v_new_seq || v_win_seq;
      v_new_part := v_new_part || array_fill(v_part, array[cardinality(v_win_seq)]);
      v_new_payload := v_new_payload || v_win_payload;
      v_left := v_left - cardinality(v_win_seq);
      exit when v_left <= 0;
      -- This partition's next head, past the window; the heads stay in order.
      select min(m.seq) into v_lo from ephemeral_messages m
       where m.tenant_id = p_tenant and m.queue = p_queue and m.partition = v_part and m.seq > v_hi;
      v_heads_part := v_heads_part[2:];
      v_heads := v_heads[2:];
      if v_lo is not null then
        v_at := 1;
        while v_at <= cardinality(v_heads) and v_heads[v_at] < v_lo loop
          v_at := v_at + 1;
        end loop;
        v_heads_part := v_heads_part[1:v_at - 1] || v_part || v_heads_part[v_at:];
        v_heads := v_heads[1:v_at - 1] || v_lo || v_heads[v_at:];
      end if;
    end loop;
    if cardinality(v_new_seq) > 0 then
      insert into ephemeral_cursors (tenant_id, queue, grp, partition, last_seq)
      select p_tenant, p_queue, p_group, u.part, max(u.seq) from unnest(v_new_seq, v_new_part) u(seq, part) group by u.part
      on conflict (tenant_id, queue, grp, partition) do update set last_seq = greatest(ephemeral_cursors.last_seq, excluded.last_seq);
    end if;
    -- A queue-wide pop leaves the heads it knows to the group's next one, which then need not look
    -- them up: all but the partition it stopped in when the batch ran out (its next number is not known).
    if p_partition is null then
      if v_left <= 0 then
        v_heads_part := v_heads_part[2:];
        v_heads := v_heads[2:];
      end if;
      update ephemeral_groups set heads_parts = v_heads_part, heads = v_heads
       where tenant_id = p_tenant and queue = p_queue and grp = p_group;
    end if;
  end if;

  -- One lease row for everything this pop delivered (one per share when p_shares splits it),
  -- members in ascending number. Its lowest number keys it: each member left its earlier row
  -- above, or was never leased to the group. The deliveries are in delivery order here, so the
  -- position of each picks its share.
  if not p_auto_ack and cardinality(v_lease_seq) + cardinality(v_new_seq) > 0 then
    insert into ephemeral_leases (tenant_id, queue, grp, lo, hi, seqs, partitions, attempts, lease_until)
    select p_tenant, p_queue, p_group, min(u.seq), max(u.seq),
           array_agg(u.seq order by u.seq), array_agg(u.part order by u.seq), array_agg(u.att order by u.seq), v_until
      from unnest(v_lease_seq || v_new_seq, v_lease_part || v_new_part,
                  v_lease_att || array_fill(0, array[cardinality(v_new_seq)])) with ordinality u(seq, part, att, ord)
     group by coalesce(v_share_of[u.ord], 0);
  end if;

  o_epoch := v_epoch;
  o_seqs := v_out_seq || v_new_seq;
  o_partitions := v_out_part || v_new_part;
  o_attempts := v_out_att || array_fill(0, array[cardinality(v_new_seq)]);
  o_payloads := v_out_payload || v_new_payload;
  o_window_buffer := v_opt->'windowBuffer';
end
$$;

-- ephemeral_pop_v1: _eph_pop's deliveries as Queen's messages, each with its id built here:
-- `e:<epoch>:<partition>:<number>` for a first delivery, `….<attempts>` for a redelivery.
-- Returns {"messages": [{id, partition, attempts, payload}], "windowBuffer": {ms, count} | null}.
-- Kept for brokers that call it; this broker calls ephemeral_pop_v2 and builds the ids itself.
create or replace function queen.ephemeral_pop_v1(p_tenant text, p_queue text, p_partition text, p_group text, p_batch integer, p_auto_ack boolean)
returns jsonb
language plpgsql volatile
set search_path = queen, pg_catalog
as $$
begin
  return (select jsonb_build_object(
    'messages', coalesce((select jsonb_agg(jsonb_build_object(
                  'id', 'e:' || p.o_epoch || ':' || u.part || ':' || u.seq || case when u.att > 0 then '.' || u.att else '' end,
                  'partition', u.part, 'attempts', u.att, 'payload', u.payload) order by u.ord)
                from unnest(p.o_seqs, p.o_partitions, p.o_attempts, p.o_payloads) with ordinality u(seq, part, att, payload, ord)), '[]'::jsonb),
    'windowBuffer', p.o_window_buffer)
    from _eph_pop(p_tenant, p_queue, p_partition, p_group, p_batch, p_auto_ack, null) p);
end
$$;

-- ephemeral_pop_v2: _eph_pop's deliveries as parallel arrays, for the broker to shape into
-- messages and ids (src/ephemeral/pop-result.ts): building a JSON object and an id string per
-- message here was a third of a pop's time in PostgreSQL. Numbers go as strings, exact past 2^53.
-- p_shares: the batches of the pops a fused call stands for, each leased apart (see _eph_pop).
-- Returns {"epoch", "seqs": [text], "partitions": [text], "attempts": [int], "payloads": [json],
-- "windowBuffer": {ms, count} | null}.
create or replace function queen.ephemeral_pop_v2(p_tenant text, p_queue text, p_partition text, p_group text, p_batch integer, p_auto_ack boolean,
                                                  p_shares integer[] default null)
returns jsonb
language plpgsql volatile
set search_path = queen, pg_catalog
as $$
begin
  return (select jsonb_build_object(
    'epoch', p.o_epoch,
    'seqs', to_jsonb(p.o_seqs::text[]),
    'partitions', to_jsonb(p.o_partitions),
    'attempts', to_jsonb(p.o_attempts),
    'payloads', to_jsonb(p.o_payloads),
    'windowBuffer', p.o_window_buffer)
    from _eph_pop(p_tenant, p_queue, p_partition, p_group, p_batch, p_auto_ack, p_shares) p);
end
$$;


-- ephemeral_ack_v2: settles popped messages of group p_group ('' = queue mode) given as parsed
-- deliveries: p_ords (the caller's own index of each), p_epochs, p_seqs, p_attempts and p_back
-- (true for a failed or retry, which hands the lease back). The caller parsed the ids and passes
-- each delivery once: a repeat of the same number and attempt in one call is the caller's 'unknown'.
-- A delivery settles when its epoch is this database's incarnation and its number and attempt
-- match a member of a lease row of the group: a completed one leaves its row, a handed-back one
-- moves to a row of its own whose lease has already run out, so the next pop hands it out first.
-- An earlier delivery's id matches nothing. Rewrites (or deletes) the lease rows the numbers fall
-- in, one per pop, not a row per message.
-- Returns {"epoch", "acked": [ord], "redelivered": [ord]}: the caller answers 'stale' for another
-- epoch, and 'unknown' for a delivery in neither list.
create or replace function queen.ephemeral_ack_v2(p_tenant text, p_queue text, p_group text, p_ords integer[], p_epochs text[],
                                                  p_seqs bigint[], p_attempts integer[], p_back boolean[])
returns jsonb
language plpgsql volatile
set search_path = queen, pg_catalog
as $$
declare
  v_epoch text;
  v_seqs bigint[];
  v_atts integer[];
  v_ords integer[];
  v_any_back boolean;
  v_rows bigint[] := '{}'::bigint[];
  v_acked integer[] := '{}'::integer[];
  v_redone integer[] := '{}'::integer[];
  v_redo_seq bigint[];
  v_redo_part text[];
  v_redo_att integer[];
  v_n integer := coalesce(cardinality(p_ords), 0);
begin
  perform _eph_check_on();
  perform _eph_check_name('queue', p_queue);
  if p_group <> '' then
    perform _eph_check_name('group', p_group);
  end if;
  if v_n > 10000 or coalesce(cardinality(p_epochs), 0) <> v_n or coalesce(cardinality(p_seqs), 0) <> v_n
     or coalesce(cardinality(p_attempts), 0) <> v_n or coalesce(cardinality(p_back), 0) <> v_n then
    raise exception using errcode = 'QMEBR', message = 'acks: at most 10000, every array as long as the others';
  end if;
  v_epoch := _eph_epoch();
  select coalesce(array_agg(u.seq order by u.seq), '{}'), coalesce(array_agg(u.att order by u.seq), '{}'),
         coalesce(array_agg(u.ord), '{}'), coalesce(bool_or(u.back), false)
    into v_seqs, v_atts, v_ords, v_any_back
    from unnest(p_ords, p_epochs, p_seqs, p_attempts, p_back) u(ord, epoch, seq, att, back)
   where u.epoch = v_epoch;

  -- The usual ack settles one whole pop: its deliveries are exactly the members of one lease row
  -- (the one keyed by their lowest number), each at the attempt it was leased with. That row is
  -- deleted as it stands, without taking its members apart. A row another call changed meanwhile
  -- no longer equals them, and the general path below decides.
  if not v_any_back and cardinality(v_seqs) > 0 then
    delete from ephemeral_leases l
     where l.tenant_id = p_tenant and l.queue = p_queue and l.grp = p_group and l.lo = v_seqs[1]
       and l.seqs = v_seqs and l.attempts = v_atts;
    if found then
      return jsonb_build_object('epoch', v_epoch, 'acked', to_jsonb(v_ords), 'redelivered', '[]'::jsonb);
    end if;
  end if;

  -- The lease rows the numbers may fall in are locked first, by their number range (the primary
  -- key), so a pop redelivering or another ack settling members of the same rows waits or has
  -- finished.
  if cardinality(v_seqs) > 0 then
    select coalesce(array_agg(x.lo), '{}') into v_rows
      from (select l.lo from ephemeral_leases l
             where l.tenant_id = p_tenant and l.queue = p_queue and l.grp = p_group
               and l.lo <= (select max(a) from unnest(v_seqs) a)
               and l.hi >= (select min(a) from unnest(v_seqs) a)
               and l.seqs && v_seqs
             order by l.lo
               for update) x;
  end if;
  -- One pass over the locked rows' members: each is matched against the deliveries by hash join on
  -- (number, attempt), each row is rewritten without its settled members or deleted when none is
  -- left (the usual ack of a whole pop: no array is rebuilt), and the settled ones are collected.
  if cardinality(v_rows) > 0 then
    with a as (
      select u.ord, u.seq, u.att, u.back
        from unnest(p_ords, p_epochs, p_seqs, p_attempts, p_back) u(ord, epoch, seq, att, back)
       where u.epoch = v_epoch
    ), k as (
      select l.lo, u.seq, u.part, u.att, a.ord, a.ord is not null as hit, coalesce(a.back, false) as back
        from ephemeral_leases l
       cross join lateral unnest(l.seqs, l.partitions, l.attempts) u(seq, part, att)
        left join a on a.seq = u.seq and a.att = u.att
       where l.tenant_id = p_tenant and l.queue = p_queue and l.grp = p_group and l.lo = any(v_rows)
    ), cut as (
      select k.lo,
             array_agg(k.seq order by k.seq) filter (where not k.hit) as seqs,
             array_agg(k.part order by k.seq) filter (where not k.hit) as parts,
             array_agg(k.att order by k.seq) filter (where not k.hit) as atts
        from k
       group by k.lo
      having bool_or(k.hit)
    ), kept as (
      update ephemeral_leases l
         set lo = c.seqs[1], hi = c.seqs[cardinality(c.seqs)], seqs = c.seqs, partitions = c.parts, attempts = c.atts
        from cut c
       where l.tenant_id = p_tenant and l.queue = p_queue and l.grp = p_group and l.lo = c.lo and c.seqs is not null
    ), gone as (
      delete from ephemeral_leases l
       using cut c
       where l.tenant_id = p_tenant and l.queue = p_queue and l.grp = p_group and l.lo = c.lo and c.seqs is null
    )
    select coalesce(array_agg(k.ord) filter (where k.hit and not k.back), '{}'),
           coalesce(array_agg(k.ord) filter (where k.back), '{}'),
           coalesce(array_agg(k.seq order by k.seq) filter (where k.back), '{}'),
           coalesce(array_agg(k.part order by k.seq) filter (where k.back), '{}'),
           coalesce(array_agg(k.att order by k.seq) filter (where k.back), '{}')
      into v_acked, v_redone, v_redo_seq, v_redo_part, v_redo_att
      from k;
    if cardinality(v_redo_seq) > 0 then
      insert into ephemeral_leases (tenant_id, queue, grp, lo, hi, seqs, partitions, attempts, lease_until)
      values (p_tenant, p_queue, p_group, v_redo_seq[1], v_redo_seq[cardinality(v_redo_seq)],
              v_redo_seq, v_redo_part, v_redo_att, '-infinity');
    end if;
  end if;
  return jsonb_build_object('epoch', v_epoch, 'acked', to_jsonb(v_acked), 'redelivered', to_jsonb(v_redone));
end
$$;

-- ephemeral_ack_v1: settles popped messages of group p_group ('' = queue mode), one verdict per
-- element of p_acks ([{id, status}], status completed | failed | retry). 'acked': the lease was
-- there and is gone; 'redelivered': a failed or retry handed the lease back for the next pop;
-- 'stale': the id names an incarnation that is gone (a crash or a failover emptied the contents);
-- 'unknown': no such lease (acked already, redelivered to another pop, reset, deleted, or an id this
-- broker never minted). A message named twice in one call is settled once; the repeats are 'unknown'.
-- Parses the ids here and settles them with ephemeral_ack_v2 (the broker's route parses them
-- itself and calls that directly).
-- Returns {"results": [{id, outcome}]} in request order.
create or replace function queen.ephemeral_ack_v1(p_tenant text, p_queue text, p_group text, p_acks jsonb)
returns jsonb
language plpgsql volatile
set search_path = queen, pg_catalog
as $$
declare
  v_epoch text;
  v_ids text[];
  v_epochs text[];
  v_keys text[];
  v_firsts boolean[];
  v_seqs bigint[];
  v_atts integer[];
  v_backs boolean[];
  v_settled jsonb;
  v_out jsonb;
begin
  perform _eph_check_on();
  perform _eph_check_name('queue', p_queue);
  if p_group <> '' then
    perform _eph_check_name('group', p_group);
  end if;
  if jsonb_typeof(p_acks) is distinct from 'array' or jsonb_array_length(p_acks) > 10000 then
    raise exception using errcode = 'QMEBR', message = 'acks: must be an array of at most 10000';
  end if;
  -- Each ack parsed once, into arrays in request order: the id, its epoch, its number and attempt
  -- (null when the id is not one this broker mints), whether it is the first time the call names
  -- that delivery (its repeats are 'unknown') and whether it hands the lease back. The parse is
  -- split_part and digit checks, not a regular expression: a pattern that must find the last ':'
  -- of an id backtracks, and cost more than everything else the ack does together.
  select array_agg(k.id order by k.ord), array_agg(k.epoch order by k.ord), array_agg(k.key order by k.ord),
         array_agg(k.first order by k.ord),
         array_agg(k.seq order by k.ord), array_agg(k.attempts order by k.ord), array_agg(k.status <> 'completed' order by k.ord)
    into v_ids, v_epochs, v_keys, v_firsts, v_seqs, v_atts, v_backs
    from (
      select q.*
        from (
          select v.*, v.seq::text || '.' || v.attempts as key,
                 v.seq is not null and row_number() over (partition by v.seq, v.attempts order by v.ord) = 1 as first
            from (
              select x.ord, x.id, x.status, case when x.ok then x.epoch end as epoch,
                     case when x.ok then x.seq_text::bigint end as seq,
                     case when x.ok then coalesce(nullif(x.att_text, '')::integer, 0) end as attempts
                from (
                  select t.*,
                         t.id like 'e:%:%:%' and t.epoch <> ''
                         and t.seq_text <> '' and length(t.seq_text) <= 18 and ltrim(t.seq_text, '0123456789') = ''
                         and (t.att_text = '' and strpos(t.tail, '.') = 0
                              or t.att_text <> '' and length(t.att_text) <= 9 and ltrim(t.att_text, '0123456789') = ''
                                 and split_part(t.tail, '.', 3) = '') as ok
                    from (
                      select a.ord, a.id, a.status, split_part(a.id, ':', 2) as epoch, split_part(a.id, ':', -1) as tail,
                             split_part(split_part(a.id, ':', -1), '.', 1) as seq_text,
                             split_part(split_part(a.id, ':', -1), '.', 2) as att_text
                        from (select e.ord, e.a->>'id' as id, coalesce(e.a->>'status', 'completed') as status
                                from jsonb_array_elements(p_acks) with ordinality e(a, ord)) a
                    ) t
                ) x
            ) v
        ) q
    ) k;

  select ephemeral_ack_v2(p_tenant, p_queue, p_group,
           coalesce(array_agg(u.ord::integer), '{}'), coalesce(array_agg(u.epoch), '{}'), coalesce(array_agg(u.seq), '{}'),
           coalesce(array_agg(u.att), '{}'), coalesce(array_agg(u.back), '{}'))
    into v_settled
    from unnest(v_epochs, v_seqs, v_atts, v_backs, v_firsts) with ordinality u(epoch, seq, att, back, first, ord)
   where u.first;
  v_epoch := v_settled->>'epoch';

  select coalesce(jsonb_agg(jsonb_build_object('id', u.id, 'outcome',
           case
             when u.epoch is not null and u.epoch <> v_epoch then 'stale'
             when u.epoch is null or not u.first then 'unknown'
             when v_settled->'acked' @> to_jsonb(u.ord) then 'acked'
             when v_settled->'redelivered' @> to_jsonb(u.ord) then 'redelivered'
             else 'unknown'
           end) order by u.ord), '[]'::jsonb)
    into v_out
    from unnest(v_ids, v_epochs, v_keys, v_firsts) with ordinality u(id, epoch, key, first, ord);
  return jsonb_build_object('results', v_out);
end
$$;

-- ephemeral_configure_v1: stores a queue's declaration (the options as sent; the route refused
-- unknown keys and bad values). Replaces an earlier declaration whole.
-- Returns {"queue", "options"}: the stored declaration.
create or replace function queen.ephemeral_configure_v1(p_tenant text, p_queue text, p_options jsonb)
returns jsonb
language plpgsql volatile
set search_path = queen, pg_catalog
as $$
begin
  perform _eph_check_on();
  perform _eph_check_name('queue', p_queue);
  if jsonb_typeof(p_options) is distinct from 'object' then
    raise exception using errcode = 'QMEBR', message = 'options: must be an object';
  end if;
  insert into ephemeral_declarations (tenant_id, queue, options, updated_at)
  values (p_tenant, p_queue, p_options, clock_timestamp())
  on conflict (tenant_id, queue) do update set options = excluded.options, updated_at = excluded.updated_at;
  return jsonb_build_object('queue', p_queue, 'options', p_options);
end
$$;

-- ephemeral_reset_v1: drops every message, voids every lease and rewinds every cursor of a queue;
-- the declaration and the groups stay. Returns {"queue", "dropped"} (0 for a queue that is not there).
create or replace function queen.ephemeral_reset_v1(p_tenant text, p_queue text)
returns jsonb
language plpgsql volatile
set search_path = queen, pg_catalog
as $$
declare
  v_dropped bigint := 0::bigint;
begin
  perform _eph_check_on();
  perform _eph_check_name('queue', p_queue);
  -- Every partition row, then the ring row, in the pushes' order, so a push in flight finishes
  -- before or starts after the reset.
  perform _eph_lock_partitions(p_tenant, p_queue, '{}', true);
  perform 1 from ephemeral_rings where tenant_id = p_tenant and queue = p_queue for update;
  delete from ephemeral_messages where tenant_id = p_tenant and queue = p_queue;
  get diagnostics v_dropped = row_count;
  delete from ephemeral_leases where tenant_id = p_tenant and queue = p_queue;
  delete from ephemeral_cursors where tenant_id = p_tenant and queue = p_queue;
  delete from ephemeral_partitions where tenant_id = p_tenant and queue = p_queue;
  update ephemeral_groups set heads_parts = null, heads = null where tenant_id = p_tenant and queue = p_queue;
  update ephemeral_rings set depth = 0, bytes = 0, touched_at = clock_timestamp() where tenant_id = p_tenant and queue = p_queue;
  return jsonb_build_object('queue', p_queue, 'dropped', v_dropped);
end
$$;

-- ephemeral_delete_v1: removes a queue's contents, groups, cursors, leases, ring and declaration.
-- Returns {"queue", "deleted": whether anything was there, "declared": whether a declaration was}.
create or replace function queen.ephemeral_delete_v1(p_tenant text, p_queue text)
returns jsonb
language plpgsql volatile
set search_path = queen, pg_catalog
as $$
declare
  v_ring integer;
  v_declared integer;
begin
  perform _eph_check_on();
  perform _eph_check_name('queue', p_queue);
  -- Every partition row before the ring row, as the pushes take them.
  perform _eph_lock_partitions(p_tenant, p_queue, '{}', true);
  delete from ephemeral_rings where tenant_id = p_tenant and queue = p_queue;
  get diagnostics v_ring = row_count;
  delete from ephemeral_declarations where tenant_id = p_tenant and queue = p_queue;
  get diagnostics v_declared = row_count;
  delete from ephemeral_messages where tenant_id = p_tenant and queue = p_queue;
  delete from ephemeral_leases where tenant_id = p_tenant and queue = p_queue;
  delete from ephemeral_cursors where tenant_id = p_tenant and queue = p_queue;
  delete from ephemeral_groups where tenant_id = p_tenant and queue = p_queue;
  delete from ephemeral_partitions where tenant_id = p_tenant and queue = p_queue;
  return jsonb_build_object('queue', p_queue, 'deleted', v_ring + v_declared > 0, 'declared', v_declared > 0);
end
$$;

-- _eph_group_pending: messages of one group not yet acknowledged (never delivered, or leased),
-- optionally of one partition.
create or replace function queen._eph_group_pending(p_tenant text, p_queue text, p_group text, p_partition text, p_cutoff timestamptz)
returns bigint
language sql stable
set search_path = queen, pg_catalog
as $$
  select (select count(*) from ephemeral_messages m
            left join ephemeral_cursors c
              on c.tenant_id = m.tenant_id and c.queue = m.queue and c.grp = p_group and c.partition = m.partition
           where m.tenant_id = p_tenant and m.queue = p_queue and (p_partition is null or m.partition = p_partition)
             and m.seq > coalesce(c.last_seq, 0) and (p_cutoff is null or m.created_at >= p_cutoff))
       + (select count(*) from ephemeral_leases l
                cross join lateral unnest(l.partitions) u(part)
           where l.tenant_id = p_tenant and l.queue = p_queue and l.grp = p_group
             and (p_partition is null or u.part = p_partition))
$$;

-- ephemeral_queues_v1: every ephemeral queue of the tenant, declared or implicit, with its gauges
-- and the options in force; cellBytes is every tenant's ephemeral bytes together.
-- Returns {"queues": [{queue, tier, depth, bytes, partitions, groups, drops:{bounds, ttl, retry},
-- options, groupDepths:[{group, pending}]}], "count", "cellBytes"}.
create or replace function queen.ephemeral_queues_v1(p_tenant text)
returns jsonb
language plpgsql volatile
set search_path = queen, pg_catalog
as $$
declare
  v_queues jsonb;
begin
  perform _eph_check_on();
  with names as (
    select queue from ephemeral_rings where tenant_id = p_tenant
    union
    select queue from ephemeral_declarations where tenant_id = p_tenant
  ), rows as (
    select n.queue, d.options as declared, r.depth, r.bytes, r.drops_bounds, r.drops_ttl,
           (select count(distinct m.partition) from ephemeral_messages m where m.tenant_id = p_tenant and m.queue = n.queue) as partitions,
           (select coalesce(sum(g.drops_retry), 0) from ephemeral_groups g where g.tenant_id = p_tenant and g.queue = n.queue) as drops_retry,
           (select coalesce(jsonb_agg(jsonb_build_object('group', nullif(g.grp, ''),
                      'pending', _eph_group_pending(p_tenant, n.queue, g.grp, null, null)) order by g.grp), '[]'::jsonb)
              from ephemeral_groups g where g.tenant_id = p_tenant and g.queue = n.queue) as groups
      from names n
      left join ephemeral_declarations d on d.tenant_id = p_tenant and d.queue = n.queue
      left join ephemeral_rings r on r.tenant_id = p_tenant and r.queue = n.queue
  )
  select coalesce(jsonb_agg(jsonb_build_object(
           'queue', queue,
           'tier', case when declared is null then 'implicit' else 'declared' end,
           'depth', coalesce(depth, 0),
           'bytes', coalesce(bytes, 0),
           'partitions', partitions,
           'groups', jsonb_array_length(groups),
           'drops', jsonb_build_object('bounds', coalesce(drops_bounds, 0), 'ttl', coalesce(drops_ttl, 0), 'retry', drops_retry),
           'options', _eph_options(declared),
           'groupDepths', groups) order by queue), '[]'::jsonb)
    into v_queues
    from rows;
  return jsonb_build_object('queues', v_queues, 'count', jsonb_array_length(v_queues),
                            'cellBytes', (select coalesce(sum(bytes), 0) from ephemeral_rings));
end
$$;

-- ephemeral_depth_v1: one queue's depth, per partition and per group. With p_group the top-level
-- and per-partition figures are that group's pending messages; without it, what the ring holds.
-- Raises QMENF when the tenant has neither a ring nor a declaration of that name.
-- Returns {queue, group, tier, pending, partitionsPending, bytes, partitions:[{partition, pending,
-- bytes}], groups:[{group, pending, skipped}]}.
create or replace function queen.ephemeral_depth_v1(p_tenant text, p_queue text, p_group text default null)
returns jsonb
language plpgsql volatile
set search_path = queen, pg_catalog
as $$
declare
  v_declared jsonb;
  v_ring ephemeral_rings;
  v_opt jsonb;
  v_cutoff timestamptz;
  v_parts jsonb;
  v_groups jsonb;
begin
  perform _eph_check_on();
  perform _eph_check_name('queue', p_queue);
  select options into v_declared from ephemeral_declarations where tenant_id = p_tenant and queue = p_queue;
  select * into v_ring from ephemeral_rings where tenant_id = p_tenant and queue = p_queue;
  if v_declared is null and v_ring.queue is null then
    raise exception using errcode = 'QMENF', message = format('Ephemeral queue %s does not exist', p_queue);
  end if;
  v_opt := _eph_options(v_declared);
  if (v_opt->>'ttlSeconds')::bigint > 0 then
    v_cutoff := clock_timestamp() - make_interval(secs => (v_opt->>'ttlSeconds')::bigint);
  end if;
  select coalesce(jsonb_agg(jsonb_build_object('partition', p.partition, 'pending', p.pending, 'bytes', p.bytes) order by p.partition), '[]'::jsonb)
    into v_parts
    from (
      select m.partition,
             case when p_group is null then count(*)
                  else _eph_group_pending(p_tenant, p_queue, p_group, m.partition, v_cutoff) end as pending,
             sum(m.bytes) as bytes
        from ephemeral_messages m
       where m.tenant_id = p_tenant and m.queue = p_queue
       group by m.partition
    ) p;
  select coalesce(jsonb_agg(jsonb_build_object('group', nullif(g.grp, ''),
                    'pending', _eph_group_pending(p_tenant, p_queue, g.grp, null, v_cutoff), 'skipped', 0) order by g.grp), '[]'::jsonb)
    into v_groups
    from ephemeral_groups g
   where g.tenant_id = p_tenant and g.queue = p_queue and (p_group is null or g.grp = p_group);
  return jsonb_build_object(
    'queue', p_queue,
    'group', p_group,
    'tier', case when v_declared is null then 'implicit' else 'declared' end,
    'pending', coalesce((select sum((e->>'pending')::bigint) from jsonb_array_elements(v_parts) e), 0),
    'partitionsPending', (select count(*) from jsonb_array_elements(v_parts) e where (e->>'pending')::bigint > 0),
    'bytes', coalesce(v_ring.bytes, 0),
    'partitions', v_parts,
    'groups', v_groups);
end
$$;

-- ephemeral_system_v1: the kill switch and the broker-wide gauges of GET /api/v1/system/ephemeral.
-- Returns {ephemeralEnabled, cellBytes, queues, epoch}. Reads no tenant's rows beyond counting.
create or replace function queen.ephemeral_system_v1()
returns jsonb
language sql volatile
set search_path = queen, pg_catalog
as $$
  select jsonb_build_object(
    'ephemeralEnabled', not coalesce((select value = 'false'::jsonb from system_state where key = 'ephemeral'), false),
    'cellBytes', (select coalesce(sum(bytes), 0) from ephemeral_rings),
    'queues', (select count(*) from (select tenant_id, queue from ephemeral_rings
                                      union select tenant_id, queue from ephemeral_declarations) q),
    'epoch', _eph_epoch())
$$;

-- ephemeral_system_set_v1: turns the ephemeral surface on or off for every replica at once (the
-- procedures read the row on every call). Returns ephemeral_system_v1().
create or replace function queen.ephemeral_system_set_v1(p_enabled boolean)
returns jsonb
language plpgsql volatile
set search_path = queen, pg_catalog
as $$
begin
  if p_enabled is null then
    raise exception using errcode = 'QM400', message = 'enabled (boolean) is required';
  end if;
  insert into system_state (key, value, updated_at) values ('ephemeral', to_jsonb(p_enabled), clock_timestamp())
  on conflict (key) do update set value = excluded.value, updated_at = excluded.updated_at;
  return ephemeral_system_v1();
end
$$;
