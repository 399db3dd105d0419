-- The one rule that pairs a license key with an e-mail (paired when the account the key belongs
-- to, license_keys.belongs_to, is the e-mail's), used by every endpoint that checks a key against an
-- e-mail (proclamations, license validation, the legacy schedule read), and license validation
-- (spec 4.3) built on it. Set-based: the API batches the requests that arrive while one statement
-- runs, and each function answers a whole batch in one call (a pinned function is never
-- inlined, so one call per request cost far more than the join).
--
-- Lock order, the same wherever a key is validated or named, so nothing deadlocks: the keys' own
-- rows, in key order; no function locks another key's row.

-- The first argument position is n (1-based). `plan_cache_mode`: the planner cannot see the arrays'
-- sizes, so a plan made for each call's values is no better than the generic one.
CREATE FUNCTION cadence.license_pairings(p_keys text[], p_emails text[]) RETURNS TABLE(n bigint, outcome text, key_active boolean, account_id uuid)
    LANGUAGE plpgsql STABLE
    SET search_path TO ''
    SET plan_cache_mode TO 'force_generic_plan'
    AS $$
begin
  return query
    select r.n,
           case
             when k.key is null then 'key_not_found'
             when a.id is null then 'user_not_found'
             when k.belongs_to = a.id then 'paired'
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

COMMENT ON FUNCTION cadence.license_pairings(p_keys text[], p_emails text[]) IS 'Outcome of pairing each key with the e-mail at the same position n (1-based): key_not_found, user_not_found, not_owner (the key belongs to another account, or none) or paired, with the key''s activity and the account id.';

CREATE FUNCTION cadence.license_pairing(p_key text, p_email text) RETURNS TABLE(outcome text, key_active boolean, account_id uuid)
    LANGUAGE sql STABLE
    SET search_path TO ''
    AS $$
  select p.outcome, p.key_active, p.account_id from cadence.license_pairings(array[p_key], array[p_email]) as p
$$;

COMMENT ON FUNCTION cadence.license_pairing(p_key text, p_email text) IS 'Outcome of pairing a key with an e-mail: key_not_found, user_not_found, not_owner or paired, with the key''s activity and the account id.';

-- License validation (spec 4.3) for a batch: pairs it in one call, then records the valid keys.
CREATE FUNCTION cadence.validate_licenses(p_keys text[], p_emails text[]) RETURNS TABLE(n bigint, outcome text, owner_email text)
    LANGUAGE plpgsql
    SET search_path TO ''
    SET plan_cache_mode TO 'force_generic_plan'
    AS $$
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
    -- re-linked meanwhile (its account's e-mail changed too: that rewrites the key) is never
    -- recorded as validated.
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
         and k.belongs_to = a.id
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

COMMENT ON FUNCTION cadence.validate_licenses(p_keys text[], p_emails text[]) IS 'Validates each key for the e-mail at the same position (spec 4.3), one row per position n (1-based): key_not_found, key_inactive, user_not_found, not_owner or valid (first failure wins, in that order), with the owner''s e-mail when valid; valid keys get last_validated_at in the validating statement.';

-- Validations that set a system name, many in one statement: validated as cadence.validate_licenses
-- validates (which locks the valid keys in key order), then the valid keys' names set in one call of
-- cadence.set_system_names (which locks the same keys, in the same order). Only a valid key's name
-- is set.
CREATE FUNCTION cadence.validate_and_name_licenses(p_keys text[], p_emails text[], p_names text[]) RETURNS TABLE(n bigint, outcome text, owner_email text, system_name_status text)
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $$
declare
  v_n bigint[];
  v_outcomes text[];
  v_owner_emails text[];
  v_named bigint[];
  v_name_outcomes text[];
begin
  select pg_catalog.array_agg(v.n order by v.n), pg_catalog.array_agg(v.outcome order by v.n), pg_catalog.array_agg(v.owner_email order by v.n)
    into v_n, v_outcomes, v_owner_emails
    from cadence.validate_licenses(p_keys, p_emails) as v;
  v_named := array(
    select v.n from unnest(v_n, v_outcomes) as v(n, outcome)
     where v.outcome = 'valid' and p_names[v.n] is not null
     order by v.n);
  select pg_catalog.array_agg(s.outcome order by s.n)
    into v_name_outcomes
    from cadence.set_system_names(array(select p_keys[m.n] from unnest(v_named) with ordinality as m(n, at) order by m.at),
                                  array(select p_names[m.n] from unnest(v_named) with ordinality as m(n, at) order by m.at)) as s;
  -- `ok` for a name re-sent as stored too: the key has the name it asked for. `unchanged`: no name sent.
  return query
    select v.n, v.outcome, v.owner_email,
           case when v.outcome <> 'valid' then null
                when p_names[v.n] is null then 'unchanged'
                when s.outcome = 'taken' then 'conflict'
                else 'ok'
           end
      from unnest(v_n, v_outcomes, v_owner_emails) as v(n, outcome, owner_email)
      left join unnest(v_named, v_name_outcomes) as s(n, outcome) on s.n = v.n;
end
$$;

COMMENT ON FUNCTION cadence.validate_and_name_licenses(p_keys text[], p_emails text[], p_names text[]) IS 'Validates each key for the e-mail at the same position (cadence.validate_licenses) and, when valid and a name is given (already in cadence.system_name_form), sets it: one row per position n (1-based) with the outcome, the owner''s e-mail when valid, and system_name_status (unchanged when no name was given, ok, or conflict).';

CREATE FUNCTION cadence.validate_license(p_key text, p_email text, p_system_name text DEFAULT NULL::text) RETURNS TABLE(outcome text, owner_email text, system_name_status text)
    LANGUAGE sql
    SET search_path TO ''
    AS $$
  select v.outcome, v.owner_email, v.system_name_status
    from cadence.validate_and_name_licenses(array[p_key], array[p_email], array[p_system_name]) as v
$$;

COMMENT ON FUNCTION cadence.validate_license(p_key text, p_email text, p_system_name text) IS 'Validates a key for an e-mail (spec 4.3): key_not_found, key_inactive, user_not_found, not_owner or valid (first failure wins, in that order); a valid key gets last_validated_at in the validating statement, the owner''s e-mail, and the outcome of the optional system name (unchanged when none is given, ok or conflict).';
