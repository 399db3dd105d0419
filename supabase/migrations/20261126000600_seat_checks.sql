-- Seat checks: a license key used by more than one kiosk, seen passively. Cadence sells one key per
-- kiosk, and kiosks send no device fingerprint; the evidence is in the calls they already make. It
-- rides on the sightings flush (functions/app/kiosk/sightings.ts): each instance counts, in memory,
-- what it saw of a key between writes, and the one statement that writes its sightings also writes
-- these counts. A kiosk request writes nothing more than before. A pass in the scheduled run (every
-- minute) turns the counts into suspicions; staff read them, account holders read their own keys'
-- flags, and a daily digest e-mails staff. Cadence never refuses a kiosk on a suspicion.
--
-- The rules (each one's reach is in supabase/README.md, "Seat checks"):
-- - interleaved_networks: the key's calls come back to a network (an IPv4 address, or an IPv6 /64)
--   after a call from another network of the same family, within interleave_window of its own
--   previous call, at least returns_to_flag times in the current and previous hour. One address
--   replacing another never comes back; two kiosks on two networks come back every poll. Families
--   are not compared: a dual-stack kiosk switching between them is not a copy.
-- - poll_rate: more successful calls in a completed hour than calls_per_hour_limit (one kiosk
--   polling every 60 s makes 60, plus 2-3 at each start).
-- - system_name_flips: the system name the kiosk writes changed name_changes_to_flag times within
--   a day. A rename changes it once; two kiosks writing their own names flip it at each start.

create table public.seat_watch (
  id boolean primary key default true constraint seat_watch_is_one_row check (id),
  digest_to text
    constraint seat_digest_to_is_an_email check (digest_to ~ '^[^@[:space:]]+@[^@[:space:]]+$'),
  interleave_window interval not null default interval '90 seconds'
    constraint interleave_window_is_between_10_seconds_and_an_hour check (interleave_window between interval '10 seconds' and interval '1 hour'),
  returns_to_flag integer not null default 3
    constraint returns_to_flag_is_at_least_2 check (returns_to_flag >= 2),
  calls_per_hour_limit integer not null default 90
    constraint calls_per_hour_limit_is_positive check (calls_per_hour_limit > 0),
  name_changes_to_flag integer not null default 3
    constraint name_changes_to_flag_is_at_least_2 check (name_changes_to_flag >= 2),
  last_digest_at timestamptz
);
comment on table public.seat_watch is
  'One row: the seat checks'' settings (staff may change them) and when the last digest was queued (the pass writes it).';
comment on column public.seat_watch.digest_to is 'Where the daily digest of suspected copies goes; empty (the default): no digest.';
comment on column public.seat_watch.interleave_window is 'A call back on a network within this long of that network''s previous call, with another network''s call between, is a return: about one poll interval and a half.';
comment on column public.seat_watch.returns_to_flag is 'Returns in the current and previous hour that flag interleaved_networks.';
comment on column public.seat_watch.calls_per_hour_limit is 'More calls than this in a completed hour flag poll_rate: about 1.5 times what one kiosk makes (60 at a 60 s poll).';
comment on column public.seat_watch.name_changes_to_flag is 'Changes of the written system name within a day that flag system_name_flips.';
insert into public.seat_watch default values;

-- Per key and network: the evidence of interleaving, for the keys seen from more than one network in
-- the last day only (the pass deletes older rows, and a key left with one). Written by the sightings
-- flush only.
create table public.kiosk_networks (
  license_key text not null,
  network cidr not null,
  first_seen_at timestamptz not null,
  last_seen_at timestamptz not null,
  calls bigint not null constraint kiosk_network_calls_are_counted check (calls > 0),
  returns_hour_started_at timestamptz not null,
  returns_this_hour integer not null default 0,
  returns_last_hour integer not null default 0,
  constraint kiosk_network_is_one_per_key_and_network primary key (license_key, network)
)
-- Room on each page for the next version of a row: a write changes no indexed column of an honest
-- key's row, so it stays on its page (a HOT update) and touches no index.
with (fillfactor = 70);
comment on table public.kiosk_networks is
  'Written by the API, do not edit: for each license key seen from more than one network in the last day, each network (IPv4 address, IPv6 /64), its calls and its returns (seat checks). Read public.suspected_copies.';
comment on column public.kiosk_networks.returns_this_hour is 'Calls back on this network after another network''s call, within interleave_window of its own previous call, since returns_hour_started_at.';
comment on column public.kiosk_networks.returns_last_hour is 'The same in the hour before.';
create index kiosk_networks_returning_idx on public.kiosk_networks (license_key)
  where returns_this_hour + returns_last_hour > 0;

alter table public.kiosk_sightings
  add column calls_hour_started_at timestamptz,
  add column calls_this_hour integer not null default 0,
  add column calls_last_hour integer not null default 0,
  add column system_name_written text,
  add column system_name_changes integer not null default 0,
  add column system_name_changes_since timestamptz;
comment on column public.kiosk_sightings.calls_this_hour is 'Successful calls since calls_hour_started_at (seat checks: poll_rate).';
comment on column public.kiosk_sightings.calls_last_hour is 'Successful calls in the hour before calls_hour_started_at.';
comment on column public.kiosk_sightings.system_name_written is 'The system name the kiosk last wrote (PUT system-name).';
comment on column public.kiosk_sightings.system_name_changes is 'Changes of the written name since system_name_changes_since, a day at most (seat checks: system_name_flips).';

drop function cadence.record_kiosk_sightings(text[], timestamptz[], inet[], text[]);

create function cadence.record_kiosk_sightings(
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
  -- stored previous call, and another network's calls stored or in this write).
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
  )
  insert into public.kiosk_networks as n (
    license_key, network, first_seen_at, last_seen_at, calls, returns_hour_started_at, returns_this_hour)
  select b.key, b.network, b.first_at, b.last_at, b.calls, b.last_at,
         b.returns + case when x.last_seen_at is not null
                           and b.first_at > x.last_seen_at
                           and b.first_at - x.last_seen_at <= w.interleave_window
                           and (exists (select from public.kiosk_networks as y
                                         where y.license_key = b.key and y.network <> b.network
                                           and pg_catalog.family(y.network) = pg_catalog.family(b.network)
                                           and y.last_seen_at > x.last_seen_at and y.last_seen_at < b.first_at)
                                or exists (select from unnest(t.networks, t.firsts, t.lasts) as o(network, first_at, last_at)
                                            where o.network <> b.network
                                              and pg_catalog.family(o.network) = pg_catalog.family(b.network)
                                              and o.last_at > x.last_seen_at and o.first_at < b.first_at))
                          then 1 else 0 end
  from written as b
  join keyed as t on t.key = b.key
  cross join public.seat_watch as w
  left join public.kiosk_networks as x on x.license_key = b.key and x.network = b.network
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
                             then excluded.returns_this_hour else n.returns_this_hour + excluded.returns_this_hour end;

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
comment on function cadence.record_kiosk_sightings(text[], timestamptz[], inet[], text[], integer[], text[], text[], integer[], text[], cidr[], timestamptz[], timestamptz[], integer[], integer[]) is
  'Records sightings of license keys (one per key in the first arrays: the latest wins; a sighting without a version keeps the held one) and the seat-check evidence of the same write: calls and system names per key, calls and returns per key and network.';

-- What the pass found: one row per key ever suspected, kept as its history.
create table public.seat_suspicions (
  license_key text primary key
    constraint seat_suspicion_key_exists references public.license_keys (key) on update cascade on delete cascade,
  rules text[] not null
    constraint seat_suspicion_rules_are_known check (rules <@ array['interleaved_networks', 'poll_rate', 'system_name_flips'] and cardinality(rules) > 0),
  first_flagged_at timestamptz not null,
  last_flagged_at timestamptz not null,
  flags integer not null default 1
);
comment on table public.seat_suspicions is
  'Written by the seat-check pass, do not edit: each license key suspected of being used by more than one kiosk, the rules that found it, when first and last (a key flagged within a day is suspected now), and in how many passes.';
create index seat_suspicions_last_flagged_idx on public.seat_suspicions (last_flagged_at);

create function cadence.seat_check_pass(p_now timestamptz)
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
    select n.license_key, 'interleaved_networks' as rule
      from public.kiosk_networks as n cross join public.seat_watch as w
     where n.returns_this_hour + n.returns_last_hour > 0 and n.last_seen_at > p_now - interval '2 hours'
     group by n.license_key, w.returns_to_flag
    having sum(n.returns_this_hour + n.returns_last_hour) >= w.returns_to_flag
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
  'The seat-check pass at p_now: deletes network evidence older than a day, then records (public.seat_suspicions) every key a rule flags now; returns how many. The rules are in the migration that made it.';

-- Staff: every key suspected within the last day, with its evidence.
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
       s.calls_last_hour,
       s.calls_this_hour,
       s.system_name_changes,
       (select pg_catalog.jsonb_agg(pg_catalog.jsonb_build_object(
                 'network', n.network, 'firstSeenAt', n.first_seen_at, 'lastSeenAt', n.last_seen_at,
                 'calls', n.calls, 'returns', n.returns_this_hour + n.returns_last_hour) order by n.last_seen_at desc)
          from public.kiosk_networks as n where n.license_key = q.license_key) as networks
  from public.seat_suspicions as q
  join public.license_keys as k on k.key = q.license_key
  left join public.kiosk_sightings as s on s.license_key = q.license_key
 where q.last_flagged_at > pg_catalog.now() - interval '1 day';
comment on view public.suspected_copies is
  'Staff: license keys suspected of being used by more than one kiosk in the last day, with the rules that found them and the evidence: each network (IPv4 address, IPv6 /64) with its first and last call, calls and returns; calls per hour; system-name changes. A suspicion refuses nobody.';

create function cadence.seat_digest(p_now timestamptz)
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
           'networks', coalesce(n.networks, 0)
         ) order by q.license_key)
    from public.seat_suspicions as q
    join public.license_keys as k on k.key = q.license_key
    left join lateral (select count(*)::integer as networks from public.kiosk_networks as n where n.license_key = q.license_key) as n on true
   where q.last_flagged_at > coalesce(v_watch.last_digest_at, '-infinity')
  having count(*) > 0;
