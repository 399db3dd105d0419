-- Accounts and keys: which account a license key belongs to (the pairing rule's one statement).
-- pgTAP; run with pg_prove or `supabase test db` (test/README.md).
begin;
set local client_min_messages = warning;
create extension if not exists pgtap with schema extensions;
set local search_path = extensions, public;
select plan(16);

-- The API roles that may execute a function: its grants are part of its design.
create function pg_temp.executors(p_function regproc) returns text[] language sql as $$
  select array(select r from unnest(array['anon', 'authenticated', 'service_role']) as r
                where pg_catalog.has_function_privilege(r, p_function, 'execute') order by r)
$$;

insert into public.accounts (id, email, display_name) values
  ('e3000000-0000-4000-8000-000000000001', 'keys-a@example.com', 'Keys A'),
  ('e3000000-0000-4000-8000-000000000002', 'keys-b@example.com', 'Keys B');
insert into public.license_keys (key, account_id, email) values
  ('KEYS-0000-0000-0001', 'e3000000-0000-4000-8000-000000000001', 'keys-a@example.com'),
  ('KEYS-0000-0000-0002', null, 'KEYS-A@Example.com'),
  ('KEYS-0000-0000-0003', 'e3000000-0000-4000-8000-000000000002', 'keys-a@example.com'),
  ('KEYS-0000-0000-0004', null, 'nobody@example.com');

-- cadence.key_belongs_to
select has_function('cadence', 'key_belongs_to', array['license_keys', 'accounts'], 'key_belongs_to exists');
select ok(cadence.key_belongs_to(k, a), 'key_belongs_to: a key belongs to the account its owner link names')
  from public.license_keys as k, public.accounts as a where k.key = 'KEYS-0000-0000-0001' and a.email = 'keys-a@example.com';
select ok(cadence.key_belongs_to(k, a), 'key_belongs_to: a key with no owner link belongs to the account of its stored e-mail, regardless of case')
  from public.license_keys as k, public.accounts as a where k.key = 'KEYS-0000-0000-0002' and a.email = 'keys-a@example.com';
select ok(not cadence.key_belongs_to(k, a), 'key_belongs_to: a key linked to another account does not belong to the account of its stored e-mail')
  from public.license_keys as k, public.accounts as a where k.key = 'KEYS-0000-0000-0003' and a.email = 'keys-a@example.com';
-- Not true, rather than false: the owner link's comparison is null for an unlinked key, so the
-- answer is null, which every caller reads as "does not belong" (a WHERE, a CASE).
select ok(cadence.key_belongs_to(k, a) is not true, 'key_belongs_to: a key with no owner link does not belong to an account of another e-mail')
  from public.license_keys as k, public.accounts as a where k.key = 'KEYS-0000-0000-0004' and a.email = 'keys-a@example.com';
select is(pg_temp.executors('cadence.key_belongs_to'), '{service_role}', 'key_belongs_to: only service_role may execute it');

-- cadence.key_account_id
select has_function('cadence', 'key_account_id', array['uuid', 'text'], 'key_account_id exists');
select is(cadence.key_account_id('e3000000-0000-4000-8000-000000000002', 'keys-a@example.com'), 'e3000000-0000-4000-8000-000000000002'::uuid,
  'key_account_id: the owner link wins over the stored e-mail');
select is(cadence.key_account_id(null, 'Keys-A@EXAMPLE.com'), 'e3000000-0000-4000-8000-000000000001'::uuid,
  'key_account_id: without an owner link, the account of the stored e-mail, regardless of case');
select is(cadence.key_account_id(null, 'nobody@example.com'), null, 'key_account_id: no link and no account of that e-mail is no account');
select is(pg_temp.executors('cadence.key_account_id'), '{service_role}', 'key_account_id: only service_role may execute it');

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
