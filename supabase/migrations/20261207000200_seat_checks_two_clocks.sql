-- Seat checks find the copy that polls in step (issue 60): two_clocks beside uneven_polls.
--
-- A second device polling as often as the original (60 s, the usual jitter), started some seconds
-- after one of its polls, makes polls that uneven_polls judges even for as long as their offset
-- stays far from both neighbours: at 30 s the merged polls look like one kiosk polling every 30 s.
-- Two things still tell the two devices apart, when each calls from an address of its own:
--
-- - Each device keeps its own network poll after poll, so the key's polls alternate between two
--   networks (A, B, A, B, A). A network is a client as the rate limits count one (an IPv4 address,
--   an IPv6 /64: rate-limit-client.ts), so a copy in the original's /24 is on another network, and
--   a copy on IPv6 keeps its /64 while its privacy address changes. Honest kiosks change networks
--   otherwise: two WAN links balanced per call, or happy eyeballs, put both in one poll (a poll of
--   several networks is of none); a carrier's pool picks any of a thousand addresses per connection
--   (it returns to one within two polls one time in a thousand); DHCP and a restart change once.
--   Only two WAN links balanced round-robin across polls, for a kiosk that makes one call a poll,
--   alternate like a copy.
-- - They are two clocks. One kiosk's consecutive gaps are independent: each is its interval, jittered.
--   Two devices' merged gaps come in pairs that add up to one device's interval, while the
--   split between them (the offset of one device's polls from the other's) wanders, each device's
--   jitter moving it: consecutive gaps are anti-correlated. So the differences between consecutive
--   gaps (swing: (g - g')^2) grow with the wandering offset, while the change between consecutive
--   pairs' sums (drift: (g + g' - g'' - g''')^2) stays at the devices' jitter. For one kiosk, drift
--   is twice swing on average (independent gaps), the same for a steady timer; for two devices
--   it falls to a few hundredths as the offset wanders (test/bench/results.md, 2026-12-07).
--
-- two_clocks flags a key with two_clocks_polls_to_flag (20) alternating polls in the current and
-- previous hour whose drift is at most two_clocks_ratio (0.25) of their swing, and whose swing is at
-- least a second squared a poll (the offset wandered past the answers' noise). Two WAN links
-- balanced round-robin across polls, for a kiosk making one call a poll, alternate at every poll:
-- in 1,000 simulated days each (every 30 s and every 60 s, jitter 10 %), their drift was at least
-- 0.32 of their swing wherever 20 polls alternated (over 10, one fell to 0.22: too few to judge); an
-- in-step copy's is below 0.25 after a median 15-24 minutes, and either rule flags it after a median
-- 15-17, 96-100 % of starts within 30 minutes (test/simulate/seat-clocks-model.ts;
-- test/bench/results.md, 2026-12-07). A poll alternates when the last five polls came from two
-- networks in turn; its swing and drift are taken from the four gaps between them, all inside the
-- alternation, so a stretch where the two devices' polls came together (one poll of both networks)
-- never adds a gap that belongs to neither clock.
--
-- What stays indistinguishable (supabase/README.md's table): a copy whose polls fall within the
-- poll gap (5 s) of the original's is one poll of two networks, as two WAN links balanced per call
-- make, for as long as the jitter keeps it there; a copy behind the original's address (one
-- network) has its timing only (uneven_polls); two steady timers half a period apart are one kiosk
-- on a steady timer polling twice as often on two WAN links round-robin, until their clocks' skews
-- move the offset (hours).
--
-- Bounded per key, in the same polls value: a 32-bit tag of each unsettled burst's network (a hash
-- of the client, not its address), the last two polls' tags and how many polls in a row have
-- alternated, and the hour's counters: 67-76 bytes more a key (264-273 beside 197). The type is made again rather than extended,
-- so that every counter the pass reads sits before the arrays, at a fixed offset: appended after
-- them, the pass's scan walked six arrays per key to reach them (twice its CPU at 100,000 keys). The
-- write carries one integer per burst more; settling does a few more comparisons.

-- The view reads the column whose type changes: it goes, and comes back below with two columns more.
drop view public.suspected_copies;

alter type public.kiosk_polls rename to kiosk_polls_before_two_clocks;
-- The counters first, then the other fixed-width fields, then the arrays: the pass's scan of every
-- key reads the counters at a fixed offset, without walking the arrays.
create type public.kiosk_polls as (
  polls_this_hour integer,
  polls_last_hour integer,
  uneven_this_hour integer,
  uneven_last_hour integer,
  alternating_this_hour integer,
  alternating_last_hour integer,
  swing_this_hour real,
  swing_last_hour real,
  drift_this_hour real,
  drift_last_hour real,
  hour_started_at timestamptz,
  settled_until timestamptz,
  last_network integer,
  network_before integer,
  alternated integer,
  recent timestamptz[],
  firsts timestamptz[],
  lasts timestamptz[],
  starts boolean[],
  networks integer[]
);
comment on type public.kiosk_polls is
  'A key''s polls (seat checks: uneven_polls, two_clocks): polls, uneven polls and alternating polls settled this hour (since hour_started_at) and the hour before, with the sums of the alternating polls'' swing and drift (cadence.settle_polls); settled_until, the last call of the last settled burst; last_network and network_before, the last two polls'' network tags (null: several, or unknown), and alternated, how many polls in a row came from the other network than the poll before and the same as the one before it; recent, when its last six settled polls began, oldest first; firsts, lasts, starts and networks, its bursts of calls not yet settled (first and last call, whether it holds a kiosk start, its network tag), as written.';

alter table public.kiosk_sightings
  alter column polls type public.kiosk_polls using
    case when polls is not null then
      row((polls).polls_this_hour, (polls).polls_last_hour, (polls).uneven_this_hour, (polls).uneven_last_hour, 0, 0, 0, 0, 0, 0,
          (polls).hour_started_at, (polls).settled_until, null, null, 0, (polls).recent, (polls).firsts, (polls).lasts, (polls).starts,
          null)::public.kiosk_polls
    end;
comment on column public.kiosk_sightings.polls is 'The key''s polls (public.kiosk_polls): its last settled polls, its bursts still unsettled, the last two polls'' network tags, and its polls, uneven polls and alternating polls this hour and the last (seat checks: uneven_polls, two_clocks).';

alter table public.seat_watch
  add column two_clocks_polls_to_flag integer not null default 20
    constraint two_clocks_polls_to_flag_is_at_least_10 check (two_clocks_polls_to_flag >= 10),
  add column two_clocks_ratio real not null default 0.25
    constraint two_clocks_ratio_is_below_one check (two_clocks_ratio > 0 and two_clocks_ratio < 1);
comment on column public.seat_watch.two_clocks_polls_to_flag is
  'Alternating polls (the last five from two networks in turn: cadence.settle_polls) in the current and previous hour that flag two_clocks, with two_clocks_ratio: fewer judge the ratio too roughly (one kiosk''s fell to 0.22 over 10).';
comment on column public.seat_watch.two_clocks_ratio is
  'The most the alternating polls'' drift may be of their swing to flag two_clocks: one kiosk''s is 2 on average (1 on a steady timer), 0.32 at the least in 1,000 simulated days of two WAN links round-robin across polls; two devices'' falls to a few hundredths.';

alter table public.seat_suspicions
  drop constraint seat_suspicion_rules_are_known,
  add constraint seat_suspicion_rules_are_known
    check (rules <@ array['interleaved_networks', 'interleaved_families', 'poll_rate', 'system_name_flips', 'two_clocks', 'uneven_polls'] and cardinality(rules) > 0);

drop function cadence.settle_polls(public.kiosk_polls_before_two_clocks, timestamptz[], timestamptz[], boolean[], interval, timestamptz);

create function cadence.settle_polls(
  p_polls public.kiosk_polls, p_firsts timestamptz[], p_lasts timestamptz[], p_starts boolean[], p_gap interval, p_at timestamptz,
  p_networks integer[] default null
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
  -- A write from an instance deployed before the tags carries none: its bursts are of no network.
  v_networks integer[] := case when coalesce(cardinality(p_polls.networks), 0) = coalesce(cardinality(p_polls.firsts), 0)
                                and coalesce(cardinality(p_networks), 0) = coalesce(cardinality(p_firsts), 0)
                               then coalesce(p_polls.networks, '{}') || coalesce(p_networks, '{}') end;
  v_order integer[] := '{}';
  v_first timestamptz[] := '{}';
  v_last timestamptz[] := '{}';
  v_start boolean[] := '{}';
  v_network integer[] := '{}';
  v_polls timestamptz[] := coalesce(p_polls.recent, '{}');
  v_last_network integer := p_polls.last_network;
  v_network_before integer := p_polls.network_before;
  v_alternated integer := coalesce(p_polls.alternated, 0);
  v_settled_until timestamptz := p_polls.settled_until;
  v_settled integer := 0;
  v_uneven integer := 0;
  v_alternating integer := 0;
  v_swing float8 := 0;
  v_drift float8 := 0;
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
  -- Merged bursts keep their network when both had the same one; of two networks, a burst has none.
  foreach v_i in array v_order loop
    if v_n > 0 and v_firsts[v_i] - v_last[v_n] <= p_gap then
      v_last[v_n] := greatest(v_last[v_n], v_lasts[v_i]);
      v_start[v_n] := v_start[v_n] or v_starts[v_i];
      v_network[v_n] := case when v_network[v_n] = v_networks[v_i] then v_network[v_n] end;
    else
      v_n := v_n + 1;
      v_first[v_n] := v_firsts[v_i];
      v_last[v_n] := v_lasts[v_i];
      v_start[v_n] := v_starts[v_i];
      v_network[v_n] := v_networks[v_i];
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
      -- Two clocks (two_clocks): a poll from the other network than the poll before and the same
      -- as the one before that extends the run of such polls; three in a row are the last five
      -- polls from two networks in turn, each keeping its own. Their four gaps give this poll's
      -- swing (how far its gap is from the one before) and drift (how far the last pair's sum is
      -- from the pair's before): one kiosk's drift is twice its swing on average; two devices'
      -- pairs each add up to one device's interval while the split between them wanders, so their
      -- swing grows and their drift stays at the jitter.
      v_alternated := case when v_network[v_k] <> v_last_network and v_network[v_k] = v_network_before then v_alternated + 1 else 0 end;
      v_network_before := v_last_network;
      v_last_network := v_network[v_k];
      if v_alternated >= 3 and v_j >= 5 then
        v_alternating := v_alternating + 1;
        v_swing := v_swing + (v_g4 - v_g3) ^ 2;
        v_drift := v_drift + (v_g4 + v_g3 - v_g2 - v_g1) ^ 2;
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
    case when v_hours > 0 then 0 else p_polls.polls_this_hour end + v_settled,
    case v_hours when 0 then p_polls.polls_last_hour when 1 then p_polls.polls_this_hour else 0 end,
    case when v_hours > 0 then 0 else p_polls.uneven_this_hour end + v_uneven,
    case v_hours when 0 then p_polls.uneven_last_hour when 1 then p_polls.uneven_this_hour else 0 end,
    case when v_hours > 0 then 0 else p_polls.alternating_this_hour end + v_alternating,
    case v_hours when 0 then p_polls.alternating_last_hour when 1 then p_polls.alternating_this_hour else 0 end,
    case when v_hours > 0 then 0 else p_polls.swing_this_hour end + v_swing,
    case v_hours when 0 then p_polls.swing_last_hour when 1 then p_polls.swing_this_hour else 0 end,
    case when v_hours > 0 then 0 else p_polls.drift_this_hour end + v_drift,
    case v_hours when 0 then p_polls.drift_last_hour when 1 then p_polls.drift_this_hour else 0 end,
    case when v_hours > 0 then p_at else p_polls.hour_started_at end,
    v_settled_until, v_last_network, v_network_before, v_alternated,
    v_polls[greatest(1, v_j - 5):], v_first[v_k:v_n], v_last[v_k:v_n], v_start[v_k:v_n], v_network[v_k:v_n]
)::public.kiosk_polls;
end
$$;
comment on function cadence.settle_polls(public.kiosk_polls, timestamptz[], timestamptz[], boolean[], interval, timestamptz, integer[]) is
  'A key''s polls after a write at p_at: its unsettled bursts and this write''s (p_firsts, p_lasts, p_starts, p_networks) merged where less than p_gap apart, all but the last two settled into recent polls (the last six kept), each settled poll judged uneven or not (uneven_polls) and, when the last five came from two networks in turn, its gaps'' swing and drift summed (two_clocks), and the hour''s counts rolled.';

-- A parameter added: the old signature goes (a call with its thirteen arguments finds the new one,
-- its bursts of no network), so instances deployed before keep writing.
drop function cadence.record_kiosk_polls(text[], timestamptz[], inet[], text[], text[], text[], integer[], interval, integer[], integer[], timestamptz[], timestamptz[], boolean[]);

create function cadence.record_kiosk_polls(
  p_keys text[], p_seen_at timestamptz[], p_ips inet[], p_versions text[],
  p_first_names text[] default '{}', p_last_names text[] default '{}', p_name_changes integer[] default '{}',
  p_poll_gap interval default '5 seconds', p_burst_from integer[] default '{}', p_burst_count integer[] default '{}',
  p_burst_firsts timestamptz[] default '{}', p_burst_lasts timestamptz[] default '{}', p_burst_starts boolean[] default '{}',
  p_burst_networks integer[] default '{}'
)
returns void
language sql
set search_path = ''
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
         row(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, null, null, null, null, 0, null, p_burst_firsts[u.burst_from : u.burst_from + u.bursts - 1],
             p_burst_lasts[u.burst_from : u.burst_from + u.bursts - 1], p_burst_starts[u.burst_from : u.burst_from + u.bursts - 1],
             p_burst_networks[u.burst_from : u.burst_from + u.bursts - 1])::public.kiosk_polls
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
                 then cadence.settle_polls(s.polls, (excluded.polls).firsts, (excluded.polls).lasts, (excluded.polls).starts, p_poll_gap,
                                           excluded.last_seen_at, (excluded.polls).networks)
                 else row((s.polls).polls_this_hour, (s.polls).polls_last_hour, (s.polls).uneven_this_hour, (s.polls).uneven_last_hour,
                          (s.polls).alternating_this_hour, (s.polls).alternating_last_hour, (s.polls).swing_this_hour, (s.polls).swing_last_hour,
                          (s.polls).drift_this_hour, (s.polls).drift_last_hour, (s.polls).hour_started_at, (s.polls).settled_until,
                          (s.polls).last_network, (s.polls).network_before, (s.polls).alternated, (s.polls).recent,
                          (s.polls).firsts || (excluded.polls).firsts, (s.polls).lasts || (excluded.polls).lasts,
                          (s.polls).starts || (excluded.polls).starts, (s.polls).networks || (excluded.polls).networks)::public.kiosk_polls end
$$;
comment on function cadence.record_kiosk_polls(text[], timestamptz[], inet[], text[], text[], text[], integer[], interval, integer[], integer[], timestamptz[], timestamptz[], boolean[], integer[]) is
  'Records sightings of license keys (one per key in the first arrays: the latest wins; a sighting without a version keeps the held one) and the seat-check evidence of the same write: system names per key, and each key''s bursts of calls (first and last call, whether it holds a kiosk start, the tag of its network) formed with p_poll_gap, settled into its polls (public.kiosk_polls) every few writes.';

create or replace function cadence.seat_check_pass(p_now timestamptz)
returns integer
language sql
set search_path = ''
set jit = off
as $$
  -- Every rule in one scan of the sightings, the few keys over a threshold first; counts of a key
  -- not seen for two hours are stale and flag nothing.
  with found as (
    select s.license_key, r.rule
      from (select s.license_key, s.last_seen_at, s.system_name_changes, s.system_name_changes_since,
                   (s.polls).uneven_this_hour + (s.polls).uneven_last_hour as uneven, (s.polls).polls_this_hour + (s.polls).polls_last_hour as polls,
                   (s.polls).alternating_this_hour + (s.polls).alternating_last_hour as alternating,
                   (s.polls).swing_this_hour + (s.polls).swing_last_hour as swing, (s.polls).drift_this_hour + (s.polls).drift_last_hour as drift,
                   w.uneven_polls_to_flag, w.uneven_polls_share, w.name_changes_to_flag, w.two_clocks_polls_to_flag, w.two_clocks_ratio
              from public.kiosk_sightings as s cross join public.seat_watch as w
             where (s.polls).uneven_this_hour + (s.polls).uneven_last_hour >= w.uneven_polls_to_flag
                or s.system_name_changes >= w.name_changes_to_flag
                or (s.polls).alternating_this_hour + (s.polls).alternating_last_hour >= w.two_clocks_polls_to_flag
            offset 0) as s
     cross join lateral unnest(array[
       case when s.uneven >= s.uneven_polls_to_flag and s.uneven >= s.uneven_polls_share * s.polls
             and s.last_seen_at > p_now - interval '2 hours' then 'uneven_polls' end,
       case when s.system_name_changes >= s.name_changes_to_flag and s.system_name_changes_since > p_now - interval '1 day' then 'system_name_flips' end,
       -- two_clocks also needs the offset to have wandered past the answers' own noise: a swing of
       -- a second squared a poll at least. Two timers that never drift, half a period apart, swing
       -- by their answer times alone (tenths of a second), as one such kiosk on two WAN links
       -- round-robin does; their drift and swing are then alike, and 20 polls judge them roughly.
       case when s.alternating >= s.two_clocks_polls_to_flag and s.drift <= s.two_clocks_ratio * s.swing
             and s.swing >= s.alternating and s.last_seen_at > p_now - interval '2 hours' then 'two_clocks' end
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
  'The seat-check pass at p_now: records (public.seat_suspicions) every key a rule flags now (uneven_polls, system_name_flips, two_clocks); returns how many. The rules are in 20261127000400_seat_checks_uneven_polls.sql, 20261126000600_seat_checks.sql and 20261207000200_seat_checks_two_clocks.sql.';

drop type public.kiosk_polls_before_two_clocks;

-- What staff read, as before, with the alternating polls this hour and the last (two_clocks).
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
       s.system_name_changes,
       (s.polls).alternating_this_hour as alternating_polls_this_hour,
       (s.polls).alternating_last_hour as alternating_polls_last_hour
  from public.seat_suspicions as q
  join public.license_keys as k on k.key = q.license_key
  left join public.kiosk_sightings as s on s.license_key = q.license_key
 where q.last_flagged_at > pg_catalog.now() - interval '1 day';
comment on view public.suspected_copies is
  'Staff: license keys suspected of being used by more than one kiosk in the last day, with the rules that found them and the evidence: polls and uneven polls this hour and the last, when the last six polls began, the latest client IP, system-name changes, and the polls that alternated between two networks this hour and the last. A suspicion refuses nobody.';
revoke all on public.suspected_copies from anon, authenticated;

revoke execute on function cadence.settle_polls(public.kiosk_polls, timestamptz[], timestamptz[], boolean[], interval, timestamptz, integer[]) from public;
revoke execute on function cadence.record_kiosk_polls(text[], timestamptz[], inet[], text[], text[], text[], integer[], interval, integer[], integer[], timestamptz[], timestamptz[], boolean[], integer[]) from public;
grant execute on function cadence.settle_polls(public.kiosk_polls, timestamptz[], timestamptz[], boolean[], interval, timestamptz, integer[]) to service_role;
grant execute on function cadence.record_kiosk_polls(text[], timestamptz[], inet[], text[], text[], text[], integer[], interval, integer[], integer[], timestamptz[], timestamptz[], boolean[], integer[]) to service_role;
