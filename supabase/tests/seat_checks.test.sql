-- Seat checks: a key's polls settled from its bursts of calls, the pass that flags a key used by
-- more than one kiosk, and the staff digest. pgTAP; run with pg_prove or `supabase test db`
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

-- Bursts at the given seconds after 2026-03-02 12:00 UTC, each its own single call.
create function pg_temp.at(p_seconds integer[]) returns timestamptz[] language sql as $$
  select array(select timestamptz '2026-03-02 12:00+00' + make_interval(secs => s) from unnest(p_seconds) as s)
$$;

-- cadence.settle_polls
select has_function('cadence', 'settle_polls',
  array['kiosk_polls', 'timestamp with time zone[]', 'timestamp with time zone[]', 'boolean[]', 'interval', 'timestamp with time zone', 'integer[]'],
  'settle_polls exists');
select results_eq(
  $$select s.polls_this_hour, s.recent, s.firsts
      from cadence.settle_polls(null, pg_temp.at('{0,60,120,180}'), pg_temp.at('{0,60,120,180}'), '{f,f,f,f}', '5 seconds', '2026-03-02 12:03+00') as s$$,
  $$values (2, pg_temp.at('{0,60}'), pg_temp.at('{120,180}'))$$,
  'settle_polls: every burst but the last two settles into a poll');
select is((select s.polls_this_hour from cadence.settle_polls(null, pg_temp.at('{0,3,60,120,180}'), pg_temp.at('{1,4,60,120,180}'), '{f,f,f,f,f}', '5 seconds', '2026-03-02 12:03+00') as s),
  2, 'settle_polls: bursts less than the poll gap apart are one poll');
select is((select s.polls_this_hour from cadence.settle_polls(null, pg_temp.at('{0,60,120,180}'), pg_temp.at('{0,60,120,180}'), '{t,f,f,f}', '5 seconds', '2026-03-02 12:03+00') as s),
  1, 'settle_polls: a kiosk''s start is not a poll');
select is((select s.uneven_this_hour from cadence.settle_polls(null, pg_temp.at('{0,60,120,130,180,240,300,360,420}'), pg_temp.at('{0,60,120,130,180,240,300,360,420}'),
                                                               '{f,f,f,f,f,f,f,f,f}', '5 seconds', '2026-03-02 12:07+00') as s),
  1, 'settle_polls: a poll far closer to the one before than its neighbours'' gaps (a second device''s) is uneven');
select is((select s.uneven_this_hour from cadence.settle_polls(null, pg_temp.at('{0,60,120,180,240,300,360,420,480}'), pg_temp.at('{0,60,120,180,240,300,360,420,480}'),
                                                               '{f,f,f,f,f,f,f,f,f}', '5 seconds', '2026-03-02 12:08+00') as s),
  0, 'settle_polls: one kiosk''s regular polls are even');
select results_eq(
  $$select s.hour_started_at, s.polls_this_hour, s.polls_last_hour
      from cadence.settle_polls(row(5, 0, 0, 0, 0, 0, 0, 0, 0, 0, '2026-03-02 10:50+00', null, null, null, 0, null, null, null, null, null)::public.kiosk_polls,
                                pg_temp.at('{0,60,120}'), pg_temp.at('{0,60,120}'), '{f,f,f}', '5 seconds', '2026-03-02 12:02+00') as s$$,
  $$values ('2026-03-02 12:02+00'::timestamptz, 1, 5)$$,
  'settle_polls: an hour after the counting hour began, a new one begins and the ended hour''s counts become the last hour''s');
