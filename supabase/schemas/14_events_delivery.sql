-- Delivery of the events (14_events.sql) to the endpoints staff configure, signed with Standard
-- Webhooks, at least once (issue 61, items 2 and 3). The e-mail outbox's pattern: rows written in
-- the transaction of the event, claimed under a lease, retried with backoff.
--
-- One message in flight per endpoint: a claim leases the endpoint itself, and a message carries up
-- to the endpoint's batch_size events in the order they were recorded. So a key's event N+1 never
-- reaches a receiver before N was accepted, and a fleet's outage (100,000 kiosk.offline events in one
-- pass) is 100 requests of 1,000 events one after another, not 100,000 at once. A message that
-- failed is sent again as it was (same webhook-id, same events) until accepted; the endpoint waits
-- meanwhile. The retry schedule and the three days after which an endpoint is disabled are the
-- delivery's (functions/app/events/).

-- A Standard Webhooks secret: whsec_ and 32 random bytes in base64 (the random bits of two v4 UUIDs,
-- 244 of them: gen_random_uuid is core, pgcrypto is not needed).
CREATE FUNCTION cadence.new_webhook_secret() RETURNS text
    LANGUAGE sql
    SET search_path TO ''
    AS $$
  select 'whsec_' || pg_catalog.encode(pg_catalog.decode(
    pg_catalog.replace(gen_random_uuid()::text, '-', '') || pg_catalog.replace(gen_random_uuid()::text, '-', ''), 'hex'), 'base64')
$$;

COMMENT ON FUNCTION cadence.new_webhook_secret() IS 'A new Standard Webhooks signing secret: whsec_ and 32 random bytes in base64.';

CREATE TABLE public.event_endpoints (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    url text NOT NULL,
    description text,
    secret text DEFAULT cadence.new_webhook_secret() NOT NULL,
    previous_secret text,
    previous_secret_until timestamp with time zone,
    event_types text[],
    batch_size integer DEFAULT 100 NOT NULL,
    notify_email text NOT NULL,
    enabled boolean DEFAULT true NOT NULL,
    disabled_at timestamp with time zone,
    disabled_reason text,
    failing_since timestamp with time zone,
    failures integer DEFAULT 0 NOT NULL,
    last_error text,
    next_attempt_at timestamp with time zone DEFAULT now() NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT event_endpoint_url_is_http CHECK (((char_length(url) <= 2048) AND (url ~ '^https?://[^\s/?#]+[^\s]*$'::text))),
    CONSTRAINT event_endpoint_secret_is_whsec CHECK ((secret ~ '^whsec_[A-Za-z0-9+/]{32,}={0,2}$'::text)),
    CONSTRAINT event_endpoint_previous_secret_is_whsec CHECK ((previous_secret ~ '^whsec_[A-Za-z0-9+/]{32,}={0,2}$'::text)),
    CONSTRAINT event_endpoint_rotation_is_whole CHECK (((previous_secret IS NULL) = (previous_secret_until IS NULL))),
    CONSTRAINT event_endpoint_batch_size_is_1_to_1000 CHECK (((batch_size >= 1) AND (batch_size <= 1000))),
    CONSTRAINT event_endpoint_notify_email_is_an_email CHECK (((char_length(notify_email) <= 254) AND (notify_email ~ '^[^@\s]+@[^@\s]+\.[^@\s]+$'::text))),
    CONSTRAINT event_endpoint_disabled_is_dated CHECK ((enabled = (disabled_at IS NULL))),
    CONSTRAINT event_endpoint_failures_are_not_negative CHECK ((failures >= 0))
);

COMMENT ON TABLE public.event_endpoints IS 'Where events are delivered, configured by staff: url, secret (whsec_, Standard Webhooks; rotate with cadence.rotate_event_endpoint_secret), event_types (null: every type), batch_size (events per request, 1 to 1000), notify_email (told when the endpoint is disabled). The rest is the delivery''s state.';

COMMENT ON COLUMN public.event_endpoints.previous_secret IS 'During a rotation: the secret being retired, which signs beside the new one until previous_secret_until.';

