-- Schedules: the payload a key reads (assembled once per schedule, stored on every edit), its
-- version, what plays at an instant, and the triggers that keep every edit valid. pgTAP; run with
-- pg_prove or `supabase test db` (test/README.md).
begin;
set local client_min_messages = warning;
create extension if not exists pgtap with schema extensions;
set local search_path = extensions, public;
select plan(86);

-- The API roles that may execute a function: its grants are part of its design.
create function pg_temp.executors(p_function regproc) returns text[] language sql as $$
  select array(select r from unnest(array['anon', 'authenticated', 'service_role']) as r
                where pg_catalog.has_function_privilege(r, p_function, 'execute') order by r)
$$;

-- Account A has a daily schedule, read by its linked key 1 and by key 3 (unlinked, its e-mail);
-- key 2 of A has its own weekly one; key 4 of account B has none (key 5 gets one below).
insert into public.accounts (id, email, display_name) values
  ('e4000000-0000-4000-8000-00000000000a', 'sched-a@example.com', 'Sched A'),
  ('e4000000-0000-4000-8000-00000000000b', 'sched-b@example.com', 'Sched B');
insert into public.license_keys (key, account_id, email, time_zone) values
  ('SCHD-0000-0000-0001', 'e4000000-0000-4000-8000-00000000000a', 'sched-a@example.com', null),
  ('SCHD-0000-0000-0002', 'e4000000-0000-4000-8000-00000000000a', 'sched-a@example.com', null),
  ('SCHD-0000-0000-0003', null, 'Sched-A@example.com', 'Asia/Tokyo'),
  ('SCHD-0000-0000-0004', 'e4000000-0000-4000-8000-00000000000b', 'sched-b@example.com', null),
  ('SCHD-0000-0000-0005', 'e4000000-0000-4000-8000-00000000000b', 'sched-b@example.com', null);
insert into public.schedules (id, account_id, license_key, type) values
  ('e4000000-0000-4000-8000-000000000001', 'e4000000-0000-4000-8000-00000000000a', null, 'daily'),
  ('e4000000-0000-4000-8000-000000000002', null, 'SCHD-0000-0000-0002', 'weekly');
insert into public.schedule_blocks (id, schedule_id, weekday, start_time, end_time) values
  ('e4100000-0000-4000-8000-000000000001', 'e4000000-0000-4000-8000-000000000001', null, '22:00', '06:00'),
  ('e4100000-0000-4000-8000-000000000002', 'e4000000-0000-4000-8000-000000000001', null, '06:00', '09:00'),
  ('e4100000-0000-4000-8000-000000000003', 'e4000000-0000-4000-8000-000000000002', 'monday', '08:00', '10:00');
insert into public.schedule_block_proclamations (block_id, position, proclamation_id) values
  ('e4100000-0000-4000-8000-000000000002', 2, 'b0000000-0000-4000-8000-000000000001'),
  ('e4100000-0000-4000-8000-000000000002', 1, 'b0000000-0000-4000-8000-000000000002');

-- cadence.canonical_json
select has_function('cadence', 'canonical_json', array['jsonb'], 'canonical_json exists');
select is(cadence.canonical_json('{"b": 1, "a": {"d": [true, null, "x"], "c": 2}}'), '{"a":{"c":2,"d":[true,null,"x"]},"b":1}',
  'canonical_json: every object''s keys sorted, arrays in order, no whitespace');
select is(cadence.canonical_json('{"a": 1, "B": 2}'), '{"B":2,"a":1}', 'canonical_json: keys compare byte-wise, as JavaScript sorts ASCII keys');
select is(cadence.canonical_json('{}'), '{}', 'canonical_json: an empty object is {}');
select is(pg_temp.executors('cadence.canonical_json'), '{service_role}', 'canonical_json: only service_role may execute it');

-- cadence.unscheduled_payload
select has_function('cadence', 'unscheduled_payload', 'unscheduled_payload exists');
select is(cadence.unscheduled_payload()::jsonb, '{"type": null, "daily": [], "weekly": {}, "blocks": []}'::jsonb,
  'unscheduled_payload: type null, no blocks, weekly {}');
