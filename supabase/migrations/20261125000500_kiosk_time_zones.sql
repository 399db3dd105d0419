-- Each kiosk's local time. A schedule's blocks are wall-clock times a kiosk plays in its own local
-- time, so Cadence needs each kiosk's time zone to know what it should be playing now and whether
-- its silence matters. An account has a zone (UTC unless set); a license key may have its own (null:
-- its account's). Both are IANA names, set by staff in the dashboard, or by the account holder
-- through the Data API for their own account and keys (the grants and policies below).
--
-- The account also holds its alert settings (how long a kiosk that should be playing may stay
-- unseen before its holder is e-mailed), and each key whether its holder muted those e-mails.

-- Kiosk reads lock license_keys, then accounts (their queries name them in that order), so this
-- migration alters them in that order too: applied in one transaction (the local server's
-- migrate.ts), altering accounts first deadlocked the polls running meanwhile
-- (test/schedule/schedule-payloads-migration.test.ts).
alter table public.license_keys
  add column time_zone text,
  add column alerts_muted boolean not null default false;
comment on column public.license_keys.time_zone is
  'The kiosk''s IANA time zone (pg_timezone_names); empty: its account''s.';
comment on column public.license_keys.alerts_muted is
  'When true, the account holder gets no e-mail when this kiosk goes dark or comes back.';

alter table public.accounts
  add column time_zone text not null default 'UTC',
  add column offline_alert_after interval not null default interval '15 minutes'
    -- At least a minute: kiosks poll every minute, and their sightings are written up to ~35 s
    -- after the call (functions/app/kiosk/sightings.ts), so a shorter span alerts on healthy kiosks.
    constraint offline_alert_after_is_between_a_minute_and_a_week
      check (offline_alert_after between interval '1 minute' and interval '7 days');
comment on column public.accounts.time_zone is
  'The IANA time zone (pg_timezone_names) of the account''s kiosks, unless a key has its own; UTC by default.';
comment on column public.accounts.offline_alert_after is
  'How long a kiosk that should be playing may stay unseen before the account holder is e-mailed (1 minute to 7 days; 15 minutes by default).';

-- Why a trigger, not a CHECK constraint: the names come from pg_timezone_names, which reads the time
-- zone database of the server; it is stable, not immutable, and changes with a Postgres or tzdata
-- upgrade. A CHECK through a function falsely marked immutable would be re-checked on a dump's
-- restore and refuse rows whose zone a newer tzdata renamed, and Postgres is entitled to cache its
-- result. A trigger checks what it should: the name is known when it is written. It raises with a
-- constraint name, as a CHECK would, so a refused edit names the rule and the zone.
create function cadence.check_time_zone()
returns trigger
language plpgsql
volatile
set search_path = ''
as $$
declare
  -- Zones this transaction already checked: reading pg_timezone_names costs ~30 ms (it opens every
  -- zone file), so a bulk edit that sets one zone on many rows reads it once.
  v_checked text := coalesce(pg_catalog.current_setting('cadence.checked_time_zones', true), '');
begin
  if new.time_zone is null or pg_catalog.strpos(v_checked, '|' || new.time_zone || '|') > 0 then
    return new;
  end if;
  if not exists (select from pg_catalog.pg_timezone_names as z where z.name = new.time_zone) then
    raise exception using
      errcode = 'check_violation',
      constraint = 'time_zone_is_known',
      message = pg_catalog.format('unknown time zone %L: use an IANA name such as Europe/Berlin (pg_timezone_names lists them)', new.time_zone),
      table = tg_table_name,
      column = 'time_zone';
  end if;
  perform pg_catalog.set_config('cadence.checked_time_zones', v_checked || '|' || new.time_zone || '|', true);
  return new;
end
$$;
comment on function cadence.check_time_zone() is
  'Trigger: refuses a time_zone that pg_timezone_names does not list (constraint time_zone_is_known), naming it.';

create trigger time_zone_is_known
  before insert or update of time_zone on public.accounts
  for each row when (new.time_zone is not null) execute function cadence.check_time_zone();
create trigger time_zone_is_known
  before insert or update of time_zone on public.license_keys
  for each row when (new.time_zone is not null) execute function cadence.check_time_zone();

-- Account holders: read and change their account's zone and alert threshold, and their keys' zone
-- and mute switch. Nothing else of either table becomes writable to them.
grant select (time_zone, offline_alert_after) on public.accounts to authenticated;
grant update (time_zone, offline_alert_after) on public.accounts to authenticated;
create policy "Account holders can change their own account's alert settings"
  on public.accounts for update to authenticated
  using (auth_user_id = (select auth.uid()))
  with check (auth_user_id = (select auth.uid()));

grant select (time_zone, alerts_muted) on public.license_keys to authenticated;
grant update (time_zone, alerts_muted) on public.license_keys to authenticated;
create policy "Account holders can change the alert settings of their keys"
  on public.license_keys for update to authenticated
  using (key = any ((select cadence.holder_license_keys())::text[]))
  with check (key = any ((select cadence.holder_license_keys())::text[]));

revoke execute on function cadence.check_time_zone() from public;
