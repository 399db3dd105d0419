-- What each kiosk should be playing at an instant: its local time (its key's zone, else its
-- account's) matched against the blocks of the schedule it reads (cadence.served_schedules: its own,
-- else its account's). kiosk_status shows it for now; the offline alerts ask it for the kiosks they
-- suspect; tests ask it for fixed instants.
--
-- The rule is the wall clock: a block plays while the kiosk's local wall-clock time is inside it.
-- - A block plays from its start to its end on its day (every day for a daily schedule). An end at
--   or before the start crosses midnight: the block goes on into the next day until its end (in a
--   weekly schedule, Sunday's runs into Monday). An end equal to the start is a whole 24 hours.
-- - When blocks overlap, the one that started last plays (then the later start time, then the id).
-- On daylight-saving days this gives, in every zone:
-- - A block starting in the skipped hour (02:30 when clocks jump from 02:00 to 03:00) plays from the
--   jump (03:00), since from then the wall clock is past its start; one entirely inside the skipped
--   hour does not play that day.
-- - A block spanning the repeated hour (clocks go from 02:00 back to 01:00) plays until its end by
--   the wall clock, so it lasts an hour longer; a block inside the repeated hour plays twice.
-- - An overnight block on a change night runs from its start to its end by the wall clock: an hour
--   shorter when clocks spring forward, an hour longer when they fall back (30 minutes on Lord Howe).
-- `started_at` is the instant the block's start names: Postgres reads a skipped wall time with the
-- offset before the change (02:30 as 03:30 after the jump) and a repeated one as the later pass.
--
-- Linear in the keys asked about: the keys are grouped by (schedule, zone), and each group's block
-- is found once, through the blocks index, whatever the number of keys that read it.

create function cadence.playing_at(p_keys text[], p_at timestamptz)
returns table (
  n bigint, license_key text, time_zone text, local_time timestamp,
  block_id uuid, weekday text, start_time time, end_time time, started_on date, started_at timestamptz,
  proclamation_ids uuid[]
)
language plpgsql
stable
set search_path = ''
set plan_cache_mode = force_generic_plan
as $$
begin
  return query
    with keyed as (
      -- Each known key, the schedule it reads, and its zone: its own, else its owner's, else UTC.
      select s.n, k.key, s.schedule_id, coalesce(k.time_zone, owner.time_zone, 'UTC') as zone
        from cadence.served_schedules(p_keys) as s
        -- `= any (...)` restricts the table to the batch through its index, whichever join the
        -- planner picks for a batch it cannot size (without it, a seq scan of every key per call).
        join public.license_keys as k on k.key = p_keys[s.n] and k.key = any (p_keys)
        left join lateral (
          select a.time_zone
            from public.accounts as a
           where (a.id = k.account_id or pg_catalog.lower(a.email) = pg_catalog.lower(k.email)) and cadence.key_belongs_to(k, a)
           limit 1
        ) as owner on true
    ),
    clocks as (
      -- One wall clock per (schedule, zone): what every key of the group shares.
      select g.schedule_id, g.zone, l.local,
             pg_catalog.to_char(l.local, 'FMday') as today,
             pg_catalog.to_char(l.local - interval '1 day', 'FMday') as yesterday
        from (select distinct k.schedule_id, k.zone from keyed as k where k.schedule_id is not null) as g
       cross join lateral (select p_at at time zone g.zone as local) as l
    ),
    playing as (
      select distinct on (c.schedule_id, c.zone)
             c.schedule_id, c.zone, b.id, b.weekday, b.start_time, b.end_time, o.started_on
        from clocks as c
        join public.schedule_blocks as b on b.schedule_id = c.schedule_id
       cross join lateral (
         -- The day this block's current run started on, if it is running: today (started at or
         -- before now, and not yet ended, or crossing midnight), or yesterday (crossing midnight into
         -- today and not yet ended).
         select case
                  when (b.weekday is null or b.weekday = c.today)
                   and c.local::time >= b.start_time
                   and (b.end_time <= b.start_time or c.local::time < b.end_time)
                    then c.local::date
                  when b.end_time <= b.start_time
                   and (b.weekday is null or b.weekday = c.yesterday)
                   and c.local::time < b.end_time
                    then c.local::date - 1
                end as started_on
       ) as o
       where o.started_on is not null
       order by c.schedule_id, c.zone, o.started_on desc, b.start_time desc, b.id
    )
    select k.n, k.key, k.zone, p_at at time zone k.zone,
           p.id, p.weekday, p.start_time, p.end_time, p.started_on,
           case when p.id is not null then (p.started_on + p.start_time) at time zone k.zone end,
           case when p.id is not null then
             array(select bp.proclamation_id from public.schedule_block_proclamations as bp
                    where bp.block_id = p.id order by bp.position)
           end
      from keyed as k
      left join playing as p on p.schedule_id = k.schedule_id and p.zone = k.zone;
end
$$;
comment on function cadence.playing_at(text[], timestamptz) is
  'For each known key (position n) at instant p_at: its time zone and local time, and the block of the schedule it reads that plays then (null when none): id, weekday, start and end, the local date and instant it started, its proclamations in order. The wall-clock rule and its daylight-saving cases are in the migration that made it.';

-- For kiosk_status, one key at a time: the view calls these only for the rows a page returns.
create function cadence.license_key_time_zone(p_key text)
returns text
language plpgsql
stable
security definer
set search_path = ''
as $$
begin
  -- PL/pgSQL keeps this statement's plan for the connection's life: a `language sql` body that is
  -- SECURITY DEFINER is never inlined, and was planned again for each row of a page.
  return (
    select coalesce(k.time_zone, a.time_zone, 'UTC')
      from public.license_keys as k
      left join public.accounts as a
        on (a.id = k.account_id or pg_catalog.lower(a.email) = pg_catalog.lower(k.email)) and cadence.key_belongs_to(k, a)
     where k.key = p_key
     limit 1);
end
$$;
comment on function cadence.license_key_time_zone(text) is
  'The time zone a license key''s kiosk lives in: its own, else its account''s, else UTC. For public.kiosk_status.';

create function cadence.license_key_playing(p_key text, p_at timestamptz)
returns jsonb
language plpgsql
stable
security definer
set search_path = ''
as $$
begin
  -- PL/pgSQL, so the plan is kept across the rows of a page (see license_key_time_zone).
  return (
    select pg_catalog.jsonb_build_object(
             'blockId', p.block_id,
             'weekday', p.weekday,
             'startTime', pg_catalog.to_char(p.start_time, 'HH24:MI'),
             'endTime', pg_catalog.to_char(p.end_time, 'HH24:MI'),
             'startedOn', p.started_on,
             'proclamationIds', pg_catalog.to_jsonb(p.proclamation_ids))
      from cadence.playing_at(array[p_key], p_at) as p
     where p.block_id is not null);
end
$$;
comment on function cadence.license_key_playing(text, timestamptz) is
  'The block a license key''s kiosk should play at p_at (cadence.playing_at) as {blockId, weekday, startTime, endTime, startedOn, proclamationIds}, or null. For public.kiosk_status.';

-- kiosk_status gains the kiosk's zone, its local time and what it should be playing now, each a
-- scalar subquery: evaluated for the rows a page returns, never for the whole fleet.
create or replace view public.kiosk_status
with (security_invoker = true)
as
select k.key as license_key,
       (select a.email from public.accounts as a where a.id = cadence.license_key_owner(k.key)) as account_email,
       k.system_name,
       k.active,
       k.last_validated_at,
       s.last_seen_at,
       s.last_seen_ip,
       s.schedule_version_held,
       (select cadence.license_key_schedule_version(k.key)) as schedule_version_current,
       -- Null while unknown: never seen, or seen only by calls that carry no schedule.
       s.schedule_version_held = (select cadence.license_key_schedule_version(k.key)) as schedule_is_current,
       case when s.last_seen_at is null then 'never_seen'
            when s.last_seen_at >= pg_catalog.now() - interval '15 minutes' then 'online'
            else 'offline' end as state,
       (select cadence.license_key_time_zone(k.key)) as time_zone,
       (select pg_catalog.now() at time zone cadence.license_key_time_zone(k.key)) as local_time,
       (select cadence.license_key_playing(k.key, pg_catalog.now())) as playing_now
from public.license_keys as k
left join public.kiosk_sightings as s on s.license_key = k.key;
comment on column public.kiosk_status.time_zone is 'The kiosk''s time zone: its key''s, else its account''s (UTC unless set).';
comment on column public.kiosk_status.local_time is 'The kiosk''s wall-clock time now, in that zone.';
comment on column public.kiosk_status.playing_now is
  'The block it should be playing now, from the schedule it reads: {blockId, weekday, startTime, endTime, startedOn, proclamationIds}; empty outside every block.';

revoke execute on function cadence.playing_at(text[], timestamptz) from public;
revoke execute on function cadence.license_key_time_zone(text) from public;
revoke execute on function cadence.license_key_playing(text, timestamptz) from public;
grant execute on function cadence.playing_at(text[], timestamptz) to service_role;
grant execute on function cadence.license_key_time_zone(text) to authenticated, service_role;
grant execute on function cadence.license_key_playing(text, timestamptz) to authenticated, service_role;
