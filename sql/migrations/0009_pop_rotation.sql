-- When a pop last claimed each cursor (issue #33). A pop reads a window of ready partitions and
-- serves the least recently claimed first, so a saturated partition waits at most about one
-- rotation of the others; walking from a random id alone served each partition in proportion to the
-- id gap before it and starved the one behind the smallest gap. Not indexed: the update stays HOT.
alter table queen.log_consumers add column if not exists claimed_at timestamptz;
