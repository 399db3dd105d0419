-- One answer to "is this kiosk offline" (issue 39): kiosk_status.state said `online` for 15 minutes
-- whatever the account's offline_alert_after, so with a 1-minute threshold the offline e-mail went
-- out and dark_since was set while the row still said `online`. The state now uses the threshold
-- the offline alerts use: the account's offline_alert_after (15 minutes for a key of no account,
-- the column's default).
create function cadence.license_key_offline_after(p_key text)
returns interval
language plpgsql
stable
security definer
set search_path = ''
as $$
begin
  -- PL/pgSQL, so the plan is kept across the rows of a page (see cadence.license_key_time_zone).
  return coalesce(
    (select a.offline_alert_after from public.accounts as a where a.id = cadence.license_key_owner(p_key)),
    interval '15 minutes');
end
$$;
comment on function cadence.license_key_offline_after(text) is
  'How long a license key''s kiosk may stay unseen before it counts as offline: its account''s offline_alert_after, else 15 minutes. For public.kiosk_status.';

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
            when s.last_seen_at > pg_catalog.now() - (select cadence.license_key_offline_after(k.key)) then 'online'
            else 'offline' end as state,
       (select cadence.license_key_time_zone(k.key)) as time_zone,
       (select pg_catalog.now() at time zone cadence.license_key_time_zone(k.key)) as local_time,
       (select cadence.license_key_playing(k.key, pg_catalog.now())) as playing_now,
       (select o.dark_since from public.kiosk_outages as o where o.license_key = k.key and o.back_at is null) as dark_since
from public.license_keys as k
left join public.kiosk_sightings as s on s.license_key = k.key;
comment on column public.kiosk_status.state is
  'online: seen within its account''s offline_alert_after (15 minutes without an account), the threshold of the offline alerts; offline: seen before that; never_seen.';

revoke execute on function cadence.license_key_offline_after(text) from public;
grant execute on function cadence.license_key_offline_after(text) to authenticated, service_role;
