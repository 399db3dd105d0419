-- Account holders: what a signed-in Supabase Auth user's row-level security policies grant them,
-- through one helper per kind of row. pgTAP; run with pg_prove or `supabase test db`
-- (test/README.md).
begin;
set local client_min_messages = warning;
create extension if not exists pgtap with schema extensions;
set local search_path = extensions, public;
select plan(26);

-- The API roles that may execute a function: its grants are part of its design.
create function pg_temp.executors(p_function regproc) returns text[] language sql as $$
  select array(select r from unnest(array['anon', 'authenticated', 'service_role']) as r
                where pg_catalog.has_function_privilege(r, p_function, 'execute') order by r)
$$;

-- Signs in as an Auth user (the claims the Data API sets), or signs out with null.
create function pg_temp.sign_in(p_user uuid) returns void language sql as $$
  select pg_catalog.set_config('request.jwt.claims', coalesce(pg_catalog.json_build_object('sub', p_user)::text, ''), true)
$$;

-- A sorted array, so that sets compare as sets.
create function pg_temp.sorted(p_values anyarray) returns anyarray language sql as $$
  select array(select v from unnest(p_values) as v order by 1)
$$;

-- The holder's account: a linked key with the account's schedule, an unlinked key of its e-mail with
-- its own, entitlements to a served and an unserved proclamation. Another holder's account beside it.
insert into public.accounts (id, email, display_name, auth_user_id) values
  ('e9000000-0000-4000-8000-000000000001', 'holder@example.com', 'Holder', 'e9100000-0000-4000-8000-000000000001'),
  ('e9000000-0000-4000-8000-000000000002', 'neighbour@example.com', 'Neighbour', 'e9100000-0000-4000-8000-000000000002');
insert into public.license_keys (key, account_id, email) values
  ('HOLD-0000-0000-0001', 'e9000000-0000-4000-8000-000000000001', 'holder@example.com'),
  ('HOLD-0000-0000-0002', null, 'Holder@example.com'),
  ('HOLD-0000-0000-0003', 'e9000000-0000-4000-8000-000000000002', 'holder@example.com');
insert into public.schedules (id, account_id, license_key, type) values
  ('e9200000-0000-4000-8000-000000000001', 'e9000000-0000-4000-8000-000000000001', null, 'daily'),
  ('e9200000-0000-4000-8000-000000000002', null, 'HOLD-0000-0000-0002', 'daily'),
  ('e9200000-0000-4000-8000-000000000003', 'e9000000-0000-4000-8000-000000000002', null, 'daily');
insert into public.schedule_blocks (id, schedule_id, start_time, end_time) values
  ('e9300000-0000-4000-8000-000000000001', 'e9200000-0000-4000-8000-000000000001', '06:00', '07:00'),
  ('e9300000-0000-4000-8000-000000000002', 'e9200000-0000-4000-8000-000000000002', '06:00', '07:00'),
  ('e9300000-0000-4000-8000-000000000003', 'e9200000-0000-4000-8000-000000000003', '06:00', '07:00');
insert into public.account_proclamations (account_id, proclamation_id) values
  ('e9000000-0000-4000-8000-000000000001', 'b0000000-0000-4000-8000-000000000001'),
  ('e9000000-0000-4000-8000-000000000001', 'b0000000-0000-4000-8000-000000000005'),
  ('e9000000-0000-4000-8000-000000000002', 'b0000000-0000-4000-8000-000000000002');

-- cadence.holder_account_id
select has_function('cadence', 'holder_account_id', 'holder_account_id exists');
select pg_temp.sign_in('e9100000-0000-4000-8000-000000000001');
select is(cadence.holder_account_id(), 'e9000000-0000-4000-8000-000000000001'::uuid, 'holder_account_id: the account linked to the signed-in Auth user');
select pg_temp.sign_in('e9100000-0000-4000-8000-0000000000ff');
select is(cadence.holder_account_id(), null, 'holder_account_id: an Auth user linked to no account has none');
select pg_temp.sign_in(null);
select is(cadence.holder_account_id(), null, 'holder_account_id: nobody signed in has none');
select is(pg_temp.executors('cadence.holder_account_id'), '{authenticated}', 'holder_account_id: only account holders may execute it');