end
$$;
comment on function cadence.seat_digest(timestamptz) is
  'The daily digest due at p_now: its recipient, the previous digest''s time and the keys flagged since; no row when digest_to is empty, a digest went out within a day, or nothing was flagged since.';

create function cadence.queue_seat_digest(p_since timestamptz, p_subject text, p_text text, p_html text, p_now timestamptz)
returns uuid
language plpgsql
volatile
set search_path = ''
as $$
declare
  v_watch public.seat_watch;
  v_id uuid;
begin
  -- Under the settings row's lock: a worker that rendered the same digest a moment later finds it
  -- queued (last_digest_at moved) and queues nothing.
  select * into v_watch from public.seat_watch as w for update;
  if v_watch.digest_to is null or v_watch.last_digest_at is distinct from p_since then
    return null;
  end if;
  v_id := cadence.enqueue_email(v_watch.digest_to, p_subject, p_text, p_html, p_now);
  update public.seat_watch as w set last_digest_at = p_now;
  return v_id;
end
$$;
comment on function cadence.queue_seat_digest(timestamptz, text, text, text, timestamptz) is
  'Queues the digest to seat_watch.digest_to and records it, unless another worker did since p_since (the previous digest''s time); returns the e-mail''s id, or null.';

alter table public.seat_watch enable row level security;
alter table public.kiosk_networks enable row level security;
alter table public.seat_suspicions enable row level security;
revoke all on public.seat_watch, public.kiosk_networks, public.seat_suspicions, public.suspected_copies from anon, authenticated;

