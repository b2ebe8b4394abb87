-- Stream processing (issue #21, docs/streams.md): the state Queen's streams SDKs keep on the broker.
--
-- stream_queries: one row per registered query (the SDK's queryId is `name`, unique per tenant; the
--   server's id is a random uuid the SDK sends back on every state/get and cycle).
-- stream_state: the runtime's keyed state, scoped to (query, source partition). No FK to the source
--   partition: deleting a source queue deletes nothing of a query's state; deleting the query
--   does (cascade; docs/design.md#46).
-- stream_shards: one row per (query, source partition) that has run a cycle. Its row lock serialises
--   cycles of one shard (a row lock, not a session advisory lock, so it works through a
--   transaction pooler); `epoch` and `version` derive the deterministic transaction ids of sink
--   items (docs/design.md#46); recent (the digests of the last 32 applied cycles, newest last)
--   recognises a replayed cycle, and last_answer is the newest one's answer, given again to its
--   replay.

create table queen.stream_queries (
  id uuid primary key default gen_random_uuid(),
  tenant_id text not null default '',
  name text not null,
  source_queue text not null,
  sink_queue text,
  config_hash text not null,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  unique (tenant_id, name)
);

-- Keys in the "C" collation: byte order, so the literal key_prefix filter of state/get is a range
-- scan of the primary key ([prefix, successor of prefix)), whatever the database's collation is.
create table queen.stream_state (
  query_id uuid not null references queen.stream_queries (id) on delete cascade,
  partition_id uuid not null,
  key text collate "C" not null,
  value jsonb not null,
  updated_at timestamptz not null default now(),
  primary key (query_id, partition_id, key)
) with (fillfactor = 80);

-- state/get's ripe_at_or_before: windows whose numeric windowEnd is at or before an instant. Only
-- rows that have a numeric windowEnd are indexed (the runtime's window rows). The CASE keeps the cast
-- safe in whatever order a scan evaluates its conditions; 026_streams.sql's state read repeats the
-- expression and the predicate word for word, so the planner can match them.
create index stream_state_window_end_idx on queen.stream_state
  (query_id, partition_id, (case when jsonb_typeof(value -> 'windowEnd') = 'number' then (value ->> 'windowEnd')::numeric end))
  where jsonb_typeof(value -> 'windowEnd') = 'number';

create table queen.stream_shards (
  query_id uuid not null references queen.stream_queries (id) on delete cascade,
  partition_id uuid not null,
  epoch uuid not null default gen_random_uuid(),
  version bigint not null default 0,
  recent text[] not null default '{}',
  last_answer jsonb,
  updated_at timestamptz not null default now(),
  primary key (query_id, partition_id)
) with (fillfactor = 70);