select is(pg_temp.executors('cadence.unscheduled_payload'), '{service_role}', 'unscheduled_payload: only service_role may execute it');

-- cadence.schedule_content
select has_function('cadence', 'schedule_content', array['uuid'], 'schedule_content exists');
select results_eq(
  $$select b ->> 'id' from json_array_elements(cadence.schedule_content('e4000000-0000-4000-8000-000000000001') -> 'daily') as b$$,
  $$values ('e4100000-0000-4000-8000-000000000002'), ('e4100000-0000-4000-8000-000000000001')$$,
  'schedule_content: a daily schedule''s blocks in start order');
select is((select b::jsonb - 'id' - 'proclamationIds' from json_array_elements(cadence.schedule_content('e4000000-0000-4000-8000-000000000001') -> 'daily') as b
            where b ->> 'id' = 'e4100000-0000-4000-8000-000000000001'),
  '{"startTime": "22:00", "startMinutes": 1320, "endTime": "06:00", "endMinutes": 360, "overnight": true, "durationMinutes": 480, "dynamicAudio": false}'::jsonb,
  'schedule_content: a block ending at or before its start runs overnight, its duration across midnight');
select is((select b::jsonb -> 'proclamationIds' from json_array_elements(cadence.schedule_content('e4000000-0000-4000-8000-000000000001') -> 'daily') as b
            where b ->> 'id' = 'e4100000-0000-4000-8000-000000000002'),
  '["b0000000-0000-4000-8000-000000000002", "b0000000-0000-4000-8000-000000000001"]'::jsonb,
  'schedule_content: a block''s proclamations in position order');
select is(cadence.schedule_content('e4000000-0000-4000-8000-000000000001')::jsonb -> 'weekly', '{}'::jsonb,
  'schedule_content: a daily schedule''s weekly is {}');
select is(cadence.schedule_content('e4000000-0000-4000-8000-000000000002')::jsonb - 'weekly',
  '{"type": "weekly", "daily": [], "blocks": []}'::jsonb, 'schedule_content: a weekly schedule has no daily blocks');
select is((select array_agg(d order by d) from jsonb_object_keys(cadence.schedule_content('e4000000-0000-4000-8000-000000000002')::jsonb -> 'weekly') as d),
  '{friday,monday,saturday,sunday,thursday,tuesday,wednesday}', 'schedule_content: a weekly schedule names every weekday');
select is(cadence.schedule_content('e4000000-0000-4000-8000-000000000002')::jsonb #>> '{weekly,monday,0,id}', 'e4100000-0000-4000-8000-000000000003',
  'schedule_content: a weekly block is served under its weekday');
select is(cadence.schedule_content(null)::jsonb, cadence.unscheduled_payload()::jsonb, 'schedule_content: no schedule is the unscheduled payload');
select is(cadence.schedule_content('e4000000-0000-4000-8000-0000000000ff')::text, null, 'schedule_content: an unknown schedule is null');
select is(pg_temp.executors('cadence.schedule_content'), '{service_role}', 'schedule_content: only service_role may execute it');

-- cadence.schedule_version
select has_function('cadence', 'schedule_version', array['json'], 'schedule_version exists');
select matches(cadence.schedule_version(cadence.unscheduled_payload()), '^[0-9a-f]{64}$', 'schedule_version: hex SHA-256');
select is(cadence.schedule_version('{"weekly": {}, "daily": [], "type": null, "blocks": [1]}'), cadence.schedule_version(cadence.unscheduled_payload()),
  'schedule_version: the order of keys, whitespace and the blocks alias do not change it');
select isnt(cadence.schedule_version('{"type": "daily", "daily": [], "weekly": {}}'), cadence.schedule_version(cadence.unscheduled_payload()),
  'schedule_version: other content is another version');
select is(pg_temp.executors('cadence.schedule_version'), '{service_role}', 'schedule_version: only service_role may execute it');

