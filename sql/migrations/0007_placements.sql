-- Tenant placement across databases (issue #26, docs/placement.md). The directory lives in the
-- default database (DATABASE_URL); every database carries the tables because every database runs
-- the same migrations, but only the default's rows are ever read.
--
-- placements: one row per tenant ever placed. A tenant without a row lives on the default
--   database. Rows are never deleted (placing a tenant back on the default writes 'default'), so the
--   directory version below only ever grows and a cached map can be checked against it.
--   state 'moving' (with moving_to) fences the tenant while a move copies it: brokers refuse its
--   requests with 503 + Retry-After until the move finishes or aborts.
-- placement_directory: one row, the directory version. Every change bumps it under the row lock,
--   so versions are committed in order and a reader that saw version N has seen every change <= N.
create table queen.placements (
  tenant_id text primary key,
  database text not null,
  state text not null default 'placed' check (state in ('placed', 'moving')),
  moving_to text,
  version bigint not null,
  updated_at timestamptz not null default now()
);

create table queen.placement_directory (
  id boolean primary key default true check (id),
  version bigint not null default 0
);
insert into queen.placement_directory (id, version) values (true, 0);
