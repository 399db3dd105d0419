-- Read the event delivery log: each endpoint, whether it is enabled, since when it fails and why,
-- and how many events wait for it. Every delivery, event by event: public.event_delivery_log
-- (state queued, sending, delivered or endpoint disabled; webhook_id is the message that carried it).
--
-- Nothing to replace. The result: one row per endpoint, the failing ones first.

select p.id, p.url, p.enabled, p.disabled_reason, p.failing_since, p.failures, p.last_error, p.next_attempt_at,
       (select count(*) from public.event_deliveries as d where d.endpoint_id = p.id and d.delivered_at is null) as waiting
  from public.event_endpoints as p
 order by p.failing_since nulls last, p.created_at;
