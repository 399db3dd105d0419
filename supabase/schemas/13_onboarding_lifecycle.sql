-- The license lifecycle after onboarding: suspend a key, reinstate it, move it to another account,
-- change an account's e-mail, send a key's license e-mail again. Each change is one function, with
-- the rows it reads locked first (accounts before keys, the order every writer here takes), so the
-- signed calls under /api/v2/automations/ (functions/app/automations/), staff in the dashboard's
-- SQL editor (sql/recipes/) and anything else keep the same rules. Each answers an outcome: `done`,
-- or why nothing changed, in the API's words (unknown_license, unknown_account, email_taken,
-- name_taken, new_email_invalid, license_not_active), and never raises for a caller's mistake.
-- Account holders may execute none of them (16_grants.sql), and the columns they change are not
-- theirs to write through the Data API (15_account_holders.sql).

CREATE FUNCTION cadence.suspend_license_key(p_key text) RETURNS TABLE(outcome text, changed boolean, account_id uuid, outbox_id uuid)
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $$
declare
  v_active boolean;
begin
  -- A suspended key is a key that is not active: license validation refuses it ("license key is
  -- not active"), and nothing else a kiosk reads changes.
  select k.active into v_active from public.license_keys as k where k.key = p_key for update;
  if not found then
    return query select 'unknown_license', false, null::uuid, null::uuid;
    return;
  end if;
  if v_active then
    update public.license_keys as k set active = false where k.key = p_key;
  end if;
  return query select 'done', v_active, null::uuid, null::uuid;
end
$$;

COMMENT ON FUNCTION cadence.suspend_license_key(p_key text) IS 'Suspends a license key (active = false): validation refuses it as not active. done (changed false when it was already suspended) or unknown_license.';

CREATE FUNCTION cadence.reinstate_license_key(p_key text) RETURNS TABLE(outcome text, changed boolean, account_id uuid, outbox_id uuid)
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $$
declare
  v_active boolean;
begin
  select k.active into v_active from public.license_keys as k where k.key = p_key for update;
  if not found then
    return query select 'unknown_license', false, null::uuid, null::uuid;
    return;
  end if;
  if not v_active then
    update public.license_keys as k set active = true where k.key = p_key;
  end if;
  return query select 'done', not v_active, null::uuid, null::uuid;
end
$$;

COMMENT ON FUNCTION cadence.reinstate_license_key(p_key text) IS 'Reinstates a license key (active = true). done (changed false when it was already active) or unknown_license.';

CREATE FUNCTION cadence.move_license_key(p_key text, p_email text) RETURNS TABLE(outcome text, changed boolean, account_id uuid, outbox_id uuid)
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $$
declare
  v_account uuid;
  v_email text;
  v_linked uuid;
  v_belongs uuid;
  v_constraint text;
begin
  -- The account first (shared: its e-mail cannot change meanwhile), then the key. The account must
  -- exist: accounts are created by onboarding, never as a side effect of a move.
  select a.id, a.email into v_account, v_email from public.accounts as a
  where pg_catalog.lower(a.email) = pg_catalog.lower(pg_catalog.btrim(p_email))
  for share;
  select k.account_id, k.belongs_to into v_linked, v_belongs from public.license_keys as k where k.key = p_key for update;
  if not found then
    return query select 'unknown_license', false, null::uuid, null::uuid;
    return;
  end if;
  if v_account is null then
    return query select 'unknown_account', false, null::uuid, null::uuid;
    return;
  end if;
  if v_linked is distinct from v_account then
    begin
      -- As sql/recipes/move-key-to-account.sql: the owner link and the stored e-mail both name it.
      update public.license_keys as k set account_id = v_account, email = v_email where k.key = p_key;
    exception when unique_violation then
      get stacked diagnostics v_constraint = constraint_name;
      if v_constraint not in ('system_name_is_unique_per_account', 'system_name_capitals_are_unique_per_account') then
        raise;
      end if;
      -- A kiosk of the other account already has this kiosk's name, or one that looks like it: nothing moved.
      return query select 'name_taken', false, null::uuid, null::uuid;
      return;
    end;
  end if;
  return query select 'done', v_belongs is distinct from v_account, v_account, null::uuid;
end
$$;

COMMENT ON FUNCTION cadence.move_license_key(p_key text, p_email text) IS 'Moves a license key to the existing account of p_email (owner link and stored e-mail): done (changed false when it already belonged there), unknown_license, unknown_account, or name_taken (its system name, or one that looks like it, is used in that account).';

CREATE FUNCTION cadence.change_account_email(p_email text, p_new_email text) RETURNS TABLE(outcome text, changed boolean, account_id uuid, outbox_id uuid)
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $$
declare
  v_account uuid;
  v_old text;
  v_new text := pg_catalog.lower(pg_catalog.btrim(p_new_email));
  v_constraint text;
begin
  select a.id, a.email into v_account, v_old from public.accounts as a
  where pg_catalog.lower(a.email) = pg_catalog.lower(pg_catalog.btrim(p_email))
  for update;
  if not found then
    return query select 'unknown_account', false, null::uuid, null::uuid;
    return;
  end if;
  if v_old = v_new then
    return query select 'done', false, v_account, null::uuid;
    return;
  end if;
  begin
    -- Keys that belong to the account by its old e-mail alone (no owner link) stay its keys: linked
    -- first, so the e-mail change leaves none behind. Only those keys are written: an account's
    -- linked keys follow it whatever its e-mail.
    update public.license_keys as k set account_id = v_account
    where k.account_id is null and pg_catalog.lower(k.email) = pg_catalog.lower(v_old);
    update public.accounts as a set email = v_new where a.id = v_account;
  exception
    when unique_violation then
      get stacked diagnostics v_constraint = constraint_name;
      if v_constraint = 'account_email_is_unique' then
        return query select 'email_taken', false, null::uuid, null::uuid;
        return;
      elsif v_constraint in ('system_name_is_unique_per_account', 'system_name_capitals_are_unique_per_account') then
        -- Unlinked keys carrying the new e-mail would join the account with a name it uses, or one that looks like it.
        return query select 'name_taken', false, null::uuid, null::uuid;
        return;
      end if;
      raise;
    when check_violation then
      get stacked diagnostics v_constraint = constraint_name;
      if v_constraint not in ('account_email_is_valid', 'account_email_has_no_invisible_characters') then
        raise;
      end if;
      return query select 'new_email_invalid', false, null::uuid, null::uuid;
      return;
  end;
  return query select 'done', true, v_account, null::uuid;
end
$$;

COMMENT ON FUNCTION cadence.change_account_email(p_email text, p_new_email text) IS 'Changes the e-mail of the account of p_email to p_new_email (trimmed, lower-cased), linking first the keys that belonged to it by the old e-mail: done, unknown_account, email_taken, name_taken or new_email_invalid.';

CREATE FUNCTION cadence.license_email_recipient(p_key text) RETURNS TABLE(email text, display_name text)
    LANGUAGE sql
    STABLE
    SET search_path TO ''
    AS $$
  select coalesce(a.email, k.email), a.display_name
  from public.license_keys as k
  left join public.accounts as a on a.id = k.belongs_to
  where k.key = p_key
$$;

COMMENT ON FUNCTION cadence.license_email_recipient(p_key text) IS 'Whom a key''s license e-mail goes to: its account''s e-mail and display name, else (no account) its stored e-mail; no row for an unknown key.';

CREATE FUNCTION cadence.queue_license_email(p_key text, p_recipient text, p_subject text, p_text text, p_html text, p_now timestamp with time zone) RETURNS TABLE(outcome text, changed boolean, account_id uuid, outbox_id uuid)
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $$
declare
  v_active boolean;
  v_belongs uuid;
  v_recipient text;
begin
  select k.active, k.belongs_to, k.email into v_active, v_belongs, v_recipient
  from public.license_keys as k where k.key = p_key for key share;
  if not found then
    return query select 'unknown_license', false, null::uuid, null::uuid;
    return;
  end if;
  if not v_active then
    return query select 'license_not_active', false, null::uuid, null::uuid;
    return;
  end if;
  if v_belongs is not null then
    -- Shared: the account's e-mail cannot change between this check and the commit.
    select a.email into v_recipient from public.accounts as a where a.id = v_belongs for share;
  end if;
  if v_recipient is distinct from p_recipient then
    -- The e-mail was rendered for someone else (the e-mail changed since): the caller renders again.
    return query select 'recipient_changed', false, null::uuid, null::uuid;
    return;
  end if;
  return query select 'done', true, v_belongs, cadence.enqueue_request_email(v_recipient, p_subject, p_text, p_html, p_now);
end
$$;

COMMENT ON FUNCTION cadence.queue_license_email(p_key text, p_recipient text, p_subject text, p_text text, p_html text, p_now timestamp with time zone) IS 'Queues a key''s license e-mail again, rendered for p_recipient (cadence.license_email_recipient): done with its outbox id, unknown_license, license_not_active, or recipient_changed (render again).';

CREATE FUNCTION cadence.lifecycle_change(p_call text, p_args jsonb, p_now timestamp with time zone) RETURNS TABLE(outcome text, changed boolean, account_id uuid, outbox_id uuid)
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $$
begin
  -- One name per signed call (functions/app/automations/calls.ts), each exactly one function above.
  case p_call
    when 'suspend' then
      return query select * from cadence.suspend_license_key(p_args ->> 'license_key');
    when 'reinstate' then
      return query select * from cadence.reinstate_license_key(p_args ->> 'license_key');
    when 'move' then
      return query select * from cadence.move_license_key(p_args ->> 'license_key', p_args ->> 'email');
    when 'change-email' then
      return query select * from cadence.change_account_email(p_args ->> 'email', p_args ->> 'new_email');
    when 'resend' then
      return query select * from cadence.queue_license_email(p_args ->> 'license_key', p_args ->> 'recipient',
        p_args ->> 'subject', p_args ->> 'text', p_args ->> 'html', p_now);
    else
      raise exception 'unknown lifecycle call %', p_call using errcode = '22023';
  end case;
end
$$;

COMMENT ON FUNCTION cadence.lifecycle_change(p_call text, p_args jsonb, p_now timestamp with time zone) IS 'One signed lifecycle call''s change by name (suspend, reinstate, move, change-email, resend), its arguments in p_args: the function of that call, nothing else.';

CREATE FUNCTION cadence.lifecycle_change_once(p_source text, p_id text, p_claim_token uuid, p_call text, p_args jsonb, p_now timestamp with time zone, p_answers jsonb) RETURNS TABLE(outcome text, changed boolean, account_id uuid, outbox_id uuid, response_status smallint, response_body text)
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $$
declare
  v_token uuid;
  v_change record;
  v_answer jsonb;
  v_body text;
begin
  -- The id claimed by cadence.claim_onboarding_key (one namespace for every signed call), locked
  -- first, so a request whose lease was taken over cannot complete beside the new holder.
  select k.claim_token into v_token from public.onboarding_idempotency_keys as k
  where k.source = p_source and k.id = p_id
  for update;
  if not found or v_token is distinct from p_claim_token then
    return query select 'lost', false, null::uuid, null::uuid, null::smallint, null::text;
    return;
  end if;

  select c.outcome, c.changed, c.account_id, c.outbox_id into v_change from cadence.lifecycle_change(p_call, p_args, p_now) as c;
  -- The answer of each final outcome comes from the API (p_answers: outcome -> {status, body}),
  -- the JSON strings "{changed}" and "{user_id}" standing for what this change did. A refusal is
  -- final too, and replayed: a signature that does not cover the path (Standard Webhooks) must
  -- not let a refused call's id be carried out at another path. An outcome without an answer
  -- (recipient_changed) leaves the claim as it is: the caller tries again under it.
  v_answer := p_answers -> v_change.outcome;
  if v_answer is null then
    return query select v_change.outcome, false, null::uuid, null::uuid, null::smallint, null::text;
    return;
  end if;
  v_body := replace(replace(v_answer ->> 'body', '"{changed}"', v_change.changed::text),
                    '"{user_id}"', coalesce(to_json(v_change.account_id::text)::text, 'null'));
  update public.onboarding_idempotency_keys as k
  set claim_token = null, claimed_until = null, response_status = (v_answer ->> 'status')::smallint, response_body = v_body
  where k.source = p_source and k.id = p_id;
  return query select v_change.outcome, v_change.changed, v_change.account_id, v_change.outbox_id, (v_answer ->> 'status')::smallint, v_body;
end
$$;

COMMENT ON FUNCTION cadence.lifecycle_change_once(p_source text, p_id text, p_claim_token uuid, p_call text, p_args jsonb, p_now timestamp with time zone, p_answers jsonb) IS 'cadence.lifecycle_change for a claimed id: the change and the answer a retry replays (from p_answers by outcome) in one transaction; lost when p_claim_token no longer holds the id.';
