-- Events delivered within seconds on Supabase too (issue 61): a pg_cron job may now ask every second
-- whether an endpoint is due with something to send (cadence.events_are_due) and call the delivery
-- only then (supabase/README.md, the events job). The claim asks the same question of each endpoint
-- through cadence.endpoint_owes_events, so what "owes" means is written once.

CREATE FUNCTION cadence.endpoint_owes_events(p_endpoint uuid) RETURNS boolean
    LANGUAGE sql STABLE
    SET search_path TO ''
    AS $$
  select exists (select from public.event_batches as b where b.endpoint_id = p_endpoint and b.delivered_at is null)
      or exists (select from public.event_deliveries as d where d.endpoint_id = p_endpoint and d.batch_id is null)
$$;

COMMENT ON FUNCTION cadence.endpoint_owes_events(p_endpoint uuid) IS 'Whether the endpoint has something to send: its unaccepted message, or events not yet in a message.';

-- What a job may ask every second before it calls the delivery (supabase/README.md, the events job):
-- one indexed look per enabled endpoint, so a call is made only when a claim would find something.
CREATE FUNCTION cadence.events_are_due() RETURNS boolean
    LANGUAGE sql STABLE
    SET search_path TO ''
    AS $$
  select exists (select from public.event_endpoints as p
                  where p.enabled and p.next_attempt_at <= pg_catalog.now() and cadence.endpoint_owes_events(p.id))
$$;

COMMENT ON FUNCTION cadence.events_are_due() IS 'Whether an enabled endpoint is due (not leased, not waiting out a backoff) and has something to send: what cadence.claim_event_batch would claim now.';

CREATE OR REPLACE FUNCTION cadence.claim_event_batch(p_now timestamp with time zone, p_lease_seconds integer) RETURNS TABLE(batch_id uuid, endpoint_id uuid, url text, secrets text[], attempts integer, failures integer, failing_since timestamp with time zone, events jsonb)
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $$
declare
  v_endpoint public.event_endpoints;
  v_batch uuid;
begin
  -- The endpoint is the claim: leased one lease ahead, so no other worker sends to it meanwhile; if
  -- this worker dies, the endpoint is due again when the lease ends and its message goes again.
  -- FOR NO KEY UPDATE, not FOR UPDATE: every change that records an event owes it to the endpoint
  -- and holds a KEY SHARE lock on its row (the foreign key) until it commits, which FOR UPDATE
  -- conflicts with; under a steady stream of changes SKIP LOCKED then skipped the endpoint almost
  -- every time, and delivery starved (5 messages in 40 s of edits at 1,000 a second).
  select p.* into v_endpoint
    from public.event_endpoints as p
   where p.enabled and p.next_attempt_at <= p_now and cadence.endpoint_owes_events(p.id)
   order by p.next_attempt_at, p.id
   limit 1
     for no key update skip locked;
  if not found then
    return;
  end if;
  update public.event_endpoints as p set next_attempt_at = p_now + make_interval(secs => p_lease_seconds) where p.id = v_endpoint.id;
  select b.id into v_batch from public.event_batches as b where b.endpoint_id = v_endpoint.id and b.delivered_at is null;
  if v_batch is null then
    insert into public.event_batches (endpoint_id, created_at) values (v_endpoint.id, p_now) returning id into v_batch;
    update public.event_deliveries as d set batch_id = v_batch
     where d.id in (select u.id from public.event_deliveries as u
                     where u.endpoint_id = v_endpoint.id and u.batch_id is null
                     order by u.id limit v_endpoint.batch_size);
  end if;
  update public.event_batches as b set attempts = b.attempts + 1, last_attempt_at = p_now where b.id = v_batch;
  return query
    select v_batch, v_endpoint.id, v_endpoint.url,
           pg_catalog.array_remove(array[v_endpoint.secret, case when v_endpoint.previous_secret_until > p_now then v_endpoint.previous_secret end], null),
           (select b.attempts from public.event_batches as b where b.id = v_batch),
           v_endpoint.failures,
           v_endpoint.failing_since,
           (select pg_catalog.jsonb_agg(cadence.event_message(e) order by d.id)
              from public.event_deliveries as d join public.events as e on e.id = d.event_id
             where d.batch_id = v_batch);
end
$$;

COMMENT ON FUNCTION cadence.claim_event_batch(p_now timestamp with time zone, p_lease_seconds integer) IS 'Claims the next endpoint due with something to send, for p_lease_seconds: its unaccepted message again, else a new one of its next batch_size events in recorded order. Returns the message id (webhook-id), the url, the secrets that sign (the previous one too during a rotation), the attempt number, the endpoint''s failures in a row and since when, and the events.';

REVOKE ALL ON FUNCTION cadence.endpoint_owes_events(p_endpoint uuid) FROM PUBLIC;
GRANT ALL ON FUNCTION cadence.endpoint_owes_events(p_endpoint uuid) TO service_role;

REVOKE ALL ON FUNCTION cadence.events_are_due() FROM PUBLIC;
GRANT ALL ON FUNCTION cadence.events_are_due() TO service_role;
