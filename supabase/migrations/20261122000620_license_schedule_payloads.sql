-- Kiosks poll their schedule far more often than staff edit one, and assembling a payload costs
-- about ten times a one-row lookup. So every license key's payload (cadence.schedule_payload) is
-- stored, and triggers on every table it reads refresh the keys an edit affects: a poll reads one row.
--
-- Staleness is ruled out by one lock: every statement that can change a payload takes the same
-- transaction-level advisory lock before it changes a row, and refreshes after, with a fresh
-- snapshot (READ COMMITTED). So the edits serialise, and the last to commit refreshed last.
-- Schedule edits, key issue and account changes are rare enough for that.

create table public.license_schedule_payloads (
  license_key text primary key
    constraint license_schedule_payload_key_exists references public.license_keys (key) on update cascade on delete cascade,
  payload json not null
);
comment on table public.license_schedule_payloads is
  'Derived, do not edit: cadence.schedule_payload of every license key, kept current by triggers. To rebuild: select cadence.refresh_license_schedules(array(select key from public.license_keys));';

create function cadence.lock_schedule_payloads()
returns trigger
language plpgsql
volatile
set search_path = ''
as $$
begin
  perform pg_catalog.pg_advisory_xact_lock(pg_catalog.hashtext('cadence.license_schedule_payloads'));
  return null;
end
$$;
comment on function cadence.lock_schedule_payloads() is
  'Trigger (before each statement that can change a payload): takes the lock that serialises payload edits until commit.';

create function cadence.refresh_license_schedules(p_keys text[])
returns void
language plpgsql
volatile
set search_path = ''
as $$
begin
  -- Taken already inside the triggers; needed when staff call this by hand.
  perform pg_catalog.pg_advisory_xact_lock(pg_catalog.hashtext('cadence.license_schedule_payloads'));
  insert into public.license_schedule_payloads (license_key, payload)
  select k.key, cadence.schedule_payload(k.key)
  from public.license_keys as k
  where k.key = any (p_keys)
  on conflict (license_key) do update set payload = excluded.payload;
end
$$;
comment on function cadence.refresh_license_schedules(text[]) is
  'Stores the current cadence.schedule_payload of each given key.';

create function cadence.refresh_schedule_owners(p_license_keys text[], p_account_ids uuid[])
returns void
language plpgsql
volatile
set search_path = ''
as $$
begin
  perform cadence.refresh_license_schedules(array(
    select k.key from public.license_keys as k where k.key = any (p_license_keys)
    union
    select k.key
    from public.accounts as a
    join public.license_keys as k
      -- The first condition finds the candidate keys through indexes; key_belongs_to decides.
      on (k.account_id = a.id or lower(k.email) = lower(a.email)) and cadence.key_belongs_to(k, a)
    where a.id = any (p_account_ids)));
end
$$;
comment on function cadence.refresh_schedule_owners(text[], uuid[]) is
  'Refreshes the keys that read the schedules of these owners: the owning keys, and every key of the owning accounts.';

create function cadence.refresh_schedules(p_schedule_ids uuid[])
returns void
language plpgsql
volatile
set search_path = ''
as $$
begin
  perform cadence.refresh_schedule_owners(
    array(select s.license_key from public.schedules as s where s.id = any (p_schedule_ids)),
    array(select s.account_id from public.schedules as s where s.id = any (p_schedule_ids)));
end
$$;
comment on function cadence.refresh_schedules(uuid[]) is 'Refreshes the keys that read these schedules.';

-- Statement triggers with transition tables: a bulk edit refreshes each affected key once.
create function cadence.refresh_after_schedules_change()
returns trigger
language plpgsql
volatile
set search_path = ''
as $$
begin
  if tg_op in ('INSERT', 'UPDATE') then
    perform cadence.refresh_schedule_owners(array(select license_key from new_rows), array(select account_id from new_rows));
  end if;
  if tg_op in ('UPDATE', 'DELETE') then
    perform cadence.refresh_schedule_owners(array(select license_key from old_rows), array(select account_id from old_rows));
  end if;
  return null;
end
$$;
comment on function cadence.refresh_after_schedules_change() is
  'Trigger: refreshes the keys of a changed schedule''s owners, before and after the change.';

create function cadence.refresh_after_blocks_change()
returns trigger
language plpgsql
volatile
set search_path = ''
as $$
begin
  if tg_op in ('INSERT', 'UPDATE') then
    perform cadence.refresh_schedules(array(select schedule_id from new_rows));
  end if;
  if tg_op in ('UPDATE', 'DELETE') then
    perform cadence.refresh_schedules(array(select schedule_id from old_rows));
  end if;
  return null;
end
$$;
comment on function cadence.refresh_after_blocks_change() is 'Trigger: refreshes the keys that read a changed block''s schedule.';

create function cadence.refresh_after_block_proclamations_change()
returns trigger
language plpgsql
volatile
set search_path = ''
as $$
begin
  if tg_op in ('INSERT', 'UPDATE') then
    perform cadence.refresh_schedules(array(
      select b.schedule_id from public.schedule_blocks as b where b.id in (select block_id from new_rows)));
  end if;
  if tg_op in ('UPDATE', 'DELETE') then
    perform cadence.refresh_schedules(array(
      select b.schedule_id from public.schedule_blocks as b where b.id in (select block_id from old_rows)));
  end if;
  return null;
end
$$;
comment on function cadence.refresh_after_block_proclamations_change() is
  'Trigger: refreshes the keys that read the schedule of a block whose proclamations changed.';

