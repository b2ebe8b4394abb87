-- log_consumers.batches_consumed: rounds of this cursor that were completed, so GET
-- /api/v1/status/queues/:queue can answer cursor.batchesConsumed, the rounds completed by acks
-- (docs/status.md), instead of null. A round is one pop's claim on one partition: it counts
-- when acks settle the last of its frames (the moment the lease is released because the cursor
-- passed lease_to), and at once for an autoAck pop. Existing rows start at 0: rounds before this
-- migration were not counted.
alter table queen.log_consumers add column if not exists batches_consumed bigint not null default 0;
