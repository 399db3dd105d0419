-- Kiosk sightings: the latest call of each key, the evidence the seat checks read riding on the
-- same write, and a deleted key's sighting going with it. pgTAP; run with pg_prove or
-- `supabase test db` (test/README.md).
begin;
set local client_min_messages = warning;
create extension if not exists pgtap with schema extensions;
set local search_path = extensions, public;
select plan(14);

-- The API roles that may execute a function: its grants are part of its design.
create function pg_temp.executors(p_function regproc) returns text[] language sql as $$
  select array(select r from unnest(array['anon', 'authenticated', 'service_role']) as r
                where pg_catalog.has_function_privilege(r, p_function, 'execute') order by r)
$$;

insert into public.license_keys (key, email) values ('KIOS-0000-0000-0001', 'kiosk@example.com'), ('KIOS-0000-0000-0002', 'kiosk@example.com');

-- cadence.record_kiosk_polls: a first sighting with a version, a name and one burst of calls.
select has_function('cadence', 'record_kiosk_polls',
  array['text[]', 'timestamp with time zone[]', 'inet[]', 'text[]', 'text[]', 'text[]', 'integer[]', 'interval', 'integer[]', 'integer[]',
        'timestamp with time zone[]', 'timestamp with time zone[]', 'boolean[]', 'integer[]'], 'record_kiosk_polls exists');
select cadence.record_kiosk_polls(array['KIOS-0000-0000-0001', 'KIOS-9999-9999-9999'], array['2026-03-02 10:00+00', '2026-03-02 10:00+00']::timestamptz[],
  array['198.51.100.1', '198.51.100.2']::inet[], array[repeat('a', 64), null], array['Lobby'], array['Lobby'], array[0], interval '5 seconds',
  array[1], array[1], array['2026-03-02 10:00+00']::timestamptz[], array['2026-03-02 10:00:02+00']::timestamptz[], array[false]);
select results_eq(
  $$select last_seen_at, last_seen_ip, schedule_version_held, system_name_written, (polls).firsts from public.kiosk_sightings where license_key = 'KIOS-0000-0000-0001'$$,
  $$values ('2026-03-02 10:00+00'::timestamptz, '198.51.100.1'::inet, repeat('a', 64), 'Lobby', array['2026-03-02 10:00+00'::timestamptz])$$,
  'record_kiosk_polls: a key''s first sighting records when, from where, the version held, the name written and its bursts, unsettled');
select is_empty($$select from public.kiosk_sightings where license_key = 'KIOS-9999-9999-9999'$$, 'record_kiosk_polls: an unknown key is not recorded');
select cadence.record_kiosk_polls(array['KIOS-0000-0000-0001'], array['2026-03-02 09:59+00']::timestamptz[], array['198.51.100.3']::inet[], array[repeat('b', 64)]);
select results_eq($$select last_seen_at, last_seen_ip, schedule_version_held from public.kiosk_sightings where license_key = 'KIOS-0000-0000-0001'$$,
  $$values ('2026-03-02 10:00+00'::timestamptz, '198.51.100.1'::inet, repeat('a', 64))$$,
  'record_kiosk_polls: a sighting older than the stored one (written late by another instance) does not replace it');
select cadence.record_kiosk_polls(array['KIOS-0000-0000-0001'], array['2026-03-02 10:01+00']::timestamptz[], array['198.51.100.4']::inet[], array[null]);
select results_eq($$select last_seen_at, last_seen_ip, schedule_version_held from public.kiosk_sightings where license_key = 'KIOS-0000-0000-0001'$$,
  $$values ('2026-03-02 10:01+00'::timestamptz, '198.51.100.4'::inet, repeat('a', 64))$$,
  'record_kiosk_polls: the latest sighting wins; one without a version (a validation) keeps the version held');
select cadence.record_kiosk_polls(array['KIOS-0000-0000-0001'], array['2026-03-02 10:02+00']::timestamptz[], array['198.51.100.4']::inet[], array[null],
  array['Hall'], array['Lobby'], array[1]);
select results_eq($$select system_name_written, system_name_changes from public.kiosk_sightings where license_key = 'KIOS-0000-0000-0001'$$,
  $$values ('Lobby', 2)$$,
  'record_kiosk_polls: counts each change of the written name, within a write and against the stored one');
select cadence.record_kiosk_polls(array['KIOS-0000-0000-0001'], array['2026-03-02 10:03+00']::timestamptz[], array['198.51.100.4']::inet[], array[null],
  '{}', '{}', '{}', interval '5 seconds', array[1], array[5],
  array['2026-03-02 10:01+00', '2026-03-02 10:02+00', '2026-03-02 10:02:02+00', '2026-03-02 10:03+00', '2026-03-02 10:04+00']::timestamptz[],
  array['2026-03-02 10:01+00', '2026-03-02 10:02+00', '2026-03-02 10:02:03+00', '2026-03-02 10:03+00', '2026-03-02 10:04+00']::timestamptz[],
  array[false, false, false, false, false]);
select results_eq($$select (polls).polls_this_hour, cardinality((polls).firsts) from public.kiosk_sightings where license_key = 'KIOS-0000-0000-0001'$$,
  $$values (3, 2)$$,
  'record_kiosk_polls: once six bursts are held, the write settles them into polls (bursts less than the gap apart are one), keeping the last two');
select is(pg_temp.executors('cadence.record_kiosk_polls'), '{service_role}', 'record_kiosk_polls: only service_role may execute it');

-- cadence.record_kiosk_sightings: the write of API instances deployed before the polls.
select has_function('cadence', 'record_kiosk_sightings',
  array['text[]', 'timestamp with time zone[]', 'inet[]', 'text[]', 'integer[]', 'text[]', 'text[]', 'integer[]', 'text[]', 'cidr[]',
        'timestamp with time zone[]', 'timestamp with time zone[]', 'integer[]', 'integer[]'], 'record_kiosk_sightings exists');
select cadence.record_kiosk_sightings(array['KIOS-0000-0000-0002'], array['2026-03-02 10:00+00']::timestamptz[], array['198.51.100.9']::inet[], array[null],
  array[3], array['Den'], array['Den'], array[0], array['KIOS-0000-0000-0002'], array['198.51.100.0/24']::cidr[]);
select results_eq($$select last_seen_ip, system_name_written, coalesce(cardinality((polls).firsts), 0) from public.kiosk_sightings where license_key = 'KIOS-0000-0000-0002'$$,
  $$values ('198.51.100.9'::inet, 'Den', 0)$$,
  'record_kiosk_sightings: records the sighting and the name, and no bursts (its networks are ignored)');
select is(pg_temp.executors('cadence.record_kiosk_sightings'), '{service_role}', 'record_kiosk_sightings: only service_role may execute it');

-- cadence.forget_deleted_key_sightings (trigger sightings_forget on public.license_keys)
select has_function('cadence', 'forget_deleted_key_sightings', 'forget_deleted_key_sightings exists');
delete from public.license_keys where key = 'KIOS-0000-0000-0002';
select is_empty($$select from public.kiosk_sightings where license_key = 'KIOS-0000-0000-0002'$$,
  'forget_deleted_key_sightings: a deleted key''s sighting goes with it');
select is(pg_temp.executors('cadence.forget_deleted_key_sightings'), '{}', 'forget_deleted_key_sightings: a trigger function no API role may execute');

select * from finish();
rollback;
