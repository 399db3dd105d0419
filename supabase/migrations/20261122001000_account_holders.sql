-- Who an account holder is, for row-level security: a Supabase Auth user whose id is an account's
-- auth_user_id (onboarding links them). Supabase's Data API runs each request as `authenticated`
-- with the user's JWT claims in `request.jwt.claims`, so auth.uid() names the user.
--
-- Each helper answers once per statement: policies call them as `(select cadence.holder_...())`,
-- which Postgres runs once as an init plan, and compare an indexed column with the answer
-- (`key = any (...)`). They are SECURITY DEFINER because what they read (auth_user_id, the pairing
-- columns, entitlements) is not granted to account holders; they take no argument and answer only
-- about the caller. They live in `cadence`, which the Data API does not expose, so nobody calls
-- them through /rpc. PL/pgSQL keeps each one's plan for the connection's life.

create function cadence.holder_account_id()
returns uuid
language plpgsql
stable
security definer
set search_path = ''
as $$
begin
  return (select a.id from public.accounts as a where a.auth_user_id = (select auth.uid()));
end
$$;
comment on function cadence.holder_account_id() is
  'The account of the signed-in Supabase Auth user (accounts.auth_user_id = auth.uid()), or null. For row-level security policies.';

create function cadence.holder_license_keys()
returns text[]
language plpgsql
stable
security definer
set search_path = ''
as $$
begin
  -- The pairing rule decides (cadence.key_belongs_to): keys linked to the account, and keys with no
  -- owner link whose stored e-mail is the account's.
  return array(
    select k.key
    from public.accounts as a
    join public.license_keys as k on cadence.key_belongs_to(k, a)
    where a.auth_user_id = (select auth.uid()));
end
$$;
comment on function cadence.holder_license_keys() is
  'The license keys that belong to the signed-in account holder''s account (cadence.key_belongs_to); empty for anyone else. For row-level security policies.';

create function cadence.holder_schedule_ids()
returns uuid[]
language plpgsql
stable
security definer
set search_path = ''
as $$
begin
  return array(
    select s.id
    from public.schedules as s
    where s.account_id = (select cadence.holder_account_id())
       or s.license_key = any ((select cadence.holder_license_keys())::text[]));
end
$$;
comment on function cadence.holder_schedule_ids() is
  'The schedules of the signed-in account holder''s account and of its keys; empty for anyone else. For row-level security policies.';

create function cadence.holder_block_ids()
returns uuid[]
language plpgsql
stable
security definer
set search_path = ''
as $$
begin
  return array(select b.id from public.schedule_blocks as b where b.schedule_id = any ((select cadence.holder_schedule_ids())::uuid[]));
end
$$;
comment on function cadence.holder_block_ids() is
  'The blocks of the signed-in account holder''s schedules; empty for anyone else. For row-level security policies.';

create function cadence.holder_proclamation_ids()
returns uuid[]
language plpgsql
stable
security definer
set search_path = ''
as $$
begin
  -- Entitled and served: a proclamation whose frequency has no canonical id is never served (the
  -- join cadence.proclamations_json makes), so an account holder never reads it or plays it either.
  return array(
    select pr.id
    from public.account_proclamations as ap
    join public.proclamations as pr on pr.id = ap.proclamation_id
    join public.frequencies as f on f.id = pr.frequency_id
    join cadence.canonical_frequencies() as c on c.hz = f.hz
    where ap.account_id = (select cadence.holder_account_id()));
end
$$;
comment on function cadence.holder_proclamation_ids() is
  'The proclamations the signed-in account holder''s account is entitled to and that are served (canonical frequency); empty for anyone else. For row-level security policies.';

revoke execute on function cadence.holder_account_id() from public;
revoke execute on function cadence.holder_license_keys() from public;
revoke execute on function cadence.holder_schedule_ids() from public;
revoke execute on function cadence.holder_block_ids() from public;
revoke execute on function cadence.holder_proclamation_ids() from public;
-- A policy's function calls run as the querying role: account holders execute these, and only these.
grant execute on function cadence.holder_account_id() to authenticated;
grant execute on function cadence.holder_license_keys() to authenticated;
grant execute on function cadence.holder_schedule_ids() to authenticated;
grant execute on function cadence.holder_block_ids() to authenticated;
grant execute on function cadence.holder_proclamation_ids() to authenticated;
