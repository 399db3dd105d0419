-- System names compare as a person sees them. Characters that render as nothing (Unicode's format
-- characters, category Cf: zero-width spaces and joiners, bidi controls, the BOM, tag characters)
-- made `lobby` and `lobby<U+200B>` two names on one account, and a name of only such characters
-- (`<U+202E><U+200B>`) a non-empty one. A stored name is now in one form, cadence.system_name_form:
-- format characters removed, then Unicode NFC (so a precomposed `é` and `e` + U+0301 are one name),
-- then trimmed of what JavaScript's trim() removes. The API stores exactly that form
-- (functions/app/license/schemas.ts computes the same, to answer `invalid_name` / `invalid`), the
-- trigger below refuses any other from any writer, and cadence.set_system_name compares the form
-- of names already stored, so a name written before this migration still blocks its look-alike.
--
-- Existing names are not changed: this migration reports those not in the form (a NOTICE naming
-- each key), and the query in supabase/README.md ("System names") lists them for staff to fix.

-- Unicode 17's format characters (category Cf), the set JavaScript's \p{Cf} matches in Deno and
-- Node; test/license/system-name.test.ts checks that both remove exactly the same characters.
create function cadence.system_name_form(p_name text)
returns text
language sql
immutable
strict
parallel safe
set search_path = ''
as $$
  select pg_catalog.btrim(
    pg_catalog.normalize(
      pg_catalog.regexp_replace(
        p_name,
        '[\u00ad\u0600-\u0605\u061c\u06dd\u070f\u0890-\u0891\u08e2\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u206f\ufeff\ufff9-\ufffb\U000110bd\U000110cd\U00013430-\U0001343f\U0001bca0-\U0001bca3\U0001d173-\U0001d17a\U000e0001\U000e0020-\U000e007f]',
        '', 'g'),
      'NFC'),
    -- What JavaScript's String.prototype.trim removes (U+FEFF, also whitespace there, is Cf above).
    U&'\0009\000A\000B\000C\000D\0020\00A0\1680\2000\2001\2002\2003\2004\2005\2006\2007\2008\2009\200A\2028\2029\202F\205F\3000')
$$;
comment on function cadence.system_name_form(text) is
  'The form a system name is stored and compared in: format characters (Unicode Cf) removed, NFC, trimmed. Empty means no name.';

create function cadence.check_system_name_form()
returns trigger
language plpgsql
set search_path = ''
as $$
begin
  -- An update that leaves the name as it was passes, so a name stored before this rule does not
  -- block other edits of its row (validation's last_validated_at, a dashboard edit of `active`).
  if tg_op = 'UPDATE' and new.system_name is not distinct from old.system_name then
    return new;
  end if;
  if new.system_name is not null
     and (new.system_name <> cadence.system_name_form(new.system_name) or cadence.system_name_form(new.system_name) = '') then
    raise exception 'a system name must be stored in its normal form, and not be empty once invisible characters are removed'
      using errcode = 'check_violation', constraint = 'system_name_is_normalised', table = 'license_keys', schema = 'public';
  end if;
  return new;
end
$$;
comment on function cadence.check_system_name_form() is
  'Trigger of system_name_is_normalised: refuses a new or changed system name that is not in cadence.system_name_form, or is empty in it.';

create trigger system_name_is_normalised
  before insert or update of system_name on public.license_keys
  for each row execute function cadence.check_system_name_form();

-- As before (pinned_pairing), but a name is compared with the form of the names already stored.
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
       -- The stored form of a name written before names were normalised, so it blocks its look-alike.
       and lower(cadence.system_name_form(other.system_name)) = lower(p_name)
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
comment on function cadence.set_system_name(text, text) is
  'Sets a key''s system name (already in cadence.system_name_form): ok, unchanged, taken (another key of the account has it, as stored or in its form, regardless of case) or unknown_license.';

revoke execute on function cadence.system_name_form(text) from public;
grant execute on function cadence.system_name_form(text) to service_role;
revoke execute on function cadence.check_system_name_form() from public;

-- Names stored before this rule that are not in the form, or that look like another name of the
-- same account: reported, never changed.
do $$
declare
  v_keys text;
begin
  select pg_catalog.string_agg(k.key, ', ' order by k.key) into v_keys
    from public.license_keys as k
   where k.system_name is not null
     and (k.system_name <> cadence.system_name_form(k.system_name)
          or cadence.system_name_form(k.system_name) = ''
          or exists (select from public.license_keys as o
                      where o.key <> k.key
                        and coalesce(o.account_id::text, lower(o.email)) = coalesce(k.account_id::text, lower(k.email))
                        and lower(cadence.system_name_form(o.system_name)) = lower(cadence.system_name_form(k.system_name))));
  if v_keys is not null then
    raise notice 'system names to review (invisible characters, not normalised, or a look-alike of another name of the account; left as they are): %', v_keys;
  end if;
end
$$;
