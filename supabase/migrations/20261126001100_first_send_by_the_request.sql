-- An e-mail queued by a request (onboarding, the Auth send-email hook) is sent by that request
-- right after its commit (functions/app/mail/outbox.ts, deliverEmail). A sweep (the minute's
-- scheduled pass, pg_cron on Supabase) could claim the row between that commit and the request's
-- own claim, one round trip wide: the sweep then sent it while the request answered at once. Such
-- rows are now due for sweeps one sweep period later (60 s), and a claim by id takes a row never
-- claimed whatever its due time, so the request that queued an e-mail always sends it first; a
-- request that dies before its claim leaves the row to the sweeps after that minute.

create or replace function cadence.claim_emails(p_now timestamptz, p_lease_seconds integer, p_limit integer, p_id uuid default null)
returns setof public.email_outbox
language sql
volatile
set search_path = ''
as $$
  -- The claim moves next_attempt_at one lease ahead, so no other worker takes the row while it is
  -- being sent; if this worker dies, the row is due again when the lease ends. attempts = 0: no
  -- worker has ever claimed the row.
  update public.email_outbox as o
  set attempts = o.attempts + 1,
      next_attempt_at = p_now + make_interval(secs => p_lease_seconds)
  where o.id in (select d.id from public.email_outbox as d
                 where d.status = 'pending'
                   and (d.next_attempt_at <= p_now or (p_id is not null and d.attempts = 0))
                   and (p_id is null or d.id = p_id)
                 order by d.next_attempt_at, d.id
                 limit p_limit
                 for update skip locked)
  returning o.*
$$;
comment on function cadence.claim_emails(timestamptz, integer, integer, uuid) is
  'Claims up to p_limit due pending e-mails for p_lease_seconds; with p_id, that row only, due or never claimed (its queuing request sends it first). Rows locked by another worker are skipped.';

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

  -- The request sends the e-mail itself; sweeps take it a minute later if the request died.
  return query select v_account, true,
    cadence.enqueue_email(v_email, p_subject, p_text, p_html, p_now + make_interval(secs => 60));
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
  -- The hook sends its e-mails itself; sweeps take them a minute later if it died.
  return query
    select cadence.enqueue_email(e ->> 'to', e ->> 'subject', e ->> 'text', e ->> 'html', p_now + make_interval(secs => 60))
    from jsonb_array_elements(p_emails) with ordinality as m (e, n)
    order by m.n;
end
$$;

comment on function cadence.enqueue_email(text, text, text, text, timestamptz) is
  'Queues an e-mail due for sweeps at p_now (a request that sends it itself passes a minute later); call it inside the transaction that makes the e-mail true.';
