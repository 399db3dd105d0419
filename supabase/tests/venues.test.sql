-- Venue addresses: what a registration may hold, who may make it, its history, and the allowances
-- the API reads. pgTAP; run with pg_prove or `supabase test db` (test/README.md).
begin;
set local client_min_messages = warning;
create extension if not exists pgtap with schema extensions;
set local search_path = extensions, public;
select plan(19);

-- The API roles that may execute a function: its grants are part of its design.
create function pg_temp.executors(p_function regproc) returns text[] language sql as $$
  select array(select r from unnest(array['anon', 'authenticated', 'service_role']) as r
                where pg_catalog.has_function_privilege(r, p_function, 'execute') order by r)
$$;

-- A statement run as a signed-in account holder through the Data API (role authenticated, with the
-- Auth user's claims): 'ok', or the error's SQLSTATE and message.
create function pg_temp.as_holder(p_user uuid, p_sql text) returns text language plpgsql as $$
begin
  perform pg_catalog.set_config('request.jwt.claims', pg_catalog.json_build_object('sub', p_user, 'role', 'authenticated')::text, true);
  set local role authenticated;
  execute p_sql;
  reset role;
  perform pg_catalog.set_config('request.jwt.claims', '', true);
  return 'ok';
exception when others then
  -- The block's end undoes the role and the claims with the statement.
  return sqlstate || ': ' || sqlerrm;
end
$$;

-- Account A (an account holder's) has three active keys and an inactive one; one key called from
-- 203.0.113.7 an hour ago. Account B has one active key.
insert into public.accounts (id, email, display_name, auth_user_id) values
  ('e5000000-0000-4000-8000-00000000000a', 'venue-a@example.com', 'Venue A', 'e5100000-0000-4000-8000-00000000000a'),
  ('e5000000-0000-4000-8000-00000000000b', 'venue-b@example.com', 'Venue B', null);
insert into public.license_keys (key, account_id, email, active) values
  ('VENU-0000-0000-0001', 'e5000000-0000-4000-8000-00000000000a', 'venue-a@example.com', true),
  ('VENU-0000-0000-0002', 'e5000000-0000-4000-8000-00000000000a', 'venue-a@example.com', true),
  ('VENU-0000-0000-0003', null, 'venue-a@example.com', true),
  ('VENU-0000-0000-0004', 'e5000000-0000-4000-8000-00000000000a', 'venue-a@example.com', false),
  ('VENU-0000-0000-0005', 'e5000000-0000-4000-8000-00000000000b', 'venue-b@example.com', true);
insert into public.kiosk_sightings (license_key, last_seen_at, last_seen_ip)
  values ('VENU-0000-0000-0001', now() - interval '1 hour', '203.0.113.7');
insert into public.venue_addresses (id, account_id, network, kiosks) values
  ('e5200000-0000-4000-8000-000000000001', 'e5000000-0000-4000-8000-00000000000a', '192.0.2.0/24', 2),
  ('e5200000-0000-4000-8000-000000000002', 'e5000000-0000-4000-8000-00000000000b', '192.0.2.0/24', 1);

-- cadence.check_venue_address (trigger venue_address_rules)
select has_function('cadence', 'check_venue_address', 'check_venue_address exists');
select results_eq($$select created_by, created_at, updated_by from public.venue_addresses where id = 'e5200000-0000-4000-8000-000000000001'$$,
  $$values ('role ' || session_user::text collate "default", now(), 'role ' || session_user::text collate "default")$$, 'check_venue_address: dates a registration and names who made it');
select throws_ok($$insert into public.venue_addresses (account_id, network, kiosks) values ('e5000000-0000-4000-8000-00000000000a', '192.0.2.9/32', 1)$$,
  '23P01', 'venue address 192.0.2.9/32 overlaps 192.0.2.0/24, already registered to this account: change that registration''s kiosks instead',
  'check_venue_address: an address overlapping another of the same account is refused');
select throws_ok($$update public.venue_addresses set kiosks = 4 where id = 'e5200000-0000-4000-8000-000000000001'$$,
  '23514', 'venue addresses of this account would hold 4 kiosks, but it has 3 active license keys: nobody gains a larger allowance than the kiosks they run',
  'check_venue_address: an account''s registrations hold no more kiosks than its active keys (inactive keys do not count)');
select is(pg_temp.as_holder('e5100000-0000-4000-8000-00000000000a',
    $$insert into public.venue_addresses (account_id, network, kiosks) values ('e5000000-0000-4000-8000-00000000000a', '203.0.113.0/24', 1)$$),
  '23514: venue address 203.0.113.0/24: an account holder registers one address (an IPv4 /32 or an IPv6 /64), the one its kiosks call from; ask staff for a range',
  'check_venue_address: an account holder may not register a range');
select is(pg_temp.as_holder('e5100000-0000-4000-8000-00000000000a',
    $$insert into public.venue_addresses (account_id, network, kiosks) values ('e5000000-0000-4000-8000-00000000000a', '198.51.100.9/32', 1)$$),
  '23514: venue address 198.51.100.9/32: no kiosk of this account has called from it in the last 24 hours; register the address your kiosks call from (public.kiosk_status.last_seen_ip)',
  'check_venue_address: an account holder may not register an address none of its kiosks called from in the last day');
select is(pg_temp.as_holder('e5100000-0000-4000-8000-00000000000a',
    $$insert into public.venue_addresses (account_id, network, kiosks) values ('e5000000-0000-4000-8000-00000000000a', '203.0.113.7/32', 1)$$),
  'ok', 'check_venue_address: an account holder registers the one address a kiosk of the account called from');
select is((select created_by from public.venue_addresses where network = '203.0.113.7/32'),
  'account holder e5100000-0000-4000-8000-00000000000a', 'check_venue_address: a holder''s registration is attributed to the holder');
select is(pg_temp.executors('cadence.check_venue_address'), '{}', 'check_venue_address: a trigger function no API role may execute');

-- cadence.check_venue_address_account (trigger venue_address_is_the_callers)
select has_function('cadence', 'check_venue_address_account', 'check_venue_address_account exists');
select is(pg_temp.as_holder('e5100000-0000-4000-8000-00000000000a',
    $$insert into public.venue_addresses (account_id, network, kiosks) values ('e5000000-0000-4000-8000-00000000000b', '203.0.113.7/32', 5)$$),
  '42501: new row violates row-level security policy for table "venue_addresses"',
  'check_venue_address_account: a holder''s row for another account is refused with row-level security''s own error, before any rule about that account');
select is(pg_temp.executors('cadence.check_venue_address_account'), '{}', 'check_venue_address_account: a trigger function no API role may execute');

-- cadence.record_venue_address_change (trigger venue_address_changes)
select has_function('cadence', 'record_venue_address_change', 'record_venue_address_change exists');
update public.venue_addresses set kiosks = 1 where id = 'e5200000-0000-4000-8000-000000000001';
delete from public.venue_addresses where id = 'e5200000-0000-4000-8000-000000000001';
select results_eq(
  $$select change, network, kiosks, changed_by from public.venue_address_changes where venue_address_id = 'e5200000-0000-4000-8000-000000000001' order by id$$,
  $$values ('insert', '192.0.2.0/24'::cidr, 2, 'role ' || session_user::text collate "default"), ('update', '192.0.2.0/24', 1, 'role ' || session_user::text collate "default"), ('delete', '192.0.2.0/24', 1, 'role ' || session_user::text collate "default")$$,
  'record_venue_address_change: every insert, update and delete is recorded with what the row held and who changed it');
select is(pg_temp.executors('cadence.record_venue_address_change'), '{}', 'record_venue_address_change: a trigger function no API role may execute');

-- cadence.venue_allowances
select has_function('cadence', 'venue_allowances', array['integer'], 'venue_allowances exists');
insert into public.venue_addresses (account_id, network, kiosks) values ('e5000000-0000-4000-8000-00000000000a', '192.0.2.0/24', 2);
select results_eq($$select network, kiosks from cadence.venue_allowances(1)$$, $$values ('192.0.2.0/24', 3)$$,
  'venue_allowances: a network''s registrations of every account added up, largest first, at most p_most');
select results_eq($$select network, kiosks from cadence.venue_allowances(10) where network = '203.0.113.7/32'$$, $$values ('203.0.113.7/32', 1)$$,
  'venue_allowances: each registered network has a row of its own');
select is(pg_temp.executors('cadence.venue_allowances'), '{service_role}', 'venue_allowances: only service_role may execute it');

select * from finish();
rollback;
