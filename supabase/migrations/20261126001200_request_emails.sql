-- A request that queues an e-mail sends it itself, first (20261126001100_first_send_by_the_request.sql).
-- The grace that keeps the sweeps off such a row was written in each caller; one function owns it now,
-- and the callers name it.

create function cadence.enqueue_request_email(p_recipient text, p_subject text, p_text text, p_html text, p_now timestamptz)
returns uuid
language sql
volatile
set search_path = ''
as $$
  -- A minute: far longer than the one round trip between the request's commit and its own claim
  -- (cadence.claim_emails by id), and soon enough for the sweeps to send it if the request died.
  select cadence.enqueue_email(p_recipient, p_subject, p_text, p_html, p_now + interval '1 minute')
$$;
comment on function cadence.enqueue_request_email(text, text, text, text, timestamptz) is
  'Queues an e-mail that the calling request sends itself after its commit; sweeps may take it a minute later, if that request died.';
revoke execute on function cadence.enqueue_request_email(text, text, text, text, timestamptz) from public;
grant execute on function cadence.enqueue_request_email(text, text, text, text, timestamptz) to service_role;

comment on function cadence.enqueue_email(text, text, text, text, timestamptz) is
  'Queues an e-mail due for sweeps at p_now; call it inside the transaction that makes the e-mail true. A request that sends its e-mail itself calls cadence.enqueue_request_email.';

create or replace function cadence.onboard(
  p_email text,
  p_name text,
  p_key text,
  p_subject text,
  p_text text,
  p_html text,
  p_now timestamptz
)
returns table (account_id uuid, key_issued boolean, outbox_id uuid)
language plpgsql
volatile
set search_path = ''
as $$
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

create or replace function cadence.enqueue_hook_emails(p_event text, p_emails jsonb, p_now timestamptz)
returns setof uuid
language plpgsql
volatile
set search_path = ''
as $$
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
