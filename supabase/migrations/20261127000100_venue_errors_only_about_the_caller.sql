-- Venue errors speak only of the caller's own account (issue 49, item 3). Postgres fires BEFORE ROW
-- triggers before it checks row-level security's WITH CHECK, and cadence.check_venue_address runs
-- with its owner's rights: an account holder inserting a venue address with another account's id
-- met that trigger's checks on that account and learnt, from which error came back, its registered
-- networks (the overlap message), its count of active keys (the allowance message, and with it
-- whether the account exists at all), and whether its kiosks called from an address in the last 24
-- hours (the seen-from message); the trigger also locked that account's row while it looked.
--
-- Now a trigger that fires first refuses an account holder's row for any account but their own, in
-- row-level security's own words, before anything reads that account: the refusal is the same
-- whatever the account holds, and the same as for an account that does not exist. Staff (and any
-- role but `authenticated`) pass through it to the rules unchanged, with the same messages.
--
-- Updates leaked nothing: the update policy's USING hides other accounts' rows before any trigger
-- fires, and holders hold no update privilege on account_id, so no holder's update moves a row to
-- another account. The trigger covers updates anyway, so the rule holds whatever the grants.

create function cadence.check_venue_address_account()
returns trigger
language plpgsql
stable
security definer
set search_path = ''
as $$
begin
  -- The insert and update policies' own helper (cadence.holder_account_id): this refusal and the
  -- policies decide alike. Definer's rights only to reach that helper, which lives in a schema
  -- account holders hold no usage on.
  if pg_catalog.current_setting('role', true) = 'authenticated'
     and new.account_id is distinct from (select cadence.holder_account_id()) then
    -- Exactly what Postgres says when a row fails a policy's WITH CHECK: the Data API answers a
    -- holder with an error's code, message, details and hint (none here), so this refusal cannot be
    -- told from the policy's.
    raise exception using
      errcode = 'insufficient_privilege',
      message = pg_catalog.format('new row violates row-level security policy for table "%s"', tg_table_name);
  end if;
  return new;
end
$$;
comment on function cadence.check_venue_address_account() is
  'Trigger, first on public.venue_addresses: refuses an account holder''s row for an account not theirs with row-level security''s own error, before cadence.check_venue_address reads or locks that account, so no error tells a holder what another account holds.';

-- Postgres fires a table's triggers for one event in the order of their names:
-- venue_address_is_the_callers sorts before venue_address_rules (cadence.check_venue_address).
create trigger venue_address_is_the_callers before insert or update on public.venue_addresses
  for each row execute function cadence.check_venue_address_account();

revoke execute on function cadence.check_venue_address_account() from public;
