-- Seat checks across address families: a copy whose first kiosk polls over IPv6 and whose second
-- polls over IPv4 (or the reverse) made no return under interleaved_networks, which compares networks
-- of one family only, so that a dual-stack kiosk switching between its venue's IPv4 address and its
-- /64 (happy eyeballs) is not a copy. Left to poll_rate, such a copy was found only at the end of its
-- first complete hour of calls (after 1-2 hours). A new rule counts returns across families apart,
-- under two conditions an honest dual-stack kiosk does not meet:
--
-- - interleaved_families: a call back on a network at least half of interleave_window (45 s) and at
--   most interleave_window (90 s) after that network's previous call, with a call from the other
--   family between; family_returns_to_flag (20) of them in the current and previous hour.
--
-- Why these conditions. One kiosk polling every 60 s makes three calls within 90 s only around a
-- start (validation, system-name write, first read, about a second apart), so whatever family each of
-- its calls takes, it returns across families only there: a burst's calls are less than 45 s apart
-- (no return), which leaves at most two returns per start (the burst's first call back on the network
-- of the poll before it, and the next poll back on a network of the burst). A kiosk restarted six
-- times in an hour makes at most 12, ten restarts in two hours at most 20. Two kiosks on one key, one
-- per family, return at every poll of either (each network's calls are one poll apart, the other's
-- call between): about 2 a minute, so 20 are reached about 10 minutes after the second device starts.
-- A kiosk polling every 10 s alternating families makes its returns 20 s apart (none); one polling
-- every 30-45 s and alternating families at every call returns at every poll and is flagged (as
-- poll_rate flags any kiosk polling more often than every 40 s).
--
-- Comparing families with returns_to_flag (3), as interleaved_networks does, would flag a dual-stack
-- kiosk restarted twice; poll_rate alone (it does see both kiosks' calls, 120 an hour) waits for a
-- complete hour. Within one write (a key is written at most every 30 s) a network's calls are less
-- than 45 s apart, so the returns across families are counted in SQL only, across writes.

alter table public.kiosk_networks
  add column family_returns_this_hour integer not null default 0,
  add column family_returns_last_hour integer not null default 0;
comment on column public.kiosk_networks.family_returns_this_hour is 'Calls back on this network after a call from the other address family, between half of interleave_window and interleave_window after its own previous call, since returns_hour_started_at (interleaved_families).';
comment on column public.kiosk_networks.family_returns_last_hour is 'The same in the hour before.';

drop index public.kiosk_networks_returning_idx;
create index kiosk_networks_returning_idx on public.kiosk_networks (license_key)
  where returns_this_hour + returns_last_hour + family_returns_this_hour + family_returns_last_hour > 0;

alter table public.seat_watch
  add column family_returns_to_flag integer not null default 20
    constraint family_returns_to_flag_is_at_least_returns_to_flag check (family_returns_to_flag >= returns_to_flag);
comment on column public.seat_watch.family_returns_to_flag is 'Returns across address families in the current and previous hour that flag interleaved_families: above the two per start a dual-stack kiosk can make (ten restarts in two hours).';

alter table public.seat_suspicions
  drop constraint seat_suspicion_rules_are_known,
  add constraint seat_suspicion_rules_are_known
    check (rules <@ array['interleaved_networks', 'interleaved_families', 'poll_rate', 'system_name_flips'] and cardinality(rules) > 0);

create or replace function cadence.record_kiosk_sightings(
  p_keys text[], p_seen_at timestamptz[], p_ips inet[], p_versions text[],
  -- The seat-check evidence; a caller that has none (staff, a test) leaves it out: one call per key.
  p_calls integer[] default '{}', p_first_names text[] default '{}', p_last_names text[] default '{}', p_name_changes integer[] default '{}',
  p_net_keys text[] default '{}', p_networks cidr[] default '{}', p_net_first timestamptz[] default '{}',
  p_net_last timestamptz[] default '{}', p_net_calls integer[] default '{}', p_net_returns integer[] default '{}'
)
returns void
language sql
volatile
set search_path = ''
-- A short statement over many rows: compiling it (JIT, which its estimated cost at 100,000 keys
-- would trigger) costs more than it saves.
set jit = off
as $$
  -- A network's call is a return when another network of the same family (IPv4, IPv6) called with
  -- the key between it and this network's previous call, and that previous call is within
  -- interleave_window: what the instance counted in memory, plus the return across writes (the
  -- stored previous call, and another network's calls stored or in this write). A return across
  -- families is counted apart, across writes only, and only when this network's previous call is at
  -- least half of interleave_window before (20261126000700_seat_checks_across_families.sql says why).
  --
  -- Only keys seen from more than one network have rows: a key seen from the network of its stored
  -- latest call, with no row yet, writes none (an honest kiosk costs a look-up). A key seen from
  -- another network starts rows for both, the stored call's network from that call. Runs before the
  -- sightings below, whose stored latest call it reads.
  with b as (
    select * from unnest(p_net_keys, p_networks, p_net_first, p_net_last, p_net_calls, p_net_returns)
                  as b(key, network, first_at, last_at, calls, returns)
  ),
  -- Per key in this write: its networks, the network of its stored latest call, whether it has rows.
  keyed as (
    select g.key, g.networks, g.firsts, g.lasts, old.last_seen_at as prior_at, old.calls_this_hour as prior_calls,
           pg_catalog.network(pg_catalog.set_masklen(old.last_seen_ip, case when pg_catalog.family(old.last_seen_ip) = 6 then 64 else 32 end)) as prior_network,
           exists (select from public.kiosk_networks as e where e.license_key = g.key) as tracked
      from (select b.key, array_agg(b.network) as networks, array_agg(b.first_at) as firsts, array_agg(b.last_at) as lasts
              from b group by b.key) as g
      left join public.kiosk_sightings as old on old.license_key = g.key
  ),
  written as (
    select b.key, b.network, b.first_at, b.last_at, b.calls, b.returns
      from b join keyed as t on t.key = b.key
     where t.tracked or cardinality(t.networks) > 1 or t.prior_network <> b.network
    union all
    select t.key, t.prior_network, t.prior_at, t.prior_at, greatest(t.prior_calls, 1), 0
      from keyed as t
     where not t.tracked and t.prior_network <> all (t.networks)
  ),
  -- Per written network: whether another network of the same family, and whether one of the other
  -- family, called since this network's stored previous call (x) and before this write's first call.
  between_calls as (
    select b.key, b.network, b.first_at, b.last_at, b.calls, b.returns,
           b.first_at - x.last_seen_at as gap,
           (select pg_catalog.bool_or(pg_catalog.family(o.network) = pg_catalog.family(b.network))
              from (select y.network from public.kiosk_networks as y
                     where y.license_key = b.key and y.network <> b.network
                       and y.last_seen_at > x.last_seen_at and y.last_seen_at < b.first_at
                    union all
                    select o.network from unnest(t.networks, t.firsts, t.lasts) as o(network, first_at, last_at)
                     where o.network <> b.network and o.last_at > x.last_seen_at and o.first_at < b.first_at) as o) as same_family,
           (select pg_catalog.bool_or(pg_catalog.family(o.network) <> pg_catalog.family(b.network))
              from (select y.network from public.kiosk_networks as y
                     where y.license_key = b.key
                       and y.last_seen_at > x.last_seen_at and y.last_seen_at < b.first_at
                    union all
                    select o.network from unnest(t.networks, t.firsts, t.lasts) as o(network, first_at, last_at)
                     where o.last_at > x.last_seen_at and o.first_at < b.first_at) as o) as other_family
      from written as b
      join keyed as t on t.key = b.key
      left join public.kiosk_networks as x on x.license_key = b.key and x.network = b.network
  )
  insert into public.kiosk_networks as n (
    license_key, network, first_seen_at, last_seen_at, calls, returns_hour_started_at, returns_this_hour, family_returns_this_hour)
  select b.key, b.network, b.first_at, b.last_at, b.calls, b.last_at,
         b.returns + case when b.gap > interval '0' and b.gap <= w.interleave_window and b.same_family then 1 else 0 end,
         case when b.gap >= w.interleave_window / 2 and b.gap <= w.interleave_window and b.other_family then 1 else 0 end
  from between_calls as b
  cross join public.seat_watch as w
  where exists (select from public.license_keys as k where k.key = b.key)
  order by b.key, b.network
  on conflict (license_key, network) do update set
    first_seen_at = least(n.first_seen_at, excluded.first_seen_at),
    last_seen_at = greatest(n.last_seen_at, excluded.last_seen_at),
    calls = n.calls + excluded.calls,
    returns_hour_started_at = case when excluded.last_seen_at >= n.returns_hour_started_at + interval '1 hour'
                                   then excluded.last_seen_at else n.returns_hour_started_at end,
    returns_last_hour = case when excluded.last_seen_at >= n.returns_hour_started_at + interval '2 hours' then 0
                             when excluded.last_seen_at >= n.returns_hour_started_at + interval '1 hour' then n.returns_this_hour
                             else n.returns_last_hour end,
    returns_this_hour = case when excluded.last_seen_at >= n.returns_hour_started_at + interval '1 hour'
                             then excluded.returns_this_hour else n.returns_this_hour + excluded.returns_this_hour end,
    family_returns_last_hour = case when excluded.last_seen_at >= n.returns_hour_started_at + interval '2 hours' then 0
                                    when excluded.last_seen_at >= n.returns_hour_started_at + interval '1 hour' then n.family_returns_this_hour
                                    else n.family_returns_last_hour end,
    family_returns_this_hour = case when excluded.last_seen_at >= n.returns_hour_started_at + interval '1 hour'
                                    then excluded.family_returns_this_hour else n.family_returns_this_hour + excluded.family_returns_this_hour end;

  -- Several instances write concurrently, each what it saw: the latest sighting wins, and a sighting
  -- that names no version (a validation) keeps the version a schedule read recorded. Rows are taken
  -- in key order, so two instances' statements cannot deadlock. The seat-check counts add up: an
  -- hour's calls roll into the previous hour at the first write an hour after the hour began.
  insert into public.kiosk_sightings as s (
    license_key, last_seen_at, last_seen_ip, schedule_version_held,
    calls_hour_started_at, calls_this_hour, system_name_written, system_name_changes, system_name_changes_since)
  select u.key, u.seen_at, u.ip, u.version, u.seen_at, coalesce(u.calls, 1), u.last_name,
         -- A change is a written name other than the one before it: within this write (counted in
         -- memory), and this write's first name against the stored one.
         coalesce(u.name_changes, 0) + case when u.first_name <> old.system_name_written then 1 else 0 end,
         case when u.last_name is not null then u.seen_at end
  from unnest(p_keys, p_seen_at, p_ips, p_versions, p_calls, p_first_names, p_last_names, p_name_changes)
       as u(key, seen_at, ip, version, calls, first_name, last_name, name_changes)
  left join public.kiosk_sightings as old on old.license_key = u.key
  where exists (select from public.license_keys as k where k.key = u.key)
  order by u.key
  on conflict (license_key) do update set
    last_seen_at = greatest(s.last_seen_at, excluded.last_seen_at),
    last_seen_ip = case when excluded.last_seen_at >= s.last_seen_at then excluded.last_seen_ip else s.last_seen_ip end,
    schedule_version_held = case when excluded.last_seen_at >= s.last_seen_at
                                 then coalesce(excluded.schedule_version_held, s.schedule_version_held)
                                 else coalesce(s.schedule_version_held, excluded.schedule_version_held) end,
    calls_hour_started_at = case when s.calls_hour_started_at is null or excluded.last_seen_at >= s.calls_hour_started_at + interval '1 hour'
                                 then excluded.last_seen_at else s.calls_hour_started_at end,
    calls_last_hour = case when s.calls_hour_started_at is null then 0
                           when excluded.last_seen_at >= s.calls_hour_started_at + interval '2 hours' then 0
                           when excluded.last_seen_at >= s.calls_hour_started_at + interval '1 hour' then s.calls_this_hour
                           else s.calls_last_hour end,
    calls_this_hour = case when s.calls_hour_started_at is null or excluded.last_seen_at >= s.calls_hour_started_at + interval '1 hour'
                           then excluded.calls_this_hour else s.calls_this_hour + excluded.calls_this_hour end,
    system_name_written = coalesce(excluded.system_name_written, s.system_name_written),
    system_name_changes_since = case when excluded.system_name_written is null then s.system_name_changes_since
                                     when s.system_name_changes_since is null or s.system_name_changes_since < excluded.last_seen_at - interval '1 day'
                                     then excluded.last_seen_at else s.system_name_changes_since end,
    system_name_changes = case when excluded.system_name_written is null then s.system_name_changes
                               else (case when s.system_name_changes_since is null or s.system_name_changes_since < excluded.last_seen_at - interval '1 day'
                                          then 0 else s.system_name_changes end)
                                    + excluded.system_name_changes end;
$$;

create or replace function cadence.seat_check_pass(p_now timestamptz)
returns integer
language sql
volatile
set search_path = ''
-- One scan of the sightings a minute: compiling it (JIT) costs more than it saves.
set jit = off
as $$
  -- Evidence older than a day goes (a scan of the keys seen from several networks, a small table);
  -- then each rule names its keys, from rows seen in the last two hours (a kiosk gone quiet keeps no
  -- stale count alive).
  with gone as (
    delete from public.kiosk_networks as n where n.last_seen_at < p_now - interval '1 day'
  ),
  -- A key left with one network (its others a day old) is an honest single-network key again: it
  -- leaves the evidence, so its writes cost a look-up only.
  alone as (
    delete from public.kiosk_networks as n
     using (select e.license_key from public.kiosk_networks as e
             group by e.license_key
            having count(*) filter (where e.last_seen_at >= p_now - interval '1 day') <= 1) as single
     where n.license_key = single.license_key
  ),
  found as (
    -- Both interleaving rules in one read of the networks with returns (a partial index).
    select n.license_key, r.rule
      from (select n.license_key, w.returns_to_flag, w.family_returns_to_flag,
                   sum(n.returns_this_hour + n.returns_last_hour) as returns,
                   sum(n.family_returns_this_hour + n.family_returns_last_hour) as family_returns
              from public.kiosk_networks as n cross join public.seat_watch as w
             where n.returns_this_hour + n.returns_last_hour + n.family_returns_this_hour + n.family_returns_last_hour > 0
               and n.last_seen_at > p_now - interval '2 hours'
             group by n.license_key, w.returns_to_flag, w.family_returns_to_flag) as n
     cross join lateral unnest(array[
       case when n.returns >= n.returns_to_flag then 'interleaved_networks' end,
       case when n.family_returns >= n.family_returns_to_flag then 'interleaved_families' end
     ]) as r(rule)
     where r.rule is not null
    union all
    -- Both per-key rules in one scan of the sightings, the few keys over a threshold first.
    select s.license_key, r.rule
      from (select s.*, w.calls_per_hour_limit, w.name_changes_to_flag
              from public.kiosk_sightings as s cross join public.seat_watch as w
             where s.calls_last_hour > w.calls_per_hour_limit or s.system_name_changes >= w.name_changes_to_flag
            offset 0) as s
     cross join lateral unnest(array[
       case when s.calls_last_hour > s.calls_per_hour_limit and s.last_seen_at > p_now - interval '2 hours' then 'poll_rate' end,
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
  'The seat-check pass at p_now: deletes network evidence older than a day, then records (public.seat_suspicions) every key a rule flags now; returns how many. The rules are in 20261126000600_seat_checks.sql and, interleaved_families, 20261126000700_seat_checks_across_families.sql.';

-- The evidence staff read gains each network's returns across families.
create or replace view public.suspected_copies
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
       s.calls_last_hour,
       s.calls_this_hour,
       s.system_name_changes,
       (select pg_catalog.jsonb_agg(pg_catalog.jsonb_build_object(
                 'network', n.network, 'firstSeenAt', n.first_seen_at, 'lastSeenAt', n.last_seen_at,
                 'calls', n.calls, 'returns', n.returns_this_hour + n.returns_last_hour,
                 'returnsAcrossFamilies', n.family_returns_this_hour + n.family_returns_last_hour) order by n.last_seen_at desc)
          from public.kiosk_networks as n where n.license_key = q.license_key) as networks
  from public.seat_suspicions as q
  join public.license_keys as k on k.key = q.license_key
  left join public.kiosk_sightings as s on s.license_key = q.license_key
 where q.last_flagged_at > pg_catalog.now() - interval '1 day';
comment on view public.suspected_copies is
  'Staff: license keys suspected of being used by more than one kiosk in the last day, with the rules that found them and the evidence: each network (IPv4 address, IPv6 /64) with its first and last call, calls, returns and returns across address families; calls per hour; system-name changes. A suspicion refuses nobody.';
