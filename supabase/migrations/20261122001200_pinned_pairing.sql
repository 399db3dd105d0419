-- Every function pins its search_path (Supabase's Security Advisor: function_search_path_mutable).
-- The pairing functions had none so that Postgres would inline them into the kiosk reads, which the
-- API called once per request inside each batched statement. A pinned function is never inlined,
-- and calling one per request cost far more than the inlined join (measured here: 6-7 us a row for
-- the license schedule read and 20-30 us for the legacy one, against under 1 us). So pairing now
-- answers a whole batch in one call, cadence.license_pairings, and the kiosk reads built on it are
-- set-based (set_based_kiosk_reads).

-- A pinned key_belongs_to is opaque to the planner, so callers that look up an account's keys find
-- the candidates through indexes first (owner link, or stored e-mail) and let it decide. This index
-- serves the e-mail side of that lookup; the partial one it replaces only served the inlined rule.
create index license_keys_lower_email_idx on public.license_keys (lower(email));
drop index public.license_keys_email_idx;

create or replace function cadence.key_belongs_to(p_key public.license_keys, p_account public.accounts)
returns boolean
language plpgsql
immutable
set search_path = ''
as $$
begin
  -- PL/pgSQL evaluates this as a simple expression, with no plan to make on each call.
  return p_key.account_id = p_account.id
      or (p_key.account_id is null and pg_catalog.lower(p_key.email) = pg_catalog.lower(p_account.email));
end
$$;

-- The first argument position is n (1-based). `plan_cache_mode`: the planner cannot see the arrays'
-- sizes, so a plan made for each call's values is no better than the generic one.
create function cadence.license_pairings(p_keys text[], p_emails text[])
returns table (n bigint, outcome text, key_active boolean, account_id uuid)
language plpgsql
stable
set search_path = ''
set plan_cache_mode = force_generic_plan
as $$
begin
  return query
    select r.n,
           case
             when k.key is null then 'key_not_found'
             when a.id is null then 'user_not_found'
             when cadence.key_belongs_to(k, a) then 'paired'
             else 'not_owner'
           end,
           k.active,
           a.id
      from unnest(p_keys, p_emails) with ordinality as r(key, email, n)
      -- `= any (...)` restricts each table to the batch through its index, whichever join the
      -- planner picks for a batch it cannot size.
      left join public.license_keys as k on k.key = r.key and k.key = any (p_keys)
      left join public.accounts as a
        on pg_catalog.lower(a.email) = pg_catalog.lower(pg_catalog.btrim(r.email))
       and pg_catalog.lower(a.email) = any (array(select pg_catalog.lower(pg_catalog.btrim(e)) from unnest(p_emails) as e));
end
$$;
comment on function cadence.license_pairings(text[], text[]) is
  'Outcome of pairing each key with the e-mail at the same position n (1-based): key_not_found, user_not_found, not_owner or paired, with the key''s activity and the account id.';

create or replace function cadence.license_pairing(p_key text, p_email text)
returns table (outcome text, key_active boolean, account_id uuid)
language sql
stable
set search_path = ''
as $$
  select p.outcome, p.key_active, p.account_id from cadence.license_pairings(array[p_key], array[p_email]) as p
$$;

-- Validation pairs its whole batch in one call; the rest is as before (batched_license_validation).
create or replace function cadence.validate_licenses(p_keys text[], p_emails text[])
returns table (n bigint, outcome text, owner_email text)
language plpgsql
volatile
set search_path = ''
set plan_cache_mode = force_generic_plan
as $$
declare
  v_n bigint[];
  v_keys text[] := p_keys;
  v_emails text[] := p_emails;
  v_ns bigint[] := array(select pg_catalog.generate_series(1::bigint, pg_catalog.cardinality(p_keys)::bigint));
  v_outcomes text[];
  v_owner_emails text[];
  v_settled boolean[];
begin
  loop
    -- One statement pairs every key with its e-mail as of the statement's snapshot, locks the keys
    -- to record in key order (so two batches cannot deadlock), and records last_validated_at; the
    -- UPDATE rechecks activity and ownership on each key's latest version, so a key deactivated or
    -- re-linked meanwhile is never recorded as validated.
    with reads as (
      select r.n, r.key, p.outcome, p.key_active, p.account_id
        from unnest(v_ns, v_keys) with ordinality as r(n, key, i)
        join cadence.license_pairings(v_keys, v_emails) as p on p.n = r.i
    ), locked as (
      select k.key
        from public.license_keys as k
       where k.key in (select r.key from reads as r where r.outcome = 'paired' and r.key_active)
       order by k.key
         for update
    ), validated as (
      update public.license_keys as k
         set last_validated_at = pg_catalog.now()
        from (select distinct r.key, r.account_id from reads as r join locked as l on l.key = r.key
               where r.outcome = 'paired' and r.key_active) as v
        join public.accounts as a on a.id = v.account_id
       where k.key = v.key
         and k.active
         and cadence.key_belongs_to(k, a)
      returning k.key, a.id as account_id, a.email
    )
    select pg_catalog.array_agg(r.n order by r.n),
           -- Spec 4.3 lists the failures in this order, and the first that applies wins.
           pg_catalog.array_agg(case when r.outcome = 'key_not_found' then 'key_not_found'
                                     when not r.key_active then 'key_inactive'
                                     when r.outcome <> 'paired' then r.outcome
                                     else 'valid'
                                end order by r.n),
           pg_catalog.array_agg(v.email order by r.n),
           -- Valid in the snapshot but not on the latest version: the key just changed, so look
           -- again (under READ COMMITTED each pass takes a new snapshot).
           pg_catalog.array_agg(not (r.outcome = 'paired' and r.key_active and v.key is null) order by r.n)
      into v_n, v_outcomes, v_owner_emails, v_settled
      from reads as r
      left join validated as v on v.key = r.key and v.account_id = r.account_id;

    return query
      select s.n, s.outcome, s.owner_email
        from unnest(v_n, v_outcomes, v_owner_emails, v_settled) as s(n, outcome, owner_email, settled)
       where s.settled;

    select pg_catalog.array_agg(s.n), pg_catalog.array_agg(p_keys[s.n]), pg_catalog.array_agg(p_emails[s.n])
      into v_ns, v_keys, v_emails
      from unnest(v_n, v_settled) as s(n, settled)
     where not s.settled;
    exit when v_ns is null;
  end loop;
end
$$;

-- The other callers of key_belongs_to that look up an account's keys: candidates through indexes.
create or replace function cadence.set_system_name(p_key text, p_name text)
returns text
language plpgsql
volatile
set search_path = ''
as $$
declare
  v_key public.license_keys;
  v_account public.accounts;
begin
  -- Re-sending the current name is answered from a plain read: no write, not even a row lock.
  -- The comparison is exact, so a key may change the case of its own name.
  select k.* into v_key from public.license_keys as k where k.key = p_key;
  if not found then
    return 'unknown_license';
  end if;
  if v_key.system_name = p_name then
    return 'unchanged';
  end if;

  select k.* into v_key from public.license_keys as k where k.key = p_key for update;
  if v_key.system_name = p_name then
    return 'unchanged';
  end if;

  -- The account the key belongs to (cadence.key_belongs_to): its owner link, else the account of
  -- its stored e-mail. A key of an e-mail with no account yet is grouped by that e-mail alone.
  select a.* into v_account
    from public.accounts as a
   where a.id = v_key.account_id
      or (v_key.account_id is null and lower(a.email) = lower(v_key.email));

  -- Serialises name changes within one account, so the check below also covers what the unique
  -- index cannot see: an unlinked key and a linked key of the same account.
  perform pg_catalog.pg_advisory_xact_lock(pg_catalog.hashtextextended(
    'cadence.system_name:' || coalesce(v_account.id::text, lower(v_key.email)), 0));

  if exists (
    select from public.license_keys as other
     where other.key <> v_key.key
       and lower(other.system_name) = lower(p_name)
       -- Candidates through indexes (owner link, or stored e-mail); key_belongs_to decides.
       and (other.account_id = v_account.id or lower(other.email) = lower(coalesce(v_account.email, v_key.email)))
       and case when v_account.id is null
                then other.account_id is null and lower(other.email) = lower(v_key.email)
                else cadence.key_belongs_to(other, v_account)
           end
  ) then
    return 'taken';
  end if;

  begin
    update public.license_keys as k set system_name = p_name where k.key = v_key.key;
  exception when unique_violation then
    -- A writer outside this function (a dashboard edit) took the name first.
    return 'taken';
  end;
  return 'ok';
end
$$;

create or replace function cadence.holder_license_keys()
returns text[]
language plpgsql
stable
security definer
set search_path = ''
as $$
begin
  -- The pairing rule decides (cadence.key_belongs_to): keys linked to the account, and keys with no
  -- owner link whose stored e-mail is the account's. The first condition finds the candidates
  -- through indexes.
  return array(
    select k.key
    from public.accounts as a
    join public.license_keys as k
      on (k.account_id = a.id or pg_catalog.lower(k.email) = pg_catalog.lower(a.email)) and cadence.key_belongs_to(k, a)
    where a.auth_user_id = (select auth.uid()));
end
$$;

revoke execute on function cadence.license_pairings(text[], text[]) from public;
grant execute on function cadence.license_pairings(text[], text[]) to service_role;
