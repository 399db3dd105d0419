-- Seat checks by devices, not calls (issue 51): uneven_polls replaces interleaved_networks,
-- interleaved_families and poll_rate.
--
-- Those rules counted calls and networks, and honest venues raised them: a kiosk reading its schedule
-- and its proclamations through two WAN links balanced per connection returned to a network at every
-- poll; a dual-stack kiosk choosing the family per call returned across families; a kiosk polling
-- every 30 s behind a carrier's pool did both, and made 240 calls an hour. A copy on another network
-- polling every 95 s never returned within 90 s, and one behind the original's NAT had only the
-- hourly call count. A kiosk is a device that makes a few calls together at each poll; what tells
-- two devices from one is when their polls come, not from where.
--
-- - A poll is a burst of calls: calls of one key less than the writer's poll gap apart (5 s,
--   functions/app/kiosk/sightings.ts) are one poll, whatever their addresses. A burst holding a
--   license validation or a system-name write is a kiosk starting, not a poll: a crash loop's starts
--   come at any moment, and its polls follow each start one interval later.
-- - One device's polls are periodic: each gap is its interval (with its jitter), or a multiple of it
--   where polls failed. Two devices' polls interleave: a second device's poll splits the first's
--   interval in two, so one gap is short beside both of its neighbours, or, with timers that never
--   drift, the gaps alternate between two steady lengths. Addresses, families and pools change
--   nothing here, and the comparison is with the key's own gaps, so a kiosk configured to poll every
--   30 s is as regular as one polling every 60 s.
-- - uneven_polls flags a key with uneven_polls_to_flag (6) uneven polls in the current and previous
--   hour that are also uneven_polls_share (5 %) of its polls there (cadence.settle_polls says which
--   polls are uneven, and why those bounds). One device's uneven polls come from polls lost several
--   in a row around one that got through: about p^4 of its polls when it loses a share p, 5 % at p =
--   0.47; so a flaky link polling every 30 s, whose 240 polls in two hours make a few, is not a copy,
--   where a second device makes uneven a share of the key's polls near its own share of them.
--
-- Bounded per key: the sightings row keeps the last five polls' starts and the last two bursts,
-- which a later write (another instance's, or one held across an outage) may still extend, never
-- a row per call or per network. kiosk_networks goes, with the settings only its rules read.

alter table public.seat_watch
  drop column interleave_window,
  drop column returns_to_flag,
  drop column family_returns_to_flag,
  drop column calls_per_hour_limit,
  add column uneven_polls_to_flag integer not null default 6
    constraint uneven_polls_to_flag_is_at_least_2 check (uneven_polls_to_flag >= 2),
  add column uneven_polls_share real not null default 0.05
    constraint uneven_polls_share_is_a_share check (uneven_polls_share > 0 and uneven_polls_share <= 1);
comment on column public.seat_watch.uneven_polls_to_flag is
  'Uneven polls (cadence.settle_polls) in the current and previous hour that flag uneven_polls, with uneven_polls_share: one device makes none but where several of its polls fail in a row; a second device makes many.';
comment on column public.seat_watch.uneven_polls_share is
  'The least share of the key''s polls in the current and previous hour that must be uneven to flag uneven_polls: one device losing a share p of its polls makes about p^4 (5 % at p = 0.47).';

-- The evidence staff read changes shape: drop its view, and the table only the old rules wrote.
drop view public.suspected_copies;
drop table public.kiosk_networks;

alter table public.kiosk_sightings
  drop column calls_hour_started_at,
  drop column calls_this_hour,
  drop column calls_last_hour,
  add column recent_polls timestamptz[],
  add column unsettled_bursts tstzrange[],
  add column unsettled_starts boolean[],
  add column polls_hour_started_at timestamptz,
  add column polls_this_hour integer not null default 0,
  add column polls_last_hour integer not null default 0,
  add column uneven_polls_this_hour integer not null default 0,
  add column uneven_polls_last_hour integer not null default 0;
comment on column public.kiosk_sightings.recent_polls is 'When the key''s last five settled polls began, oldest first (seat checks: uneven_polls).';
comment on column public.kiosk_sightings.unsettled_bursts is 'The key''s last bursts of calls (first to last call), at most two once settled: a later write may still extend them.';
comment on column public.kiosk_sightings.unsettled_starts is 'Whether each unsettled burst holds a kiosk start (a license validation or a system-name write), which is not a poll.';
comment on column public.kiosk_sightings.polls_this_hour is 'Polls settled since polls_hour_started_at (seat checks: uneven_polls).';
comment on column public.kiosk_sightings.polls_last_hour is 'The same in the hour before.';
comment on column public.kiosk_sightings.uneven_polls_this_hour is 'Of those, the polls found uneven (cadence.settle_polls).';
comment on column public.kiosk_sightings.uneven_polls_last_hour is 'The same in the hour before.';
-- Account holders read their own rows whole (a select * keeps working): these are times and counts
-- of their own kiosk's calls, no address.
grant select (recent_polls, unsettled_bursts, unsettled_starts, polls_hour_started_at, polls_this_hour, polls_last_hour, uneven_polls_this_hour, uneven_polls_last_hour)
  on public.kiosk_sightings to authenticated;

alter table public.seat_suspicions
  drop constraint seat_suspicion_rules_are_known,
  -- The rules of 20261126000600 and 20261126000700 stay known: the rows they flagged are history.
  add constraint seat_suspicion_rules_are_known
    check (rules <@ array['interleaved_networks', 'interleaved_families', 'poll_rate', 'system_name_flips', 'uneven_polls'] and cardinality(rules) > 0);

create function cadence.settle_polls(
  p_recent timestamptz[], p_bursts tstzrange[], p_starts boolean[],
  p_new_bursts tstzrange[], p_new_starts boolean[], p_gap interval
)
returns table (recent_polls timestamptz[], unsettled_bursts tstzrange[], unsettled_starts boolean[], polls integer, uneven integer)
language plpgsql
immutable
set search_path = ''
as $$
declare
  v_bursts tstzrange[] := '{}';
  v_starts boolean[] := '{}';
  v_polls timestamptz[] := coalesce(p_recent, '{}');
  v_settled integer := 0;
  v_uneven integer := 0;
  v_stored integer := coalesce(cardinality(p_bursts), 0);
  v_new integer := coalesce(cardinality(p_new_bursts), 0);
  v_oldest timestamptz := lower(p_bursts[1]);
  v_i integer := 1;
  v_j integer := 1;
  v_n integer;
  v_burst tstzrange;
  v_start boolean;
  v_g1 float8;
  v_g2 float8;
  v_g3 float8;
  v_g4 float8;
  v_ratio float8;
  v_is_uneven boolean;
begin
  -- The stored bursts and this write's, in time order, merged where less than p_gap apart (a poll
  -- whose calls reached two instances, or straddled a write). A burst of this write that ends more
  -- than p_gap before the oldest stored one began is late (held across an outage, or by an
  -- instance that wrote it past two newer bursts): what came before it is settled, so it is left
  -- out, never counted as a poll of its own.
  while v_i <= v_stored or v_j <= v_new loop
    if v_j > v_new or (v_i <= v_stored and lower(p_bursts[v_i]) <= lower(p_new_bursts[v_j])) then
      v_burst := p_bursts[v_i];
      v_start := p_starts[v_i];
      v_i := v_i + 1;
    else
      v_burst := p_new_bursts[v_j];
      v_start := p_new_starts[v_j];
      v_j := v_j + 1;
      continue when upper(v_burst) < v_oldest - p_gap;
    end if;
    v_n := cardinality(v_bursts);
    if v_n > 0 and lower(v_burst) - upper(v_bursts[v_n]) <= p_gap then
      v_bursts[v_n] := tstzrange(lower(v_bursts[v_n]), greatest(upper(v_bursts[v_n]), upper(v_burst)), '[]');
      v_starts[v_n] := v_starts[v_n] or v_start;
    else
      v_bursts := v_bursts || v_burst;
      v_starts := v_starts || v_start;
    end if;
  end loop;

  -- A burst settles once two newer ones began: a minute at least at a 30 s poll, longer than an
  -- instance holds a key's calls (30 s and a flush), so every part of it has been written. A
  -- settled poll joins recent_polls; a settled start is dropped (the gap across it is the gap
  -- between the polls around it). Each settled poll judges the one before it.
  while cardinality(v_bursts) > 2 loop
    if not v_starts[1] then
      v_polls := v_polls || lower(v_bursts[1]);
      v_settled := v_settled + 1;
      v_n := cardinality(v_polls);
      -- The last four gaps between settled polls, oldest first (null where there are fewer).
      v_g1 := pg_catalog.date_part('epoch', v_polls[v_n - 3] - v_polls[v_n - 4]);
      v_g2 := pg_catalog.date_part('epoch', v_polls[v_n - 2] - v_polls[v_n - 3]);
      v_g3 := pg_catalog.date_part('epoch', v_polls[v_n - 1] - v_polls[v_n - 2]);
      v_g4 := pg_catalog.date_part('epoch', v_polls[v_n] - v_polls[v_n - 1]);
      -- Interleaved: the poll before this one came less than 0.4 of either neighbouring gap after
      -- its predecessor (g3 beside g2 and g4). One device's gaps are its interval (jitter of 10 %
      -- either way: 0.82 at least) or multiples where polls failed: below 0.4 only with two polls
      -- lost in a row on each side; a crash loop's polls follow their starts by a whole interval.
      -- A second device's poll at a fraction f of the first's interval makes it f/(1-f): below 0.4
      -- for f up to 0.29 either way, a band its jitter moves it through.
      v_is_uneven := v_n >= 4 and v_g3 < 0.4 * least(v_g2, v_g4);
      -- Alternating: the last four gaps alternate between two lengths (each within 2 % of the one
      -- two before), the shorter at most 0.85 of the longer: two devices whose timers never drift
      -- (setInterval), at a fraction of the interval the first test does not reach. One device with
      -- such timers has one length, or multiples where polls failed: ratios of 1/4, 1/3, 1/2, 2/3
      -- and 3/4 (within 0.02) are those, and not counted. A jittered device matches within 2 % by
      -- chance, about once a day.
      if not v_is_uneven and v_n >= 5 then
        v_ratio := least(v_g1, v_g2) / greatest(v_g1, v_g2);
        v_is_uneven := abs(v_g1 - v_g3) <= 0.02 * greatest(v_g1, v_g3)
                   and abs(v_g2 - v_g4) <= 0.02 * greatest(v_g2, v_g4)
                   and v_ratio <= 0.85
                   and abs(v_ratio - 0.25) > 0.02 and abs(v_ratio - 1.0 / 3) > 0.02 and abs(v_ratio - 0.5) > 0.02
                   and abs(v_ratio - 2.0 / 3) > 0.02 and abs(v_ratio - 0.75) > 0.02;
      end if;
      if v_is_uneven then
        v_uneven := v_uneven + 1;
      end if;
    end if;
    v_bursts := v_bursts[2:];
    v_starts := v_starts[2:];
  end loop;

  v_n := cardinality(v_polls);
  return query select v_polls[greatest(1, v_n - 4):], v_bursts, v_starts, v_settled, v_uneven;
