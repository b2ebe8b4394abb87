-- Streams exactly once at any call latency (issue #34, docs/streams.md): what a shard remembers so
-- an idle flush (an ack-less cycle whose state ops only delete) applies only to the state it was
-- computed from, whatever the timing of the runners' calls.
--
-- stream_shards.source_group: the consumer group of the shard's source cursor, as the last cycle
--   with an ack named it (the runner's group), so a state read can tell whether a batch is leased.
-- stream_shards.lease_seen: that cursor's newest lease (live, expired or released) when the shard's
--   last cycle applied; another one now means a batch was leased since.
-- stream_shards.read_version: the shard version seen by the latest state read made while no batch
--   was leased since the last cycle (an idle flush's read); null until the first.
-- stream_shards.flushed: "<digest>:<rows>" of the last 32 applied flushes: the request's digest and
--   the md5 of the rows it deleted, as they were. A flush identical to an older one applies again
--   only when it finds those same rows again (a window re-created exactly), never as a late replay.
alter table queen.stream_shards
  add column if not exists source_group text,
  add column if not exists lease_seen uuid,
  add column if not exists read_version bigint,
  add column if not exists flushed text[] not null default '{}';
