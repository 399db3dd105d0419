-- Every account is also a Supabase Auth user. Cadence creates that user through the Auth admin API
-- with the account's own id, then records the link here. Reaching Auth happens after the onboarding
-- transaction, so an account may wait unlinked; the outbox pass retries it with backoff, as it
-- retries e-mails.

alter table public.accounts
  add column auth_user_id uuid,
  add column auth_link_attempts integer not null default 0
    constraint auth_link_attempts_are_not_negative check (auth_link_attempts >= 0),
  add column auth_link_error text,
  add column auth_link_due_at timestamptz;

comment on column public.accounts.auth_user_id is
  'The Supabase Auth user (auth.users.id) of this account; null until linked. Cadence creates it with the account id.';
comment on column public.accounts.auth_link_attempts is 'How often linking an Auth user was tried.';
comment on column public.accounts.auth_link_error is
  'Why the last try to link an Auth user failed, e.g. the e-mail already belongs to an Auth user Cadence did not create.';
comment on column public.accounts.auth_link_due_at is
  'When linking may next be tried: null means at once (never tried); a claim moves it one lease ahead, a failure one backoff ahead.';

-- One account per Auth user: a second account can never be linked to a user already taken.
create unique index account_auth_user_is_unique on public.accounts (auth_user_id);
create index accounts_auth_link_due_idx on public.accounts (auth_link_due_at nulls first) where auth_user_id is null;

create function cadence.claim_unlinked_accounts(
  p_now timestamptz,
  p_lease_seconds integer,
  p_limit integer,
  p_id uuid default null
)
returns table (id uuid, email text, display_name text, attempts integer)
language sql
volatile
set search_path = ''
as $$
  -- The claim moves auth_link_due_at one lease ahead, so no other worker calls Auth for the same
  -- account meanwhile. `for no key update` does not wait for onboardings still adding keys to
  -- the account (their foreign keys hold `for key share` on it).
  update public.accounts as a
  set auth_link_attempts = a.auth_link_attempts + 1,
      auth_link_due_at = p_now + make_interval(secs => p_lease_seconds)
  where a.id in (select d.id from public.accounts as d
                 where d.auth_user_id is null
                   and (d.auth_link_due_at is null or d.auth_link_due_at <= p_now)
                   and (p_id is null or d.id = p_id)
                 order by d.auth_link_due_at nulls first, d.id
                 limit p_limit
                 for no key update skip locked)
  returning a.id, a.email, a.display_name, a.auth_link_attempts
$$;
comment on function cadence.claim_unlinked_accounts(timestamptz, integer, integer, uuid) is
  'Claims up to p_limit accounts due to be linked to an Auth user (only p_id when given) for p_lease_seconds; rows held by another worker are skipped.';

create function cadence.link_auth_user(p_account_id uuid, p_auth_user_id uuid)
returns boolean
language plpgsql
volatile
set search_path = ''
as $$
begin
  update public.accounts
  set auth_user_id = p_auth_user_id, auth_link_error = null, auth_link_due_at = null
  where id = p_account_id and (auth_user_id is null or auth_user_id = p_auth_user_id);
  return found;
end
$$;
comment on function cadence.link_auth_user(uuid, uuid) is
  'Links the account to its Auth user; true when linked (or already linked to that user), false when the account is linked to another.';

create function cadence.mark_auth_link_failed(p_account_id uuid, p_error text, p_retry_at timestamptz)
returns void
language sql
volatile
set search_path = ''
as $$
  update public.accounts
  set auth_link_error = left(p_error, 1000), auth_link_due_at = p_retry_at
  where id = p_account_id and auth_user_id is null
$$;
comment on function cadence.mark_auth_link_failed(uuid, text, timestamptz) is
  'Records a failed try to link an Auth user: the account stays unlinked, due again at p_retry_at.';

revoke execute on function cadence.claim_unlinked_accounts(timestamptz, integer, integer, uuid) from public;
revoke execute on function cadence.link_auth_user(uuid, uuid) from public;
revoke execute on function cadence.mark_auth_link_failed(uuid, text, timestamptz) from public;
grant execute on function cadence.claim_unlinked_accounts(timestamptz, integer, integer, uuid) to service_role;
grant execute on function cadence.link_auth_user(uuid, uuid) to service_role;
grant execute on function cadence.mark_auth_link_failed(uuid, text, timestamptz) to service_role;
