-- Ephemeral queues (docs/ephemeral.md): traffic that must be fast and may be lost. Only the
-- declarations are ordinary (WAL-logged, replicated, crash-safe) rows. Contents, cursors, leases,
-- rings and the incarnation are UNLOGGED: no WAL is written for them, every replica and isolate of
-- the broker sees the same rows, a clean PostgreSQL restart keeps them, and crash recovery (or a
-- promoted standby, which never received them) starts them empty. The incarnation row vanishes with
-- them, so an id minted before the loss names an epoch that no longer exists and its ack answers
-- 'stale' rather than settling another message.

-- What a client declared with POST /api/v1/ephemeral/configure, verbatim. Survives everything.
create table queen.ephemeral_declarations (
  tenant_id text not null default '',
  queue text not null,
  options jsonb not null,
  updated_at timestamptz not null default now(),
  primary key (tenant_id, queue)
);

-- The database's ephemeral incarnation: one row, minted on first use, gone after a crash.
create unlogged table queen.ephemeral_incarnation (
  id integer primary key check (id = 1),
  epoch text not null,
  started_at timestamptz not null default now()
);

-- One ring per queue, declared or implicit: the row every push locks (so messages of a queue are
-- numbered in commit order) and the counters the bounds are checked against. next_seq starts at
-- the microsecond clock when the ring is made, so a queue deleted and made again does not reissue
-- a number while its predecessor averaged under a message per microsecond. No sequence: a
-- sequence is WAL-logged, and one WAL record makes a commit wait for a flush.
create unlogged table queen.ephemeral_rings (
  tenant_id text not null default '',
  queue text not null,
  next_seq bigint not null default (extract(epoch from clock_timestamp()) * 1000000)::bigint,
  depth bigint not null default 0,
  bytes bigint not null default 0,
  drops_bounds bigint not null default 0,
  drops_ttl bigint not null default 0,
  created_at timestamptz not null default now(),
  touched_at timestamptz not null default now(),
  primary key (tenant_id, queue)
);

create unlogged table queen.ephemeral_messages (
  tenant_id text not null default '',
  queue text not null,
  partition text not null,
  seq bigint not null,
  payload jsonb not null,
  bytes integer not null,
  created_at timestamptz not null default now(),
  primary key (tenant_id, queue, seq)
);
create index ephemeral_messages_partition on queen.ephemeral_messages (tenant_id, queue, partition, seq);

-- A consumer group of an ephemeral queue ('' is queue mode). Its row is the lock that serialises
-- the group's pops; scan_from says every message numbered at or below it was delivered to it.
create unlogged table queen.ephemeral_groups (
  tenant_id text not null default '',
  queue text not null,
  grp text not null,
  scan_from bigint not null default 0,
  drops_retry bigint not null default 0,
  created_at timestamptz not null default now(),
  primary key (tenant_id, queue, grp)
);

-- Per group and partition: the highest message number delivered.
create unlogged table queen.ephemeral_cursors (
  tenant_id text not null default '',
  queue text not null,
  grp text not null,
  partition text not null,
  last_seq bigint not null,
  primary key (tenant_id, queue, grp, partition)
);

-- A delivered, unacknowledged message of a group. lease_until in the past makes it redeliverable.
create unlogged table queen.ephemeral_leases (
  tenant_id text not null default '',
  queue text not null,
  grp text not null,
  seq bigint not null,
  partition text not null,
  attempts integer not null,
  lease_until timestamptz not null,
  primary key (tenant_id, queue, grp, seq)
);