create function cadence.refresh_after_license_key_change()
returns trigger
language plpgsql
volatile
set search_path = ''
as $$
begin
  perform cadence.refresh_license_schedules(array[new.key]);
  return null;
end
$$;
comment on function cadence.refresh_after_license_key_change() is
  'Trigger: stores the payload of a new key, and refreshes it when its owner link or stored e-mail changes.';

create function cadence.refresh_after_account_change()
returns trigger
language plpgsql
volatile
set search_path = ''
as $$
declare
  v_emails text[] := array[lower(old.email), lower(new.email)];
begin
  -- Keys without an owner link whose stored e-mail is (or was) the account's.
  perform cadence.refresh_license_schedules(array(
    select k.key from public.license_keys as k where k.account_id is null and lower(k.email) = any (v_emails)));
  return null;
end
$$;
comment on function cadence.refresh_after_account_change() is
  'Trigger: refreshes the keys without an owner link that pair with an account by e-mail when it changes e-mail or goes.';

create function cadence.refresh_all_license_schedules()
returns trigger
language plpgsql
volatile
set search_path = ''
as $$
begin
  perform cadence.refresh_license_schedules(array(select k.key from public.license_keys as k));
  return null;
end
$$;
comment on function cadence.refresh_all_license_schedules() is 'Trigger (after truncate): refreshes every key.';

create trigger payloads_lock before insert or update or delete or truncate on public.schedules
  for each statement execute function cadence.lock_schedule_payloads();
create trigger payloads_lock before insert or update or delete or truncate on public.schedule_blocks
  for each statement execute function cadence.lock_schedule_payloads();
create trigger payloads_lock before insert or update or delete or truncate on public.schedule_block_proclamations
  for each statement execute function cadence.lock_schedule_payloads();
create trigger payloads_lock before insert or update of key, account_id, email on public.license_keys
  for each statement execute function cadence.lock_schedule_payloads();
-- A new account has no schedule yet, so it changes no payload: only e-mail changes and deletions do.
create trigger payloads_lock before update of email or delete on public.accounts
  for each statement execute function cadence.lock_schedule_payloads();

create trigger payloads_refresh_insert after insert on public.schedules
  referencing new table as new_rows for each statement execute function cadence.refresh_after_schedules_change();
create trigger payloads_refresh_update after update on public.schedules
  referencing old table as old_rows new table as new_rows for each statement execute function cadence.refresh_after_schedules_change();
create trigger payloads_refresh_delete after delete on public.schedules
  referencing old table as old_rows for each statement execute function cadence.refresh_after_schedules_change();

create trigger payloads_refresh_insert after insert on public.schedule_blocks
  referencing new table as new_rows for each statement execute function cadence.refresh_after_blocks_change();
create trigger payloads_refresh_update after update on public.schedule_blocks
  referencing old table as old_rows new table as new_rows for each statement execute function cadence.refresh_after_blocks_change();
create trigger payloads_refresh_delete after delete on public.schedule_blocks
  referencing old table as old_rows for each statement execute function cadence.refresh_after_blocks_change();

create trigger payloads_refresh_insert after insert on public.schedule_block_proclamations
  referencing new table as new_rows for each statement execute function cadence.refresh_after_block_proclamations_change();
create trigger payloads_refresh_update after update on public.schedule_block_proclamations
  referencing old table as old_rows new table as new_rows
  for each statement execute function cadence.refresh_after_block_proclamations_change();
create trigger payloads_refresh_delete after delete on public.schedule_block_proclamations
  referencing old table as old_rows for each statement execute function cadence.refresh_after_block_proclamations_change();

create trigger payloads_refresh_truncate after truncate on public.schedules
  for each statement execute function cadence.refresh_all_license_schedules();
create trigger payloads_refresh_truncate after truncate on public.schedule_blocks
  for each statement execute function cadence.refresh_all_license_schedules();
create trigger payloads_refresh_truncate after truncate on public.schedule_block_proclamations
  for each statement execute function cadence.refresh_all_license_schedules();

create trigger payloads_refresh after insert or update of key, account_id, email on public.license_keys
  for each row execute function cadence.refresh_after_license_key_change();
create trigger payloads_refresh after update of email or delete on public.accounts
  for each row execute function cadence.refresh_after_account_change();

-- Keys that exist already (a database migrated after keys were issued).
select cadence.refresh_license_schedules(array(select k.key from public.license_keys as k));

alter table public.license_schedule_payloads enable row level security;
revoke all on public.license_schedule_payloads from anon, authenticated;

revoke execute on function cadence.lock_schedule_payloads() from public;
revoke execute on function cadence.refresh_license_schedules(text[]) from public;
revoke execute on function cadence.refresh_schedule_owners(text[], uuid[]) from public;
revoke execute on function cadence.refresh_schedules(uuid[]) from public;
revoke execute on function cadence.refresh_after_schedules_change() from public;
revoke execute on function cadence.refresh_after_blocks_change() from public;
revoke execute on function cadence.refresh_after_block_proclamations_change() from public;
revoke execute on function cadence.refresh_after_license_key_change() from public;
revoke execute on function cadence.refresh_after_account_change() from public;
revoke execute on function cadence.refresh_all_license_schedules() from public;
-- A trigger's inner calls run as the role that edits, and service_role may edit through Supabase's API.
grant execute on function cadence.refresh_license_schedules(text[]) to service_role;
grant execute on function cadence.refresh_schedule_owners(text[], uuid[]) to service_role;
grant execute on function cadence.refresh_schedules(uuid[]) to service_role;
