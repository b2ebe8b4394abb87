-- Which queues each change of a tenant's set of queues touched (docs/resources.md, "When the cached
-- listing changes"): a `?stats=cached` call that finds its listing stale patches those queues into
-- it (removes their old entry, renders their new one) instead of rendering every queue again, so a
-- tenant that creates queues between polls no longer makes most polls pay a full render.
--
-- stats_listing_changed_queues: one row per queue created, deleted or renamed, written by the same
--   trigger as stats_listing_changes (whose rows still decide staleness, one per transaction) and
--   pruned with them.
create table queen.stats_listing_changed_queues (
  tenant_id text not null,
  xid bigint not null,
  queue_id uuid not null,
  created_at timestamptz not null default now(),
  primary key (tenant_id, xid, queue_id)
);

-- Listings rendered before this table existed may be stale by changes it has no queues for: the
-- next cached call of each tenant renders its listing afresh.
delete from queen.stats_listings;
