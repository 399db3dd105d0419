-- Onboarding in one transaction: the account (if absent), a new license key, and the e-mail that
-- carries the key; either all three are stored or none is. A signed request's nonce is spent once
-- (the unique key makes a replay fail even when two instances see it at once), and an
-- Idempotency-Key is carried out once for 24 hours, its first answer replayed to a retry.

CREATE TABLE public.webhook_nonces (
    nonce text NOT NULL,
    expires_at timestamp with time zone NOT NULL,
    CONSTRAINT webhook_nonce_length CHECK (((char_length(nonce) >= 1) AND (char_length(nonce) <= 128)))
);

COMMENT ON TABLE public.webhook_nonces IS 'Nonces of accepted signed webhooks (onboarding x-nonce; Send Email Hook body digests, prefixed auth-email-hook:), kept for 600 s.';

ALTER TABLE ONLY public.webhook_nonces
    ADD CONSTRAINT webhook_nonces_pkey PRIMARY KEY (nonce);

ALTER TABLE public.webhook_nonces ENABLE ROW LEVEL SECURITY;

CREATE INDEX webhook_nonces_expires_at_idx ON public.webhook_nonces USING btree (expires_at);

CREATE TABLE public.onboarding_idempotency_keys (
    source text NOT NULL,
    id text NOT NULL,
    body_sha256 bytea NOT NULL,
    claim_token uuid,
    claimed_until timestamp with time zone,
    response_status smallint,
    response_body text,
    created_at timestamp with time zone NOT NULL,
    expires_at timestamp with time zone NOT NULL,
    CONSTRAINT idempotency_body_digest_is_sha256 CHECK ((octet_length(body_sha256) = 32)),
    CONSTRAINT idempotency_expires_after_creation CHECK ((expires_at > created_at)),
    CONSTRAINT idempotency_id_is_printable_ascii CHECK ((id ~ '^[!-~]{1,255}$'::text)),
    -- A row is either running (a claim with its lease) or done (the answer to replay), never both.
    CONSTRAINT idempotency_is_running_or_done CHECK ((((claim_token IS NOT NULL) AND (claimed_until IS NOT NULL) AND (response_status IS NULL) AND (response_body IS NULL)) OR ((claim_token IS NULL) AND (claimed_until IS NULL) AND (response_status IS NOT NULL) AND (response_body IS NOT NULL)))),
    CONSTRAINT idempotency_response_status_is_http CHECK (((response_status >= 100) AND (response_status <= 599))),
    CONSTRAINT idempotency_source_is_known CHECK ((source = ANY (ARRAY['idempotency-key'::text, 'webhook-id'::text])))
);

COMMENT ON TABLE public.onboarding_idempotency_keys IS 'Signed automation requests (onboarding and the lifecycle calls, one namespace) by Idempotency-Key or webhook-id, kept 24 h: the running claim, then the first answer, replayed to retries. Expired rows are purged by the outbox delivery pass.';

COMMENT ON COLUMN public.onboarding_idempotency_keys.body_sha256 IS 'SHA-256 of the raw request body: the same id with another body is refused, never carried out.';

COMMENT ON COLUMN public.onboarding_idempotency_keys.response_body IS 'The exact bytes of the first answer; may hold an account id, never a key or an e-mail.';

ALTER TABLE ONLY public.onboarding_idempotency_keys
    ADD CONSTRAINT onboarding_idempotency_keys_pkey PRIMARY KEY (source, id);

ALTER TABLE public.onboarding_idempotency_keys ENABLE ROW LEVEL SECURITY;

CREATE INDEX onboarding_idempotency_keys_expires_at_idx ON public.onboarding_idempotency_keys USING btree (expires_at);

CREATE FUNCTION cadence.claim_onboarding_key(p_source text, p_id text, p_body_sha256 bytea, p_now timestamp with time zone, p_lease_seconds integer) RETURNS TABLE(outcome text, claim_token uuid, response_status smallint, response_body text, retry_after_seconds integer)
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $$
declare
  v_row public.onboarding_idempotency_keys;
  v_token uuid := gen_random_uuid();