-- cadence.check_block_weekday (trigger block_weekday_matches_schedule_type on public.schedule_blocks)
select has_function('cadence', 'check_block_weekday', 'check_block_weekday exists');
select throws_ok($$insert into public.schedule_blocks (id, schedule_id, weekday, start_time, end_time)
                   values ('e4100000-0000-4000-8000-000000000009', 'e4000000-0000-4000-8000-000000000002', null, '08:00', '09:00')$$,
  '23514', 'block e4100000-0000-4000-8000-000000000009 is in a weekly schedule, so it needs a weekday (monday .. sunday)',
  'check_block_weekday: a weekly schedule''s block without a weekday is refused');
select throws_ok($$update public.schedule_blocks set weekday = 'friday' where id = 'e4100000-0000-4000-8000-000000000002'$$,
  '23514', 'block e4100000-0000-4000-8000-000000000002 is in a daily schedule, so its weekday must be empty (not friday)',
  'check_block_weekday: a daily schedule''s block with a weekday is refused');
select is(pg_temp.executors('cadence.check_block_weekday'), '{}', 'check_block_weekday: a trigger function no API role may execute');

-- cadence.check_schedule_type_change (trigger schedule_type_change_fits_blocks on public.schedules)
select has_function('cadence', 'check_schedule_type_change', 'check_schedule_type_change exists');
select throws_ok($$update public.schedules set type = 'weekly' where id = 'e4000000-0000-4000-8000-000000000001'$$,
  '23514', 'schedule e4000000-0000-4000-8000-000000000001 cannot become weekly: 2 of its blocks have no weekday',
  'check_schedule_type_change: a schedule cannot change type while its blocks fit the old one');
insert into public.schedules (id, license_key, type) values ('e4000000-0000-4000-8000-000000000003', 'SCHD-0000-0000-0005', 'daily');
select lives_ok($$update public.schedules set type = 'weekly' where id = 'e4000000-0000-4000-8000-000000000003'$$,
  'check_schedule_type_change: a schedule without blocks changes type');
select is(pg_temp.executors('cadence.check_schedule_type_change'), '{}', 'check_schedule_type_change: a trigger function no API role may execute');

-- cadence.refresh_after_schedules_change (triggers payloads_refresh_* on public.schedules)
select has_function('cadence', 'refresh_after_schedules_change', 'refresh_after_schedules_change exists');
select is((select payload::jsonb ->> 'type' from public.schedule_payloads where schedule_id = 'e4000000-0000-4000-8000-000000000003'), 'weekly',
  'refresh_after_schedules_change: a created schedule''s payload is stored, and a type change stored again');
select is(pg_temp.executors('cadence.refresh_after_schedules_change'), '{}', 'refresh_after_schedules_change: a trigger function no API role may execute');

-- cadence.refresh_after_blocks_change (triggers payloads_refresh_* on public.schedule_blocks)
select has_function('cadence', 'refresh_after_blocks_change', 'refresh_after_blocks_change exists');
update public.schedule_blocks set end_time = '07:00' where id = 'e4100000-0000-4000-8000-000000000001';
select is((select payload::jsonb from public.schedule_payloads where schedule_id = 'e4000000-0000-4000-8000-000000000001'),
  cadence.schedule_content('e4000000-0000-4000-8000-000000000001')::jsonb,
  'refresh_after_blocks_change: a changed block''s schedule stores its payload again');
select is(pg_temp.executors('cadence.refresh_after_blocks_change'), '{}', 'refresh_after_blocks_change: a trigger function no API role may execute');