COMMENT ON COLUMN public.event_endpoints.failing_since IS 'The first failure of the current run of failures; after three days of them the endpoint is disabled.';

COMMENT ON COLUMN public.event_endpoints.next_attempt_at IS 'When the endpoint may next be claimed: a claim moves it one lease ahead, a success to now, a failure one backoff ahead.';

ALTER TABLE ONLY public.event_endpoints
    ADD CONSTRAINT event_endpoints_pkey PRIMARY KEY (id);

ALTER TABLE public.event_endpoints ENABLE ROW LEVEL SECURITY;

-- The messages: each is one request's body, sent again unchanged until a 2xx; its id is the webhook-id.
CREATE TABLE public.event_batches (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    endpoint_id uuid NOT NULL,
    created_at timestamp with time zone NOT NULL,
    attempts integer DEFAULT 0 NOT NULL,
    last_attempt_at timestamp with time zone,
    last_status integer,
    last_error text,
    delivered_at timestamp with time zone,
    CONSTRAINT event_batch_attempts_are_not_negative CHECK ((attempts >= 0))
);

COMMENT ON TABLE public.event_batches IS 'Written by the delivery, do not edit: each message sent to an endpoint (its id is the webhook-id), its attempts, the last answer and when it was accepted.';

ALTER TABLE ONLY public.event_batches
    ADD CONSTRAINT event_batches_pkey PRIMARY KEY (id);

ALTER TABLE public.event_batches ENABLE ROW LEVEL SECURITY;

ALTER TABLE ONLY public.event_batches
    ADD CONSTRAINT event_batch_endpoint_exists FOREIGN KEY (endpoint_id) REFERENCES public.event_endpoints(id) ON DELETE CASCADE;

-- One message in flight per endpoint: what keeps a key's events in order.
CREATE UNIQUE INDEX event_batch_is_one_open_per_endpoint ON public.event_batches USING btree (endpoint_id) WHERE (delivered_at IS NULL);

CREATE TABLE public.event_deliveries (
    id bigint GENERATED ALWAYS AS IDENTITY NOT NULL,
    endpoint_id uuid NOT NULL,
    event_id uuid NOT NULL,
    batch_id uuid,
    delivered_at timestamp with time zone,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    replay boolean DEFAULT false NOT NULL
);

COMMENT ON TABLE public.event_deliveries IS 'Written by triggers and the delivery, do not edit: each event owed to each endpoint, in the order recorded (id), the message that carried it (batch_id) and when it was accepted. Read public.event_delivery_log.';

COMMENT ON COLUMN public.event_deliveries.replay IS 'Queued again by staff (cadence.replay_event), after the event''s later ones may already have been delivered.';

ALTER TABLE ONLY public.event_deliveries
    ADD CONSTRAINT event_deliveries_pkey PRIMARY KEY (id);

ALTER TABLE public.event_deliveries ENABLE ROW LEVEL SECURITY;

ALTER TABLE ONLY public.event_deliveries
    ADD CONSTRAINT event_delivery_endpoint_exists FOREIGN KEY (endpoint_id) REFERENCES public.event_endpoints(id) ON DELETE CASCADE;

ALTER TABLE ONLY public.event_deliveries
    ADD CONSTRAINT event_delivery_event_exists FOREIGN KEY (event_id) REFERENCES public.events(id) ON DELETE CASCADE;

ALTER TABLE ONLY public.event_deliveries
    ADD CONSTRAINT event_delivery_batch_exists FOREIGN KEY (batch_id) REFERENCES public.event_batches(id) ON DELETE SET NULL;

-- The next message's events: an endpoint's unsent deliveries in order, one probe.
CREATE INDEX event_deliveries_unsent_idx ON public.event_deliveries USING btree (endpoint_id, id) WHERE (batch_id IS NULL);

CREATE INDEX event_deliveries_batch_idx ON public.event_deliveries USING btree (batch_id);

CREATE INDEX event_deliveries_event_idx ON public.event_deliveries USING btree (event_id);

