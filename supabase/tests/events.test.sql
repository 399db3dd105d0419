-- Events: each change to an account or a key recorded by the triggers of 14_events.sql, numbered
-- per stream. pgTAP; run with pg_prove or `supabase test db` (test/README.md). The whole behaviour,
-- writer by writer, is in test/events/events.test.ts.
begin;
set local client_min_messages = warning;
create extension if not exists pgtap with schema extensions;
set local search_path = extensions, public;
select plan(27);

-- The API roles that may execute a function: none of these, which only triggers call.
create function pg_temp.executors(p_function regproc) returns text[] language sql as $$
  select array(select r from unnest(array['anon', 'authenticated', 'service_role']) as r
                where pg_catalog.has_function_privilege(r, p_function, 'execute') order by r)
$$;

insert into public.accounts (id, email, display_name) values
  ('e9000000-0000-4000-8000-000000000001', 'events-a@example.com', 'A'),
  ('e9000000-0000-4000-8000-000000000002', 'events-b@example.com', 'B');
insert into public.license_keys (key, account_id, email) values ('EVTS-0000-0000-0001', 'e9000000-0000-4000-8000-000000000001', 'events-a@example.com');

-- Data and types, pure functions of the rows.
select has_function('cadence', 'key_event_data', array['license_keys'], 'key_event_data exists');
select is((select cadence.key_event_data(k) ->> 'account_id' from public.license_keys as k where k.key = 'EVTS-0000-0000-0001'),
  'e9000000-0000-4000-8000-000000000001', 'key_event_data: the account a key belongs to');
select has_function('cadence', 'account_event_data', array['accounts'], 'account_event_data exists');
select is((select cadence.account_event_data(a) ->> 'offline_alert_after_seconds' from public.accounts as a where a.id = 'e9000000-0000-4000-8000-000000000001'),
  '900', 'account_event_data: the alert threshold in seconds');
select has_function('cadence', 'key_event_types', array['license_keys', 'license_keys'], 'key_event_types exists');
select is((select cadence.key_event_types(k, (k.key, k.account_id, k.email, false, now(), 'Hall', k.created_at, k.time_zone, k.alerts_muted, gen_random_uuid(), k.system_name_kept, k.system_name_key, k.system_name_capitals_key, k.events_sequence)::public.license_keys)
             from public.license_keys as k where k.key = 'EVTS-0000-0000-0001'),
  array['license_key.moved', 'license_key.suspended', 'license_key.system_name_changed', 'license_key.first_validated'],
  'key_event_types: every change of one write, in order');

-- The triggers, through the writes that fire them.
select has_function('cadence', 'record_new_accounts', 'record_new_accounts exists');
select has_function('cadence', 'number_new_key', 'number_new_key exists');
select has_function('cadence', 'record_new_keys', 'record_new_keys exists');
select results_eq($$select type, sequence from public.events where account_id = 'e9000000-0000-4000-8000-000000000001' order by position$$,
  $$values ('account.created', 1::bigint), ('license_key.created', 1::bigint)$$,
  'record_new_accounts, record_new_keys: an account and a key created are each number 1 of their stream');

select has_function('cadence', 'record_key_changes', 'record_key_changes exists');
update public.license_keys set last_validated_at = now() where key = 'EVTS-0000-0000-0001';
update public.license_keys set last_validated_at = now() + interval '1 minute' where key = 'EVTS-0000-0000-0001';
update public.license_keys set account_id = 'e9000000-0000-4000-8000-000000000002', email = 'events-b@example.com' where key = 'EVTS-0000-0000-0001';
select results_eq($$select type, sequence, previous_account_id from public.events where license_key = 'EVTS-0000-0000-0001' order by sequence$$,
  $$values ('license_key.created', 1::bigint, null::uuid), ('license_key.first_validated', 2, null), ('license_key.moved', 3, 'e9000000-0000-4000-8000-000000000001'::uuid)$$,
  'record_key_changes: the first validation and a move are events, a later validation is not');
select is((select events_sequence from public.license_keys where key = 'EVTS-0000-0000-0001'), 3::bigint,
  'record_key_changes: the key''s counter holds its last number');

select has_function('cadence', 'record_updated_keys', 'record_updated_keys exists');
insert into public.license_keys (key, account_id, email) values
  ('EVTS-0000-0000-0002', 'e9000000-0000-4000-8000-000000000002', 'events-b@example.com'),
  ('EVTS-0000-0000-0003', 'e9000000-0000-4000-8000-000000000002', 'events-b@example.com');
