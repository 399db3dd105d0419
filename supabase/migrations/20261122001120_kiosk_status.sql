-- Every kiosk's health, one row per license key, for staff to filter and sort in the dashboard's
-- table editor: who owns the key, when a kiosk last called with it and from where, and whether it
-- holds the key's current schedule.
--
-- SECURITY INVOKER (a definer view in `public` is an error for Supabase's advisors): each reader
-- sees what the tables' privileges and policies let them see. Staff see every key; an account holder
-- sees the keys of their own account (the policies of the account-holder migrations, and the two
-- below); anon sees nothing.

-- The view reads two things account holders are not granted: the owner link and stored e-mail
-- that pair a key with its account, and the derived payload table. These helpers answer for one
-- key; the view calls them only for the license_keys rows its reader may see (the license_keys
-- policy filters first), and they live in `cadence`, which the Data API does not expose.

-- The owner's id only: the view reads the account itself under the accounts policy, so a holder
-- gets an e-mail for their own keys only.
create function cadence.license_key_owner(p_key text)
returns uuid
language sql
stable
security definer
set search_path = ''
as $$
  select a.id
  from public.license_keys as k
  join public.accounts as a on (a.id = k.account_id or pg_catalog.lower(a.email) = pg_catalog.lower(k.email)) and cadence.key_belongs_to(k, a)
  where k.key = p_key
$$;
comment on function cadence.license_key_owner(text) is
  'The id of the account a license key belongs to (cadence.key_belongs_to), or null. For public.kiosk_status.';

create function cadence.license_key_schedule_version(p_key text)
returns text
language sql
stable
security definer
set search_path = ''
as $$
  select p.version from public.license_schedule_payloads as p where p.license_key = p_key
$$;
comment on function cadence.license_key_schedule_version(text) is
  'The schedule version the API serves for a license key now (its ETag, unquoted). For public.kiosk_status.';

create view public.kiosk_status
with (security_invoker = true)
as
select k.key as license_key,
       a.email as account_email,
       k.system_name,
       k.active,
       k.last_validated_at,
       s.last_seen_at,
       s.last_seen_ip,
       s.schedule_version_held,
       v.version as schedule_version_current,
       -- Null while unknown: never seen, or seen only by calls that carry no schedule.
       s.schedule_version_held = v.version as schedule_is_current,
       case when s.last_seen_at is null then 'never_seen'
            when s.last_seen_at >= pg_catalog.now() - interval '15 minutes' then 'online'
            else 'offline' end as state
from public.license_keys as k
left join public.accounts as a on a.id = cadence.license_key_owner(k.key)
left join public.kiosk_sightings as s on s.license_key = k.key
cross join lateral (select cadence.license_key_schedule_version(k.key) as version) as v;
comment on view public.kiosk_status is
  'One row per license key: owner, kiosk name, last validation, last call (time, client IP), schedule version held and current, and state: online (seen in the last 15 minutes), offline, never_seen. Sightings are written every few seconds, at most every 30 s per key.';
comment on column public.kiosk_status.account_email is 'The owner''s e-mail by the pairing rule; null when no account pairs.';
comment on column public.kiosk_status.last_seen_at is 'The last call with the key that the API answered (validation, schedule reads, system name, entitled proclamations); null if never.';
comment on column public.kiosk_status.last_seen_ip is 'The client IP of that call (CLIENT_IP_HEADER decides); null when unknown.';
comment on column public.kiosk_status.schedule_version_held is 'The schedule version the kiosk holds: last sent in a 200, or named by its If-None-Match in a 304.';
comment on column public.kiosk_status.schedule_version_current is 'The version the API serves for the key now.';
comment on column public.kiosk_status.schedule_is_current is 'Whether the kiosk holds the current version; null if it never read a schedule.';
comment on column public.kiosk_status.state is 'online: seen in the last 15 minutes; offline: seen before; never_seen.';

revoke all on public.kiosk_status from anon, authenticated;

-- Account holders: the view, and the sightings of their own keys.
grant select on public.kiosk_status to authenticated;
grant select (license_key, last_seen_at, last_seen_ip, schedule_version_held) on public.kiosk_sightings to authenticated;
create policy "Account holders can read the sightings of their own keys"
  on public.kiosk_sightings for select to authenticated
  using (license_key = any ((select cadence.holder_license_keys())::text[]));

revoke execute on function cadence.license_key_owner(text) from public;
revoke execute on function cadence.license_key_schedule_version(text) from public;
grant execute on function cadence.license_key_owner(text) to authenticated, service_role;
grant execute on function cadence.license_key_schedule_version(text) to authenticated, service_role;
