-- Every function in sql/procedures has one header shape: contract comment, `create or replace
-- function queen.<name>(`, `returns`, `language <lang> <volatility>`, `set search_path = queen,
-- pg_catalog` (inlined SQL helpers excepted), reasoned extra SETs, `as $$`, and the clock read once
-- as `v_now timestamptz := coalesce(p_now, clock_timestamp())`. docs/procedures.md has the rules;
-- test/procedures-static.test.ts enforces them.
--
-- Internal helpers shared by every procedure file. IMMUTABLE/VOLATILE as their nature says; none
-- reads a table. Names start with `_` (STYLE 13).

-- UUIDv7 (RFC 9562): 48 bits of Unix milliseconds, then random bits, with version and variant set.
-- PostgreSQL has no built-in v7 before 18 (D17). VOLATILE: it reads the clock and draws randomness.
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

-- The namespace and task a queue named N gets by default (ENGINE 2.1, D11): the first and second
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
