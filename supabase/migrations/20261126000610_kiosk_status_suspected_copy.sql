-- kiosk_status: whether the key is suspected of being used by more than one kiosk (the seat checks,
-- 20261126000600_seat_checks.sql). The view as 20261126000310_kiosk_status_offline_rule.sql left it
-- (its state by the account's offline_alert_after), with one column added at the end; an account holder sees it for their own keys (their policy on
-- public.seat_suspicions).
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
       (select o.dark_since from public.kiosk_outages as o where o.license_key = k.key and o.back_at is null) as dark_since,
       exists (select from public.seat_suspicions as q
                where q.license_key = k.key and q.last_flagged_at > pg_catalog.now() - interval '1 day') as suspected_copy
from public.license_keys as k
left join public.kiosk_sightings as s on s.license_key = k.key;
comment on column public.kiosk_status.suspected_copy is
  'Flagged by the seat checks within the last day: the key may be used by more than one kiosk (public.suspected_copies has the evidence). Nobody is refused for it.';