-- Account holders: their own keys' flags and the counts on their sightings (granted with the rest of
-- the row, so a holder's select * keeps working), not the networks (which name whoever copied).
grant select (calls_hour_started_at, calls_this_hour, calls_last_hour, system_name_written, system_name_changes, system_name_changes_since)
  on public.kiosk_sightings to authenticated;
grant select (license_key, rules, first_flagged_at, last_flagged_at) on public.seat_suspicions to authenticated;
create policy "Account holders can read the seat flags of their own keys"
  on public.seat_suspicions for select to authenticated
  using (license_key = any ((select cadence.holder_license_keys())::text[]));

revoke execute on function cadence.record_kiosk_sightings(text[], timestamptz[], inet[], text[], integer[], text[], text[], integer[], text[], cidr[], timestamptz[], timestamptz[], integer[], integer[]) from public;
revoke execute on function cadence.seat_check_pass(timestamptz) from public;
revoke execute on function cadence.seat_digest(timestamptz) from public;
revoke execute on function cadence.queue_seat_digest(timestamptz, text, text, text, timestamptz) from public;
grant execute on function cadence.record_kiosk_sightings(text[], timestamptz[], inet[], text[], integer[], text[], text[], integer[], text[], cidr[], timestamptz[], timestamptz[], integer[], integer[]) to service_role;
grant execute on function cadence.seat_check_pass(timestamptz) to service_role;
grant execute on function cadence.seat_digest(timestamptz) to service_role;
grant execute on function cadence.queue_seat_digest(timestamptz, text, text, text, timestamptz) to service_role;
