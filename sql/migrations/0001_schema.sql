-- The log engine's schema (docs/engine.md). Migrations are append-only: never change the
-- statements of an applied file (the runner checks its checksum; a comment-only edit is listed in
-- superseded-checksums.txt, docs/migrations.md); add 0002_… instead. Procedures live in
-- sql/procedures.
-- Hot tables updated in place get fillfactor 50 and aggressive autovacuum so updates stay HOT.

create schema if not exists queen;

create table queen.queues (
  id uuid primary key default gen_random_uuid(),
  tenant_id text not null default '',
  name text not null,
  namespace text not null default '',
  task text not null default '',
  priority integer not null default 0,
  lease_time integer not null default 300,
  retry_limit integer not null default 3,
  retry_delay integer not null default 1000,
  max_size integer not null default 0,
  ttl integer not null default 3600,
  dead_letter_queue boolean not null default true,
  dlq_after_max_retries boolean not null default true,
  delayed_processing integer not null default 0,
  window_buffer integer not null default 0,
  retention_seconds integer not null default 0,
  completed_retention_seconds integer not null default 0,
  retention_enabled boolean not null default false,
  encryption_enabled boolean not null default false,
  max_wait_time_seconds integer not null default 0,
  min_pop_wait_time integer not null default 0,
  dedup_window_seconds integer not null default 3600,
  retention_sink_hold text not null default '',
  retention_sink_hold_max_seconds integer not null default 604800,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  unique (tenant_id, name)
) with (fillfactor = 90);
-- Discovery pops (`?namespace=`, `?task=`) filter by namespace, task or both; the second index
-- serves task alone.
create index queues_discovery_idx on queen.queues (tenant_id, namespace, task);
create index queues_task_idx on queen.queues (tenant_id, task);

create table queen.log_partitions (
  id uuid primary key default gen_random_uuid(),
  queue_id uuid not null references queen.queues (id) on delete cascade,
  name text not null,
  created_at timestamptz not null default now(),
  -- Bumped by every push and deliberately not indexed, so the update is HOT.
  last_offset bigint not null default -1,
  log_start bigint not null default 0,
  head_at timestamptz,
  -- head_at truncated to the second: the indexed value changes at most once a second.
  last_write_at timestamptz,
  unique (queue_id, name)
) with (fillfactor = 50, autovacuum_vacuum_scale_factor = 0.01, autovacuum_vacuum_threshold = 50, autovacuum_vacuum_cost_delay = 0);
create index log_partitions_changed_idx on queen.log_partitions (queue_id, last_write_at, name);
create index log_partitions_pivot_idx on queen.log_partitions (queue_id, id);

create table queen.log_segments (
  partition_id uuid not null references queen.log_partitions (id) on delete cascade,
  base_offset bigint not null,
  last_offset bigint not null,
  frame_count integer not null,
  created_at timestamptz not null,
  byte_size bigint not null,
  -- Element i is offset base_offset + i - 1: a range is one native slice with a single detoast.
  frames jsonb[] not null,
  primary key (partition_id, base_offset)
) with (fillfactor = 100, autovacuum_vacuum_scale_factor = 0.05, toast.autovacuum_vacuum_scale_factor = 0.05);
-- lz4 where the server was built with it (faster than pglz to compress and to read back); the
-- embedded build is not, so pglz there.
do $$
begin
  if exists (select 1 from pg_settings where name = 'default_toast_compression' and 'lz4' = any (enumvals)) then
    alter table queen.log_segments alter column frames set compression lz4;
  else
    alter table queen.log_segments alter column frames set compression pglz;
  end if;
end
$$;
create index log_segments_created_idx on queen.log_segments (partition_id, created_at);

create table queen.log_consumers (
  partition_id uuid not null references queen.log_partitions (id) on delete cascade,
  consumer_group text not null,
  committed_offset bigint not null,
  acked_set bigint[] not null default '{}',
  lease_id uuid,
  lease_expires_at timestamptz,
  lease_from bigint,
  lease_to bigint,
  retry_offset bigint,
  retry_count integer not null default 0,
  total_consumed bigint not null default 0,
  last_consumed_at timestamptz,
  created_at timestamptz not null default now(),
  primary key (partition_id, consumer_group)
) with (fillfactor = 50, autovacuum_vacuum_scale_factor = 0.01, autovacuum_vacuum_threshold = 50, autovacuum_vacuum_cost_delay = 0);
-- Only live leases are indexed, so acks that do not end a lease stay HOT and the index stays tiny.
create index log_consumers_lease_idx on queen.log_consumers (lease_id) where lease_id is not null;

