-- Supabase Auth's Send Email Hook queues its e-mails in the same outbox as onboarding. Auth retries
-- a call that timed out with a new webhook-id but the same body, so the body's digest, kept in
-- the webhook nonce ledger, is what makes a retry queue nothing twice.

comment on table public.webhook_nonces is
  'Nonces of accepted signed webhooks (onboarding x-nonce; Send Email Hook body digests, prefixed auth-email-hook:), kept for 600 s.';

create function cadence.enqueue_hook_emails(p_event text, p_emails jsonb, p_now timestamptz)
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
    select cadence.enqueue_email(e ->> 'to', e ->> 'subject', e ->> 'text', e ->> 'html', p_now)
    from jsonb_array_elements(p_emails) with ordinality as m (e, n)
    order by m.n;
end
$$;
comment on function cadence.enqueue_hook_emails(text, jsonb, timestamptz) is
  'Queues the e-mails of one hook call ([{to, subject, text, html}]) unless p_event was already seen; returns their outbox ids, none for a repeat.';

revoke execute on function cadence.enqueue_hook_emails(text, jsonb, timestamptz) from public;
grant execute on function cadence.enqueue_hook_emails(text, jsonb, timestamptz) to service_role;
