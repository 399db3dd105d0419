-- Offline alerts: which kiosks went dark or came back, never during Cadence's own outage, and the
-- one e-mail that announces them. pgTAP; run with pg_prove or `supabase test db` (test/README.md).
begin;
set local client_min_messages = warning;
create extension if not exists pgtap with schema extensions;
set local search_path = extensions, public;
select plan(22);

-- The API roles that may execute a function: its grants are part of its design.
create function pg_temp.executors(p_function regproc) returns text[] language sql as $$
  select array(select r from unnest(array['anon', 'authenticated', 'service_role']) as r
                where pg_catalog.has_function_privilege(r, p_function, 'execute') order by r)
$$;

-- Account A plays 06:00-09:00 UTC daily. Its key 1 was last seen at 06:30, its muted key 2 too,
-- its key 3 keeps calling (Cadence is not blind). Account B plays nothing; its key 4 was last seen
-- at 06:30. Passes here are an hour apart at most, so no gap restarts the watch between them.
insert into public.accounts (id, email, display_name, offline_alert_after) values
  ('ec000000-0000-4000-8000-00000000000a', 'alerts-a@example.com', 'Alerts A', '15 minutes'),
  ('ec000000-0000-4000-8000-00000000000b', 'alerts-b@example.com', 'Alerts B', '30 minutes');
insert into public.license_keys (key, account_id, email, alerts_muted, system_name) values
  ('ALRT-0000-0000-0001', 'ec000000-0000-4000-8000-00000000000a', 'alerts-a@example.com', false, 'Lobby'),
  ('ALRT-0000-0000-0002', 'ec000000-0000-4000-8000-00000000000a', 'alerts-a@example.com', true, null),
  ('ALRT-0000-0000-0003', 'ec000000-0000-4000-8000-00000000000a', 'alerts-a@example.com', false, null),
  ('ALRT-0000-0000-0004', 'ec000000-0000-4000-8000-00000000000b', 'alerts-b@example.com', false, null),
  ('ALRT-0000-0000-0005', null, 'nobody@example.com', false, null);
insert into public.schedules (id, account_id, type) values ('ec100000-0000-4000-8000-000000000001', 'ec000000-0000-4000-8000-00000000000a', 'daily');
insert into public.schedule_blocks (id, schedule_id, start_time, end_time) values
  ('ec200000-0000-4000-8000-000000000001', 'ec100000-0000-4000-8000-000000000001', '06:00', '09:00');
insert into public.kiosk_sightings (license_key, last_seen_at) values
  ('ALRT-0000-0000-0001', '2026-03-02 06:30+00'), ('ALRT-0000-0000-0002', '2026-03-02 06:30+00'),
  ('ALRT-0000-0000-0003', '2026-03-02 06:59:30+00'), ('ALRT-0000-0000-0004', '2026-03-02 06:30+00');
update public.kiosk_watch set gap_after = '1 hour', last_pass_at = null, watching_since = null, blind_since = null;

-- cadence.license_key_offline_after
select has_function('cadence', 'license_key_offline_after', array['text'], 'license_key_offline_after exists');
select is(cadence.license_key_offline_after('ALRT-0000-0000-0004'), interval '30 minutes', 'license_key_offline_after: the key''s account''s setting');
select is(cadence.license_key_offline_after('ALRT-0000-0000-0005'), interval '15 minutes', 'license_key_offline_after: 15 minutes for a key of no account');
select is(pg_temp.executors('cadence.license_key_offline_after'), '{authenticated,service_role}',
  'license_key_offline_after: account holders (for public.kiosk_status) and service_role may execute it, anon may not');

-- cadence.kiosk_alert_pass
select has_function('cadence', 'kiosk_alert_pass', array['timestamp with time zone'], 'kiosk_alert_pass exists');
select results_eq($$select * from cadence.kiosk_alert_pass('2026-03-02 07:00+00')$$, $$values (false, false, true, 0, 0)$$,
  'kiosk_alert_pass: the first pass starts the watch, and nobody went dark before it began');
update public.kiosk_sightings set last_seen_at = '2026-03-02 07:19:30+00' where license_key = 'ALRT-0000-0000-0003';
select results_eq($$select * from cadence.kiosk_alert_pass('2026-03-02 07:20+00')$$, $$values (false, false, false, 1, 0)$$,
  'kiosk_alert_pass: a kiosk that should be playing and is unseen past its account''s setting went dark');