end
$$;
comment on function cadence.settle_polls(timestamptz[], tstzrange[], boolean[], tstzrange[], boolean[], interval) is
  'One key''s polls after a sightings write: its stored recent polls and unsettled bursts with this write''s bursts (p_new_*, each a first and last call, and whether it holds a kiosk start) merged where less than p_gap apart; returns the last five settled polls, the bursts still unsettled, how many polls settled and how many of them were uneven (uneven_polls).';

create function cadence.record_kiosk_polls(
  p_keys text[], p_seen_at timestamptz[], p_ips inet[], p_versions text[],
  -- The seat-check evidence; a caller that has none (staff, a test) leaves it out.
  p_first_names text[] default '{}', p_last_names text[] default '{}', p_name_changes integer[] default '{}',
  p_poll_gap interval default interval '5 seconds',
  p_burst_keys text[] default '{}', p_burst_starts timestamptz[] default '{}', p_burst_ends timestamptz[] default '{}',
  p_burst_kiosk_starts boolean[] default '{}'
)
returns void
language sql
volatile
set search_path = ''
-- A short statement over many rows: compiling it (JIT, which its estimated cost at 100,000 keys
-- would trigger) costs more than it saves.
set jit = off
as $$
  -- Several instances write concurrently, each what it saw: the latest sighting wins, and a sighting
  -- that names no version (a validation) keeps the version a schedule read recorded. Rows are taken
  -- in key order, so two instances' statements cannot deadlock. A new row holds this write's bursts
  -- unsettled; an existing one settles them with its own (cadence.settle_polls), and its hour's
  -- polls and uneven polls roll into the previous hour at the first write an hour after the hour began.
  insert into public.kiosk_sightings as s (
    license_key, last_seen_at, last_seen_ip, schedule_version_held,
    system_name_written, system_name_changes, system_name_changes_since, unsettled_bursts, unsettled_starts)
  select u.key, u.seen_at, u.ip, u.version, u.last_name,
         -- A change is a written name other than the one before it: within this write (counted in
         -- memory), and this write's first name against the stored one.
         coalesce(u.name_changes, 0) + case when u.first_name <> old.system_name_written then 1 else 0 end,
         case when u.last_name is not null then u.seen_at end,
         b.bursts, b.starts
  from unnest(p_keys, p_seen_at, p_ips, p_versions, p_first_names, p_last_names, p_name_changes)
       as u(key, seen_at, ip, version, first_name, last_name, name_changes)
  left join public.kiosk_sightings as old on old.license_key = u.key
  left join (select b.key,
                    array_agg(tstzrange(b.started_at, b.ended_at, '[]') order by b.started_at) as bursts,
                    array_agg(b.kiosk_start order by b.started_at) as starts
               from unnest(p_burst_keys, p_burst_starts, p_burst_ends, p_burst_kiosk_starts) as b(key, started_at, ended_at, kiosk_start)
              group by b.key) as b on b.key = u.key
  where exists (select from public.license_keys as k where k.key = u.key)
  order by u.key
  on conflict (license_key) do update set
    last_seen_at = greatest(s.last_seen_at, excluded.last_seen_at),
    last_seen_ip = case when excluded.last_seen_at >= s.last_seen_at then excluded.last_seen_ip else s.last_seen_ip end,
    schedule_version_held = case when excluded.last_seen_at >= s.last_seen_at
                                 then coalesce(excluded.schedule_version_held, s.schedule_version_held)
                                 else coalesce(s.schedule_version_held, excluded.schedule_version_held) end,
    system_name_written = coalesce(excluded.system_name_written, s.system_name_written),
    system_name_changes_since = case when excluded.system_name_written is null then s.system_name_changes_since
                                     when s.system_name_changes_since is null or s.system_name_changes_since < excluded.last_seen_at - interval '1 day'
                                     then excluded.last_seen_at else s.system_name_changes_since end,
    system_name_changes = case when excluded.system_name_written is null then s.system_name_changes
                               else (case when s.system_name_changes_since is null or s.system_name_changes_since < excluded.last_seen_at - interval '1 day'
                                          then 0 else s.system_name_changes end)
                                    + excluded.system_name_changes end,
    (recent_polls, unsettled_bursts, unsettled_starts,
     polls_hour_started_at, polls_this_hour, polls_last_hour, uneven_polls_this_hour, uneven_polls_last_hour) = (
      select f.recent_polls, f.unsettled_bursts, f.unsettled_starts,
             case when h.later > 0 then excluded.last_seen_at else s.polls_hour_started_at end,
             case when h.later > 0 then f.polls else s.polls_this_hour + f.polls end,
             case h.later when 0 then s.polls_last_hour when 1 then s.polls_this_hour else 0 end,
             case when h.later > 0 then f.uneven else s.uneven_polls_this_hour + f.uneven end,
             case h.later when 0 then s.uneven_polls_last_hour when 1 then s.uneven_polls_this_hour else 0 end
        from cadence.settle_polls(s.recent_polls, s.unsettled_bursts, s.unsettled_starts,
                                  excluded.unsettled_bursts, excluded.unsettled_starts, p_poll_gap) as f,
             -- Hours since the counting hour began: a new one begins at the first write an hour after
             -- it (the hour before is then the ended one's counts, or none after two hours or none yet).
             lateral (select case when s.polls_hour_started_at is null
                                    or s.polls_hour_started_at + interval '2 hours' <= excluded.last_seen_at then 2
                                  when s.polls_hour_started_at + interval '1 hour' <= excluded.last_seen_at then 1
                                  else 0 end as later) as h)
$$;
comment on function cadence.record_kiosk_polls(text[], timestamptz[], inet[], text[], text[], text[], integer[], interval, text[], timestamptz[], timestamptz[], boolean[]) is
  'Records sightings of license keys (one per key in the first arrays: the latest wins; a sighting without a version keeps the held one) and the seat-check evidence of the same write: system names per key, and each burst of calls (p_burst_*: first and last call, whether it holds a kiosk start) formed with p_poll_gap, settled into the key''s polls.';

-- Kept for the API instances deployed before this migration (supabase/README.md, "Changing a
-- function the API calls"): their sightings and names are recorded; their calls and networks are
-- evidence no rule reads now. A later release drops it.
create or replace function cadence.record_kiosk_sightings(
  p_keys text[], p_seen_at timestamptz[], p_ips inet[], p_versions text[],
  p_calls integer[] default '{}', p_first_names text[] default '{}', p_last_names text[] default '{}', p_name_changes integer[] default '{}',
  p_net_keys text[] default '{}', p_networks cidr[] default '{}', p_net_first timestamptz[] default '{}',
  p_net_last timestamptz[] default '{}', p_net_calls integer[] default '{}', p_net_returns integer[] default '{}'
)
returns void
language sql
volatile
set search_path = ''
as $$
  select cadence.record_kiosk_polls(p_keys, p_seen_at, p_ips, p_versions, p_first_names, p_last_names, p_name_changes)
$$;
comment on function cadence.record_kiosk_sightings(text[], timestamptz[], inet[], text[], integer[], text[], text[], integer[], text[], cidr[], timestamptz[], timestamptz[], integer[], integer[]) is
  'For API instances deployed before 20261127000400: records their sightings and system names through cadence.record_kiosk_polls, without bursts.';

create or replace function cadence.seat_check_pass(p_now timestamptz)
returns integer
language sql
volatile
set search_path = ''
-- One scan of the sightings a minute: compiling it (JIT) costs more than it saves.
set jit = off
as $$
  -- Both rules in one scan of the sightings, the few keys over a threshold first; counts of a key
  -- not seen for two hours are stale and flag nothing.
  with found as (
    select s.license_key, r.rule
      from (select s.*, w.uneven_polls_to_flag, w.uneven_polls_share, w.name_changes_to_flag
              from public.kiosk_sightings as s cross join public.seat_watch as w
             where s.uneven_polls_this_hour + s.uneven_polls_last_hour >= w.uneven_polls_to_flag
                or s.system_name_changes >= w.name_changes_to_flag
            offset 0) as s
     cross join lateral unnest(array[
       case when s.uneven_polls_this_hour + s.uneven_polls_last_hour >= s.uneven_polls_to_flag
             and s.uneven_polls_this_hour + s.uneven_polls_last_hour >= s.uneven_polls_share * (s.polls_this_hour + s.polls_last_hour)
             and s.last_seen_at > p_now - interval '2 hours' then 'uneven_polls' end,
       case when s.system_name_changes >= s.name_changes_to_flag and s.system_name_changes_since > p_now - interval '1 day' then 'system_name_flips' end
     ]) as r(rule)
     where r.rule is not null
  ),
  flagged as (
    insert into public.seat_suspicions as q (license_key, rules, first_flagged_at, last_flagged_at)
    select f.license_key, array_agg(distinct f.rule order by f.rule), p_now, p_now
      from found as f
     where exists (select from public.license_keys as k where k.key = f.license_key)
     group by f.license_key
     order by f.license_key
    on conflict (license_key) do update set
      rules = array(select distinct r from unnest(q.rules || excluded.rules) as r order by r),
      last_flagged_at = greatest(q.last_flagged_at, excluded.last_flagged_at),
      flags = q.flags + 1
    returning 1
  )
  select count(*)::integer from flagged
$$;
comment on function cadence.seat_check_pass(timestamptz) is
  'The seat-check pass at p_now: records (public.seat_suspicions) every key a rule flags now (uneven_polls, system_name_flips); returns how many. The rules are in 20261127000400_seat_checks_uneven_polls.sql and 20261126000600_seat_checks.sql.';

-- What staff read: the rules, the uneven polls and the last polls' starts, which show the interleaving.
create view public.suspected_copies
with (security_invoker = true)
as
select q.license_key,
       (select a.email from public.accounts as a where a.id = cadence.license_key_owner(q.license_key)) as account_email,
       k.system_name,
       k.active,
       q.rules,
       q.first_flagged_at,
       q.last_flagged_at,
       q.flags,
       s.polls_this_hour,
       s.polls_last_hour,
       s.uneven_polls_this_hour,
       s.uneven_polls_last_hour,
       s.recent_polls,
       s.last_seen_ip,
       s.system_name_changes
  from public.seat_suspicions as q
  join public.license_keys as k on k.key = q.license_key
  left join public.kiosk_sightings as s on s.license_key = q.license_key
 where q.last_flagged_at > pg_catalog.now() - interval '1 day';
comment on view public.suspected_copies is
  'Staff: license keys suspected of being used by more than one kiosk in the last day, with the rules that found them and the evidence: polls and uneven polls this hour and the last, when the last five polls began, the latest client IP, system-name changes. A suspicion refuses nobody.';
revoke all on public.suspected_copies from anon, authenticated;

create or replace function cadence.seat_digest(p_now timestamptz)
returns table (recipient text, since timestamptz, suspects jsonb)
language plpgsql
stable
set search_path = ''
as $$
declare
  v_watch public.seat_watch;
begin
  -- Due once a day when staff set digest_to, and only when some key was flagged since the last one.
  -- The settings first, alone: the minute's usual answer (not due) costs one row's read.
  select * into v_watch from public.seat_watch as w;
  if v_watch.digest_to is null or v_watch.last_digest_at > p_now - interval '1 day' then
    return;
  end if;
  return query
  select v_watch.digest_to, v_watch.last_digest_at,
         pg_catalog.jsonb_agg(pg_catalog.jsonb_build_object(
           'licenseKey', q.license_key, 'systemName', k.system_name, 'rules', q.rules,
           'firstFlaggedAt', q.first_flagged_at, 'lastFlaggedAt', q.last_flagged_at,
           'unevenPolls', coalesce(s.uneven_polls_this_hour + s.uneven_polls_last_hour, 0)
         ) order by q.license_key)
    from public.seat_suspicions as q
    join public.license_keys as k on k.key = q.license_key
    left join public.kiosk_sightings as s on s.license_key = q.license_key
   where q.last_flagged_at > coalesce(v_watch.last_digest_at, '-infinity')
  having count(*) > 0;
end
$$;

revoke execute on function cadence.settle_polls(timestamptz[], tstzrange[], boolean[], tstzrange[], boolean[], interval) from public;
revoke execute on function cadence.record_kiosk_polls(text[], timestamptz[], inet[], text[], text[], text[], integer[], interval, text[], timestamptz[], timestamptz[], boolean[]) from public;
grant execute on function cadence.settle_polls(timestamptz[], tstzrange[], boolean[], tstzrange[], boolean[], interval) to service_role;
grant execute on function cadence.record_kiosk_polls(text[], timestamptz[], inet[], text[], text[], text[], integer[], interval, text[], timestamptz[], timestamptz[], boolean[]) to service_role;
