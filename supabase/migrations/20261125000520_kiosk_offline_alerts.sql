-- Offline alerts. A pass, run before each outbox delivery (every minute: pg_cron and the `outbox`
-- function on Supabase, `npm start` locally), finds the kiosks that went dark and those seen again,
-- records each as an outage, and the same run queues one e-mail per account listing them all
-- (functions/app/kiosk/offline-alerts.ts renders it; the outbox delivers and retries it).
--
-- A kiosk goes dark when all of these hold at the pass's instant:
-- - its key is active, not muted by its holder, belongs to an account, and has been seen before
--   (a key no kiosk has used yet is not a dark kiosk);
-- - it should be playing now (cadence.playing_at: a block of the schedule it reads, in its zone);
-- - it has been unseen for its account's offline_alert_after, counted from the latest of: its last
--   sighting, the start of the block it should be playing (a screen switched off overnight gets the
--   whole threshold to call in after its block starts), and the start of Cadence's watch (below).
-- It comes back at the first pass that finds a sighting newer than the one it was last seen by.
--
-- Cadence's own outages. A kiosk's silence is evidence only while Cadence was there to hear it, so
-- the pass keeps `watching_since`, the start of its unbroken watch, and restarts it (to the pass's
-- instant: every kiosk gets a full threshold again) when
-- - the pass finds a gap in its own runs: the previous pass is older than `gap_after` (5 minutes),
--   as after the scheduler, the function or `npm start` was down; or
-- - Cadence is blind: no kiosk at all was seen for `blind_after` (2 minutes), as when the API was
--   down or unreachable while passes ran. A blind pass alerts nobody and records nothing.
-- Both are settings in public.kiosk_watch. Keep every account's offline_alert_after longer than
-- blind_after plus a poll interval (15 minutes against 2 + 1 by default): a kiosk last seen just
-- before the API went down is then found blind before it would be found dark. Cadence cannot tell a
-- fleet of one kiosk going dark from its own outage: for it, the pass stays silent.

create table public.kiosk_watch (
  id boolean primary key default true constraint kiosk_watch_is_one_row check (id),
  blind_after interval not null default interval '2 minutes'
    constraint blind_after_is_between_10_seconds_and_an_hour check (blind_after between interval '10 seconds' and interval '1 hour'),
  gap_after interval not null default interval '5 minutes'
    constraint gap_after_is_between_a_minute_and_a_day check (gap_after between interval '1 minute' and interval '1 day'),
  last_pass_at timestamptz,
  watching_since timestamptz,
  blind_since timestamptz
);
comment on table public.kiosk_watch is
  'One row: the offline-alert pass''s settings (blind_after, gap_after) and state. Staff may change the settings; the pass writes the rest.';
comment on column public.kiosk_watch.blind_after is 'No kiosk at all seen for this long: Cadence itself is down or unreachable, and no kiosk is reported dark.';
comment on column public.kiosk_watch.gap_after is 'The previous pass older than this: Cadence was not watching meanwhile, and every kiosk gets a full threshold again.';
comment on column public.kiosk_watch.watching_since is 'Since when the pass has watched without a gap or a blind spell: no kiosk counts as unseen from before.';
comment on column public.kiosk_watch.blind_since is 'When the current blind spell began; empty while kiosks are seen.';
insert into public.kiosk_watch default values;

create table public.kiosk_outages (
  id uuid primary key default gen_random_uuid(),
  license_key text not null
    constraint kiosk_outage_key_exists references public.license_keys (key) on update cascade on delete cascade,
  account_id uuid not null constraint kiosk_outage_account_exists references public.accounts (id) on delete cascade,
  dark_since timestamptz not null,
  last_seen_at timestamptz not null,
  alerted_at timestamptz not null,
  block_id uuid,
  alert_email_id uuid,
  back_at timestamptz,
  recovered_at timestamptz,
  recovery_email_id uuid,
  recovery_silent boolean not null default false,
  constraint kiosk_outage_ends_after_its_last_sighting check (back_at is null or back_at > last_seen_at),
  constraint kiosk_outage_end_is_recorded_whole check ((back_at is null) = (recovered_at is null))
);
comment on table public.kiosk_outages is
  'Written by the offline-alert pass, do not edit: each time a kiosk that should be playing went dark (the alert) and when it was seen again (the recovery).';
