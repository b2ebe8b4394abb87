-- The pre-rendered `GET /api/v1/resources/queues?stats=cached` answer of each tenant that asks for
-- it (issue #22, docs/resources.md), built from queen.queues and queen.stats only: by a cached call
-- that finds none (or finds it stale), by the stats lane at the end of every pass, and by
-- POST /stats/refresh. A cached call is then one primary-key read and one probe of the changes.
--
-- stats_listings.queues: the answer's `queues` array as JSON text, exactly as the call sends it.
-- stats_listings.computed_at: the oldest stats row it was rendered from (statsAge), null when none.
-- stats_listings.snapshot: the render's MVCC snapshot (pg_snapshot as text): which transactions
--   the listing has seen.
-- stats_listings.version: names the text of `queues`, and changes only when the text does. Unique
--   across databases, so a broker that kept the text under this name (src/routes/queue-listing-
--   cache.ts) can be told "unchanged" instead of being sent 2.4 MiB again.
-- stats_listing_changes: one row per transaction that created, deleted or renamed a queue of the
--   tenant (written by a trigger on queen.queues, never waiting on anything). A change whose
--   transaction the listing's snapshot did not see makes the listing stale, so a queue change is
--   never missed, even one racing the render, without any lock between renders and changes.
create table queen.stats_listings (
  tenant_id text primary key,
  queues text not null,
  computed_at timestamptz,
  rendered_at timestamptz not null,
  snapshot text not null,
  version uuid not null
);
-- Read whole on every call: stored out of line without compression, so a call decompresses nothing.
alter table queen.stats_listings alter column queues set storage external;

create table queen.stats_listing_changes (
  tenant_id text not null,
  xid bigint not null,
  created_at timestamptz not null default now(),
  primary key (tenant_id, xid)
);
