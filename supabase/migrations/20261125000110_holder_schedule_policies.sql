-- An account holder's schedule edit through the Data API (as `authenticated`, under Supabase's 8 s
-- statement timeout) cost as much as the account's fleet: the schedule policies, and
-- holder_schedule_ids behind the block policies, listed every key of the account and compared each
-- schedule with that list (400 ms at 100,000 keys). Now they ask only about the schedules: a schedule
-- is the holder's when it is the account's, or its key is one of the account's, each key checked on
-- its own (a row check, so the new row of an insert ... returning passes it too).

create or replace function cadence.holder_schedule_ids()
returns uuid[]
language plpgsql
stable
security definer
set search_path = ''
as $$
begin
  -- Key schedules are few beside keys: find them first, then whether each key is the holder's
  -- (cadence.key_belongs_to; the first condition finds the candidate account through indexes).
  return array(
    select s.id from public.schedules as s where s.account_id = (select cadence.holder_account_id())
    union all
    select s.id
      from public.schedules as s
      join public.license_keys as k on k.key = s.license_key
      join public.accounts as a
        on (a.id = k.account_id or pg_catalog.lower(a.email) = pg_catalog.lower(k.email)) and cadence.key_belongs_to(k, a)
     where a.auth_user_id = (select auth.uid()));
end
$$;

create function cadence.holder_owns_key(p_key text)
returns boolean
language plpgsql
stable
security definer
set search_path = ''
as $$
begin
  return exists (
    select
      from public.license_keys as k
      join public.accounts as a
        on (a.id = k.account_id or pg_catalog.lower(a.email) = pg_catalog.lower(k.email)) and cadence.key_belongs_to(k, a)
     where k.key = p_key and a.auth_user_id = (select auth.uid()));
end
$$;
comment on function cadence.holder_owns_key(text) is
  'Whether a license key belongs to the signed-in account holder''s account (cadence.key_belongs_to); false for anyone else. For row-level security policies.';

drop policy "Account holders can read their own schedules" on public.schedules;
drop policy "Account holders can create schedules for their account and keys" on public.schedules;
drop policy "Account holders can change their own schedules" on public.schedules;
drop policy "Account holders can delete their own schedules" on public.schedules;
create policy "Account holders can read their own schedules"
  on public.schedules for select to authenticated
  using (account_id = (select cadence.holder_account_id()) or cadence.holder_owns_key(license_key));
create policy "Account holders can create schedules for their account and keys"
  on public.schedules for insert to authenticated
  with check (account_id = (select cadence.holder_account_id()) or cadence.holder_owns_key(license_key));
create policy "Account holders can change their own schedules"
  on public.schedules for update to authenticated
  using (account_id = (select cadence.holder_account_id()) or cadence.holder_owns_key(license_key))
  with check (account_id = (select cadence.holder_account_id()) or cadence.holder_owns_key(license_key));
create policy "Account holders can delete their own schedules"
  on public.schedules for delete to authenticated
  using (account_id = (select cadence.holder_account_id()) or cadence.holder_owns_key(license_key));

revoke execute on function cadence.holder_owns_key(text) from public;
grant execute on function cadence.holder_owns_key(text) to authenticated;
