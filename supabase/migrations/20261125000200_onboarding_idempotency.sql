-- Safe retries of the onboarding webhook: an `Idempotency-Key` (or Standard Webhooks' `webhook-id`)
-- is carried out once for 24 hours, and a retry gets the first answer again.
--
-- A request first claims its id (one short statement of its own: a lease, so two requests with one
-- id never both run), then the claim is completed in the same transaction as the account, the key
-- and the e-mail (cadence.onboard_once). So a crash between that commit and the answer still leaves
-- the answer to replay, and a crash before it leaves only a claim whose lease runs out.

create table public.onboarding_idempotency_keys (
  source text not null
    constraint idempotency_source_is_known check (source in ('idempotency-key', 'webhook-id')),
  id text not null
    constraint idempotency_id_is_printable_ascii check (id ~ '^[!-~]{1,255}$'),
  body_sha256 bytea not null
    constraint idempotency_body_digest_is_sha256 check (octet_length(body_sha256) = 32),
  claim_token uuid,
  claimed_until timestamptz,
  response_status smallint
    constraint idempotency_response_status_is_http check (response_status between 100 and 599),
  response_body text,
  created_at timestamptz not null,
  expires_at timestamptz not null,
  constraint onboarding_idempotency_keys_pkey primary key (source, id),
  -- A row is either running (a claim with its lease) or done (the answer to replay), never both.
  constraint idempotency_is_running_or_done check (
    (claim_token is not null and claimed_until is not null and response_status is null and response_body is null)
    or (claim_token is null and claimed_until is null and response_status is not null and response_body is not null)
  ),
  constraint idempotency_expires_after_creation check (expires_at > created_at)
);
comment on table public.onboarding_idempotency_keys is
  'Onboarding requests by Idempotency-Key or webhook-id, kept 24 h: the running claim, then the first answer, replayed to retries. Expired rows are purged by the outbox delivery pass.';
comment on column public.onboarding_idempotency_keys.body_sha256 is
  'SHA-256 of the raw request body: the same id with another body is refused, never carried out.';
comment on column public.onboarding_idempotency_keys.response_body is
  'The exact bytes of the first answer; may hold an account id, never a key or an e-mail.';
create index onboarding_idempotency_keys_expires_at_idx on public.onboarding_idempotency_keys (expires_at);

alter table public.onboarding_idempotency_keys enable row level security;
revoke all on public.onboarding_idempotency_keys from anon, authenticated;

create function cadence.claim_onboarding_key(
  p_source text,
  p_id text,
  p_body_sha256 bytea,
  p_now timestamptz,
  p_lease_seconds integer
)
returns table (outcome text, claim_token uuid, response_status smallint, response_body text, retry_after_seconds integer)
language plpgsql
volatile
set search_path = ''
as $$
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
comment on function cadence.claim_onboarding_key(text, text, bytea, timestamptz, integer) is
  'Claims an onboarding id for p_lease_seconds: claimed (with the token to complete it), replay (the first answer), mismatch (another body), or busy (running elsewhere; retry after retry_after_seconds).';

create function cadence.onboard_once(
  p_source text,
  p_id text,
  p_claim_token uuid,
  p_email text,
  p_name text,
  p_key text,
  p_subject text,
  p_text text,
  p_html text,
  p_now timestamptz,
  p_answer_template text
)
returns table (outcome text, account_id uuid, key_issued boolean, outbox_id uuid, response_body text)
language plpgsql
volatile
set search_path = ''
as $$
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
comment on function cadence.onboard_once(text, text, uuid, text, text, text, text, text, text, timestamptz, text) is
  'cadence.onboard for a claimed id: the account, key and e-mail and the answer to replay in one transaction; lost when p_claim_token no longer holds the id.';

create function cadence.release_onboarding_key(p_source text, p_id text, p_claim_token uuid)
returns void
language sql
volatile
set search_path = ''
as $$
  delete from public.onboarding_idempotency_keys as k
  where k.source = p_source and k.id = p_id and k.claim_token = p_claim_token
$$;
comment on function cadence.release_onboarding_key(text, text, uuid) is
  'Gives up a claim that carried nothing out (refused or failed), so a retry may run at once; a completed id is never released.';

create function cadence.purge_onboarding_keys(p_now timestamptz, p_limit integer)
returns integer
language sql
volatile
set search_path = ''
as $$
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
comment on function cadence.purge_onboarding_keys(timestamptz, integer) is
  'Deletes up to p_limit onboarding ids past their 24 hours; returns how many.';

revoke execute on function cadence.claim_onboarding_key(text, text, bytea, timestamptz, integer) from public;
revoke execute on function cadence.onboard_once(text, text, uuid, text, text, text, text, text, text, timestamptz, text) from public;
revoke execute on function cadence.release_onboarding_key(text, text, uuid) from public;
revoke execute on function cadence.purge_onboarding_keys(timestamptz, integer) from public;
grant execute on function cadence.claim_onboarding_key(text, text, bytea, timestamptz, integer) to service_role;
grant execute on function cadence.onboard_once(text, text, uuid, text, text, text, text, text, text, timestamptz, text) to service_role;
grant execute on function cadence.release_onboarding_key(text, text, uuid) to service_role;
grant execute on function cadence.purge_onboarding_keys(timestamptz, integer) to service_role;
