-- Internal helpers shared by every procedure file. IMMUTABLE/VOLATILE as their nature says; none
-- reads a table. Names start with `_` (STYLE 13).

-- UUIDv7 (RFC 9562): 48 bits of Unix milliseconds, then random bits, with version and variant set.
-- PostgreSQL has no built-in v7 before 18 (D17). VOLATILE: it reads the clock and draws randomness.
-- Returns: uuid. Raises: nothing. Clock: clock_timestamp() unless p_now pins it (tests).
create or replace function queen._uuid_v7(p_now timestamptz default null)
returns uuid
language sql volatile
set search_path = queen, pg_catalog
as $$
  select encode(
           set_bit(set_bit(
             overlay(uuid_send(gen_random_uuid())
                     placing substring(int8send(floor(extract(epoch from coalesce(p_now, clock_timestamp())) * 1000)::bigint) from 3)
                     from 1 for 6),
             52, 1), 53, 1),
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
