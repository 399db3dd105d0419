-- License validation (spec 4.3) and the kiosk's system name (spec 4.6).
--
-- Lock order, the same in both functions so they cannot deadlock: the key's own row first, then
-- the advisory lock of its account; no function ever locks another key's row.

create function cadence.set_system_name(p_key text, p_name text)
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
comment on function cadence.set_system_name(text, text) is
  'Sets a key''s system name (already trimmed and 1-40 characters): ok, unchanged (it already had exactly that name; nothing written), taken (another key of the same account has it, case-insensitively) or unknown_license.';

create function cadence.validate_license(p_key text, p_email text, p_system_name text default null)
returns table (outcome text, owner_email text, system_name_status text)
language plpgsql
volatile
set search_path = ''
as $$
declare
  v_outcome text;
  v_active boolean;
  v_owner_email text;
begin
  loop
    -- One statement validates and records: the pairing as of the statement's snapshot, and the
    -- UPDATE rechecks activity and ownership on the key's latest version, so a key deactivated or
    -- re-linked meanwhile is never recorded as validated.
    with pairing as (
      select p.outcome, p.key_active, p.account_id from cadence.license_pairing(p_key, p_email) as p
    ), validated as (
      update public.license_keys as k
         set last_validated_at = pg_catalog.now()
        from pairing as p
        join public.accounts as a on a.id = p.account_id
       where k.key = p_key
         and p.outcome = 'paired'
         and k.active
         and cadence.key_belongs_to(k, a)
      returning a.email
    )
    select p.outcome, p.key_active, (select v.email from validated as v)
      into v_outcome, v_active, v_owner_email
      from pairing as p;
    -- Valid in the snapshot but not on the latest version: the key just changed, so look again
    -- (under READ COMMITTED each pass takes a new snapshot).
    exit when v_owner_email is not null or v_outcome <> 'paired' or not v_active;
  end loop;

  if v_owner_email is null then
    -- Spec 4.3 lists the failures in this order, and the first that applies wins.
    return query select case when v_outcome = 'key_not_found' then 'key_not_found'
                             when not v_active then 'key_inactive'
                             else v_outcome
                        end, null::text, null::text;
    return;
  end if;

  -- The name is set after the key's row is locked by the UPDATE above: the lock order above.
  -- Re-sending the current name is `ok`: the key has the name it asked for. `unchanged` means
  -- no name was sent.
  return query select 'valid', v_owner_email,
    case when p_system_name is null then 'unchanged'
         when cadence.set_system_name(p_key, p_system_name) = 'taken' then 'conflict'
         else 'ok'
    end;
end
$$;
comment on function cadence.validate_license(text, text, text) is
  'Validates a key for an e-mail (spec 4.3): key_not_found, key_inactive, user_not_found, not_owner or valid (first failure wins, in that order); a valid key gets last_validated_at in the validating statement, the owner''s e-mail, and the outcome of the optional system name (unchanged when none is given, ok or conflict).';

revoke execute on function cadence.set_system_name(text, text) from public;
revoke execute on function cadence.validate_license(text, text, text) from public;
grant execute on function cadence.set_system_name(text, text) to service_role;
grant execute on function cadence.validate_license(text, text, text) to service_role;
