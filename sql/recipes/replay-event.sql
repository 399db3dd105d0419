-- Replay events to an endpoint: each goes again, in the order it was recorded, with its own id and
-- sequence, so a receiver that has it already drops it. For a receiver that lost data, or an
-- endpoint enabled again after it was disabled (select cadence.enable_event_endpoint(id)).
-- public.event_delivery_log shows each delivery, these included (replay true).
--
-- Replace the key, the time and the URL marked "replace". The result: how many events were queued.

select count(cadence.replay_event(e.id, p.id)) as queued
  from (select e.id from public.events as e
         where e.license_key = 'DEMO-0000-0000-0001'        -- replace: the license key
           and e.occurred_at >= now() - interval '1 day'      -- replace: since when
         order by e."position"
        offset 0) as e
  cross join public.event_endpoints as p
 where p.url = 'https://hooks.example.com/cadence';           -- replace: the endpoint's URL