-- Two devices 30 s apart, each on its network (1 and 2), the offset between them wandering: the
-- pairs' sums stay at 60 s while consecutive gaps differ more and more.
select results_eq(
  $$select s.alternating_this_hour, s.drift_this_hour < 0.25 * s.swing_this_hour, s.last_network, s.network_before, s.alternated
      from cadence.settle_polls(null, pg_temp.at('{0,30,60,86,120,142,180,198,240,254,300}'), pg_temp.at('{0,30,60,86,120,142,180,198,240,254,300}'),
                                '{f,f,f,f,f,f,f,f,f,f,f}', '5 seconds', '2026-03-02 12:05+00', '{1,2,1,2,1,2,1,2,1,2,1}') as s$$,
  $$values (5, true, 1, 2, 7)$$,
  'settle_polls: a poll whose last five polls came from two networks in turn alternates, with its gaps'' swing and drift');
select is((select s.alternating_this_hour
             from cadence.settle_polls(null, pg_temp.at('{0,30,60,86,120,142,180,198,240,254,300}'), pg_temp.at('{0,30,60,86,120,142,180,198,240,254,300}'),
                                       '{f,f,f,f,f,f,f,f,f,f,f}', '5 seconds', '2026-03-02 12:05+00', '{1,2,1,2,1,null,1,2,1,2,1}') as s),
  1, 'settle_polls: a poll of several networks (two WAN links balanced per call) breaks the alternation');
select is((select s.alternating_this_hour
             from cadence.settle_polls(null, pg_temp.at('{0,30,60,86,120,142,180,198,240,254,300}'), pg_temp.at('{0,30,60,86,120,142,180,198,240,254,300}'),
                                       '{f,f,f,f,f,f,f,f,f,f,f}', '5 seconds', '2026-03-02 12:05+00', '{1,1,1,1,1,1,1,1,1,1,1}') as s),
  0, 'settle_polls: polls from one network never alternate');
select is(pg_temp.executors('cadence.settle_polls'), '{service_role}', 'settle_polls: only service_role may execute it');

-- Keys: one whose polls were uneven, one whose name flipped, one uneven but silent for three hours,
-- one whose alternating polls drift little beside their swing (two clocks), one whose alternating
-- polls drift as one kiosk's do (two WAN links round-robin across polls).
insert into public.license_keys (key, email, system_name) values
  ('SEAT-0000-0000-0001', 'seat@example.com', 'Lobby'), ('SEAT-0000-0000-0002', 'seat@example.com', 'Hall'), ('SEAT-0000-0000-0003', 'seat@example.com', null),
  ('SEAT-0000-0000-0004', 'seat@example.com', null), ('SEAT-0000-0000-0005', 'seat@example.com', null);
insert into public.kiosk_sightings (license_key, last_seen_at, system_name_changes, system_name_changes_since, polls) values
  ('SEAT-0000-0000-0001', '2026-03-02 11:55+00', 0, null, row(40, 0, 6, 0, 0, 0, 0, 0, 0, 0, '2026-03-02 11:30+00', null, null, null, 0, null, null, null, null, null)),
  ('SEAT-0000-0000-0002', '2026-03-02 11:55+00', 3, '2026-03-02 09:00+00', row(40, 0, 0, 0, 0, 0, 0, 0, 0, 0, '2026-03-02 11:30+00', null, null, null, 0, null, null, null, null, null)),
  ('SEAT-0000-0000-0003', '2026-03-02 09:00+00', 0, null, row(40, 0, 6, 0, 0, 0, 0, 0, 0, 0, '2026-03-02 08:30+00', null, null, null, 0, null, null, null, null, null)),
  ('SEAT-0000-0000-0004', '2026-03-02 11:55+00', 0, null, row(40, 0, 0, 0, 24, 0, 4000, 0, 300, 0, '2026-03-02 11:30+00', null, null, null, 0, null, null, null, null, null)),
  ('SEAT-0000-0000-0005', '2026-03-02 11:55+00', 0, null, row(40, 0, 0, 0, 24, 0, 150, 0, 300, 0, '2026-03-02 11:30+00', null, null, null, 0, null, null, null, null, null));

