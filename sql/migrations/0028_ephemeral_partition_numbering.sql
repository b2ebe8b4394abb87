-- Ephemeral pushes to different partitions of one queue run side by side (docs/ephemeral.md,
-- "Numbers and locks"). Until now every push held the queue's ring row from numbering its messages
-- to its commit, so one queue's pushes ran one at a time in one backend. Now:
--
-- ephemeral_partitions: one row per (queue, partition), the row a push to that partition locks while
--   it numbers and writes its messages, so numbers still follow commit order within a partition
--   (which is all a cursor needs: cursors are per group and partition). last_seq is the highest
--   number written there, so a queue-wide pop skips the partitions a group has read to the end.
-- ephemeral_numbers: where the numbers come from. A sequence hands them out without a lock held
--   to commit; each push of one partition takes one value and numbers its messages from it, so a
--   push's messages are consecutive and numbers stay unique across the queue (ids and leases name a
--   message by its number alone). UNLOGGED: no WAL, so a push's commit never waits for a flush;
--   crash recovery resets it, together with the unlogged rows whose numbers it gave and the
--   incarnation that makes every earlier id 'stale'.
-- ephemeral_messages: one index, (tenant, queue, partition, seq), instead of two: every read names
--   the partition now, and a message costs one index entry fewer to push.
-- ephemeral_groups.heads_parts, heads: for a queue-wide pop, where each partition's next message is
--   at the earliest, as the group's last queue-wide pop found it (a partition not named: look it up).
--   The pop merges the partitions by number from each one's next message; this spares it an index
--   probe per partition. A lower bound stays one: a partition's later messages are numbered higher,
--   a cursor moved by a partition pop is read past, and what a TTL or a drop deletes only raises it.
-- ephemeral_groups.scan_from (a queue-wide position by number) is no longer read: a queue-wide pop
--   reads each partition past the group's cursor there. What it said is carried into the cursors.
-- ephemeral_rings.next_seq is no longer read either; the ring keeps the queue's counters.
--
-- Everything here is unlogged or derived from unlogged rows: after a crash there is nothing to carry.
create unlogged table queen.ephemeral_partitions (
  tenant_id text not null default '',
  queue text not null,
  partition text not null,
  last_seq bigint not null default 0,
  primary key (tenant_id, queue, partition)
);

insert into queen.ephemeral_partitions (tenant_id, queue, partition, last_seq)
select tenant_id, queue, partition, max(seq) from queen.ephemeral_messages group by tenant_id, queue, partition;

-- A push takes one value per partition and numbers up to 10 000 messages from it.
do $$
declare
  v_start bigint := greatest(
    (extract(epoch from clock_timestamp()) * 1000000)::bigint,
    coalesce((select max(next_seq) from queen.ephemeral_rings), 0),
    coalesce((select max(seq) + 1 from queen.ephemeral_messages), 0));
begin
  execute format('create unlogged sequence queen.ephemeral_numbers as bigint increment by 10000 start with %s', v_start);
end
$$;

-- A queue-wide pop's position (everything numbered at or below scan_from was delivered to the
-- group, or expired) becomes each partition's cursor.
insert into queen.ephemeral_cursors (tenant_id, queue, grp, partition, last_seq)
select g.tenant_id, g.queue, g.grp, m.partition, max(m.seq)
  from queen.ephemeral_groups g
  join queen.ephemeral_messages m on m.tenant_id = g.tenant_id and m.queue = g.queue and m.seq <= g.scan_from
 where g.scan_from > 0
 group by g.tenant_id, g.queue, g.grp, m.partition
on conflict (tenant_id, queue, grp, partition) do update set last_seq = greatest(queen.ephemeral_cursors.last_seq, excluded.last_seq);

alter table queen.ephemeral_groups add column heads_parts text[], add column heads bigint[];

alter table queen.ephemeral_messages drop constraint ephemeral_messages_pkey;
drop index queen.ephemeral_messages_partition;
alter table queen.ephemeral_messages add primary key (tenant_id, queue, partition, seq);