select results_eq($$select license_key, dark_since, last_seen_at, block_id from public.kiosk_outages where account_id in ('ec000000-0000-4000-8000-00000000000a', 'ec000000-0000-4000-8000-00000000000b')$$,
  $$values ('ALRT-0000-0000-0001', '2026-03-02 07:00+00'::timestamptz, '2026-03-02 06:30+00'::timestamptz, 'ec200000-0000-4000-8000-000000000001'::uuid)$$,
  'kiosk_alert_pass: records the outage from when the watch began, never for a muted kiosk or one with nothing to play');
update public.kiosk_sightings set last_seen_at = '2026-03-02 07:25+00' where license_key in ('ALRT-0000-0000-0001', 'ALRT-0000-0000-0003');

-- cadence.unannounced_kiosk_alerts
select has_function('cadence', 'unannounced_kiosk_alerts', 'unannounced_kiosk_alerts exists');
select results_eq($$select recipient, (changes -> 0) - 'outageId' from cadence.unannounced_kiosk_alerts() where account_id = 'ec000000-0000-4000-8000-00000000000a'$$,
  $$values ('alerts-a@example.com', '{"kind": "dark", "licenseKey": "ALRT-0000-0000-0001", "systemName": "Lobby", "timeZone": "UTC", "lastSeenLocal": "2026-03-02 06:30",
                                      "backLocal": null, "block": {"weekday": null, "startTime": "06:00", "endTime": "09:00"}}'::jsonb)$$,
  'unannounced_kiosk_alerts: per account, each outage no e-mail announced yet, as the e-mail tells it');
select is(pg_temp.executors('cadence.unannounced_kiosk_alerts'), '{service_role}', 'unannounced_kiosk_alerts: only service_role may execute it');

-- cadence.queue_kiosk_alert_email
create temporary table outage on commit drop as select id from public.kiosk_outages where license_key = 'ALRT-0000-0000-0001';
select has_function('cadence', 'queue_kiosk_alert_email', array['uuid[]', 'uuid[]', 'text', 'text', 'text', 'text', 'timestamp with time zone'], 'queue_kiosk_alert_email exists');
create temporary table alert on commit drop as
  select cadence.queue_kiosk_alert_email(array(select id from outage), '{}', 'alerts-a@example.com', 'A kiosk went dark', 'text', '<p>html</p>', '2026-03-02 07:21+00') as id;
select is((select alert_email_id from public.kiosk_outages where id = (select id from outage)), (select id from alert),
  'queue_kiosk_alert_email: queues one e-mail and records it on the outages it announces');
select is_empty($$select from cadence.unannounced_kiosk_alerts() where account_id = 'ec000000-0000-4000-8000-00000000000a'$$,
  'queue_kiosk_alert_email: an announced outage is announced no more');
select is(cadence.queue_kiosk_alert_email(array(select id from outage), '{}', 'alerts-a@example.com', 'A kiosk went dark', 'text', '<p>html</p>', '2026-03-02 07:21:05+00'), null,
  'queue_kiosk_alert_email: an outage another worker announced meanwhile queues nothing');
select is(cadence.queue_kiosk_alert_email('{}', array(select id from outage), 'alerts-a@example.com', 'A kiosk is back', 'text', '<p>html</p>', '2026-03-02 07:21:05+00'), null,
  'queue_kiosk_alert_email: a kiosk not back yet cannot be announced back');

select results_eq($$select * from cadence.kiosk_alert_pass('2026-03-02 07:26+00')$$, $$values (false, false, false, 0, 1)$$,
  'kiosk_alert_pass: a kiosk seen after it went dark came back');
select results_eq($$select back_at, recovered_at from public.kiosk_outages where id = (select id from outage)$$,
  $$values ('2026-03-02 07:25+00'::timestamptz, '2026-03-02 07:26+00'::timestamptz)$$,
  'kiosk_alert_pass: records when it was seen again and when the pass saw it');
select isnt(cadence.queue_kiosk_alert_email('{}', array(select id from outage), 'alerts-a@example.com', 'A kiosk is back', 'text', '<p>html</p>', '2026-03-02 07:27+00'), null,
  'queue_kiosk_alert_email: a recovery is announced once it is recorded');
select results_eq($$select * from cadence.kiosk_alert_pass('2026-03-02 07:40+00')$$, $$values (true, true, true, 0, 0)$$,
  'kiosk_alert_pass: with no kiosk seen for a while Cadence is blind: it records nobody dark, and the watch starts again');
select is(pg_temp.executors('cadence.kiosk_alert_pass'), '{service_role}', 'kiosk_alert_pass: only service_role may execute it');
select is(pg_temp.executors('cadence.queue_kiosk_alert_email'), '{service_role}', 'queue_kiosk_alert_email: only service_role may execute it');

select * from finish();
rollback;
