-- The `staff` role of the local default database (functions/app/db/local-postgres.ts): what staff's
-- psql logs in as, so their sessions are limited where the API's are not (sql/README.md, "Staff
-- sessions"). Run at every local start; never part of a migration (on Supabase, staff use the
-- dashboard, whose limits are Supabase's).

do $$
begin
  if not exists (select from pg_catalog.pg_roles where rolname = 'staff') then
    create role staff login;
  end if;
end
$$;

-- What the dashboard's role may do, and no more: every row of every table (row-level security does
-- not apply, as for the dashboard), every function, never the superuser's rights. A superuser can
-- lift its own limits and run programs as the server's OS user (COPY ... TO PROGRAM), which, with
-- the server started by root, is root's files. Not a member of `postgres` (an earlier start made it
-- one): membership would let a session `set role postgres`.
alter role staff nosuperuser nocreatedb nocreaterole bypassrls;
revoke postgres from staff;
-- Objects the migrations create (as `postgres`) from now on, in any schema; then those already there.
alter default privileges for role postgres grant usage on schemas to staff;
alter default privileges for role postgres grant all on tables to staff;
alter default privileges for role postgres grant all on sequences to staff;
alter default privileges for role postgres grant execute on functions to staff;
do $$
declare
  v_schema text;
begin
  for v_schema in
    select nspname from pg_catalog.pg_namespace where nspname in ('public', 'cadence', 'auth', 'supabase_migrations')
  loop
    execute format('grant usage on schema %I to staff', v_schema);
    execute format('grant all on all tables in schema %I to staff', v_schema);
    execute format('grant all on all sequences in schema %I to staff', v_schema);
    execute format('grant execute on all functions in schema %I to staff', v_schema);
  end loop;
end
$$;

-- 20 sessions at most, of the server's 100: the API's pools (10 a process) always find a slot.
alter role staff connection limit 20;
-- As the dashboard's SQL editor stops a query: no statement holds rows or a core for longer.
alter role staff set statement_timeout = '60s';
-- A session left in a transaction gives back its locks and its snapshot after a minute.
alter role staff set idle_in_transaction_session_timeout = '60s';
-- A staff lock request that waits (an ALTER TABLE behind a kiosk's read) queues every later API
-- statement on that table behind it: it gives up after 3 s, and the API's statements go on.
alter role staff set lock_timeout = '3s';
-- Sorts and hashes spill to disk past 16 MB a node, and a session's temporary files stop at 2 GB.
alter role staff set work_mem = '16MB';
alter role staff set temp_file_limit = '2GB';