update public.license_keys set system_name = key where key in ('EVTS-0000-0000-0002', 'EVTS-0000-0000-0003');
select results_eq($$select license_key, type, sequence from public.events where license_key in ('EVTS-0000-0000-0002', 'EVTS-0000-0000-0003') order by position$$,
  $$values ('EVTS-0000-0000-0002', 'license_key.created', 1::bigint), ('EVTS-0000-0000-0003', 'license_key.created', 1::bigint),
           ('EVTS-0000-0000-0002', 'license_key.system_name_changed', 2::bigint), ('EVTS-0000-0000-0003', 'license_key.system_name_changed', 2::bigint)$$,
  'record_updated_keys: one statement naming two keys records each key''s event once, after the statement, in key order');
update public.license_keys set key = case key when 'EVTS-0000-0000-0002' then 'EVTS-0000-0000-0005' else key end, active = false
 where key in ('EVTS-0000-0000-0002', 'EVTS-0000-0000-0003');
select results_eq($$select license_key, type, sequence from public.events where license_key in ('EVTS-0000-0000-0003', 'EVTS-0000-0000-0005') and sequence > 2 order by license_key, sequence$$,
  $$values ('EVTS-0000-0000-0003', 'license_key.suspended', 3::bigint), ('EVTS-0000-0000-0005', 'license_key.suspended', 3::bigint),
           ('EVTS-0000-0000-0005', 'license_key.updated', 4::bigint)$$,
  'record_updated_keys: a key renamed beside another''s change has its events once, written by record_key_changes');

select has_function('cadence', 'record_account_changes', 'record_account_changes exists');
update public.accounts set auth_link_attempts = 1, auth_link_error = 'down' where id = 'e9000000-0000-4000-8000-000000000001';
update public.accounts set email = 'events-a2@example.com' where id = 'e9000000-0000-4000-8000-000000000001';
select results_eq($$select type, sequence, data ->> 'previous_email' from public.events where account_id = 'e9000000-0000-4000-8000-000000000001' and license_key is null order by sequence$$,
  $$values ('account.created', 1::bigint, null::text), ('account.email_changed', 2, 'events-a@example.com')$$,
  'record_account_changes: an e-mail change is an event, the Auth link''s bookkeeping is not');

select has_function('cadence', 'record_key_facts', array['text', 'text[]', 'jsonb[]'], 'record_key_facts exists');
select has_function('cadence', 'record_outage_events', 'record_outage_events exists');
insert into public.kiosk_outages (license_key, account_id, dark_since, last_seen_at, alerted_at)
values ('EVTS-0000-0000-0001', 'e9000000-0000-4000-8000-000000000002', now(), now(), now());
select results_eq($$select type, sequence from public.events where license_key = 'EVTS-0000-0000-0001' and type like 'kiosk.%'$$,
  $$values ('kiosk.offline', 4::bigint)$$, 'record_outage_events: an outage recorded is kiosk.offline, numbered on the key');

select has_function('cadence', 'record_suspicion_events', 'record_suspicion_events exists');
insert into public.seat_suspicions (license_key, rules, first_flagged_at, last_flagged_at) values ('EVTS-0000-0000-0001', array['uneven_polls'], now(), now());
select is((select count(*) from public.events where license_key = 'EVTS-0000-0000-0001' and type = 'license_key.copy_suspected'), 1::bigint,
  'record_suspicion_events: a first flag is license_key.copy_suspected');

select has_function('cadence', 'record_deleted_keys', 'record_deleted_keys exists');
select has_function('cadence', 'record_deleted_accounts', 'record_deleted_accounts exists');
delete from public.license_keys where key = 'EVTS-0000-0000-0001';
delete from public.accounts where id = 'e9000000-0000-4000-8000-000000000001';
select results_eq($$select type from public.events where license_key = 'EVTS-0000-0000-0001' and type like '%deleted' union all
                   select type from public.events where account_id = 'e9000000-0000-4000-8000-000000000001' and type like '%deleted'$$,
  $$values ('license_key.deleted'), ('account.deleted')$$, 'record_deleted_keys, record_deleted_accounts: deletes are events');

select is(pg_temp.executors('cadence.record_key_facts'), '{}', 'record_key_facts: no API role may execute it');

select * from finish();
rollback;
