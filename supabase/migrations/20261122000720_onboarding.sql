-- Onboarding in one transaction: the account (if absent), a new license key, and the e-mail that
-- carries the key. Either all three are stored or none is.

create function cadence.onboard(
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

  return query select v_account, true, cadence.enqueue_email(v_email, p_subject, p_text, p_html, p_now);
end
$$;
comment on function cadence.onboard(text, text, text, text, text, text, timestamptz) is
  'Creates the account for p_email if absent (case-insensitive), issues p_key to it and queues its e-mail; key_issued is false when p_key already exists.';

revoke execute on function cadence.onboard(text, text, text, text, text, text, timestamptz) from public;
grant execute on function cadence.onboard(text, text, text, text, text, text, timestamptz) to service_role;
