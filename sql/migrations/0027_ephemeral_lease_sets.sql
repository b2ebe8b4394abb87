-- Ephemeral leases become one row per pop instead of one per delivered message (docs/ephemeral.md,
-- "Leases"). A pop of 100 used to insert 100 lease rows and its ack delete them again, and every pop
-- walked the group's lease keys, dead ones included until vacuum, to find expired leases. Now a pop
-- writes one row holding the numbers it delivered (with each one's partition and attempt count, in
-- ascending number), an ack rewrites or deletes the rows its ids fall in, and expired leases are
-- found by an index on expiry.
--
-- ephemeral_leases: lo and hi are the lowest and highest number the row holds (lo keys the row:
--   a number is leased at most once per group, so two live rows never share one); seqs, partitions
--   and attempts are parallel arrays. lease_until in the past makes every member redeliverable.
--   A pop of 100 makes a row of about 2.5 kB; PostgreSQL would compress any row past 2 kB, and
--   every ack would then decompress it, so rows up to a page are stored as they are.
--
-- The table stays UNLOGGED, like everything it points at. Leases held when this runs are carried
-- over, one row each, so a broker upgraded over a clean restart keeps its in-flight deliveries
-- (after a crash there is nothing to carry: the old table is empty too).
alter table queen.ephemeral_leases rename to ephemeral_leases_per_message;
alter index queen.ephemeral_leases_pkey rename to ephemeral_leases_per_message_pkey;

create unlogged table queen.ephemeral_leases (
  tenant_id text not null default '',
  queue text not null,
  grp text not null,
  lo bigint not null,
  hi bigint not null,
  seqs bigint[] not null,
  partitions text[] not null,
  attempts integer[] not null,
  lease_until timestamptz not null,
  primary key (tenant_id, queue, grp, lo)
) with (toast_tuple_target = 8160);
create index ephemeral_leases_expiry on queen.ephemeral_leases (tenant_id, queue, grp, lease_until);

insert into queen.ephemeral_leases (tenant_id, queue, grp, lo, hi, seqs, partitions, attempts, lease_until)
select tenant_id, queue, grp, seq, seq, array[seq], array[partition], array[attempts], lease_until
  from queen.ephemeral_leases_per_message;

drop table queen.ephemeral_leases_per_message;