create table queen.consumer_groups (
  queue_id uuid not null references queen.queues (id) on delete cascade,
  consumer_group text not null,
  subscription_mode text,
  subscription_at timestamptz,
  delivery text not null default 'all',
  caught_up_at timestamptz,
  caught_up_checked_at timestamptz,
  created_at timestamptz not null default now(),
  primary key (queue_id, consumer_group)
) with (fillfactor = 70);

-- No FK: the purge path must never pay FK-trigger cost; delete_queue_v1 deletes these explicitly.
create table queen.log_txns (
  partition_id uuid not null,
  txn_hash uuid not null,
  frame_offset bigint not null,
  message_id uuid not null,
  expires_at timestamptz not null,
  primary key (partition_id, txn_hash)
) with (fillfactor = 100);
create index log_txns_expires_idx on queen.log_txns (expires_at);

-- Dead-lettered frames as full copies (no FK): they outlive retention of the log itself.
create table queen.log_dlq (
  id uuid primary key default gen_random_uuid(),
  tenant_id text not null default '',
  queue_id uuid not null,
  partition_id uuid not null,
  partition_name text not null,
  consumer_group text not null,
  frame_offset bigint not null,
  message_id uuid not null,
  transaction_id text not null,
  frame jsonb not null,
  error text,
  retry_count integer not null default 0,
  original_created_at timestamptz not null,
  failed_at timestamptz not null default now(),
  unique (partition_id, consumer_group, frame_offset)
) with (fillfactor = 100);
create index log_dlq_queue_idx on queen.log_dlq (queue_id, failed_at desc);
create index log_dlq_tenant_idx on queen.log_dlq (tenant_id, failed_at desc);

-- Admin message deletes (docs/design.md#43): range reads skip these offsets and settle them for
-- every group.
create table queen.log_tombstones (
  partition_id uuid not null references queen.log_partitions (id) on delete cascade,
  frame_offset bigint not null,
  created_at timestamptz not null default now(),
  primary key (partition_id, frame_offset)
);

-- No FK: a queue delete keeps its traces; the retention lane ages them out.
create table queen.message_traces (
  id uuid primary key default gen_random_uuid(),
  tenant_id text not null default '',
  queue_name text not null,
  partition_id uuid not null,
  partition_name text not null,
  transaction_id text not null,
  frame_offset bigint,
  consumer_group text,
  event_type text not null default 'info',
  data jsonb,
  trace_names text[] not null default '{}',
  worker_id text,
  created_at timestamptz not null default now()
) with (fillfactor = 100);
create index message_traces_message_idx on queen.message_traces (partition_id, transaction_id);
create index message_traces_names_idx on queen.message_traces using gin (trace_names);
create index message_traces_tenant_idx on queen.message_traces (tenant_id, created_at);

create table queen.stats (
  queue_id uuid primary key references queen.queues (id) on delete cascade,
  tenant_id text not null default '',
  partition_count integer not null default 0,
  total bigint not null default 0,
  pending bigint not null default 0,
  processing bigint not null default 0,
  hw_total bigint not null default 0,
  committed_total bigint not null default 0,
  computed_at timestamptz,
  segment_count bigint not null default 0,
  retained_bytes bigint not null default 0,
  dlq_total bigint not null default 0,
  bytes_computed_at timestamptz
) with (fillfactor = 50);

create table queen.queue_metrics (
  queue_id uuid not null references queen.queues (id) on delete cascade,
  bucket timestamptz not null,
  pushed bigint not null default 0,
  consumed bigint not null default 0,
  dead_lettered bigint not null default 0,
  pending bigint not null default 0,
  processing bigint not null default 0,
  max_lag_seconds double precision not null default 0,
  primary key (queue_id, bucket)
) with (fillfactor = 90);

create table queen.maintenance_leases (
  name text primary key,
  holder uuid,
  acquired_at timestamptz,
  expires_at timestamptz,
  last_started_at timestamptz,
  last_finished_at timestamptz,
  progress jsonb,
  last_result jsonb,
  runs bigint not null default 0
) with (fillfactor = 50);
insert into queen.maintenance_leases (name)
values ('stats_refresh'), ('retained_bytes'), ('retention'), ('eviction'), ('dedup_purge');

-- Tenant-writable values (the sink's committed pointer among them): retention treats them as untrusted.
create table queen.kv (
  tenant_id text not null default '',
  key text not null,
  value jsonb not null,
  updated_at timestamptz not null default now(),
  primary key (tenant_id, key)
) with (fillfactor = 70);

create table queen.system_state (
  key text primary key,
  value jsonb not null,
  updated_at timestamptz not null default now()
);
insert into queen.system_state (key, value) values ('maintenance', 'false'), ('pop_maintenance', 'false');