-- cadence.holder_license_keys
select has_function('cadence', 'holder_license_keys', 'holder_license_keys exists');
select pg_temp.sign_in('e9100000-0000-4000-8000-000000000001');
select is(pg_temp.sorted(cadence.holder_license_keys()), '{HOLD-0000-0000-0001,HOLD-0000-0000-0002}',
  'holder_license_keys: the keys linked to the account and those unlinked with its e-mail, not a key linked elsewhere that stores it');
select pg_temp.sign_in(null);
select is(cadence.holder_license_keys(), '{}', 'holder_license_keys: none for nobody signed in');
select is(pg_temp.executors('cadence.holder_license_keys'), '{authenticated}', 'holder_license_keys: only account holders may execute it');

-- cadence.holder_owns_key
select has_function('cadence', 'holder_owns_key', array['text'], 'holder_owns_key exists');
select pg_temp.sign_in('e9100000-0000-4000-8000-000000000001');
select ok(cadence.holder_owns_key('HOLD-0000-0000-0002'), 'holder_owns_key: a key paired with the holder''s account by its stored e-mail is theirs');
select ok(not cadence.holder_owns_key('HOLD-0000-0000-0003'), 'holder_owns_key: another account''s key is not theirs');
select pg_temp.sign_in(null);
select ok(not cadence.holder_owns_key('HOLD-0000-0000-0001'), 'holder_owns_key: nobody signed in owns no key');
select is(pg_temp.executors('cadence.holder_owns_key'), '{authenticated}', 'holder_owns_key: only account holders may execute it');

-- cadence.holder_schedule_ids
select has_function('cadence', 'holder_schedule_ids', 'holder_schedule_ids exists');
select pg_temp.sign_in('e9100000-0000-4000-8000-000000000001');
select is(pg_temp.sorted(cadence.holder_schedule_ids()), '{e9200000-0000-4000-8000-000000000001,e9200000-0000-4000-8000-000000000002}',
  'holder_schedule_ids: the account''s schedule and its keys'' own, not another account''s');
select pg_temp.sign_in(null);
select is(cadence.holder_schedule_ids(), '{}', 'holder_schedule_ids: none for nobody signed in');
select is(pg_temp.executors('cadence.holder_schedule_ids'), '{authenticated}', 'holder_schedule_ids: only account holders may execute it');

-- cadence.holder_block_ids
select has_function('cadence', 'holder_block_ids', 'holder_block_ids exists');
select pg_temp.sign_in('e9100000-0000-4000-8000-000000000001');
select is(pg_temp.sorted(cadence.holder_block_ids()), '{e9300000-0000-4000-8000-000000000001,e9300000-0000-4000-8000-000000000002}',
  'holder_block_ids: the blocks of the holder''s schedules only');
select pg_temp.sign_in(null);
select is(cadence.holder_block_ids(), '{}', 'holder_block_ids: none for nobody signed in');
select is(pg_temp.executors('cadence.holder_block_ids'), '{authenticated}', 'holder_block_ids: only account holders may execute it');

-- cadence.holder_proclamation_ids
select has_function('cadence', 'holder_proclamation_ids', 'holder_proclamation_ids exists');
select pg_temp.sign_in('e9100000-0000-4000-8000-000000000001');
select is(cadence.holder_proclamation_ids(), '{b0000000-0000-4000-8000-000000000001}',
  'holder_proclamation_ids: the proclamations the account is entitled to and that are served (not the 936 Hz one), not another account''s');
select pg_temp.sign_in(null);
select is(cadence.holder_proclamation_ids(), '{}', 'holder_proclamation_ids: none for nobody signed in');
select is(pg_temp.executors('cadence.holder_proclamation_ids'), '{authenticated}', 'holder_proclamation_ids: only account holders may execute it');

select * from finish();
rollback;
