-- When a kiosk last called with its license key, from where, and which schedule version it holds.
-- The API records sightings in memory and writes them off the request path, every few seconds,
-- all keys in one statement (functions/app/kiosk/sightings.ts).
--
-- A table of its own, so a sighting touches nothing a kiosk waits on: no payload trigger fires, and
-- no lock on license_keys is taken. That is also why license_key has no foreign key: its check
-- takes FOR KEY SHARE on the key's row, which a validation's FOR UPDATE (cadence.validate_licenses)
-- would make it wait for, and make wait. Rows are written for existing keys only, and deleting a key
-- deletes its sighting (below).

create table public.kiosk_sightings (
  license_key text primary key,
  last_seen_at timestamptz not null,
  -- Null when the call's client IP was unknown (http/client-ip.ts).
  last_seen_ip inet,
  -- The version last sent to the kiosk in a 200, or named by its If-None-Match in a 304; null until
  -- it reads a schedule.
  schedule_version_held text
    constraint schedule_version_held_is_a_version check (schedule_version_held ~ '^[0-9a-f]{64}$')
);
comment on table public.kiosk_sightings is
  'Written by the API, do not edit: the last call a kiosk made with each license key. Read public.kiosk_status.';

alter table public.kiosk_sightings enable row level security;
revoke all on public.kiosk_sightings from anon, authenticated;

create function cadence.record_kiosk_sightings(p_keys text[], p_seen_at timestamptz[], p_ips inet[], p_versions text[])
returns void
language sql
volatile
set search_path = ''
as $$
  -- Several instances write concurrently, each what it saw: the latest sighting wins, and a sighting
  -- that names no version (a validation) keeps the version a schedule read recorded. Rows are taken
  -- in key order, so two instances' statements cannot deadlock.
  insert into public.kiosk_sightings as s (license_key, last_seen_at, last_seen_ip, schedule_version_held)
  select u.key, u.seen_at, u.ip, u.version
  from unnest(p_keys, p_seen_at, p_ips, p_versions) as u(key, seen_at, ip, version)
  where exists (select from public.license_keys as k where k.key = u.key)
  order by u.key
  on conflict (license_key) do update set
    last_seen_at = greatest(s.last_seen_at, excluded.last_seen_at),
    last_seen_ip = case when excluded.last_seen_at >= s.last_seen_at then excluded.last_seen_ip else s.last_seen_ip end,
    schedule_version_held = case when excluded.last_seen_at >= s.last_seen_at
                                 then coalesce(excluded.schedule_version_held, s.schedule_version_held)
                                 else coalesce(s.schedule_version_held, excluded.schedule_version_held) end
$$;
comment on function cadence.record_kiosk_sightings(text[], timestamptz[], inet[], text[]) is
  'Records sightings of license keys (one per key in the arrays): the latest wins; a sighting without a version keeps the held one.';

create function cadence.forget_deleted_key_sightings()
returns trigger
language plpgsql
volatile
set search_path = ''
as $$
begin
  delete from public.kiosk_sightings as s where s.license_key in (select o.key from old_rows as o);
  return null;
end
$$;
comment on function cadence.forget_deleted_key_sightings() is 'Trigger: a deleted license key''s sighting goes with it.';

create trigger sightings_forget after delete on public.license_keys
  referencing old table as old_rows for each statement execute function cadence.forget_deleted_key_sightings();

revoke execute on function cadence.record_kiosk_sightings(text[], timestamptz[], inet[], text[]) from public;
revoke execute on function cadence.forget_deleted_key_sightings() from public;
grant execute on function cadence.record_kiosk_sightings(text[], timestamptz[], inet[], text[]) to service_role;
