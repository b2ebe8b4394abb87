-- Message reads, the DLQ listing, and the dead-letter delete. Reads only, except
-- log_message_delete_v1, which removes an address's DLQ rows.

-- Where one frame stands for every group with a cursor on its partition, at p_now.
-- A group has settled offset o when o is below its effective cursor greatest(committed, log_start)
-- or in its acked_set; a live lease covers o when it has not expired and o is in [lease_from, lease_to].
-- Returns: {status, queueStatus, busStatus:{consumedBy, totalGroups}, leaseExpiresAt, retryCount,
-- errorMessage, groups:[{name, consumed, leaseExpiresAt}]} with status (first match wins)
-- dead_letter (any DLQ row), completed (settled by every group with a cursor, at least one),
-- processing (a live lease covers it), pending; queueStatus is the same for __QUEUE_MODE__ alone
-- (null when queue mode never read the partition). Raises: nothing. STABLE.
create or replace function queen._message_state(p_partition_id uuid, p_log_start bigint, p_offset bigint, p_now timestamptz)
returns jsonb
language sql stable
set search_path = queen, pg_catalog
as $$
  with g as (
    select c.consumer_group as name,
           (p_offset < greatest(c.committed_offset, p_log_start) or p_offset = any (c.acked_set)) as consumed,
           case when c.lease_id is not null and c.lease_expires_at > p_now and p_offset between c.lease_from and c.lease_to
                then c.lease_expires_at end as lease_expires_at,
           greatest(case when c.retry_offset = p_offset then c.retry_count else 0 end,
                    case when p_offset >= c.committed_offset and not (p_offset = any (c.acked_set))
                         then coalesce(c.attempts[(p_offset - c.attempt_from + 1)::int], 0) else 0 end) as retries
      from log_consumers c
     where c.partition_id = p_partition_id
  ), d as (
    select consumer_group, error, retry_count, failed_at
      from log_dlq where partition_id = p_partition_id and frame_offset = p_offset
  ), facts as (
    select exists (select 1 from d) as dead,
           (select count(*) from g) as groups,
           (select count(*) from g where consumed) as settled,
           (select max(lease_expires_at) from g) as lease_until,
           exists (select 1 from g where name = '__QUEUE_MODE__') as qm,
           coalesce((select consumed from g where name = '__QUEUE_MODE__'), false) as qm_consumed,
           (select lease_expires_at from g where name = '__QUEUE_MODE__') as qm_lease,
           (select retries from g where name = '__QUEUE_MODE__') as qm_retries,
           (select count(*) from g where name <> '__QUEUE_MODE__') as named,
           (select count(*) from g where name <> '__QUEUE_MODE__' and consumed) as named_settled,
           (select retry_count from d order by failed_at desc limit 1) as dlq_retries,
           (select error from d order by failed_at desc limit 1) as dlq_error,
           (select coalesce(jsonb_agg(jsonb_build_object('name', name, 'consumed', consumed, 'leaseExpiresAt', _iso_ms(lease_expires_at)) order by name), '[]')
              from g where name <> '__QUEUE_MODE__') as group_list
  )
  select jsonb_build_object(
    'status', case when dead then 'dead_letter'
                   when groups > 0 and settled = groups then 'completed'
                   when lease_until is not null then 'processing'
                   else 'pending' end,
    'queueStatus', case when not qm then null
                        when exists (select 1 from d where consumer_group = '__QUEUE_MODE__') then 'dead_letter'
                        when qm_consumed then 'completed'
                        when qm_lease is not null then 'processing'
                        else 'pending' end,
    'busStatus', jsonb_build_object('consumedBy', named_settled, 'totalGroups', named),
    'leaseExpiresAt', _iso_ms(lease_until),
    'retryCount', coalesce(dlq_retries, qm_retries, 0),
    'errorMessage', dlq_error,
    'groups', group_list)
  from facts
$$;

