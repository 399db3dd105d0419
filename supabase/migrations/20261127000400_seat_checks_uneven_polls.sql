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
--   in a row on both sides of two that got through: none in a day at a fifth of its polls lost, 0.14 %
--   at a third, 0.8 % at half (a kiosk polling every 30 s: 240 polls in two hours, a few uneven at
--   most); a second device makes uneven a share of the key's polls near its own share of them.
--
-- Bounded per key, in the sightings row (one value, kiosk_sightings.polls): the last six polls'
-- starts and the bursts not yet settled, which a later write (another instance's) may still extend;
-- never a row per call or per network. A write appends its bursts (an expression); every fourth or
-- so settles them (cadence.settle_polls), so its cost is paid a quarter of the time. kiosk_networks
-- goes, with the settings only its rules read.

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
  'The least share of the key''s polls in the current and previous hour that must be uneven to flag uneven_polls: one device losing a third of its polls makes 0.14 % in a day, half of them 0.8 %, 60 % of them 2.2 % (and 5 % in some two hours).';

-- The evidence staff read changes shape: drop its view, and the table only the old rules wrote.
drop view public.suspected_copies;
drop table public.kiosk_networks;

-- One key's polls: what the seat checks keep of its calls between writes. The counts come first:
-- fixed-width fields before the arrays sit at a fixed offset, so the pass's scan of every key reads
-- them without walking the arrays.
create type public.kiosk_polls as (
  hour_started_at timestamptz,
  polls_this_hour integer,
  polls_last_hour integer,
  uneven_this_hour integer,
  uneven_last_hour integer,
  settled_until timestamptz,
  recent timestamptz[],
  firsts timestamptz[],
  lasts timestamptz[],
  starts boolean[]
);
comment on type public.kiosk_polls is
  'A key''s polls (seat checks: uneven_polls): polls and uneven polls settled this hour (since hour_started_at) and the hour before; settled_until, the last call of the last settled burst; recent, when its last six settled polls began, oldest first; firsts, lasts and starts, its bursts of calls not yet settled (first and last call, whether it holds a kiosk start), as written.';

alter table public.kiosk_sightings
  drop column calls_hour_started_at,
  drop column calls_this_hour,
  drop column calls_last_hour,
  add column polls public.kiosk_polls;
comment on column public.kiosk_sightings.polls is 'The key''s polls (public.kiosk_polls): its last settled polls, its bursts still unsettled, and its polls and uneven polls this hour and the last (seat checks: uneven_polls).';
-- Account holders read their own rows whole (a select * keeps working): times and counts of their
-- own kiosk's calls, no address.
grant select (polls) on public.kiosk_sightings to authenticated;

alter table public.seat_suspicions
  drop constraint seat_suspicion_rules_are_known,
  -- The rules of 20261126000600 and 20261126000700 stay known: the rows they flagged are history.
  add constraint seat_suspicion_rules_are_known
    check (rules <@ array['interleaved_networks', 'interleaved_families', 'poll_rate', 'system_name_flips', 'uneven_polls'] and cardinality(rules) > 0);

create function cadence.settle_polls(
  p_polls public.kiosk_polls, p_firsts timestamptz[], p_lasts timestamptz[], p_starts boolean[], p_gap interval, p_at timestamptz
)
returns public.kiosk_polls
language plpgsql
immutable
set search_path = ''
as $$
declare
  v_firsts timestamptz[] := coalesce(p_polls.firsts, '{}') || coalesce(p_firsts, '{}');
  v_lasts timestamptz[] := coalesce(p_polls.lasts, '{}') || coalesce(p_lasts, '{}');
  v_starts boolean[] := coalesce(p_polls.starts, '{}') || coalesce(p_starts, '{}');
  v_order integer[] := '{}';
  v_first timestamptz[] := '{}';
  v_last timestamptz[] := '{}';
  v_start boolean[] := '{}';
  v_polls timestamptz[] := coalesce(p_polls.recent, '{}');
  v_settled_until timestamptz := p_polls.settled_until;
  v_settled integer := 0;
  v_uneven integer := 0;
  v_hours integer;
  v_n integer := 0;
  v_i integer;
  v_j integer;
  v_k integer := 1;
  v_g0 float8;
  v_g1 float8;
  v_g2 float8;
  v_g3 float8;
  v_g4 float8;
  v_ratio float8;
  v_is_uneven boolean;
begin
  -- The bursts in time order (an insertion sort: a dozen at most), merged where less than p_gap
  -- apart (a poll whose calls reached two instances, or straddled a write). A burst that began
  -- within p_gap of the last settled burst's last call, or before, was part of what settled (a
  -- piece written late by another instance, or held across an outage): left out, never counted
  -- as a poll of its own.
  for v_i in 1 .. coalesce(cardinality(v_firsts), 0) loop
    continue when v_firsts[v_i] <= v_settled_until + p_gap;
    v_j := coalesce(cardinality(v_order), 0);
    v_order := v_order || v_i;
    while v_j > 0 and v_firsts[v_order[v_j]] > v_firsts[v_i] loop
      v_order[v_j + 1] := v_order[v_j];
      v_order[v_j] := v_i;
      v_j := v_j - 1;
    end loop;
  end loop;
  foreach v_i in array v_order loop
    if v_n > 0 and v_firsts[v_i] - v_last[v_n] <= p_gap then
      v_last[v_n] := greatest(v_last[v_n], v_lasts[v_i]);
      v_start[v_n] := v_start[v_n] or v_starts[v_i];
    else
      v_n := v_n + 1;
      v_first[v_n] := v_firsts[v_i];
      v_last[v_n] := v_lasts[v_i];
      v_start[v_n] := v_starts[v_i];
    end if;
  end loop;

  -- All but the last two settle: a burst settles once two newer ones began, so every part of it
  -- has been written (an instance holds a key's calls 35 s at most, two polls of a kiosk polling
  -- every 30 s). A settled poll joins recent; a settled start is dropped (the gap across it is the
  -- gap between the polls around it). Each settled poll judges the one before it.
  while v_n - v_k + 1 > 2 loop
    if not v_start[v_k] then
      v_polls := v_polls || v_first[v_k];
      v_settled := v_settled + 1;
      v_j := cardinality(v_polls);
      -- The last five gaps between settled polls, oldest first (null where there are fewer).
      v_g0 := pg_catalog.date_part('epoch', v_polls[v_j - 4] - v_polls[v_j - 5]);
      v_g1 := pg_catalog.date_part('epoch', v_polls[v_j - 3] - v_polls[v_j - 4]);
      v_g2 := pg_catalog.date_part('epoch', v_polls[v_j - 2] - v_polls[v_j - 3]);
      v_g3 := pg_catalog.date_part('epoch', v_polls[v_j - 1] - v_polls[v_j - 2]);
      v_g4 := pg_catalog.date_part('epoch', v_polls[v_j] - v_polls[v_j - 1]);
      -- Interleaved: the poll before this one came less than 0.3 of either neighbouring gap after
      -- its predecessor (g3 beside g2 and g4). One device's gaps are its interval (jitter of 10 %
      -- either way: 0.82 at least) or multiples where polls failed: with two lost in a row on each
      -- side, 0.27 to 0.41; below 0.3 mostly with three lost on each side (a share p^6 of its polls
      -- for a loss rate p). A crash loop's polls follow their starts by a whole interval. A second
      -- device's poll at a fraction f of the first's interval makes it f/(1-f): below 0.3 for f up to
      -- 0.23 either way, a band its jitter moves it through.
      v_is_uneven := v_j >= 4 and v_g3 < 0.3 * least(v_g2, v_g4);
      -- Alternating: the last five gaps alternate between two lengths (each within 2 % of the one
      -- two before), the shorter at most 0.85 of the longer: two devices whose timers never drift
      -- (setInterval), at a fraction of the interval the first test does not reach. One device with
      -- such timers has one length, or multiples where polls failed: ratios of 1/4, 1/3, 1/2, 2/3
      -- and 3/4 (within 0.02) are those, and not counted. A jittered device matches three times in a
      -- row by chance, a few of its polls a day at most (the corpus, test/bench/results.md).
      if not v_is_uneven and v_j >= 6 then
        v_ratio := least(v_g1, v_g2) / greatest(v_g1, v_g2);
        v_is_uneven := abs(v_g0 - v_g2) <= 0.02 * greatest(v_g0, v_g2)
                   and abs(v_g2 - v_g4) <= 0.02 * greatest(v_g2, v_g4)
                   and abs(v_g1 - v_g3) <= 0.02 * greatest(v_g1, v_g3)
                   and v_ratio <= 0.85
                   and abs(v_ratio - 0.25) > 0.02 and abs(v_ratio - 1.0 / 3) > 0.02 and abs(v_ratio - 0.5) > 0.02
                   and abs(v_ratio - 2.0 / 3) > 0.02 and abs(v_ratio - 0.75) > 0.02;
      end if;
      if v_is_uneven then
        v_uneven := v_uneven + 1;
      end if;
    end if;
    v_settled_until := v_last[v_k];
    v_k := v_k + 1;
  end loop;

  -- Hours since the counting hour began (p_at: the write's latest call): a new one begins at the
  -- first settling an hour after it, the hour before then holding the ended one's counts (none
  -- after two hours, or before any).
  v_hours := case when p_polls.hour_started_at is null or p_polls.hour_started_at + interval '2 hours' <= p_at then 2
                  when p_polls.hour_started_at + interval '1 hour' <= p_at then 1
                  else 0 end;
  v_j := cardinality(v_polls);
  return row(
    case when v_hours > 0 then p_at else p_polls.hour_started_at end,
    case when v_hours > 0 then 0 else p_polls.polls_this_hour end + v_settled,
    case v_hours when 0 then p_polls.polls_last_hour when 1 then p_polls.polls_this_hour else 0 end,
    case when v_hours > 0 then 0 else p_polls.uneven_this_hour end + v_uneven,
    case v_hours when 0 then p_polls.uneven_last_hour when 1 then p_polls.uneven_this_hour else 0 end,
    v_settled_until, v_polls[greatest(1, v_j - 5):], v_first[v_k:v_n], v_last[v_k:v_n], v_start[v_k:v_n]
  )::public.kiosk_polls;
