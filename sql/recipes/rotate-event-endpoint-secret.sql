-- Rotate an event endpoint's secret: a new one is generated and returned; for 24 hours both the old
-- and the new secret sign every request (two v1 signatures in webhook-signature), so the receiver
-- can move to the new secret without losing a delivery. Then only the new one signs.
--
-- Replace the URL marked "replace" (and the overlap, if 24 hours is not right). The result: the
-- new secret, or no row when no endpoint has that URL.

select cadence.rotate_event_endpoint_secret(p.id, interval '24 hours') as new_secret  -- replace: the overlap
  from public.event_endpoints as p
 where p.url = 'https://hooks.example.com/cadence';  -- replace: the endpoint's URL
