-- The one rule that pairs a license key with an account, used by every endpoint that checks a key
-- against an e-mail (proclamations, license validation, the legacy schedule read).
--
-- These two functions carry no `set search_path`: a SET clause stops Postgres from inlining a SQL
-- function, and they run on every kiosk request (measured: ~45 us of planning per call with it).
-- That is safe because they are SECURITY INVOKER and name every object and function with its schema.

create function cadence.key_belongs_to(p_key public.license_keys, p_account public.accounts)
returns boolean
language sql
immutable
as $$
  select p_key.account_id = p_account.id
      or (p_key.account_id is null and pg_catalog.lower(p_key.email) = pg_catalog.lower(p_account.email))
$$;
comment on function cadence.key_belongs_to(public.license_keys, public.accounts) is
  'A key belongs to an account when its owner link is that account, or it has no owner link and its stored e-mail equals the account e-mail (case-insensitive).';

create function cadence.license_pairing(p_key text, p_email text)
returns table (outcome text, key_active boolean, account_id uuid)
language sql
stable
as $$
  select case
           when k.key is null then 'key_not_found'
           when a.id is null then 'user_not_found'
           when cadence.key_belongs_to(k, a) then 'paired'
           else 'not_owner'
         end,
         k.active,
         a.id
  from (select) as one
  left join public.license_keys as k on k.key = p_key
  left join public.accounts as a on pg_catalog.lower(a.email) = pg_catalog.lower(pg_catalog.btrim(p_email))
$$;
comment on function cadence.license_pairing(text, text) is
  'Outcome of pairing a key with an e-mail: key_not_found, user_not_found, not_owner or paired, with the key''s activity and the account id.';

revoke execute on function cadence.key_belongs_to(public.license_keys, public.accounts) from public;
revoke execute on function cadence.license_pairing(text, text) from public;
grant usage on schema cadence to service_role;
grant execute on function cadence.key_belongs_to(public.license_keys, public.accounts) to service_role;
grant execute on function cadence.license_pairing(text, text) to service_role;