-- cadence.seat_check_pass
select has_function('cadence', 'seat_check_pass', array['timestamp with time zone'], 'seat_check_pass exists');
select is(cadence.seat_check_pass('2026-03-02 12:00+00'), 3, 'seat_check_pass: returns how many keys it flagged');
select results_eq($$select license_key, rules from public.seat_suspicions where license_key like 'SEAT-%' order by 1$$,
  $$values ('SEAT-0000-0000-0001', array['uneven_polls']), ('SEAT-0000-0000-0002', array['system_name_flips']), ('SEAT-0000-0000-0004', array['two_clocks'])$$,
  'seat_check_pass: flags uneven polls, system-name flips and two clocks; one kiosk''s alternating polls, and counts of a key not seen for two hours, flag nothing');
select cadence.seat_check_pass('2026-03-02 12:01+00');
select results_eq($$select first_flagged_at, last_flagged_at, flags from public.seat_suspicions where license_key = 'SEAT-0000-0000-0001'$$,
  $$values ('2026-03-02 12:00+00'::timestamptz, '2026-03-02 12:01+00'::timestamptz, 2)$$,
  'seat_check_pass: a key flagged again keeps when it was first flagged and counts the passes');
select is(pg_temp.executors('cadence.seat_check_pass'), '{service_role}', 'seat_check_pass: only service_role may execute it');

-- cadence.seat_digest
select has_function('cadence', 'seat_digest', array['timestamp with time zone'], 'seat_digest exists');
select is_empty($$select * from cadence.seat_digest('2026-03-02 12:05+00')$$, 'seat_digest: none while staff set no recipient');
update public.seat_watch set digest_to = 'staff@example.com', last_digest_at = '2026-03-01 12:30+00';
select is_empty($$select * from cadence.seat_digest('2026-03-02 12:05+00')$$, 'seat_digest: none within a day of the last one');
select results_eq(
  $$select recipient, since, (select array_agg(s ->> 'licenseKey' order by s ->> 'licenseKey') from jsonb_array_elements(suspects) as s where s ->> 'licenseKey' like 'SEAT-%')
      from cadence.seat_digest('2026-03-02 12:31+00')$$,
  $$values ('staff@example.com', '2026-03-01 12:30+00'::timestamptz, array['SEAT-0000-0000-0001', 'SEAT-0000-0000-0002', 'SEAT-0000-0000-0004'])$$,
  'seat_digest: a day on, the recipient, the last digest''s time and the keys flagged since');
update public.seat_watch set last_digest_at = '2026-03-02 12:02+00';
select is_empty($$select * from cadence.seat_digest('2026-03-03 12:05+00')$$, 'seat_digest: none when nothing was flagged since the last one');
select is(pg_temp.executors('cadence.seat_digest'), '{service_role}', 'seat_digest: only service_role may execute it');

-- cadence.queue_seat_digest
select has_function('cadence', 'queue_seat_digest', array['timestamp with time zone', 'text', 'text', 'text', 'timestamp with time zone'], 'queue_seat_digest exists');
create temporary table digest on commit drop as
  select cadence.queue_seat_digest('2026-03-02 12:02+00', 'Seat checks', 'text', '<p>html</p>', '2026-03-03 12:00+00') as id;
select results_eq(
  $$select o.recipient, o.subject, w.last_digest_at from digest as d join public.email_outbox as o on o.id = d.id cross join public.seat_watch as w$$,
  $$values ('staff@example.com', 'Seat checks', '2026-03-03 12:00+00'::timestamptz)$$,
  'queue_seat_digest: queues the digest to the staff''s address and records when');
select is(cadence.queue_seat_digest('2026-03-02 12:02+00', 'Seat checks', 'text', '<p>html</p>', '2026-03-03 12:00:05+00'), null,
  'queue_seat_digest: a digest already queued since the one the caller read is not queued again');
select is(pg_temp.executors('cadence.queue_seat_digest'), '{service_role}', 'queue_seat_digest: only service_role may execute it');

select * from finish();
rollback;
