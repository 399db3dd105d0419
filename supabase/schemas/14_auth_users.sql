-- Every account is also a Supabase Auth user. Cadence creates that user through the Auth admin API
-- with the account's own id, then records the link here. Reaching Auth happens after the onboarding
-- transaction, so an account may wait unlinked; the outbox pass retries it with backoff.

CREATE FUNCTION cadence.claim_accounts_due_for_auth(p_now timestamp with time zone, p_lease_seconds integer, p_limit integer, p_id uuid DEFAULT NULL::uuid) RETURNS TABLE(id uuid, email text, display_name text, attempts integer, auth_user_id uuid)
    LANGUAGE sql
    SET search_path TO ''
    AS $$
  -- The claim moves auth_link_due_at one lease ahead, so no other worker calls Auth for the same
  -- account meanwhile. `for no key update` does not wait for onboardings still adding keys to
  -- the account (their foreign keys hold `for key share` on it).
  update public.accounts as a
  set auth_link_attempts = a.auth_link_attempts + 1,
      auth_link_due_at = p_now + make_interval(secs => p_lease_seconds)
  where a.id in (select d.id from public.accounts as d
                 where (d.auth_user_id is null or d.auth_email is distinct from d.email)
                   and (d.auth_link_due_at is null or d.auth_link_due_at <= p_now)
                   and (p_id is null or d.id = p_id)
                 order by d.auth_link_due_at nulls first, d.id
                 limit p_limit
                 for no key update skip locked)
  returning a.id, a.email, a.display_name, a.auth_link_attempts, a.auth_user_id
$$;

COMMENT ON FUNCTION cadence.claim_accounts_due_for_auth(p_now timestamp with time zone, p_lease_seconds integer, p_limit integer, p_id uuid) IS 'Claims up to p_limit accounts due for Supabase Auth (only p_id when given) for p_lease_seconds: those without an Auth user, and those whose e-mail changed since their Auth user was given it. Rows held by another worker are skipped.';

CREATE FUNCTION cadence.link_auth_user(p_account_id uuid, p_auth_user_id uuid, p_email text) RETURNS boolean
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $$
begin
  update public.accounts
  set auth_user_id = p_auth_user_id, auth_email = p_email, auth_link_error = null, auth_link_due_at = null
  where id = p_account_id and (auth_user_id is null or auth_user_id = p_auth_user_id);
  return found;
end
$$;

COMMENT ON FUNCTION cadence.link_auth_user(p_account_id uuid, p_auth_user_id uuid, p_email text) IS 'Links the account to its Auth user, which Auth now knows by p_email; true when linked (or already linked to that user), false when the account is linked to another. An account whose e-mail changed since p_email was read stays due.';

CREATE FUNCTION cadence.mark_auth_link_failed(p_account_id uuid, p_error text, p_retry_at timestamp with time zone) RETURNS void
    LANGUAGE sql
    SET search_path TO ''
    AS $$
  update public.accounts
  set auth_link_error = left(p_error, 1000), auth_link_due_at = p_retry_at
  where id = p_account_id and (auth_user_id is null or auth_email is distinct from email)
$$;

COMMENT ON FUNCTION cadence.mark_auth_link_failed(p_account_id uuid, p_error text, p_retry_at timestamp with time zone) IS 'Records a failed try to link an Auth user or give it the account''s e-mail: the account stays due, again at p_retry_at.';

-- One account per Auth user: a second account can never be linked to a user already taken.
CREATE UNIQUE INDEX account_auth_user_is_unique ON public.accounts USING btree (auth_user_id);

CREATE INDEX accounts_due_for_auth_idx ON public.accounts USING btree (auth_link_due_at NULLS FIRST) WHERE ((auth_user_id IS NULL) OR (auth_email IS DISTINCT FROM email));