comment on column public.kiosk_outages.dark_since is 'From when it counts as unseen: the latest of its last sighting, its block''s start and the start of Cadence''s watch.';
comment on column public.kiosk_outages.last_seen_at is 'The last sighting before it went dark.';
comment on column public.kiosk_outages.alerted_at is 'The pass that found it dark.';
comment on column public.kiosk_outages.block_id is 'The block it should have been playing then.';
comment on column public.kiosk_outages.alert_email_id is 'The e-mail (public.email_outbox) that announced it; empty until queued.';
comment on column public.kiosk_outages.back_at is 'The sighting that ended it; empty while it lasts.';
comment on column public.kiosk_outages.recovered_at is 'The pass that found it back.';
comment on column public.kiosk_outages.recovery_email_id is 'The e-mail that announced the recovery; empty until queued, or when silent.';
comment on column public.kiosk_outages.recovery_silent is 'Ended without an e-mail: the key was muted or inactive when the kiosk came back.';
create unique index kiosk_outage_is_one_open_per_key on public.kiosk_outages (license_key) where back_at is null;
create index kiosk_outages_key_dark_since_idx on public.kiosk_outages (license_key, dark_since);
create index kiosk_outages_unannounced_idx on public.kiosk_outages (account_id)
  where alert_email_id is null or (back_at is not null and recovery_email_id is null and not recovery_silent);

create function cadence.kiosk_alert_pass(p_now timestamptz)
returns table (blind boolean, blind_began boolean, watch_restarted boolean, went_dark integer, came_back integer)
language plpgsql
volatile
set search_path = ''
as $$
declare
  v_watch public.kiosk_watch;
  v_newest timestamptz;
  v_gap boolean;
  v_blind boolean;
  v_since timestamptz;
  v_dark integer;
  v_back integer;
