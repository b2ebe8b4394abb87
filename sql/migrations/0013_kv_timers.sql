-- Queen 1.6's key/value store and timers (docs/kv.md, docs/timers.md).
--
-- kv_entries: one row per (tenant, namespace, key). Every write stamps a version from one sequence,
--   so a key deleted and written again never repeats a version an old `expect` could still match.
--   expires_at null means "forever"; an expired row is never served (every read filters on it)
--   and the kv_timers lane deletes it. Keys sort bytewise (collate "C") so keyset cursors are
--   stable whatever the database's locale.
-- timers: one pending timer per (tenant, queue, timer_key). A fire deletes the row and pushes its
--   message in one transaction, so a timer is delivered at most once per schedule; `data` is the
--   message body as the push path stores it (already encrypted when `enc`).
create sequence if not exists queen.kv_version_seq;

create table if not exists queen.kv_entries (
  tenant_id text not null default '',
  ns text collate "C" not null,
  key text collate "C" not null,
  value jsonb not null,
  version bigint not null,
  expires_at timestamptz,
  updated_at timestamptz not null,
  primary key (tenant_id, ns, key)
) with (fillfactor = 80);
create index if not exists kv_entries_expiry on queen.kv_entries (expires_at) where expires_at is not null;

create table if not exists queen.timers (
  tenant_id text not null default '',
  queue text not null,
  timer_key text collate "C" not null,
  partition text not null default 'Default',
  deliver_at timestamptz not null,
  txn text not null,
  data jsonb not null,
  payload text not null,
  enc boolean not null default false,
  producer_sub text,
  attempts integer not null default 0,
  last_error text,
  created_at timestamptz not null,
  updated_at timestamptz not null,
  primary key (tenant_id, queue, timer_key)
);
create index if not exists timers_due on queen.timers (deliver_at);

insert into queen.maintenance_leases (name) values ('kv_timers') on conflict (name) do nothing;
-- The operator's kill switches (GET/POST /api/v1/system/kv-timers): every one is born on.
insert into queen.system_state (key, value)
values ('kv_enabled', 'true'), ('timers_schedule_enabled', 'true'), ('timers_fire_enabled', 'true')
on conflict (key) do nothing;