-- Events recorded by one statement, owed to each enabled endpoint that takes their type. Reads the
-- endpoints (a handful staff configure), never the events or the fleet.
CREATE FUNCTION cadence.queue_event_deliveries() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
begin
  insert into public.event_deliveries (endpoint_id, event_id)
  select p.id, n.id
    from new_rows as n
    join public.event_endpoints as p on p.enabled and (p.event_types is null or n.type = any (p.event_types))
   order by n."position", p.id;
  return null;
end
$$;

COMMENT ON FUNCTION cadence.queue_event_deliveries() IS 'Trigger: each event recorded is owed to every enabled endpoint whose event_types take it (null: all).';

CREATE TRIGGER recorded_events_are_owed AFTER INSERT ON public.events REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION cadence.queue_event_deliveries();

ALTER TABLE public.events ENABLE ALWAYS TRIGGER recorded_events_are_owed;

-- An event as a receiver reads it.
CREATE FUNCTION cadence.event_message(p_event public.events) RETURNS jsonb
    LANGUAGE sql STABLE
    SET search_path TO ''
    AS $$
  select pg_catalog.jsonb_strip_nulls(pg_catalog.jsonb_build_object(
    'id', p_event.id, 'type', p_event.type, 'occurred_at', p_event.occurred_at,
    'license_key', p_event.license_key, 'account_id', p_event.account_id, 'previous_account_id', p_event.previous_account_id,
    'sequence', p_event.sequence)) || pg_catalog.jsonb_build_object('data', p_event.data)
$$;

COMMENT ON FUNCTION cadence.event_message(p_event public.events) IS 'An event as delivered: id, type, occurred_at, sequence, license_key (key events), account_id, previous_account_id (moves), data.';

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

CREATE FUNCTION cadence.claim_event_batch(p_now timestamp with time zone, p_lease_seconds integer) RETURNS TABLE(batch_id uuid, endpoint_id uuid, url text, secrets text[], attempts integer, failures integer, failing_since timestamp with time zone, events jsonb)
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

CREATE FUNCTION cadence.mark_event_batch_delivered(p_batch uuid, p_status integer, p_now timestamp with time zone) RETURNS void
    LANGUAGE sql
    SET search_path TO ''
    AS $$
  update public.event_batches set delivered_at = p_now, last_status = p_status, last_error = null where id = p_batch and delivered_at is null;
  update public.event_deliveries set delivered_at = p_now where batch_id = p_batch;
  -- Due again at once: the next message follows without waiting for a sweep.
  update public.event_endpoints as p set failures = 0, failing_since = null, last_error = null, next_attempt_at = p_now
    from public.event_batches as b where b.id = p_batch and p.id = b.endpoint_id;
$$;

COMMENT ON FUNCTION cadence.mark_event_batch_delivered(p_batch uuid, p_status integer, p_now timestamp with time zone) IS 'Records that the endpoint accepted a message (a 2xx): its events are delivered, the endpoint''s failures end and it is due again at once.';

CREATE FUNCTION cadence.mark_event_batch_failed(p_batch uuid, p_status integer, p_error text, p_now timestamp with time zone, p_retry_at timestamp with time zone) RETURNS void
    LANGUAGE sql
    SET search_path TO ''
    AS $$
  update public.event_batches set last_status = p_status, last_error = left(p_error, 1000) where id = p_batch and delivered_at is null;
  update public.event_endpoints as p
     set failures = p.failures + 1, failing_since = coalesce(p.failing_since, p_now), last_error = left(p_error, 1000), next_attempt_at = p_retry_at
    from public.event_batches as b where b.id = p_batch and p.id = b.endpoint_id;
$$;

COMMENT ON FUNCTION cadence.mark_event_batch_failed(p_batch uuid, p_status integer, p_error text, p_now timestamp with time zone, p_retry_at timestamp with time zone) IS 'Records a failed attempt (no answer, or p_status not 2xx): the message stays as it is, the endpoint is due again at p_retry_at.';

CREATE FUNCTION cadence.disable_event_endpoint(p_endpoint uuid, p_reason text, p_now timestamp with time zone, p_subject text, p_text text, p_html text) RETURNS uuid
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $$
declare
  v_to text;
