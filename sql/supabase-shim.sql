-- Makes a plain Postgres look like a Supabase database to our migrations:
-- the API roles, their default privileges on `public`, and the bit of the `auth` schema we use.
-- Idempotent; never part of a migration (Supabase already has all of this).

do $$
begin
  if not exists (select from pg_catalog.pg_roles where rolname = 'anon') then
    create role anon nologin noinherit;
  end if;
  if not exists (select from pg_catalog.pg_roles where rolname = 'authenticated') then
    create role authenticated nologin noinherit;
  end if;
  if not exists (select from pg_catalog.pg_roles where rolname = 'service_role') then
    create role service_role nologin noinherit bypassrls;
  end if;
end
$$;

grant usage on schema public to anon, authenticated, service_role;

-- Supabase grants the API roles everything on new objects in `public`; our migrations must revoke
-- what they do not mean to expose, so the shim reproduces that default faithfully.
alter default privileges in schema public grant all on tables to anon, authenticated, service_role;
alter default privileges in schema public grant all on sequences to anon, authenticated, service_role;
alter default privileges in schema public grant all on functions to anon, authenticated, service_role;

create schema if not exists auth;
grant usage on schema auth to anon, authenticated, service_role;

create table if not exists auth.users (
  id uuid primary key,
  email text,
  created_at timestamptz not null default now()
);

-- As Supabase Auth defines it: the JWT's `sub`, from `request.jwt.claims` (the JSON of every claim,
-- which the Data API sets for each request), or from the older one-claim setting
-- `request.jwt.claim.sub` when that is set.
create or replace function auth.uid() returns uuid
language sql stable
as $$
  select
  coalesce(
    nullif(current_setting('request.jwt.claim.sub', true), ''),
    (nullif(current_setting('request.jwt.claims', true), '')::jsonb ->> 'sub')
  )::uuid
$$;
