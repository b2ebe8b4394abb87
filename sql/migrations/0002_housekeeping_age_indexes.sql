-- Age indexes for the retention lane's housekeeping (017_retention.sql, _log_housekeeping_step):
-- each step looks for at most N rows older than a cutoff in message_traces, queue_metrics and
-- log_dlq. Without an index on the age column alone, a step that finds nothing old (the usual
-- case) reads the whole table on every pass; with one it reads only what it deletes.
-- Plain CREATE INDEX (not CONCURRENTLY): migrations run in one transaction (docs/migrations.md),
-- and on a large existing table the build briefly holds writes to it.
create index if not exists message_traces_created_idx on queen.message_traces (created_at);
create index if not exists queue_metrics_bucket_idx on queen.queue_metrics (bucket);
create index if not exists log_dlq_failed_idx on queen.log_dlq (failed_at);