begin
  insert into public.onboarding_idempotency_keys as k (source, id, body_sha256, claim_token, claimed_until, created_at, expires_at)
  values (p_source, p_id, p_body_sha256, v_token, p_now + make_interval(secs => p_lease_seconds), p_now, p_now + interval '24 hours')
  on conflict on constraint onboarding_idempotency_keys_pkey do nothing;
  if found then
    return query select 'claimed', v_token, null::smallint, null::text, null::integer;
    return;
  end if;

  -- Read without a lock first: a replay, a mismatch or a live claim need none, so simultaneous
  -- retries of a finished id never stand in each other's way.
  select * into v_row from public.onboarding_idempotency_keys as k where k.source = p_source and k.id = p_id;
  if not found then
    -- Released between the insert and this read: the releasing request has just let go of it.
    return query select 'busy', null::uuid, null::smallint, null::text, 1;
    return;
  end if;
  if v_row.expires_at > p_now then
    if v_row.body_sha256 <> p_body_sha256 then
      return query select 'mismatch', null::uuid, null::smallint, null::text, null::integer;
      return;
    elsif v_row.response_status is not null then
      return query select 'replay', null::uuid, v_row.response_status, v_row.response_body, null::integer;
      return;
    elsif v_row.claimed_until > p_now then
      return query select 'busy', null::uuid, null::smallint, null::text,
        greatest(1, ceil(extract(epoch from v_row.claimed_until - p_now)))::integer;
      return;
    end if;
  end if;

  -- Past its 24 hours, or its lease ran out (the request holding it died before completing): taken
  -- over under the row lock. A row locked now is being completed or taken over by another request.
  select * into v_row from public.onboarding_idempotency_keys as k
  where k.source = p_source and k.id = p_id
  for update skip locked;
  if not found then
    return query select 'busy', null::uuid, null::smallint, null::text, 1;
    return;
  end if;
  if v_row.expires_at <= p_now then
    -- The id is new again, whether or not the purge has run yet.
    update public.onboarding_idempotency_keys as k
    set body_sha256 = p_body_sha256, claim_token = v_token, claimed_until = p_now + make_interval(secs => p_lease_seconds),
        response_status = null, response_body = null, created_at = p_now, expires_at = p_now + interval '24 hours'
    where k.source = p_source and k.id = p_id;
    return query select 'claimed', v_token, null::smallint, null::text, null::integer;
  elsif v_row.response_status is not null or v_row.claimed_until > p_now then
    -- Completed or claimed anew between the two reads: the caller asks again and reads that.
    return query select 'busy', null::uuid, null::smallint, null::text, 1;
  else
    -- Only the new token can complete the row now (cadence.onboard_once checks it), so the dead
    -- request and its retry never both take effect.
    update public.onboarding_idempotency_keys as k
    set claim_token = v_token, claimed_until = p_now + make_interval(secs => p_lease_seconds)
    where k.source = p_source and k.id = p_id;
    return query select 'claimed', v_token, null::smallint, null::text, null::integer;
  end if;
end
$$;

COMMENT ON FUNCTION cadence.claim_onboarding_key(p_source text, p_id text, p_body_sha256 bytea, p_now timestamp with time zone, p_lease_seconds integer) IS 'Claims an onboarding id for p_lease_seconds: claimed (with the token to complete it), replay (the first answer), mismatch (another body), or busy (running elsewhere; retry after retry_after_seconds).';

CREATE FUNCTION cadence.onboard(p_email text, p_name text, p_key text, p_subject text, p_text text, p_html text, p_now timestamp with time zone) RETURNS TABLE(account_id uuid, key_issued boolean, outbox_id uuid)
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $$
declare
  v_email text := lower(btrim(p_email));
  v_account uuid;
begin
  -- Two simultaneous onboardings of one new e-mail: the unique index makes the second wait for the
  -- first, do nothing, and then read the account the first created.
  insert into public.accounts (email, display_name)
  values (v_email, btrim(p_name))
  on conflict ((lower(email))) do nothing
  returning id into v_account;
  if v_account is null then
    select a.id into v_account from public.accounts as a where lower(a.email) = v_email;
  end if;

  insert into public.license_keys (key, account_id, email)
  values (p_key, v_account, v_email)
  on conflict (key) do nothing;
  if not found then
    -- The key is taken: the caller draws another and renders its e-mail again.
    return query select v_account, false, null::uuid;
    return;
  end if;

  return query select v_account, true, cadence.enqueue_request_email(v_email, p_subject, p_text, p_html, p_now);
end
$$;

COMMENT ON FUNCTION cadence.onboard(p_email text, p_name text, p_key text, p_subject text, p_text text, p_html text, p_now timestamp with time zone) IS 'Creates the account for p_email if absent (case-insensitive), issues p_key to it and queues its e-mail; key_issued is false when p_key already exists.';