-- How the queues in scope are consumed: {hasQueueMode, busGroupsCount, type: queue|bus|hybrid|none}
-- over the registered groups of p_queue (or of all the tenant's queues when it is null).
-- Returns: jsonb. Raises: nothing. STABLE.
create or replace function queen._consumption_mode(p_tenant text, p_queue text)
returns jsonb
language sql stable
set search_path = queen, pg_catalog
as $$
  with g as (
    select distinct cg.consumer_group
      from consumer_groups cg join queues q on q.id = cg.queue_id
     where q.tenant_id = p_tenant and (p_queue is null or q.name = p_queue)
  ), f as (
    select exists (select 1 from g where consumer_group = '__QUEUE_MODE__') as qm,
           (select count(*) from g where consumer_group <> '__QUEUE_MODE__') as bus
  )
  select jsonb_build_object('hasQueueMode', qm, 'busGroupsCount', bus,
                            'type', case when qm and bus > 0 then 'hybrid' when qm then 'queue' when bus > 0 then 'bus' else 'none' end)
    from f
$$;

-- log_messages_v1: GET /api/v1/messages. p_filter {queue?, partition?, namespace?, task?, status?,
-- from, to, limit, offset} (the route validated and defaulted them). Frames with created_at in
-- [from, to], newest first by (createdAt, offset), without payloads. Without a status filter the
-- page is cut before any state is computed, so the cost is the page, not the time range.
-- Returns: {messages:[…], mode:{…}}. Raises: nothing. VOLATILE (no pooler cache). Clock: p_now (default now()).
create or replace function queen.log_messages_v1(p_tenant text, p_filter jsonb, p_now timestamptz default null)
returns jsonb
language plpgsql volatile
set search_path = queen, pg_catalog
as $$
declare
  v_now timestamptz := coalesce(p_now, now());
  v_status text := p_filter ->> 'status';
  v_limit int := (p_filter ->> 'limit')::int;
  v_offset int := (p_filter ->> 'offset')::int;
  v_messages jsonb;
begin
  with parts as (
    select p.id, p.name, p.log_start, q.name as queue, q.namespace, q.task, q.priority
      from log_partitions p join queues q on q.id = p.queue_id
     where q.tenant_id = p_tenant
       and (p_filter ->> 'queue' is null or q.name = p_filter ->> 'queue')
       and (p_filter ->> 'partition' is null or p.name = p_filter ->> 'partition')
       and (p_filter ->> 'namespace' is null or q.namespace = p_filter ->> 'namespace')
       and (p_filter ->> 'task' is null or q.task = p_filter ->> 'task')
  ), frames as (
    select p.*, s.base_offset + u.n - 1 as frame_offset, s.created_at, u.f
      from parts p
      join log_segments s on s.partition_id = p.id
       and s.created_at >= (p_filter ->> 'from')::timestamptz and s.created_at <= (p_filter ->> 'to')::timestamptz
      cross join lateral unnest(s.frames) with ordinality as u(f, n)
     where s.base_offset + u.n - 1 >= p.log_start
       and not exists (select 1 from log_tombstones t where t.partition_id = p.id and t.frame_offset = s.base_offset + u.n - 1)
     order by s.created_at desc, frame_offset desc
     limit case when v_status is null then v_limit::bigint + v_offset end
  ), stated as (
    select f.*, _message_state(f.id, f.log_start, f.frame_offset, v_now) as st from frames f
  ), page as (
    select * from stated
     where v_status is null or st ->> 'status' = v_status
     order by created_at desc, frame_offset desc
     limit v_limit offset v_offset
  )
  select coalesce(jsonb_agg(jsonb_build_object(
           'id', f ->> 'id', 'transactionId', f ->> 'txn', 'partitionId', id,
           'queuePath', queue || '/' || name, 'queue', queue, 'partition', name,
           'namespace', namespace, 'task', task,
           'status', st -> 'status', 'queueStatus', st -> 'queueStatus', 'busStatus', st -> 'busStatus',
           'traceId', f -> 'trace', 'producerSub', f -> 'sub', 'queuePriority', priority,
           'createdAt', _iso_us(created_at), 'leaseExpiresAt', st -> 'leaseExpiresAt', 'offset', frame_offset)
           order by created_at desc, frame_offset desc), '[]')
    into v_messages
    from page;

  return jsonb_build_object('messages', v_messages, 'mode', _consumption_mode(p_tenant, p_filter ->> 'queue'));
end
$$;

-- log_message_v1: GET /api/v1/messages/:partitionId/:transactionId, the newest retained frame of
-- the key in a partition of the tenant, with its payload (the route decrypts when `enc`).
-- p_partition_id is the client's text: one that is not a UUID names no partition.
-- Returns: the detail object. Raises: QMNFM when there is no such message (unknown, another
-- tenant's, deleted, no longer retained, or a malformed partition id). VOLATILE (no pooler cache).
-- Clock: p_now (default now()).
-- The signature that took p_partition_id as uuid is dropped so no stray overload remains.
drop function if exists queen.log_message_v1(text, uuid, text, timestamptz);
create or replace function queen.log_message_v1(p_tenant text, p_partition_id text, p_transaction_id text, p_now timestamptz default null)
returns jsonb
language sql volatile
set search_path = queen, pg_catalog
as $$
  select coalesce((select jsonb_build_object(
           'id', m.frame ->> 'id', 'transactionId', m.frame ->> 'txn', 'partitionId', tp.partition_id,
           'queuePath', tp.queue_name || '/' || tp.partition_name, 'queue', tp.queue_name, 'partition', tp.partition_name,
           'namespace', q.namespace, 'task', q.task, 'status', st -> 'status',
           'payload', m.frame -> 'data', 'isEncrypted', coalesce((m.frame ->> 'enc')::boolean, false),
           'traceId', m.frame -> 'trace', 'producerSub', m.frame -> 'sub', 'createdAt', _iso_us(m.created_at), 'offset', m.frame_offset,
           'errorMessage', st -> 'errorMessage', 'retryCount', st -> 'retryCount', 'leaseExpiresAt', st -> 'leaseExpiresAt',
           'queueConfig', jsonb_build_object('leaseTime', q.lease_time, 'retryLimit', q.retry_limit, 'retryDelay', q.retry_delay,
                                             'ttl', q.ttl, 'priority', q.priority),
           'mode', _consumption_mode(p_tenant, tp.queue_name)
                   || jsonb_build_object('consumedByGroups', st #> '{busStatus,consumedBy}'),
           'consumerGroups', st -> 'groups')
    from _tenant_partition(p_tenant, case when _is_uuid(p_partition_id) then p_partition_id::uuid end) tp
    join queues q on q.id = tp.queue_id
    cross join lateral (select * from _frames_by_txn(tp.partition_id, p_transaction_id)
                         where frame_offset >= tp.log_start limit 1) m
    cross join lateral (select _message_state(tp.partition_id, tp.log_start, m.frame_offset, coalesce(p_now, now())) as st) s),
    _raise('QMNFM', 'message not found'))
$$;

-- log_message_delete_v1: DELETE /api/v1/messages/:partitionId/:transactionId (read-write). Deletes
-- the dead-letter rows of the key, every consumer group's, and nothing else: a live message is a
-- frame in a segment and is not deleted one by one (docs/admin-messages.md). The partition id is
-- the client's text: one that is not a UUID, or another tenant's partition, matches no row.
-- Returns: {success: true, partitionId, transactionId, deleted: n, message}. Raises: QMNDL (DETAIL
-- {success: false, partitionId, transactionId, message}) when no row matched, so nothing was done.
-- The signature that took p_partition_id as uuid is dropped so no stray overload remains.
drop function if exists queen.log_message_delete_v1(text, uuid, text);
create or replace function queen.log_message_delete_v1(p_tenant text, p_partition_id text, p_transaction_id text)
returns jsonb
language plpgsql volatile
set search_path = queen, pg_catalog
as $$
declare
  v_deleted bigint := 0::bigint;
begin
  if _is_uuid(p_partition_id) then
    delete from log_dlq d
     where d.tenant_id = p_tenant and d.partition_id = p_partition_id::uuid and d.transaction_id = p_transaction_id;
    get diagnostics v_deleted = row_count;
  end if;
  if v_deleted = 0 then
    raise exception using errcode = 'QMNDL', message = 'no dead-letter row at this address',
      detail = jsonb_build_object('success', false, 'partitionId', p_partition_id, 'transactionId', p_transaction_id,
                                  'message', 'No dead-letter row for this address. Live messages live in immutable segments and cannot be deleted')::text;
  end if;
  return jsonb_build_object('success', true, 'partitionId', p_partition_id, 'transactionId', p_transaction_id,
                            'deleted', v_deleted, 'message', 'Message deleted successfully');
end
$$;

-- log_dlq_v1: GET /api/v1/dlq. p_filter {queue?, consumerGroup?, partition?, from?, to?, limit,
-- offset}; newest failure first. Rows are copies, so they outlive the source segment; an unknown
-- queue is an empty list. The route decrypts `enc` payloads. `id` is the dead-letter row's (what
-- the replay route takes), `messageId` the message's.
-- Returns: {messages:[…], total}. Raises: nothing. VOLATILE (no pooler cache).
create or replace function queen.log_dlq_v1(p_tenant text, p_filter jsonb)
returns jsonb
language sql volatile
set search_path = queen, pg_catalog
as $$
  with rows as (
    select d.*, q.name as queue
      from log_dlq d join queues q on q.id = d.queue_id
     where d.tenant_id = p_tenant
       and (p_filter ->> 'queue' is null or q.name = p_filter ->> 'queue')
       and (p_filter ->> 'consumerGroup' is null or d.consumer_group = p_filter ->> 'consumerGroup')
       and (p_filter ->> 'partition' is null or d.partition_name = p_filter ->> 'partition')
       and (p_filter ->> 'from' is null or d.failed_at >= (p_filter ->> 'from')::timestamptz)
       and (p_filter ->> 'to' is null or d.failed_at <= (p_filter ->> 'to')::timestamptz)
  ), page as (
    select * from rows order by failed_at desc, id
     limit (p_filter ->> 'limit')::int offset (p_filter ->> 'offset')::int
  )
  select jsonb_build_object(
    'messages', coalesce((select jsonb_agg(jsonb_build_object(
        'id', id, 'messageId', message_id, 'transactionId', transaction_id, 'partitionId', partition_id, 'queue', queue,
        'partition', partition_name, 'consumerGroup', consumer_group, 'errorMessage', error, 'retryCount', retry_count,
        'enc', coalesce((frame ->> 'enc')::boolean, false), 'data', frame -> 'data', 'producerSub', frame -> 'sub',
        'createdAt', _iso_us(original_created_at), 'failedAt', _iso_ms(failed_at), 'offset', frame_offset)
        order by failed_at desc, id) from page), '[]'),
    'total', (select count(*) from rows))
$$;
