-- What each kiosk of an account should be playing now: its time zone and local time, the block of
-- the schedule it reads (its own, else its account's) that plays now, with its start, end and
-- proclamations by name in order, and whether the kiosk is seen and whether an offline alert counts
-- it as dark. A kiosk outside every block shows an empty block. Change `now()` to a moment of your
-- choice ('2026-12-24 18:00+01') to see what would play then.
--
-- Replace the e-mail marked "replace" with the account's.

with account_keys as (
  select k.key
    from public.license_keys as k
    join public.accounts as a on a.id = k.belongs_to
   where lower(a.email) = lower('demo@example.com')  -- replace: the account's e-mail
)
select p.license_key, k.system_name, k.active, p.time_zone, p.local_time,
       p.block_id, p.weekday, p.start_time, p.end_time, p.started_on,
       array(select pr.name from unnest(p.proclamation_ids) with ordinality as u(id, position)
               join public.proclamations as pr on pr.id = u.id order by u.position) as proclamations,
       s.last_seen_at,
       o.dark_since
  from cadence.playing_at(array(select ak.key from account_keys as ak), now()) as p  -- replace now() to look at another moment
  join public.license_keys as k on k.key = p.license_key
  left join public.kiosk_sightings as s on s.license_key = p.license_key
  left join public.kiosk_outages as o on o.license_key = p.license_key and o.back_at is null
 order by p.license_key;