end
$$;
comment on function cadence.settle_polls(public.kiosk_polls, timestamptz[], timestamptz[], boolean[], interval, timestamptz) is
  'A key''s polls after a write at p_at: its unsettled bursts and this write''s (p_firsts, p_lasts, p_starts) merged where less than p_gap apart, all but the last two settled into recent polls (the last six kept), each settled poll judged uneven or not (uneven_polls), and the hour''s counts rolled.';

create function cadence.record_kiosk_polls(
  p_keys text[], p_seen_at timestamptz[], p_ips inet[], p_versions text[],
  -- The seat-check evidence; a caller that has none (staff, a test) leaves it out.
  p_first_names text[] default '{}', p_last_names text[] default '{}', p_name_changes integer[] default '{}',
  p_poll_gap interval default interval '5 seconds',
  -- Each key's bursts of calls are p_burst_*[from : from + count - 1] (from, count: one per key).
  p_burst_from integer[] default '{}', p_burst_count integer[] default '{}',
  p_burst_firsts timestamptz[] default '{}', p_burst_lasts timestamptz[] default '{}', p_burst_starts boolean[] default '{}'
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
  -- unsettled. An existing one adds them to its own, an expression; once six or more are held, the
  -- write settles them instead (cadence.settle_polls): every fourth write of a key polled once
  -- between writes, so the function's cost (a few microseconds) is paid a quarter of the time.
  insert into public.kiosk_sightings as s (
    license_key, last_seen_at, last_seen_ip, schedule_version_held,
    system_name_written, system_name_changes, system_name_changes_since, polls)
  select u.key, u.seen_at, u.ip, u.version, u.last_name,
         -- A change is a written name other than the one before it: within this write (counted in
         -- memory), and this write's first name against the stored one.
         coalesce(u.name_changes, 0) + case when u.first_name <> old.system_name_written then 1 else 0 end,
         case when u.last_name is not null then u.seen_at end,
         row(null, 0, 0, 0, 0, null, null, p_burst_firsts[u.burst_from : u.burst_from + u.bursts - 1],
             p_burst_lasts[u.burst_from : u.burst_from + u.bursts - 1], p_burst_starts[u.burst_from : u.burst_from + u.bursts - 1])::public.kiosk_polls
  from unnest(p_keys, p_seen_at, p_ips, p_versions, p_first_names, p_last_names, p_name_changes, p_burst_from, p_burst_count)
       as u(key, seen_at, ip, version, first_name, last_name, name_changes, burst_from, bursts)
  left join public.kiosk_sightings as old on old.license_key = u.key
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
    polls = case when coalesce(cardinality((s.polls).firsts), 0) + coalesce(cardinality((excluded.polls).firsts), 0) >= 6
                 then cadence.settle_polls(s.polls, (excluded.polls).firsts, (excluded.polls).lasts, (excluded.polls).starts, p_poll_gap, excluded.last_seen_at)
                 else row((s.polls).hour_started_at, (s.polls).polls_this_hour, (s.polls).polls_last_hour, (s.polls).uneven_this_hour,
                          (s.polls).uneven_last_hour, (s.polls).settled_until, (s.polls).recent, (s.polls).firsts || (excluded.polls).firsts,
                          (s.polls).lasts || (excluded.polls).lasts, (s.polls).starts || (excluded.polls).starts)::public.kiosk_polls end
$$;
comment on function cadence.record_kiosk_polls(text[], timestamptz[], inet[], text[], text[], text[], integer[], interval, integer[], integer[], timestamptz[], timestamptz[], boolean[]) is
  'Records sightings of license keys (one per key in the first arrays: the latest wins; a sighting without a version keeps the held one) and the seat-check evidence of the same write: system names per key, and each key''s bursts of calls (first and last call, whether it holds a kiosk start) formed with p_poll_gap, settled into its polls (public.kiosk_polls) every few writes.';

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
      from (select s.license_key, s.last_seen_at, s.system_name_changes, s.system_name_changes_since,
                   (s.polls).uneven_this_hour + (s.polls).uneven_last_hour as uneven, (s.polls).polls_this_hour + (s.polls).polls_last_hour as polls,
                   w.uneven_polls_to_flag, w.uneven_polls_share, w.name_changes_to_flag
              from public.kiosk_sightings as s cross join public.seat_watch as w
             where (s.polls).uneven_this_hour + (s.polls).uneven_last_hour >= w.uneven_polls_to_flag
                or s.system_name_changes >= w.name_changes_to_flag
            offset 0) as s
     cross join lateral unnest(array[
       case when s.uneven >= s.uneven_polls_to_flag and s.uneven >= s.uneven_polls_share * s.polls
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

-- What staff read: the rules, the polls and uneven polls, and the last six polls' starts, which show the interleaving.
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
       (s.polls).polls_this_hour,
       (s.polls).polls_last_hour,
       (s.polls).uneven_this_hour as uneven_polls_this_hour,
       (s.polls).uneven_last_hour as uneven_polls_last_hour,
       (s.polls).recent as recent_polls,
       s.last_seen_ip,
       s.system_name_changes
  from public.seat_suspicions as q
  join public.license_keys as k on k.key = q.license_key
  left join public.kiosk_sightings as s on s.license_key = q.license_key
 where q.last_flagged_at > pg_catalog.now() - interval '1 day';
comment on view public.suspected_copies is
  'Staff: license keys suspected of being used by more than one kiosk in the last day, with the rules that found them and the evidence: polls and uneven polls this hour and the last, when the last six polls began, the latest client IP, system-name changes. A suspicion refuses nobody.';
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
           'unevenPolls', coalesce((s.polls).uneven_this_hour + (s.polls).uneven_last_hour, 0)
         ) order by q.license_key)
    from public.seat_suspicions as q
    join public.license_keys as k on k.key = q.license_key
    left join public.kiosk_sightings as s on s.license_key = q.license_key
   where q.last_flagged_at > coalesce(v_watch.last_digest_at, '-infinity')
  having count(*) > 0;
end
$$;

revoke execute on function cadence.settle_polls(public.kiosk_polls, timestamptz[], timestamptz[], boolean[], interval, timestamptz) from public;
revoke execute on function cadence.record_kiosk_polls(text[], timestamptz[], inet[], text[], text[], text[], integer[], interval, integer[], integer[], timestamptz[], timestamptz[], boolean[]) from public;
grant execute on function cadence.settle_polls(public.kiosk_polls, timestamptz[], timestamptz[], boolean[], interval, timestamptz) to service_role;
grant execute on function cadence.record_kiosk_polls(text[], timestamptz[], inet[], text[], text[], text[], integer[], interval, integer[], integer[], timestamptz[], timestamptz[], boolean[]) to service_role;
