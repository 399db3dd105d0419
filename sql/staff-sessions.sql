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

-- A member of `postgres`, the owner of every table: staff edit rows and schema as the owner does,
-- and `set role postgres` gives a session the superuser's rights when a recipe needs them. The
-- limits below stay with the login.
grant postgres to staff;

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
