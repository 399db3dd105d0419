-- Move an honest kiosk to a new license key, when its key is suspected of being copied
-- (public.suspected_copies). Issues a new key in the same account, active, and moves to it what the
-- old key had of its own: its schedule, time zone and alert muting. The old key stays as it is:
-- nobody is refused on a suspicion. Once the honest kiosk runs the new key, stop the old one with
-- deactivate-key.sql if staff decide to.
--
-- Replace the key marked "replace" (as written, it moves DEMO-0000-0000-0002's kiosk).
-- The result shows the new key (give it to the kiosk's owner) and the old one; no row means no
-- active key matched.

with old as (
  select k.key, k.account_id, k.email, k.time_zone, k.alerts_muted
    from public.license_keys as k
   where k.key = 'DEMO-0000-0000-0002'  -- replace: the suspected license key
     and k.active
), issued as (
  insert into public.license_keys (key, account_id, email, time_zone, alerts_muted)
  select pg_catalog.upper(pg_catalog.regexp_replace(pg_catalog.substr(pg_catalog.md5(gen_random_uuid()::text), 1, 16),
                                                   '(.{4})(.{4})(.{4})(.{4})', '\1-\2-\3-\4')),
         o.account_id, o.email, o.time_zone, o.alerts_muted
    from old as o
  returning key
), moved as (
  update public.schedules as s
     set license_key = (select i.key from issued as i)
    from old as o
   where s.license_key = o.key
  returning s.id
)
select i.key as new_key, o.key as old_key, (select count(*) from moved) as schedules_moved
  from issued as i cross join old as o;
