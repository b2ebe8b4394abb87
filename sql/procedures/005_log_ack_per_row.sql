-- The per-row ack: a batch naming several cursor rows (a fused call of several consumers' acks),
-- settled row by row the plain way (005_log_ack_plain.sql) where a row allows it, the rest by the
-- per-item path (005_log_ack_per_item.sql).

-- _log_ack_leases: a batch naming several (partition, group) rows, as a fused call of several
-- consumers' acks does (src/db/fusion.ts), settled row by row on the common path where it can be, so
-- that fusing acks shares their commit without giving up the set-based ack (issue #9,
-- BENCHMARKS.md). Each row's items must form one run of the array, as a fused call's members do
-- (otherwise the whole batch takes the general path); _log_ack_plain reads each run in place. Rows
-- are taken in lock order (004_log_cursor.sql); each is settled or declined before anything of it is
-- written. At the first decline the loop stops, and every item not settled yet (that row's, the
-- later rows', and items naming no valid partition id) goes to the general path, which locks its
-- rows in the same order after the ones already held. Every item touches only its own row, so
-- answering row by row gives the answers the general path gives for the whole batch
-- (test/http/ack-plain.test.ts compares the two). A missing cursor row is inserted before any row
-- lock is taken, as the general path would.
-- Returns {leases: [<_log_ack_plain's plain object>…], rest: [<_log_ack's items>…]}, or _log_ack's
-- array when no row took the common path.
create or replace function queen._log_ack_leases(p_tenant text, p_acks jsonb, p_now timestamptz)
returns jsonb
language plpgsql volatile
set search_path = queen, pg_catalog
-- Generic plans, as in _log_ack: no plan here depends on the values of the batch.
set plan_cache_mode = force_generic_plan
as $$
declare
  v_pids uuid[];
  v_grps text[];
  v_from integer[];
  v_to integer[];
  v_rows integer;
  v_runs boolean;
  v_distinct integer;
  v_part jsonb;
  v_leases jsonb[] := '{}'::jsonb[];
  v_done integer := 0;
  v_rest jsonb := '[]'::jsonb;
begin
  -- The rows, in lock order, each with its run [from, to] of the array: grouped by the partition
  -- id as sent, so only a row's id is parsed, not every item's.
  select array_agg(r.pid::uuid order by r.pid::uuid, r.grp), array_agg(r.grp order by r.pid::uuid, r.grp),
         array_agg(r.lo order by r.pid::uuid, r.grp), array_agg(r.hi order by r.pid::uuid, r.grp),
         count(*)::integer, bool_and(r.hi - r.lo + 1 = r.items), count(distinct (r.pid::uuid, r.grp))::integer
    into v_pids, v_grps, v_from, v_to, v_rows, v_runs, v_distinct
    from (select x->>'partitionId' as pid, coalesce(nullif(x->>'consumerGroup', ''), '__QUEUE_MODE__') as grp,
                 min(ord - 1)::integer as lo, max(ord - 1)::integer as hi, count(*) as items
            from jsonb_array_elements(p_acks) with ordinality as t(x, ord)
           group by 1, 2
          offset 0) r  -- a fence: pushed below the grouping, the id check ran once per item
   where _is_uuid(r.pid);
  -- One row is _log_ack_plain's to settle whole (log_ack_v1 tried); a row whose items are not one
  -- run, or one row named by two spellings of its partition id, is the general path's.
  if v_rows < 2 or not v_runs or v_distinct < v_rows then
    return _log_ack(p_tenant, p_acks, p_now, false);
  end if;
  -- Each cursor row probed by key (LATERAL ... LIMIT 1, see _log_ensure_cursors).
  if (select count(*) from unnest(v_pids, v_grps) as r(pid, grp)
        cross join lateral (select 1 from log_consumers c
                             where c.partition_id = r.pid and c.consumer_group = r.grp limit 1) c) < v_rows then
    perform _log_ensure_cursors(p_tenant, p_acks);
  end if;

  for k in 1 .. v_rows loop
    v_part := _log_ack_plain(p_tenant, p_acks, p_now, v_from[k], v_to[k]);
    exit when v_part is null;
    v_leases := v_leases || (v_part->'plain');
    v_done := k;
  end loop;
  if v_done = 0 then
    return _log_ack(p_tenant, p_acks, p_now, false);
  end if;

  if (select sum(v_to[j] - v_from[j] + 1) from generate_series(1, v_done) j) < jsonb_array_length(p_acks) then
    select coalesce(jsonb_agg(t.x order by t.ord), '[]') into v_rest
      from jsonb_array_elements(p_acks) with ordinality as t(x, ord)
     where not exists (select 1 from generate_series(1, v_done) j where t.ord - 1 between v_from[j] and v_to[j]);
    v_rest := _log_ack(p_tenant, v_rest, p_now, false);
  end if;
  return jsonb_build_object('leases', to_jsonb(v_leases), 'rest', v_rest);
end
$$;
