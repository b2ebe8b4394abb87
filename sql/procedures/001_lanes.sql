-- Maintenance lane leases (design decision 33, docs/lanes.md). Lanes are the only code that works
-- across tenants, and any replica or Worker isolate may run any lane: the row in
-- queen.maintenance_leases decides who.
-- Concurrency: every function is one UPDATE of one row, so two claimers race on a row lock and
-- exactly one sees its WHERE clause hold. Clock: clock_timestamp() unless p_now pins it.

-- lane_claim_v1: takes the lane when it is free (or its holder's lease expired) and due.
-- Due means last_started_at is at least one interval ago, less a slack of min(interval/10, 5 s)
-- so that cron or timer jitter never makes a single replica skip a run.
-- Returns: the lane's saved progress (a resume point) as jsonb, or NULL when not claimed.
-- Raises: nothing (an unknown lane is simply never claimed).
create or replace function queen.lane_claim_v1(
  p_lane text,
  p_token uuid,
  p_interval interval,
  p_ttl interval,
  p_force boolean default false,
  p_now timestamptz default null
) returns jsonb
language plpgsql volatile
set search_path = queen, pg_catalog
as $$
declare
  v_now timestamptz := coalesce(p_now, clock_timestamp());
  v_progress jsonb;
begin
  update maintenance_leases
     set holder = p_token, acquired_at = v_now, expires_at = v_now + p_ttl, last_started_at = v_now
   where name = p_lane
     and (holder is null or expires_at <= v_now)
     and (coalesce(p_force, false) or last_started_at is null
          or last_started_at <= v_now - p_interval + least(p_interval / 10, interval '5 seconds'))
  returning coalesce(progress, '{}'::jsonb) into v_progress;
  return v_progress;
end
$$;

-- lane_renew_v1: extends the holder's lease and saves its resume point.
-- Returns: true, or false when the token no longer holds a live lease (the run must stop).
create or replace function queen.lane_renew_v1(
  p_lane text,
  p_token uuid,
  p_ttl interval,
  p_progress jsonb,
  p_now timestamptz default null
) returns boolean
language plpgsql volatile
set search_path = queen, pg_catalog
as $$
declare
  v_now timestamptz := coalesce(p_now, clock_timestamp());
begin
  update maintenance_leases
     set expires_at = v_now + p_ttl, progress = p_progress
   where name = p_lane and holder = p_token and expires_at > v_now;
  return found;
end
$$;

-- lane_release_v1: gives the lane back and records the run. Only the holder's token releases, so
-- a run that lost its lease cannot clear the lease of the run that took over.
-- Returns: true when released, false when the token did not hold the lane.
create or replace function queen.lane_release_v1(
  p_lane text,
  p_token uuid,
  p_progress jsonb,
  p_result jsonb,
  p_now timestamptz default null
) returns boolean
language plpgsql volatile
set search_path = queen, pg_catalog
as $$
declare
  v_now timestamptz := coalesce(p_now, clock_timestamp());
begin
  update maintenance_leases
     set holder = null, expires_at = null, last_finished_at = v_now,
         progress = p_progress, last_result = p_result, runs = runs + 1
   where name = p_lane and holder = p_token;
  return found;
end
$$;
