-- License validation (spec 4.3) for many keys in one statement. The API batches the validations
-- that arrive while one runs (functions/app/db/batch-while-busy.ts); validated with one
-- cadence.validate_license call per key inside a statement, each cost Postgres ~190 us (measured
-- here: 1,000 keys in 187 ms), set-based ~25 us. cadence.validate_license now validates through
-- this function, so the rule lives once.

-- `plan_cache_mode`: the planner cannot see the arrays' sizes, so a plan made for each call's
-- values is no better than the generic one, and making it took ~0.5 ms a call (measured here).
create function cadence.validate_licenses(p_keys text[], p_emails text[])
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
        from unnest(v_ns, v_keys, v_emails) as r(n, key, email)
       cross join lateral cadence.license_pairing(r.key, r.email) as p
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
comment on function cadence.validate_licenses(text[], text[]) is
  'Validates each key for the e-mail at the same position (spec 4.3), one row per position n (1-based): key_not_found, key_inactive, user_not_found, not_owner or valid (first failure wins, in that order), with the owner''s e-mail when valid; valid keys get last_validated_at in the validating statement.';

create or replace function cadence.validate_license(p_key text, p_email text, p_system_name text default null)
returns table (outcome text, owner_email text, system_name_status text)
language plpgsql
volatile
set search_path = ''
as $$
declare
  v_outcome text;
  v_owner_email text;
begin
  select v.outcome, v.owner_email into v_outcome, v_owner_email
    from cadence.validate_licenses(array[p_key], array[p_email]) as v;
  if v_outcome <> 'valid' then
    return query select v_outcome, null::text, null::text;
    return;
  end if;

  -- The name is set after the key's row is locked by the validation above: the lock order of
  -- cadence.set_system_name. Re-sending the current name is `ok`: the key has the name it asked
  -- for. `unchanged` means no name was sent.
  return query select 'valid', v_owner_email,
    case when p_system_name is null then 'unchanged'
         when cadence.set_system_name(p_key, p_system_name) = 'taken' then 'conflict'
         else 'ok'
    end;
end
$$;

revoke execute on function cadence.validate_licenses(text[], text[]) from public;
grant execute on function cadence.validate_licenses(text[], text[]) to service_role;