begin
  -- One pass at a time (npm start's sweep beside a cron job, say): the second waits, then sees what
  -- the first recorded, so no outage is opened twice.
  perform pg_catalog.pg_advisory_xact_lock(pg_catalog.hashtextextended('cadence.kiosk_alert_pass', 0));
  select * into v_watch from public.kiosk_watch as w for update;
  select max(s.last_seen_at) into v_newest from public.kiosk_sightings as s;
  v_gap := v_watch.last_pass_at is null or p_now - v_watch.last_pass_at > v_watch.gap_after;
  v_blind := v_newest is null or p_now - v_newest > v_watch.blind_after;
  v_since := case when v_gap or v_blind then p_now else coalesce(v_watch.watching_since, p_now) end;
  update public.kiosk_watch as w
     set last_pass_at = greatest(w.last_pass_at, p_now),
         watching_since = v_since,
         blind_since = case when v_blind then coalesce(w.blind_since, p_now) end;
  if v_blind then
    return query select true, v_watch.blind_since is null, true, 0, 0;
    return;
  end if;

  -- Seen again: a sighting newer than the one it went dark after. Silent when the key is muted or
  -- inactive by then.
  with back as (
    update public.kiosk_outages as o
       set back_at = s.last_seen_at, recovered_at = p_now, recovery_silent = k.alerts_muted or not k.active
      from public.kiosk_sightings as s, public.license_keys as k
     where o.back_at is null and s.license_key = o.license_key and k.key = o.license_key and s.last_seen_at > o.last_seen_at
    returning 1
  )
  select count(*)::integer into v_back from back;

  -- Gone dark. Sightings first (stale at all, by the shortest threshold there is), so a healthy
  -- fleet costs one scan; then the rules, then what plays now for the few left.
  with stale as (
    select k.key, s.last_seen_at, a.id as account_id, a.offline_alert_after
      from public.kiosk_sightings as s
      join public.license_keys as k on k.key = s.license_key
      join public.accounts as a
        on (a.id = k.account_id or pg_catalog.lower(a.email) = pg_catalog.lower(k.email)) and cadence.key_belongs_to(k, a)
     where greatest(s.last_seen_at, v_since) <= p_now - interval '1 minute'
       and greatest(s.last_seen_at, v_since) <= p_now - a.offline_alert_after
       and k.active and not k.alerts_muted
       and not exists (select from public.kiosk_outages as o where o.license_key = k.key and o.back_at is null)
  ),
  dark as (
    insert into public.kiosk_outages (license_key, account_id, dark_since, last_seen_at, alerted_at, block_id)
    select st.key, st.account_id, greatest(st.last_seen_at, v_since, least(p.started_at, p_now)), st.last_seen_at, p_now, p.block_id
      from cadence.playing_at(array(select st.key from stale as st), p_now) as p
      join stale as st on st.key = p.license_key
     where p.block_id is not null
       and greatest(st.last_seen_at, v_since, least(p.started_at, p_now)) <= p_now - st.offline_alert_after
    returning 1
  )
  select count(*)::integer into v_dark from dark;

  return query select false, false, v_gap, v_dark, v_back;
end
$$;
comment on function cadence.kiosk_alert_pass(timestamptz) is
  'The offline-alert pass at p_now: restarts the watch after a gap in passes or a blind spell (no kiosk seen), then records the kiosks seen again and those gone dark (the rules are in the migration that made it). Their e-mails are queued by cadence.queue_kiosk_alert_email.';

create function cadence.unannounced_kiosk_alerts()
returns table (account_id uuid, recipient text, display_name text, changes jsonb)
language sql
stable
set search_path = ''
as $$
  -- Per account, every recorded change no e-mail has announced yet: a crash between the pass and
  -- the e-mail leaves them here for the next run, so none is lost.
  select a.id, a.email, a.display_name,
         pg_catalog.jsonb_agg(pg_catalog.jsonb_build_object(
           'outageId', c.id,
           'kind', c.kind,
           'licenseKey', c.license_key,
           'systemName', k.system_name,
           'timeZone', z.zone,
           'lastSeenLocal', pg_catalog.to_char(c.last_seen_at at time zone z.zone, 'YYYY-MM-DD HH24:MI'),
           'backLocal', pg_catalog.to_char(c.back_at at time zone z.zone, 'YYYY-MM-DD HH24:MI'),
           'block', case when b.id is not null then pg_catalog.jsonb_build_object(
                      'weekday', b.weekday, 'startTime', pg_catalog.to_char(b.start_time, 'HH24:MI'), 'endTime', pg_catalog.to_char(b.end_time, 'HH24:MI')) end
         ) order by c.kind desc, c.license_key)
    from (
      select o.id, 'dark' as kind, o.account_id, o.license_key, o.last_seen_at, null::timestamptz as back_at, o.block_id
        from public.kiosk_outages as o where o.alert_email_id is null
      union all
      select o.id, 'back', o.account_id, o.license_key, o.last_seen_at, o.back_at, o.block_id
        from public.kiosk_outages as o
       where o.back_at is not null and o.recovery_email_id is null and not o.recovery_silent
    ) as c
    join public.accounts as a on a.id = c.account_id
    join public.license_keys as k on k.key = c.license_key
    cross join lateral (select coalesce(k.time_zone, a.time_zone) as zone) as z
    left join public.schedule_blocks as b on b.id = c.block_id
   group by a.id
$$;
comment on function cadence.unannounced_kiosk_alerts() is
  'Per account, the outages (kind dark) and recoveries (kind back) no e-mail has announced yet, with what the e-mail says of each.';

create function cadence.queue_kiosk_alert_email(
  p_dark uuid[], p_back uuid[], p_recipient text, p_subject text, p_text text, p_html text, p_now timestamptz
)
returns uuid
language plpgsql
volatile
set search_path = ''
as $$
declare
  v_id uuid;
begin
  -- All or nothing, under the rows' locks: a worker that rendered the same changes a moment later
  -- finds them announced and queues nothing, so the account gets one e-mail.
  perform from public.kiosk_outages as o where o.id = any (p_dark || p_back) order by o.id for update;
  if (select count(*) from public.kiosk_outages as o where o.id = any (p_dark) and o.alert_email_id is null) <> cardinality(p_dark)
     or (select count(*) from public.kiosk_outages as o
          where o.id = any (p_back) and o.back_at is not null and o.recovery_email_id is null and not o.recovery_silent) <> cardinality(p_back) then
    return null;
  end if;
  v_id := cadence.enqueue_email(p_recipient, p_subject, p_text, p_html, p_now);
  update public.kiosk_outages as o set alert_email_id = v_id where o.id = any (p_dark);
  update public.kiosk_outages as o set recovery_email_id = v_id where o.id = any (p_back);
  return v_id;
end
$$;
comment on function cadence.queue_kiosk_alert_email(uuid[], uuid[], text, text, text, text, timestamptz) is
  'Queues one e-mail announcing the given outages (p_dark) and recoveries (p_back) and records it on them, in one transaction; queues nothing and returns null when any was announced meanwhile.';

-- Each kiosk's uptime over the last 30 days: the share of that time outside its recorded outages
-- (an open outage counts until now). An account holder reads their own keys' rows.
create view public.kiosk_uptime
with (security_invoker = true)
as
select k.key as license_key,
       k.system_name,
       u.outages,
       u.downtime,
       pg_catalog.round((100 * (1 - extract(epoch from u.downtime) / extract(epoch from interval '30 days')))::numeric, 3) as uptime_percent
  from public.license_keys as k
 cross join lateral (
   select count(*)::integer as outages,
          coalesce(sum(greatest(interval '0',
                                least(coalesce(o.back_at, pg_catalog.now()), pg_catalog.now())
                                - greatest(o.dark_since, pg_catalog.now() - interval '30 days'))), interval '0') as downtime
     from public.kiosk_outages as o
    where o.license_key = k.key and coalesce(o.back_at, 'infinity') > pg_catalog.now() - interval '30 days'
 ) as u;
comment on view public.kiosk_uptime is
  'Per license key, over the last 30 days: the outages recorded by the offline alerts, the time they lasted (an open one until now), and the uptime as a percentage of the 30 days.';

-- kiosk_status: since when a kiosk counts as dark, while an outage is open.
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
       (select cadence.license_key_playing(k.key, pg_catalog.now())) as playing_now,
       (select o.dark_since from public.kiosk_outages as o where o.license_key = k.key and o.back_at is null) as dark_since
from public.license_keys as k
left join public.kiosk_sightings as s on s.license_key = k.key;
comment on column public.kiosk_status.dark_since is 'While the offline alerts count the kiosk as dark: since when (public.kiosk_outages); empty otherwise.';

alter table public.kiosk_watch enable row level security;
alter table public.kiosk_outages enable row level security;
revoke all on public.kiosk_watch, public.kiosk_outages from anon, authenticated;
revoke all on public.kiosk_uptime from anon, authenticated;

-- Account holders: the outages of their own keys (not which e-mails announced them), and the uptime.
grant select (id, license_key, dark_since, last_seen_at, alerted_at, back_at, recovered_at) on public.kiosk_outages to authenticated;
create policy "Account holders can read the outages of their own keys"
  on public.kiosk_outages for select to authenticated
  using (license_key = any ((select cadence.holder_license_keys())::text[]));
grant select on public.kiosk_uptime to authenticated;

revoke execute on function cadence.kiosk_alert_pass(timestamptz) from public;
revoke execute on function cadence.unannounced_kiosk_alerts() from public;
revoke execute on function cadence.queue_kiosk_alert_email(uuid[], uuid[], text, text, text, text, timestamptz) from public;
grant execute on function cadence.kiosk_alert_pass(timestamptz) to service_role;
grant execute on function cadence.unannounced_kiosk_alerts() to service_role;
grant execute on function cadence.queue_kiosk_alert_email(uuid[], uuid[], text, text, text, text, timestamptz) to service_role;
