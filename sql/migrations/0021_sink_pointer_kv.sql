-- Two changes: the sink's pointer moves into the namespaced key/value store, and timers get the
-- message id they are delivered under (at the end).
--
-- The archive sink's committed pointer moves from the single-key table queen.kv into the
-- namespaced store, namespace 'queen.sink' (docs/kv.md, docs/sink.md). Namespaces starting
-- 'queen.' belong to the broker: clients may read them but never write them, so the pointer the
-- retention hold trusts can only be moved by the sink's fenced commit.
--
-- Every row of queen.kv moves, none is lost:
--   keys shaped like a pointer, s3:<sink>:<queue>:committed, go to 'queen.sink' under the same key;
--   any other key (the old routes let a tenant store anything) goes to namespace 'legacy-kv', which
--   stays the tenant's to read and write through the 1.6 routes.
-- Both keep their value and updated_at, never expire, and get a fresh version from the store's
-- sequence. A row a client wrote into 'queen.sink' before the namespace was reserved is dropped
-- first: that namespace holds only what the broker moved or wrote. A 'legacy-kv' key the tenant
-- already wrote through the 1.6 routes is kept, the older single-key value is not copied over it.
-- The old store's table and its three procedures go with it (their routes are removed).
delete from queen.kv_entries where ns = 'queen.sink';

insert into queen.kv_entries (tenant_id, ns, key, value, version, expires_at, updated_at)
select tenant_id,
       case when key ~ '^s3:[^:]+:.+:committed$' then 'queen.sink' else 'legacy-kv' end,
       key, value, nextval('queen.kv_version_seq'), null, updated_at
  from queen.kv
 order by tenant_id, key
on conflict (tenant_id, ns, key) do nothing;

drop function if exists queen.kv_put_v1(text, text, jsonb, timestamptz);
drop function if exists queen.kv_get_v1(text, text);
drop function if exists queen.kv_delete_v1(text, text);
drop table queen.kv;

-- Timers mint their message id at schedule (docs/timers.md): the fire pushes the message under it,
-- so a client correlates the delivered message with the id the schedule answered. A UUIDv7 whose
-- time is the timer's due instant, so the timers one fire delivers into a partition rise in id as
-- they rise in offset. Timers pending from before get one now, the same way.
alter table queen.timers add column message_id uuid;
update queen.timers
   set message_id = encode(set_bit(set_bit(overlay(uuid_send(gen_random_uuid())
                                                   placing substring(int8send(floor(extract(epoch from deliver_at) * 1000)::bigint) from 3)
                                                   from 1 for 6), 52, 1), 53, 1), 'hex')::uuid;
alter table queen.timers alter column message_id set not null;
