-- E-mails to send, written in the same transaction as what they announce, delivered after commit.
-- A row stays pending until a mailer accepts it, so a crash or a mail outage loses nothing; a
-- failed send is retried with backoff. A request sends the e-mail it queued itself first; the
-- sweeps take it only a minute later.

CREATE TABLE public.email_outbox (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    recipient text NOT NULL,
    subject text NOT NULL,
    text_body text NOT NULL,
    html_body text NOT NULL,
    status text DEFAULT 'pending'::text NOT NULL,
    attempts integer DEFAULT 0 NOT NULL,
    last_error text,
    next_attempt_at timestamp with time zone DEFAULT now() NOT NULL,
    sent_at timestamp with time zone,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT outbox_attempts_are_not_negative CHECK ((attempts >= 0)),
    CONSTRAINT outbox_recipient_is_an_email CHECK (((char_length(recipient) <= 254) AND (recipient ~ '^[^@\s]+@[^@\s]+\.[^@\s]+$'::text))),
    CONSTRAINT outbox_sent_rows_have_sent_at CHECK (((status = 'sent'::text) = (sent_at IS NOT NULL))),
    CONSTRAINT outbox_status_is_known CHECK ((status = ANY (ARRAY['pending'::text, 'sent'::text]))),
    CONSTRAINT outbox_subject_is_not_blank CHECK ((btrim(subject) <> ''::text))
);

COMMENT ON TABLE public.email_outbox IS 'E-mails to deliver. Pending rows are retried with backoff from next_attempt_at; the bodies may hold license keys.';

COMMENT ON COLUMN public.email_outbox.next_attempt_at IS 'When the row may next be claimed: a claim pushes it one lease ahead, a failure one backoff ahead.';

ALTER TABLE ONLY public.email_outbox
    ADD CONSTRAINT email_outbox_pkey PRIMARY KEY (id);

ALTER TABLE public.email_outbox ENABLE ROW LEVEL SECURITY;

CREATE INDEX email_outbox_due_idx ON public.email_outbox USING btree (next_attempt_at) WHERE (status = 'pending'::text);

CREATE FUNCTION cadence.claim_emails(p_now timestamp with time zone, p_lease_seconds integer, p_limit integer, p_id uuid DEFAULT NULL::uuid) RETURNS SETOF public.email_outbox
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $$
begin
  -- The claim moves next_attempt_at one lease ahead, so no other worker takes the row while it is
  -- being sent; if this worker dies, the row is due again when the lease ends.
  if p_id is null then
    return query
      update public.email_outbox as o
      set attempts = o.attempts + 1,
          next_attempt_at = p_now + make_interval(secs => p_lease_seconds)
      where o.id in (select d.id from public.email_outbox as d
                     where d.status = 'pending' and d.next_attempt_at <= p_now
                     order by d.next_attempt_at, d.id
                     limit p_limit
                     for update skip locked)
      returning o.*;
  else
    -- attempts = 0: no worker has claimed the row yet, so the request that queued it takes it
    -- before its due time (cadence.enqueue_request_email).
    return query
      update public.email_outbox as o
      set attempts = o.attempts + 1,
          next_attempt_at = p_now + make_interval(secs => p_lease_seconds)
      where o.id in (select d.id from public.email_outbox as d
                     where d.id = p_id and d.status = 'pending' and (d.next_attempt_at <= p_now or d.attempts = 0)
                     limit p_limit
                     for update skip locked)
      returning o.*;
  end if;
end
$$;

COMMENT ON FUNCTION cadence.claim_emails(p_now timestamp with time zone, p_lease_seconds integer, p_limit integer, p_id uuid) IS 'Claims up to p_limit due pending e-mails for p_lease_seconds; with p_id, that row only, due or never claimed (its queuing request sends it first). Rows locked by another worker are skipped.';

CREATE FUNCTION cadence.enqueue_email(p_recipient text, p_subject text, p_text text, p_html text, p_now timestamp with time zone) RETURNS uuid
    LANGUAGE sql
    SET search_path TO ''
    AS $$
  insert into public.email_outbox (recipient, subject, text_body, html_body, next_attempt_at)
  values (p_recipient, p_subject, p_text, p_html, p_now)
  returning id
$$;

COMMENT ON FUNCTION cadence.enqueue_email(p_recipient text, p_subject text, p_text text, p_html text, p_now timestamp with time zone) IS 'Queues an e-mail due for sweeps at p_now; call it inside the transaction that makes the e-mail true. A request that sends its e-mail itself calls cadence.enqueue_request_email.';

CREATE FUNCTION cadence.enqueue_request_email(p_recipient text, p_subject text, p_text text, p_html text, p_now timestamp with time zone) RETURNS uuid
    LANGUAGE sql
    SET search_path TO ''
    AS $$
  -- A minute: far longer than the one round trip between the request's commit and its own claim
  -- (cadence.claim_emails by id), and soon enough for the sweeps to send it if the request died.
  select cadence.enqueue_email(p_recipient, p_subject, p_text, p_html, p_now + interval '1 minute')
$$;

COMMENT ON FUNCTION cadence.enqueue_request_email(p_recipient text, p_subject text, p_text text, p_html text, p_now timestamp with time zone) IS 'Queues an e-mail that the calling request sends itself after its commit; sweeps may take it a minute later, if that request died.';

CREATE FUNCTION cadence.enqueue_hook_emails(p_event text, p_emails jsonb, p_now timestamp with time zone) RETURNS SETOF uuid
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $$
begin
  if jsonb_typeof(p_emails) is distinct from 'array' or jsonb_array_length(p_emails) = 0 then
    raise exception 'p_emails must be a non-empty JSON array' using errcode = '22023';
  end if;
  if not cadence.record_webhook_nonce(p_event, p_now) then
    return;
  end if;
  return query
    select cadence.enqueue_request_email(e ->> 'to', e ->> 'subject', e ->> 'text', e ->> 'html', p_now)
    from jsonb_array_elements(p_emails) with ordinality as m (e, n)
    order by m.n;
end
$$;

COMMENT ON FUNCTION cadence.enqueue_hook_emails(p_event text, p_emails jsonb, p_now timestamp with time zone) IS 'Queues the e-mails of one hook call ([{to, subject, text, html}]) unless p_event was already seen; returns their outbox ids, none for a repeat.';

CREATE FUNCTION cadence.mark_email_failed(p_id uuid, p_error text, p_retry_at timestamp with time zone) RETURNS void
    LANGUAGE sql
    SET search_path TO ''
    AS $$
  update public.email_outbox
  set last_error = left(p_error, 1000), next_attempt_at = p_retry_at
  where id = p_id and status = 'pending'
$$;

COMMENT ON FUNCTION cadence.mark_email_failed(p_id uuid, p_error text, p_retry_at timestamp with time zone) IS 'Records a failed delivery: the row stays pending, due again at p_retry_at.';

CREATE FUNCTION cadence.mark_email_sent(p_id uuid, p_now timestamp with time zone) RETURNS void
    LANGUAGE sql
    SET search_path TO ''
    AS $$
  update public.email_outbox set status = 'sent', sent_at = p_now where id = p_id and status = 'pending'
$$;

COMMENT ON FUNCTION cadence.mark_email_sent(p_id uuid, p_now timestamp with time zone) IS 'Records that a mailer accepted the e-mail.';
