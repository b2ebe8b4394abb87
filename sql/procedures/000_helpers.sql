-- Every function in sql/procedures has one header shape: contract comment, `create or replace
-- function queen.<name>(`, `returns`, `language <lang> <volatility>`, `set search_path = queen,
-- pg_catalog` (inlined SQL helpers excepted), reasoned extra SETs, `as $$`, and the clock read once
-- as `v_now timestamptz := coalesce(p_now, clock_timestamp())`. docs/procedures.md has the rules;
-- test/procedures-static.test.ts enforces them.
--
-- Internal helpers shared by every procedure file: ids, a queue name's namespace and task, the
-- wire's timestamp formats, the uuid check and the raise a `language sql` procedure cannot write.
-- IMMUTABLE, STABLE or VOLATILE as their nature says; none reads a table. Names start with `_`, as every internal helper's does.

-- UUIDv7 (RFC 9562): 48 bits of Unix milliseconds, then random bits, with version and variant set.
-- PostgreSQL has no built-in v7 before 18 (design decision 22). VOLATILE: it reads the clock and
-- draws randomness.
-- Returns: uuid. Raises: nothing. Clock: clock_timestamp() unless p_now pins it (tests).
create or replace function queen._uuid_v7(p_now timestamptz default null)
returns uuid
language sql volatile
-- No SET clause and only schema-qualified built-ins: PostgreSQL inlines a plain SQL function, and a
-- SET clause would forbid that, costing a full call with a GUC save/restore per frame (BENCHMARKS.md).
as $$
  select pg_catalog.encode(
           pg_catalog.set_bit(pg_catalog.set_bit(
             pg_catalog.overlay(pg_catalog.uuid_send(pg_catalog.gen_random_uuid()),
                                pg_catalog.substring(pg_catalog.int8send(pg_catalog.floor(
                                  pg_catalog.date_part('epoch', coalesce(p_now, pg_catalog.clock_timestamp())) * 1000)::bigint), 3),
                                1, 6),
             52, 1), 53, 1),
           'hex')::uuid
$$;

-- _uuid_v7_at: the id of the frame at offset p_offset of a segment created at p_at. A UUIDv7 whose
-- 48 time bits are p_at's Unix milliseconds, followed by the offset's low 32 bits and 42 random bits
-- (version and variant set). Frames of one partition rise in offset and createdAt together, and those
-- that share a millisecond (every frame of one push, and pushes in the same millisecond) then rise in
-- id as well: Queen's clients restore a partition's FIFO order by sorting on (createdAt, id), and
-- with a random id within the millisecond that sort reordered a push (issue #34). Only an offset
-- wrap past 2^32 inside one millisecond could reorder; the random bits keep ids of different
-- partitions apart. VOLATILE: it draws randomness. Returns: uuid. Raises: nothing.
create or replace function queen._uuid_v7_at(p_at timestamptz, p_offset bigint)
returns uuid
language sql volatile
-- No SET clause and only schema-qualified built-ins, so it is inlined like _uuid_v7: push mints one
-- per frame.
as $$
  select pg_catalog.encode(
           pg_catalog.int8send(pg_catalog.int8or(pg_catalog.int8or(
             pg_catalog.int8shl(pg_catalog.floor(pg_catalog.date_part('epoch', p_at) * 1000)::bigint, 16),
             28672),
             pg_catalog.int8and(pg_catalog.int8shr(p_offset, 20), 4095)))
           operator(pg_catalog.||)
           pg_catalog.int8send(pg_catalog.int8or(pg_catalog.int8or(
             (-9223372036854775808)::bigint,
             pg_catalog.int8shl(pg_catalog.int8and(p_offset, 1048575), 42)),
             pg_catalog.floor(pg_catalog.random() * 4398046511104)::bigint)),
           'hex')::uuid
$$;

-- The namespace and task a queue named N gets by default (design decision 28): the first and second
-- segments of a dotted name; an undotted name, or an empty segment, gives ''.
-- Returns: text. Raises: nothing. IMMUTABLE: a pure function of its argument.
create or replace function queen._derive_namespace(p_queue text)
returns text
language sql immutable
set search_path = queen, pg_catalog
as $$
  select case when strpos(p_queue, '.') > 0 then split_part(p_queue, '.', 1) else '' end
$$;

create or replace function queen._derive_task(p_queue text)
returns text
language sql immutable
set search_path = queen, pg_catalog
as $$
  select case when strpos(p_queue, '.') > 0 then split_part(p_queue, '.', 2) else '' end
$$;

-- _iso_us: the wire form of a frame's createdAt (and of partitions/changed), UTC with microseconds,
-- the precision PostgreSQL stores.
create or replace function queen._iso_us(p_at timestamptz)
returns text
language sql stable
-- STABLE with no SET clause and a schema-qualified body, so PostgreSQL inlines it: pop formats one
-- per delivered frame, and the SET clause made each a full call (4.5 µs instead of 1.1 µs).
-- (to_char is STABLE, so an IMMUTABLE declaration would also forbid inlining.)
as $$
  select pg_catalog.to_char(p_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')
$$;

-- _iso_ms: every other timestamp on the wire, UTC with milliseconds.
create or replace function queen._iso_ms(p_at timestamptz)
returns text
language sql stable
-- STABLE with no SET clause and a schema-qualified body, so PostgreSQL inlines it: pop formats one
-- per delivered frame, and the SET clause made each a full call (4.5 µs instead of 1.1 µs).
-- (to_char is STABLE, so an IMMUTABLE declaration would also forbid inlining.)
as $$
  select pg_catalog.to_char(p_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
$$;

-- _is_uuid: whether client text may be cast to uuid. A malformed id is "not found", never a 22P02
-- (a deterministic problem answers a 4xx or a per-item verdict, never a 5xx).
create or replace function queen._is_uuid(p_text text)
returns boolean
language sql immutable
-- No SET clause, so it is inlined (see _uuid_v7); `~*` is pg_catalog's text operator.
as $$
  select p_text operator(pg_catalog.~*) '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$'
$$;

-- _raise: raises p_sqlstate with p_message, for a `language sql` procedure, which has no RAISE of
-- its own: `select coalesce((<the answer>), _raise('QM404', 'queue not found'))` answers, or names
-- what it did not find. The not-found SQLSTATEs (QM404 queue, QMNFP partition, QMNFM message,
-- QMNFK key, QMNFG consumer group) and the other refusals are mapped to statuses in one table,
-- src/errors.ts. Returns jsonb only so it fits where the answer would; it never returns.
-- VOLATILE, so the planner never evaluates it ahead of the coalesce that guards it.
-- Raises: p_sqlstate, always.
create or replace function queen._raise(p_sqlstate text, p_message text)
returns jsonb
language plpgsql volatile
set search_path = queen, pg_catalog
as $$
begin
  raise exception using errcode = p_sqlstate, message = p_message;
end
$$;
