-- Accounts and keys: which account a license key belongs to (the pairing rule), as stored on the key
-- (license_keys.belongs_to) and kept when a key or an account changes.
-- pgTAP; run with pg_prove or `supabase test db` (test/README.md).
begin;
set local client_min_messages = warning;
create extension if not exists pgtap with schema extensions;
set local search_path = extensions, public;
select plan(28);

-- The API roles that may execute a function: its grants are part of its design.
create function pg_temp.executors(p_function regproc) returns text[] language sql as $$
  select array(select r from unnest(array['anon', 'authenticated', 'service_role']) as r
                where pg_catalog.has_function_privilege(r, p_function, 'execute') order by r)
$$;

-- Whether this transaction holds the one lock key writes and account changes meet on, in a mode.
create function pg_temp.holds_key_accounts_lock(p_mode text) returns boolean language sql as $$
  select exists (
    select from pg_catalog.pg_locks as l
     where l.pid = pg_catalog.pg_backend_pid() and l.locktype = 'advisory' and l.mode = p_mode and l.granted
       and l.classid = ((pg_catalog.hashtextextended('cadence.key_accounts', 0) >> 32) & 4294967295)::oid
       and l.objid = (pg_catalog.hashtextextended('cadence.key_accounts', 0) & 4294967295)::oid)
$$;

-- The account a key belongs to, as stored.
create function pg_temp.belongs_to(p_key text) returns uuid language sql as $$
  select k.belongs_to from public.license_keys as k where k.key = p_key
$$;

-- A key written before any account: the locks it takes, alone.
insert into public.license_keys (key, account_id, email) values ('KEYS-0000-0000-0007', null, 'later@example.com');
create temporary table locks_of_a_key_write on commit drop as
  select pg_temp.holds_key_accounts_lock('ShareLock') as shared, pg_temp.holds_key_accounts_lock('ExclusiveLock') as exclusive;

insert into public.accounts (id, email, display_name) values
  ('e3000000-0000-4000-8000-000000000001', 'keys-a@example.com', 'Keys A'),
  ('e3000000-0000-4000-8000-000000000002', 'keys-b@example.com', 'Keys B'),
  ('e3000000-0000-4000-8000-000000000004', 'keys-d@example.com', 'Keys D'),
  ('e3000000-0000-4000-8000-000000000005', 'keys-f@example.com', 'Keys F');
insert into public.license_keys (key, account_id, email) values
  ('KEYS-0000-0000-0001', 'e3000000-0000-4000-8000-000000000001', 'keys-a@example.com'),
  ('KEYS-0000-0000-0002', null, 'KEYS-A@Example.com'),
  ('KEYS-0000-0000-0003', 'e3000000-0000-4000-8000-000000000002', 'keys-a@example.com'),
  ('KEYS-0000-0000-0004', null, 'nobody@example.com'),
  ('KEYS-0000-0000-0005', null, 'keys-a@example.com'),
  ('KEYS-0000-0000-0006', null, 'keys-a@example.com'),
  ('KEYS-0000-0000-0008', 'e3000000-0000-4000-8000-000000000004', 'keys-d@example.com'),
  ('KEYS-0000-0000-0009', null, 'keys-d@example.com'),
  ('KEYS-0000-0000-0010', null, 'keys-e@example.com'),
  ('KEYS-0000-0000-0011', null, 'keys-f@example.com');

-- cadence.find_key_account (trigger key_account_is_found on public.license_keys)
select has_function('cadence', 'find_key_account', 'find_key_account exists');
select is(pg_temp.belongs_to('KEYS-0000-0000-0001'), 'e3000000-0000-4000-8000-000000000001'::uuid,
  'find_key_account: a key belongs to the account its owner link names');
select is(pg_temp.belongs_to('KEYS-0000-0000-0003'), 'e3000000-0000-4000-8000-000000000002'::uuid,
  'find_key_account: an owner link wins over the stored e-mail');
select is(pg_temp.belongs_to('KEYS-0000-0000-0002'), 'e3000000-0000-4000-8000-000000000001'::uuid,
  'find_key_account: a key with no owner link belongs to the account of its stored e-mail, regardless of case');
select is(pg_temp.belongs_to('KEYS-0000-0000-0004'), null, 'find_key_account: a key whose e-mail matches no account belongs to none');
update public.license_keys set account_id = 'e3000000-0000-4000-8000-000000000002' where key = 'KEYS-0000-0000-0005';
select is(pg_temp.belongs_to('KEYS-0000-0000-0005'), 'e3000000-0000-4000-8000-000000000002'::uuid,
  'find_key_account: a key linked later belongs to its new owner link');
update public.license_keys set account_id = null where key = 'KEYS-0000-0000-0005';
select is(pg_temp.belongs_to('KEYS-0000-0000-0005'), 'e3000000-0000-4000-8000-000000000001'::uuid,
  'find_key_account: a key unlinked again belongs to the account of its stored e-mail');
