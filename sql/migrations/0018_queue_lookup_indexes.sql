-- The discovery indexes become partial, so a lookup by (tenant_id, name) can only use the unique
-- key. The predicates hold for every row (both columns are NOT NULL), so the indexes still cover
-- every queue; the planner, which does not read NOT NULL constraints when it matches a partial
-- index, now picks them only for queries that filter on namespace or task. Both led with tenant_id, so on a table without fresh statistics the planner costed them the
-- same as the key, and the generic plans of push and _ensure_queue probed queues_task_idx: a scan of
-- every queue of the tenant per name (about 1 ms at 2 000 queues), which made one push creating
-- 10 000 queues take 44 s. Discovery pops filter `namespace = …` or `task = …`, which imply the
-- predicates, so they still use them (test/http/queue-lookup-plans.test.ts checks both).
drop index if exists queen.queues_discovery_idx;
create index queues_discovery_idx on queen.queues (tenant_id, namespace, task)
  where namespace is not null or task is not null;
drop index if exists queen.queues_task_idx;
create index queues_task_idx on queen.queues (tenant_id, task) where task is not null;
