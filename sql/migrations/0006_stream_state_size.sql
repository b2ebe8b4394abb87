-- Stream state in the resource routes (issue #21; docs/streams.md, docs/resources.md): each shard
-- keeps its state's row count and bytes, so the overview and GET /streams/v1/queries read a few
-- shard rows instead of scanning every state row (100 000 keys per partition is the design load).
--
-- stream_state.size: the row's logical bytes, the key's plus the value's JSON text (UTF-8): what a
-- user means by the size of their state, independent of jsonb's in-memory headers and of what TOAST
-- compression made of the value on disk. Stored, so a later upsert or delete subtracts exactly what
-- was added. Not indexed: the cycle's upserts stay HOT.
-- stream_shards.state_rows / state_bytes: the sums over the shard's state rows, moved by the cycle
-- under the shard's row lock, in the transaction that changes the state.
alter table queen.stream_state add column if not exists size integer not null default 0;
alter table queen.stream_shards
  add column if not exists state_rows bigint not null default 0,
  add column if not exists state_bytes bigint not null default 0;

update queen.stream_state set size = octet_length(key) + octet_length(value::text) where size = 0;
update queen.stream_shards h
   set state_rows = s.n, state_bytes = s.bytes
  from (select query_id, partition_id, count(*) as n, sum(size) as bytes
          from queen.stream_state group by query_id, partition_id) s
 where s.query_id = h.query_id and s.partition_id = h.partition_id;