CREATE FUNCTION cadence.onboard_once(p_source text, p_id text, p_claim_token uuid, p_email text, p_name text, p_key text, p_subject text, p_text text, p_html text, p_now timestamp with time zone, p_answer_template text) RETURNS TABLE(outcome text, account_id uuid, key_issued boolean, outbox_id uuid, response_body text)
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $$
declare
  v_claim public.onboarding_idempotency_keys;
  v_onboarded record;
  v_body text;
begin
  -- Locked first, so a request whose lease was taken over cannot complete beside the new holder.
  select * into v_claim from public.onboarding_idempotency_keys as k
  where k.source = p_source and k.id = p_id
  for update;
  if not found or v_claim.claim_token is distinct from p_claim_token then
    return query select 'lost', null::uuid, false, null::uuid, null::text;
    return;
  end if;

  select o.account_id, o.key_issued, o.outbox_id into v_onboarded
  from cadence.onboard(p_email, p_name, p_key, p_subject, p_text, p_html, p_now) as o;
  if not v_onboarded.key_issued then
    -- The key is taken: the claim stays, the caller draws another key.
    return query select 'key_taken', v_onboarded.account_id, false, null::uuid, null::text;
    return;
  end if;

  -- The answer's text comes from the API with the JSON string "{user_id}" standing for the
  -- account id, so its shape stays in one place and the replay is the first answer's exact bytes.
  v_body := replace(p_answer_template, '"{user_id}"', to_json(v_onboarded.account_id::text)::text);
  update public.onboarding_idempotency_keys as k
  set claim_token = null, claimed_until = null, response_status = 200, response_body = v_body
  where k.source = p_source and k.id = p_id;
  return query select 'done', v_onboarded.account_id, true, v_onboarded.outbox_id, v_body;
end
$$;

COMMENT ON FUNCTION cadence.onboard_once(p_source text, p_id text, p_claim_token uuid, p_email text, p_name text, p_key text, p_subject text, p_text text, p_html text, p_now timestamp with time zone, p_answer_template text) IS 'cadence.onboard for a claimed id: the account, key and e-mail and the answer to replay in one transaction; lost when p_claim_token no longer holds the id.';

CREATE FUNCTION cadence.purge_onboarding_keys(p_now timestamp with time zone, p_limit integer) RETURNS integer
    LANGUAGE sql
    SET search_path TO ''
    AS $$
  -- Rows another caller holds are skipped: a purge never waits on a request.
  with purged as (
    delete from public.onboarding_idempotency_keys as k
    where (k.source, k.id) in (select e.source, e.id from public.onboarding_idempotency_keys as e
                               where e.expires_at <= p_now
                               limit p_limit
                               for update skip locked)
    returning 1
  )
  select count(*)::integer from purged
$$;

COMMENT ON FUNCTION cadence.purge_onboarding_keys(p_now timestamp with time zone, p_limit integer) IS 'Deletes up to p_limit onboarding ids past their 24 hours; returns how many.';

CREATE FUNCTION cadence.record_webhook_nonce(p_nonce text, p_now timestamp with time zone) RETURNS boolean
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $$
begin
  -- A request is accepted only while its timestamp is within 300 s of the clock either way, so a
  -- nonce seen at p_now can come back until p_now + 600 s; only then is forgetting it safe.
  -- Purging skips rows another caller is purging: no waits, no deadlocks.
  delete from public.webhook_nonces
  where nonce in (select n.nonce from public.webhook_nonces as n
                  where n.expires_at < p_now
                  limit 100
                  for update skip locked);

  insert into public.webhook_nonces (nonce, expires_at)
  values (p_nonce, p_now + interval '600 seconds')
  on conflict (nonce) do nothing;
  return found;
end
$$;

COMMENT ON FUNCTION cadence.record_webhook_nonce(p_nonce text, p_now timestamp with time zone) IS 'Records a webhook nonce; true when it was new, false for a replay. Purges expired nonces on the way.';

CREATE FUNCTION cadence.release_onboarding_key(p_source text, p_id text, p_claim_token uuid) RETURNS void
    LANGUAGE sql
    SET search_path TO ''
    AS $$
  delete from public.onboarding_idempotency_keys as k
  where k.source = p_source and k.id = p_id and k.claim_token = p_claim_token
$$;

COMMENT ON FUNCTION cadence.release_onboarding_key(p_source text, p_id text, p_claim_token uuid) IS 'Gives up a claim that carried nothing out (refused or failed), so a retry may run at once; a completed id is never released.';
