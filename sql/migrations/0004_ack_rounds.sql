-- Two facts about a cursor's rounds that acks and pops need (issue #20). Neither column is indexed,
-- so the updates that write them stay HOT.
--
-- released_lease_id: the lease an ack ended (round complete, a failure or retry that released it, a
-- transaction's terminal verdict), kept until the next pop leases this row again. An ack retried
-- with that lease after its answer was lost is then recognised and answered success with
-- alreadyAcked, where it used to answer lease_invalid though the first attempt had applied.
--
-- attempt_from, attempts: how many times each unsettled frame from attempt_from on was delivered
-- without being settled (a lease that expired over it, or a failed ack of it): attempts[i] belongs
-- to offset attempt_from + i - 1. Pop answers each message's own retryCount from it, where the
-- governing retry state (retry_offset, retry_count) knows only the lowest failing frame.
alter table queen.log_consumers
  add column if not exists released_lease_id uuid,
  add column if not exists attempt_from bigint,
  add column if not exists attempts integer[];
