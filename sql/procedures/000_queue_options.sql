-- The 21 options of a queue (docs/options.md) as configure parses them and every read echoes them,
-- so an option is spelled one way everywhere. Installed first because SQL-language readers (detail,
-- messages) are checked against it when they are created.

-- The 21 options of a queue row as configure spells them, with their JSON types, in the
-- column order of queen.queues (json, not jsonb, keeps that order on the wire).
-- Returns: json object of 21 keys. Raises: nothing. IMMUTABLE: a pure function of the row.
create or replace function queen._queue_options(q queen.queues)
returns json
language sql immutable
set search_path = queen, pg_catalog
as $$
  select json_build_object(
    'namespace', q.namespace,
    'task', q.task,
    'priority', q.priority,
    'leaseTime', q.lease_time,
    'retryLimit', q.retry_limit,
    'retryDelay', q.retry_delay,
    'maxSize', q.max_size,
    'ttl', q.ttl,
    'deadLetterQueue', q.dead_letter_queue,
    'dlqAfterMaxRetries', q.dlq_after_max_retries,
    'delayedProcessing', q.delayed_processing,
    'windowBuffer', q.window_buffer,
    'retentionSeconds', q.retention_seconds,
    'completedRetentionSeconds', q.completed_retention_seconds,
    'retentionEnabled', q.retention_enabled,
    'encryptionEnabled', q.encryption_enabled,
    'maxWaitTimeSeconds', q.max_wait_time_seconds,
    'minPopWaitTime', q.min_pop_wait_time,
    'dedupWindowSeconds', q.dedup_window_seconds,
    'retentionSinkHold', q.retention_sink_hold,
    'retentionSinkHoldMaxSeconds', q.retention_sink_hold_max_seconds)
$$;

-- The options a queue named p_queue gets when nothing is said: the column defaults of queen.queues
-- (the configure tests compare the two) with namespace/task derived from the name
-- (design decision 28).
-- Returns: jsonb object of 21 keys. Raises: nothing. IMMUTABLE.
create or replace function queen._queue_option_defaults(p_queue text)
returns jsonb
language sql immutable
set search_path = queen, pg_catalog
as $$
  select jsonb_build_object(
    'namespace', _derive_namespace(p_queue),
    'task', _derive_task(p_queue),
    'priority', 0,
    'leaseTime', 300,
    'retryLimit', 3,
    'retryDelay', 1000,
    'maxSize', 0,
    'ttl', 3600,
    'deadLetterQueue', true,
    'dlqAfterMaxRetries', true,
    'delayedProcessing', 0,
    'windowBuffer', 0,
    'retentionSeconds', 0,
    'completedRetentionSeconds', 0,
    'retentionEnabled', false,
    'encryptionEnabled', false,
    'maxWaitTimeSeconds', 0,
    'minPopWaitTime', 0,
    'dedupWindowSeconds', 3600,
    'retentionSinkHold', '',
    'retentionSinkHoldMaxSeconds', 604800)
$$;