begin
  update public.event_endpoints as p set enabled = false, disabled_at = p_now, disabled_reason = p_reason
   where p.id = p_endpoint and p.enabled
  returning p.notify_email into v_to;
  if v_to is null then
    return null;
  end if;
  return cadence.enqueue_email(v_to, p_subject, p_text, p_html, p_now);
end
$$;

COMMENT ON FUNCTION cadence.disable_event_endpoint(p_endpoint uuid, p_reason text, p_now timestamp with time zone, p_subject text, p_text text, p_html text) IS 'Disables an endpoint (no further event is owed to it, none is sent) and queues the e-mail telling its notify_email, in one transaction; null when it was already disabled.';

CREATE FUNCTION cadence.enable_event_endpoint(p_endpoint uuid) RETURNS boolean
    LANGUAGE sql
    SET search_path TO ''
    AS $$
  update public.event_endpoints
     set enabled = true, disabled_at = null, disabled_reason = null, failures = 0, failing_since = null, next_attempt_at = now()
   where id = p_endpoint
  returning true
$$;

COMMENT ON FUNCTION cadence.enable_event_endpoint(p_endpoint uuid) IS 'Enables an endpoint again, due at once: its unaccepted message goes first; events recorded while it was disabled are not owed to it (replay them with cadence.replay_event).';

CREATE FUNCTION cadence.rotate_event_endpoint_secret(p_endpoint uuid, p_overlap interval DEFAULT '24:00:00'::interval) RETURNS text
    LANGUAGE sql
    SET search_path TO ''
    AS $$
  update public.event_endpoints
     set previous_secret = secret, previous_secret_until = now() + p_overlap, secret = cadence.new_webhook_secret()
   where id = p_endpoint
  returning secret
$$;

COMMENT ON FUNCTION cadence.rotate_event_endpoint_secret(p_endpoint uuid, p_overlap interval) IS 'Gives an endpoint a new secret and returns it; the old one keeps signing beside it (two v1 signatures) for p_overlap, 24 hours by default, while the receiver moves to the new one.';

CREATE FUNCTION cadence.replay_event(p_event uuid, p_endpoint uuid DEFAULT NULL::uuid) RETURNS integer
    LANGUAGE sql
    SET search_path TO ''
    AS $$
  with queued as (
    insert into public.event_deliveries (endpoint_id, event_id, replay)
    select p.id, e.id, true
      from public.events as e join public.event_endpoints as p on p.enabled and (p_endpoint is null or p.id = p_endpoint)
     where e.id = p_event
    returning 1
  )
  select count(*)::integer from queued
$$;

COMMENT ON FUNCTION cadence.replay_event(p_event uuid, p_endpoint uuid) IS 'Queues an event again for one enabled endpoint (or all of them): it goes in the endpoint''s next message, with its own id and sequence, so a receiver that has it already drops it. Returns how many endpoints it was queued for.';

CREATE VIEW public.event_delivery_log WITH (security_invoker='true') AS
 SELECT d.id AS delivery_id,
    e.id AS event_id,
    e.type,
    e.license_key,
    e.account_id,
    e.sequence,
    e.occurred_at,
    p.id AS endpoint_id,
    p.url,
    d.batch_id AS webhook_id,
    d.replay,
        CASE
            WHEN (d.delivered_at IS NOT NULL) THEN 'delivered'::text
            WHEN (NOT p.enabled) THEN 'endpoint disabled'::text
            WHEN (d.batch_id IS NOT NULL) THEN 'sending'::text
            ELSE 'queued'::text
        END AS state,
    b.attempts,
    b.last_attempt_at,
    b.last_status,
    b.last_error,
    d.delivered_at
   FROM (((public.event_deliveries d
     JOIN public.events e ON ((e.id = d.event_id)))
     JOIN public.event_endpoints p ON ((p.id = d.endpoint_id)))
     LEFT JOIN public.event_batches b ON ((b.id = d.batch_id)));

COMMENT ON VIEW public.event_delivery_log IS 'For staff: each event owed to each endpoint, its state (queued, sending, delivered, endpoint disabled), the message that carried it (webhook_id), its attempts and the last answer.';
