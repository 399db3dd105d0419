-- Time zones: a kiosk's zone is an IANA name, and which zone a key's kiosk lives in. pgTAP; run
-- with pg_prove or `supabase test db` (test/README.md).
begin;
set local client_min_messages = warning;
create extension if not exists pgtap with schema extensions;
set local search_path = extensions, public;
select plan(18);

-- The API roles that may execute a function: its grants are part of its design.
create function pg_temp.executors(p_function regproc) returns text[] language sql as $$
  select array(select r from unnest(array['anon', 'authenticated', 'service_role']) as r
                where pg_catalog.has_function_privilege(r, p_function, 'execute') order by r)
$$;

insert into public.accounts (id, email, display_name, time_zone) values
  ('ea000000-0000-4000-8000-000000000001', 'zones@example.com', 'Zones', 'America/New_York');
insert into public.license_keys (key, account_id, email, time_zone) values
  ('ZONE-0000-0000-0001', 'ea000000-0000-4000-8000-000000000001', 'zones@example.com', 'Asia/Tokyo'),
  ('ZONE-0000-0000-0002', null, 'zones@example.com', null),
  ('ZONE-0000-0000-0003', null, 'nobody@example.com', null),
  ('ZONE-0000-0000-0004', null, 'nobody@example.com', null);

-- cadence.iana_time_zones
select has_function('cadence', 'iana_time_zones', 'iana_time_zones exists');
select ok((select array['Europe/Berlin', 'US/Eastern', 'UTC'] <@ array_agg(z) from cadence.iana_time_zones() as z),
  'iana_time_zones: canonical names and backward links');
select is_empty($$select from cadence.iana_time_zones() as z where z like 'posix/%' or z like 'right/%' or z in ('localtime', 'posixrules', 'Factory')$$,
  'iana_time_zones: never posix/..., right/..., localtime, posixrules or Factory');
select is(pg_temp.executors('cadence.iana_time_zones'), '{authenticated,service_role}',
  'iana_time_zones: account holders (to pick a zone) and service_role may execute it, anon may not');

-- cadence.check_time_zone (triggers time_zone_is_known on public.accounts and public.license_keys)
select has_function('cadence', 'check_time_zone', 'check_time_zone exists');
select throws_ok($$update public.license_keys set time_zone = 'Mars/Olympus_Mons' where key = 'ZONE-0000-0000-0002'$$,
  '23514', 'unknown time zone ''Mars/Olympus_Mons'': use an IANA name such as Europe/Berlin (pg_timezone_names lists them; not posix/..., right/..., localtime, posixrules or Factory)',
  'check_time_zone: a key''s zone that is no IANA name is refused, naming it');
select throws_ok($$update public.accounts set time_zone = 'posix/Europe/Berlin' where id = 'ea000000-0000-4000-8000-000000000001'$$,
  '23514', null, 'check_time_zone: an account''s zone from posix/ is refused');
select throws_ok($$update public.accounts set time_zone = 'localtime' where id = 'ea000000-0000-4000-8000-000000000001'$$,
  '23514', null, 'check_time_zone: the server''s localtime is refused');
select lives_ok($$update public.license_keys set time_zone = 'US/Eastern' where key = 'ZONE-0000-0000-0003'$$,
  'check_time_zone: a backward link is accepted');
select throws_ok($$update public.license_keys set time_zone = 'Asia/Tokyo||US/Eastern' where key = 'ZONE-0000-0000-0003'$$,
  '23514', null, 'check_time_zone: two zones this transaction checked, joined by ||, are refused');
select lives_ok($$update public.license_keys set time_zone = 'UTC' where key = 'ZONE-0000-0000-0003'$$,
  'check_time_zone: UTC is accepted');
select is(pg_temp.executors('cadence.check_time_zone'), '{}', 'check_time_zone: a trigger function no API role may execute');

-- cadence.license_key_time_zone
select has_function('cadence', 'license_key_time_zone', array['text'], 'license_key_time_zone exists');
select is(cadence.license_key_time_zone('ZONE-0000-0000-0001'), 'Asia/Tokyo', 'license_key_time_zone: a key''s own zone first');
select is(cadence.license_key_time_zone('ZONE-0000-0000-0002'), 'America/New_York',
  'license_key_time_zone: else its account''s, for a key paired by its stored e-mail too');
select is(cadence.license_key_time_zone('ZONE-0000-0000-0004'), 'UTC', 'license_key_time_zone: else UTC');
select is(pg_temp.executors('cadence.license_key_time_zone'), '{authenticated,service_role}',
  'license_key_time_zone: account holders (for public.kiosk_status) and service_role may execute it, anon may not');

-- An account holder sets their account's zone through the Data API, on a connection where the
-- trigger has no plan yet (discard plans): it looks its zone list up as its owner, not the holder.
insert into public.accounts (id, email, display_name, auth_user_id) values
  ('e7000000-0000-4000-8000-000000000001', 'zone-holder@example.com', 'Zone holder', 'e7100000-0000-4000-8000-000000000001');
-- pgTAP's functions are in extensions, which the API roles may use on Supabase.
grant usage on schema extensions to authenticated;
discard plans;
select pg_catalog.set_config('request.jwt.claims', '{"sub": "e7100000-0000-4000-8000-000000000001"}', true);
set local role authenticated;
select results_eq($$update public.accounts set time_zone = 'America/Halifax' returning time_zone$$, $$values ('America/Halifax'::text)$$,
  'check_time_zone: an account holder sets their own account''s zone, the check reading the zones as its owner');
reset role;

select * from finish();
rollback;