update public.license_keys set email = 'keys-b@example.com' where key = 'KEYS-0000-0000-0006';
select is(pg_temp.belongs_to('KEYS-0000-0000-0006'), 'e3000000-0000-4000-8000-000000000002'::uuid,
  'find_key_account: a key whose stored e-mail changes belongs to the account of its new e-mail');
update public.license_keys set belongs_to = 'e3000000-0000-4000-8000-000000000002' where key = 'KEYS-0000-0000-0001';
select is(pg_temp.belongs_to('KEYS-0000-0000-0001'), 'e3000000-0000-4000-8000-000000000001'::uuid,
  'find_key_account: a write of belongs_to by hand is recomputed');
set local session_replication_role = replica;
insert into public.license_keys (key, email) values ('KEYS-0000-0000-0012', 'keys-a@example.com');
set local session_replication_role = origin;
select is(pg_temp.belongs_to('KEYS-0000-0000-0012'), 'e3000000-0000-4000-8000-000000000001'::uuid,
  'find_key_account: fires in bulk loads too (session_replication_role = replica), so no load stores a key without its account');
select is(pg_temp.executors('cadence.find_key_account'), '{}', 'find_key_account: a trigger function no API role may execute');

-- cadence.await_account_changes (trigger key_writes_await_account_changes on public.license_keys)
select has_function('cadence', 'await_account_changes', 'await_account_changes exists');
select ok((select l.shared and not l.exclusive from locks_of_a_key_write as l),
  'await_account_changes: a statement writing keys holds the shared lock until its transaction ends, so an account change waits for it, and other key writes do not');
select is(pg_temp.executors('cadence.await_account_changes'), '{}', 'await_account_changes: a trigger function no API role may execute');

-- cadence.refresh_key_accounts (triggers key_accounts_follow_the_account and key_accounts_follow_the_account_email on public.accounts)
select has_function('cadence', 'refresh_key_accounts', 'refresh_key_accounts exists');
insert into public.accounts (id, email, display_name) values ('e3000000-0000-4000-8000-000000000003', 'Later@Example.com', 'Keys Later');
select is(pg_temp.belongs_to('KEYS-0000-0000-0007'), 'e3000000-0000-4000-8000-000000000003'::uuid,
  'refresh_key_accounts: an account created after its unlinked keys gets them, regardless of case');
select ok(pg_temp.holds_key_accounts_lock('ExclusiveLock'),
  'refresh_key_accounts: an account change holds the lock exclusively until its transaction ends, so key writes wait for it');
create temporary table version_before on commit drop as select k.ctid as version from public.license_keys as k where k.key = 'KEYS-0000-0000-0009';
update public.accounts set email = 'KEYS-D@example.com' where id = 'e3000000-0000-4000-8000-000000000004';
select is((select k.ctid from public.license_keys as k where k.key = 'KEYS-0000-0000-0009'), (select v.version from version_before as v),
  'refresh_key_accounts: an e-mail changed only in case rewrites no key');
update public.accounts set email = 'keys-e@example.com' where id = 'e3000000-0000-4000-8000-000000000004';
select is(pg_temp.belongs_to('KEYS-0000-0000-0009'), null,
  'refresh_key_accounts: an account''s e-mail changed: the unlinked keys of its old e-mail belong to none');
select is(pg_temp.belongs_to('KEYS-0000-0000-0010'), 'e3000000-0000-4000-8000-000000000004'::uuid,
  'refresh_key_accounts: an account''s e-mail changed: the unlinked keys of its new e-mail belong to it');
select is(pg_temp.belongs_to('KEYS-0000-0000-0008'), 'e3000000-0000-4000-8000-000000000004'::uuid,
  'refresh_key_accounts: an account''s e-mail changed: its linked keys stay');
delete from public.accounts where id = 'e3000000-0000-4000-8000-000000000005';
select is(pg_temp.belongs_to('KEYS-0000-0000-0011'), null, 'refresh_key_accounts: an account deleted leaves its unlinked keys belonging to none');
select is(pg_temp.executors('cadence.refresh_key_accounts'), '{}', 'refresh_key_accounts: a trigger function no API role may execute');

-- cadence.license_key_owner
select has_function('cadence', 'license_key_owner', array['text'], 'license_key_owner exists');
select is(cadence.license_key_owner('KEYS-0000-0000-0002'), 'e3000000-0000-4000-8000-000000000001'::uuid,
  'license_key_owner: an unlinked key''s owner is the account of its stored e-mail');
select is(cadence.license_key_owner('KEYS-0000-0000-0003'), 'e3000000-0000-4000-8000-000000000002'::uuid,
  'license_key_owner: a linked key''s owner is its linked account, not the one of its e-mail');
select is(cadence.license_key_owner('KEYS-0000-0000-0004'), null, 'license_key_owner: a key of no account has no owner');
select is(pg_temp.executors('cadence.license_key_owner'), '{authenticated,service_role}',
  'license_key_owner: account holders (for public.kiosk_status) and service_role may execute it, anon may not');

select * from finish();
rollback;