-- cadence.refresh_after_block_proclamations_change (triggers payloads_refresh_* on public.schedule_block_proclamations)
select has_function('cadence', 'refresh_after_block_proclamations_change', 'refresh_after_block_proclamations_change exists');
delete from public.schedule_block_proclamations where block_id = 'e4100000-0000-4000-8000-000000000002' and position = 1;
select is((select payload::jsonb #> '{daily,0,proclamationIds}' from public.schedule_payloads where schedule_id = 'e4000000-0000-4000-8000-000000000001'),
  '["b0000000-0000-4000-8000-000000000001"]'::jsonb,
  'refresh_after_block_proclamations_change: a block''s changed proclamations are stored in its schedule''s payload');
select is(pg_temp.executors('cadence.refresh_after_block_proclamations_change'), '{}',
  'refresh_after_block_proclamations_change: a trigger function no API role may execute');

-- cadence.refresh_schedule_payloads
select has_function('cadence', 'refresh_schedule_payloads', array['uuid[]'], 'refresh_schedule_payloads exists');
update public.schedule_payloads set payload = '{}' where schedule_id = 'e4000000-0000-4000-8000-000000000002';
select cadence.refresh_schedule_payloads(array['e4000000-0000-4000-8000-000000000002'::uuid]);
select is((select version from public.schedule_payloads where schedule_id = 'e4000000-0000-4000-8000-000000000002'),
  cadence.schedule_version(cadence.schedule_content('e4000000-0000-4000-8000-000000000002')),
  'refresh_schedule_payloads: stores each given schedule''s current payload, and so its version');
create temporary table stored_before on commit drop as
  select ctid as place from public.schedule_payloads where schedule_id = 'e4000000-0000-4000-8000-000000000002';
select cadence.refresh_schedule_payloads(array['e4000000-0000-4000-8000-000000000002'::uuid]);
select is((select ctid from public.schedule_payloads where schedule_id = 'e4000000-0000-4000-8000-000000000002'), (select place from stored_before),
  'refresh_schedule_payloads: a payload that did not change is not written again');
select is(pg_temp.executors('cadence.refresh_schedule_payloads'), '{service_role}', 'refresh_schedule_payloads: only service_role may execute it');

-- cadence.served_schedules
select has_function('cadence', 'served_schedules', array['text[]'], 'served_schedules exists');
select results_eq(
  $$select n, schedule_id from cadence.served_schedules(array['SCHD-0000-0000-0002', 'SCHD-0000-0000-0001', 'SCHD-0000-0000-0003', 'SCHD-9999-9999-9999', 'SCHD-0000-0000-0004']) order by n$$,
  $$values (1::bigint, 'e4000000-0000-4000-8000-000000000002'::uuid), (2, 'e4000000-0000-4000-8000-000000000001'), (3, 'e4000000-0000-4000-8000-000000000001'), (5, null)$$,
  'served_schedules: a key''s own schedule wins over its account''s; an unlinked key reads its e-mail''s account''s; an unknown key has no row');
select results_eq($$select version, payload::text from cadence.served_schedules(array['SCHD-0000-0000-0004'])$$,
  $$select cadence.schedule_version(cadence.unscheduled_payload()), cadence.unscheduled_payload()::text$$,
  'served_schedules: a key with no schedule reads the unscheduled payload and its version');
select is((select version from cadence.served_schedules(array['SCHD-0000-0000-0001'])),
  (select version from public.schedule_payloads where schedule_id = 'e4000000-0000-4000-8000-000000000001'),
  'served_schedules: the version served is the one stored with the schedule''s payload');
select is(pg_temp.executors('cadence.served_schedules'), '{service_role}', 'served_schedules: only service_role may execute it');

-- cadence.schedule_payload
select has_function('cadence', 'schedule_payload', array['text'], 'schedule_payload exists');
select is(cadence.schedule_payload('SCHD-0000-0000-0003')::jsonb, cadence.schedule_content('e4000000-0000-4000-8000-000000000001')::jsonb,
  'schedule_payload: the payload of the schedule the key reads, assembled now');
select is(cadence.schedule_payload('SCHD-9999-9999-9999')::text, null, 'schedule_payload: an unknown key has none');
select is(pg_temp.executors('cadence.schedule_payload'), '{service_role}', 'schedule_payload: only service_role may execute it');

-- cadence.license_schedules_unless_held and its former name
create temporary table held on commit drop as
  select (select version from cadence.served_schedules(array['SCHD-0000-0000-0001'])) as version;
select has_function('cadence', 'license_schedules_unless_held', array['text[]', 'text[]'], 'license_schedules_unless_held exists');
select results_eq(
  $$select n, payload is null from cadence.license_schedules_unless_held(array['SCHD-0000-0000-0001', 'SCHD-0000-0000-0002', 'SCHD-9999-9999-9999'],
                                                                           array[(select version from held), (select version from held), null]) order by n$$,
  $$values (1::bigint, true), (2, false)$$,
  'license_schedules_unless_held: no payload for the version the caller holds, the payload for another; no row for an unknown key');
select is(pg_temp.executors('cadence.license_schedules_unless_held'), '{service_role}', 'license_schedules_unless_held: only service_role may execute it');
select has_function('cadence', 'license_schedules_if_changed', array['text[]', 'text[]'], 'license_schedules_if_changed exists');
select results_eq(
  $$select n, fingerprint, payload::text from cadence.license_schedules_if_changed(array['SCHD-0000-0000-0001', 'SCHD-0000-0000-0002'], array[(select version from held), null]) order by n$$,
  $$select n, version, payload::text from cadence.license_schedules_unless_held(array['SCHD-0000-0000-0001', 'SCHD-0000-0000-0002'], array[(select version from held), null]) order by n$$,
  'license_schedules_if_changed: the former name answers as license_schedules_unless_held');
select is(pg_temp.executors('cadence.license_schedules_if_changed'), '{service_role}', 'license_schedules_if_changed: only service_role may execute it');

-- cadence.legacy_schedules_unless_held and its former name
select has_function('cadence', 'legacy_schedules_unless_held', array['text[]', 'text[]', 'text[]'], 'legacy_schedules_unless_held exists');
select results_eq(
  $$select n, outcome, version is not null, payload is null from cadence.legacy_schedules_unless_held(
      array['SCHD-0000-0000-0001', 'SCHD-0000-0000-0003', 'SCHD-9999-9999-9999'],
      array['sched-b@example.com', 'sched-a@example.com', 'sched-a@example.com'], array[null, (select version from held), null]) order by n$$,
  $$values (1::bigint, 'not_owner', false, true), (2, 'paired', true, true), (3, 'key_not_found', false, true)$$,
  'legacy_schedules_unless_held: only a paired key reads a schedule, and no payload for the version it holds');
select is(pg_temp.executors('cadence.legacy_schedules_unless_held'), '{service_role}', 'legacy_schedules_unless_held: only service_role may execute it');
select has_function('cadence', 'legacy_schedules_if_changed', array['text[]', 'text[]', 'text[]'], 'legacy_schedules_if_changed exists');
select results_eq(
  $$select n, outcome, fingerprint, payload::text from cadence.legacy_schedules_if_changed(array['SCHD-0000-0000-0001', 'SCHD-0000-0000-0002'], array['sched-a@example.com', 'sched-b@example.com'], array[null, null]) order by n$$,
  $$select n, outcome, version, payload::text from cadence.legacy_schedules_unless_held(array['SCHD-0000-0000-0001', 'SCHD-0000-0000-0002'], array['sched-a@example.com', 'sched-b@example.com'], array[null, null]) order by n$$,
  'legacy_schedules_if_changed: the former name answers as legacy_schedules_unless_held');
select is(pg_temp.executors('cadence.legacy_schedules_if_changed'), '{service_role}', 'legacy_schedules_if_changed: only service_role may execute it');

-- cadence.license_key_schedule_version
select has_function('cadence', 'license_key_schedule_version', array['text'], 'license_key_schedule_version exists');
select is(cadence.license_key_schedule_version('SCHD-0000-0000-0002'),
  (select version from public.schedule_payloads where schedule_id = 'e4000000-0000-4000-8000-000000000002'),
  'license_key_schedule_version: the version the API serves for the key');
select is(pg_temp.executors('cadence.license_key_schedule_version'), '{authenticated,service_role}',
  'license_key_schedule_version: account holders (for public.kiosk_status) and service_role may execute it, anon may not');

-- cadence.playing_at: 2026-03-02 is a Monday.
select has_function('cadence', 'playing_at', array['text[]', 'timestamp with time zone'], 'playing_at exists');
select results_eq(
  $$select n, block_id, started_on, started_at, proclamation_ids from cadence.playing_at(array['SCHD-0000-0000-0001', 'SCHD-0000-0000-0002'], '2026-03-02 07:30+00') order by n$$,
  $$values (1::bigint, 'e4100000-0000-4000-8000-000000000002'::uuid, '2026-03-02'::date, '2026-03-02 06:00+00'::timestamptz,
            array['b0000000-0000-4000-8000-000000000001'::uuid]),
           (2, null, null, null, null)$$,
  'playing_at: the block running at the instant, when and on which day it started, its proclamations; none between blocks');
select results_eq($$select block_id, started_on from cadence.playing_at(array['SCHD-0000-0000-0001'], '2026-03-03 02:00+00')$$,
  $$values ('e4100000-0000-4000-8000-000000000001'::uuid, '2026-03-02'::date)$$,
  'playing_at: an overnight block after midnight started the day before');
select results_eq($$select time_zone, local_time, block_id from cadence.playing_at(array['SCHD-0000-0000-0003'], '2026-03-01 22:00+00')$$,
  $$values ('Asia/Tokyo', '2026-03-02 07:00'::timestamp, 'e4100000-0000-4000-8000-000000000002'::uuid)$$,
  'playing_at: a key''s schedule is read on the wall clock of its own time zone');
select is_empty($$select * from cadence.playing_at(array['SCHD-9999-9999-9999'], '2026-03-02 07:30+00')$$, 'playing_at: an unknown key has no row');
select is(pg_temp.executors('cadence.playing_at'), '{service_role}', 'playing_at: only service_role may execute it');

-- cadence.license_key_playing
select has_function('cadence', 'license_key_playing', array['text', 'timestamp with time zone'], 'license_key_playing exists');
select is(cadence.license_key_playing('SCHD-0000-0000-0002', '2026-03-02 09:00+00'),
  '{"blockId": "e4100000-0000-4000-8000-000000000003", "weekday": "monday", "startTime": "08:00", "endTime": "10:00", "startedOn": "2026-03-02", "proclamationIds": []}'::jsonb,
  'license_key_playing: the block playing at the instant, as public.kiosk_status shows it');
select is(cadence.license_key_playing('SCHD-0000-0000-0002', '2026-03-02 11:00+00'), null, 'license_key_playing: null when nothing plays');
select is(pg_temp.executors('cadence.license_key_playing'), '{authenticated,service_role}',
  'license_key_playing: account holders (for public.kiosk_status) and service_role may execute it, anon may not');

-- cadence.change_author
select has_function('cadence', 'change_author', 'change_author exists');
select is(cadence.change_author(), 'role ' || session_user::text collate "default", 'change_author: staff and the API are named by their database login');
select set_config('request.jwt.claims', '{"sub": "e4200000-0000-4000-8000-000000000001"}', true);
select is(cadence.change_author(), 'account holder e4200000-0000-4000-8000-000000000001', 'change_author: a signed-in account holder is named by their Auth user id');
select set_config('request.jwt.claims', '', true);
select is(pg_temp.executors('cadence.change_author'), '{}', 'change_author: no API role may execute it (triggers call it)');

-- cadence.refresh_all_schedule_payloads (triggers payloads_refresh_truncate): last, as it empties a table.
select has_function('cadence', 'refresh_all_schedule_payloads', 'refresh_all_schedule_payloads exists');
truncate public.schedule_block_proclamations;
select is((select payload::jsonb #> '{daily,0,proclamationIds}' from public.schedule_payloads where schedule_id = 'e4000000-0000-4000-8000-000000000001'),
  '[]'::jsonb, 'refresh_all_schedule_payloads: a truncate stores every schedule''s payload again');
select is(pg_temp.executors('cadence.refresh_all_schedule_payloads'), '{}', 'refresh_all_schedule_payloads: a trigger function no API role may execute');

select * from finish();
rollback;
