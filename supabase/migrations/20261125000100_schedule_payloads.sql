-- The payload a kiosk polls is stored once per schedule, not once per license key. Every key of an
-- account reads the same account schedule, so a per-key copy made an edit of that schedule rewrite
-- one row per key (34 s at 16,000 keys, under the payload lock every other edit waited for). Now an
-- edit rewrites its schedule's one row, and a poll finds that row from the key at read time (its own
-- schedule, else its account's): what an edit costs depends on what changed, never on how many
-- kiosks read it. A key moving between accounts, or an account changing e-mail, rewrites nothing.
--
-- The version (the ETag) is computed here, once, when a payload is stored: a stored generated
-- column of cadence.schedule_version. The API serves it as it is and never hashes a payload; it also
-- tells the database which version it holds, so an unchanged schedule never crosses the wire.
--
-- In place and without a gap: the read functions keep their names, arguments and columns, so API
-- instances deployed before this migration go on answering while it runs and after (their
-- `fingerprint` is now the version, which they only compare); every version is unchanged. The
-- per-key table goes in the next migration: a poll that began before this one commits still reads
-- it (test/schedule/schedule-payloads-migration.test.ts).

-- First, the triggers that kept the per-key copies: the Supabase CLI applies a migration statement
-- by statement, so each step below must leave a working state. Edits made before the new triggers
-- exist are stored by the refresh of every schedule that follows them.
drop trigger payloads_lock on public.schedules;
drop trigger payloads_lock on public.schedule_blocks;
drop trigger payloads_lock on public.schedule_block_proclamations;
drop trigger payloads_lock on public.license_keys;
drop trigger payloads_lock on public.accounts;
drop trigger payloads_refresh_insert on public.schedules;
drop trigger payloads_refresh_update on public.schedules;
drop trigger payloads_refresh_delete on public.schedules;
drop trigger payloads_refresh_insert on public.schedule_blocks;
drop trigger payloads_refresh_update on public.schedule_blocks;
drop trigger payloads_refresh_delete on public.schedule_blocks;
drop trigger payloads_refresh_insert on public.schedule_block_proclamations;
drop trigger payloads_refresh_update on public.schedule_block_proclamations;
drop trigger payloads_refresh_delete on public.schedule_block_proclamations;
drop trigger payloads_refresh_truncate on public.schedules;
drop trigger payloads_refresh_truncate on public.schedule_blocks;
drop trigger payloads_refresh_truncate on public.schedule_block_proclamations;
drop trigger payloads_refresh on public.license_keys;
drop trigger payloads_refresh on public.accounts;

create table public.schedule_payloads (
  schedule_id uuid primary key
    constraint schedule_payload_schedule_exists references public.schedules (id) on update cascade on delete cascade,
  payload json not null,
  version text generated always as (cadence.schedule_version(payload)) stored
);
comment on table public.schedule_payloads is
  'Derived, do not edit: each schedule''s payload as kiosks read it (cadence.schedule_content) and its version, kept current by triggers. To rebuild: select cadence.refresh_schedule_payloads(array(select id from public.schedules));';
comment on column public.schedule_payloads.version is
  'The schedule version the API serves to every key that reads this schedule (its ETag, unquoted).';

create function cadence.unscheduled_payload()
returns json
language sql
immutable
set search_path = ''
as $$
  select '{"type":null,"daily":[],"weekly":{},"blocks":[]}'::json
$$;
comment on function cadence.unscheduled_payload() is
  'The payload of a key with no schedule to read (type null). Immutable, so a query plan holds it, and its version, as constants.';

-- Written for the plan cache: plpgsql keeps the statement's plan across calls in a backend (a
-- `language sql` body is planned again on every call before Postgres 18).
create function cadence.schedule_content(p_schedule_id uuid)
returns json
language plpgsql
stable
set search_path = ''
as $$
begin
  if p_schedule_id is null then
    return cadence.unscheduled_payload();
  end if;
  return (
    with day as (
      -- Blocks as served, one array per weekday (null weekday: the daily schedule), in start order.
      select b.weekday,
             pg_catalog.json_agg(pg_catalog.json_build_object(
               'id', b.id,
               'startTime', pg_catalog.to_char(b.start_time, 'HH24:MI'),
               'startMinutes', m.start_minutes,
               'endTime', pg_catalog.to_char(b.end_time, 'HH24:MI'),
               'endMinutes', m.end_minutes,
               'overnight', m.end_minutes <= m.start_minutes,
               'durationMinutes', case when m.end_minutes <= m.start_minutes
                                       then m.end_minutes + 1440 - m.start_minutes
                                       else m.end_minutes - m.start_minutes end,
               'dynamicAudio', b.dynamic_audio,
               'proclamationIds', coalesce((select pg_catalog.json_agg(p.proclamation_id order by p.position)
                                            from public.schedule_block_proclamations as p
                                            where p.block_id = b.id), '[]')
             ) order by b.start_time, b.end_time, b.id) as blocks
        from public.schedule_blocks as b
        -- Minutes from midnight; 24:00 is 1440.
        cross join lateral (
          select (extract(hour from b.start_time) * 60 + extract(minute from b.start_time))::integer as start_minutes,
                 (extract(hour from b.end_time) * 60 + extract(minute from b.end_time))::integer as end_minutes
        ) as m
       where b.schedule_id = p_schedule_id
       group by b.weekday
    )
    select pg_catalog.json_build_object(
             'type', s.type,
             'daily', case when s.type = 'daily' then daily.blocks else '[]' end,
             'weekly', case when s.type = 'weekly' then pg_catalog.json_build_object(
                 'monday', coalesce((select day.blocks from day where day.weekday = 'monday'), '[]'),
                 'tuesday', coalesce((select day.blocks from day where day.weekday = 'tuesday'), '[]'),
                 'wednesday', coalesce((select day.blocks from day where day.weekday = 'wednesday'), '[]'),
                 'thursday', coalesce((select day.blocks from day where day.weekday = 'thursday'), '[]'),
                 'friday', coalesce((select day.blocks from day where day.weekday = 'friday'), '[]'),
                 'saturday', coalesce((select day.blocks from day where day.weekday = 'saturday'), '[]'),
                 'sunday', coalesce((select day.blocks from day where day.weekday = 'sunday'), '[]'))
               else '{}' end,
             'blocks', case when s.type = 'daily' then daily.blocks else '[]' end)
      from public.schedules as s
     cross join lateral (
       select coalesce((select day.blocks from day where day.weekday is null), '[]') as blocks
     ) as daily
     where s.id = p_schedule_id
  );
end
$$;
comment on function cadence.schedule_content(uuid) is
  'A schedule''s payload as {type, daily, weekly, blocks}, assembled from its blocks; the unscheduled payload for null; null for an unknown schedule.';

create function cadence.refresh_schedule_payloads(p_schedule_ids uuid[])
returns void
language plpgsql
volatile
set search_path = ''
as $$
begin
  -- Each schedule's stored row is locked, in id order so that two edits of several schedules cannot
  -- deadlock: a second edit of a schedule waits here until the first commits, then assembles with
  -- a fresh snapshot (READ COMMITTED: each statement below takes one), so the last edit to commit
  -- stored last. Edits of other schedules, and every poll, go on meanwhile. Row locks, not advisory
  -- ones: a refresh of every schedule (a truncate, a bulk import) holds no entry per schedule in
  -- the shared lock table. A schedule created by this transaction has no row yet, and no other
  -- transaction can see it to edit it.
  perform
     from public.schedule_payloads as p
    where p.schedule_id in (select u.id from unnest(p_schedule_ids) as u(id))
    order by p.schedule_id
      for update;
  insert into public.schedule_payloads (schedule_id, payload)
  select s.id, cadence.schedule_content(s.id)
    from public.schedules as s
   where s.id in (select u.id from unnest(p_schedule_ids) as u(id))
      on conflict (schedule_id) do update set payload = excluded.payload
   -- An edit that changes nothing a kiosk sees (a block's id order, say) writes nothing.
   where public.schedule_payloads.payload::text is distinct from excluded.payload::text;
end
$$;
comment on function cadence.refresh_schedule_payloads(uuid[]) is
  'Stores the current payload (cadence.schedule_content) of each given schedule. Triggers call it; staff may, to rebuild.';

-- Statement triggers with transition tables: a bulk edit refreshes each affected schedule once. They
-- run with their owner's rights, because account holders edit their schedules through the Data API
-- and may not write the derived table.
create or replace function cadence.refresh_after_schedules_change()
returns trigger
language plpgsql
volatile
security definer
set search_path = ''
as $$
begin
  -- A deleted schedule's payload goes with it (on delete cascade). An owner change stores nothing
  -- new but is cheap to refresh; a type change alters the payload.
  perform cadence.refresh_schedule_payloads(array(select n.id from new_rows as n));
  return null;
end
$$;
comment on function cadence.refresh_after_schedules_change() is
  'Trigger: stores the payload of each created or changed schedule.';

create or replace function cadence.refresh_after_blocks_change()
returns trigger
language plpgsql
volatile
security definer
set search_path = ''
as $$
begin
  if tg_op in ('INSERT', 'UPDATE') then
    perform cadence.refresh_schedule_payloads(array(select n.schedule_id from new_rows as n));
  end if;
  if tg_op in ('UPDATE', 'DELETE') then
    perform cadence.refresh_schedule_payloads(array(select o.schedule_id from old_rows as o));
  end if;
  return null;
end
$$;
comment on function cadence.refresh_after_blocks_change() is
  'Trigger: refreshes the payload of the schedule of each changed block, before and after the change.';

create or replace function cadence.refresh_after_block_proclamations_change()
returns trigger
language plpgsql
volatile
security definer
set search_path = ''
as $$
begin
  -- A block deleted with its proclamations (on delete cascade) is gone here: its own trigger refreshes.
  if tg_op in ('INSERT', 'UPDATE') then
    perform cadence.refresh_schedule_payloads(array(
      select b.schedule_id from public.schedule_blocks as b where b.id in (select n.block_id from new_rows as n)));
  end if;
  if tg_op in ('UPDATE', 'DELETE') then
    perform cadence.refresh_schedule_payloads(array(
      select b.schedule_id from public.schedule_blocks as b where b.id in (select o.block_id from old_rows as o)));
  end if;
  return null;
end
$$;
comment on function cadence.refresh_after_block_proclamations_change() is
  'Trigger: refreshes the payload of the schedule of each block whose proclamations changed.';

create function cadence.refresh_all_schedule_payloads()
returns trigger
language plpgsql
volatile
security definer
set search_path = ''
as $$
begin
  perform cadence.refresh_schedule_payloads(array(select s.id from public.schedules as s));
  return null;
end
$$;
comment on function cadence.refresh_all_schedule_payloads() is 'Trigger (after truncate): refreshes every schedule''s payload.';

create trigger payloads_refresh_insert after insert on public.schedules
  referencing new table as new_rows for each statement execute function cadence.refresh_after_schedules_change();
create trigger payloads_refresh_update after update on public.schedules
  referencing new table as new_rows for each statement execute function cadence.refresh_after_schedules_change();

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

create trigger payloads_refresh_truncate after truncate on public.schedule_blocks
  for each statement execute function cadence.refresh_all_schedule_payloads();
create trigger payloads_refresh_truncate after truncate on public.schedule_block_proclamations
  for each statement execute function cadence.refresh_all_schedule_payloads();

-- The schedules that exist already.
select cadence.refresh_schedule_payloads(array(select s.id from public.schedules as s));

-- The one rule of which payload a key reads, for every reader: polls, the legacy read, kiosk_status.
-- `plan_cache_mode`: the planner cannot see the array's size, so a plan made for each call's values
-- is no better than the generic one; the generic plan holds the unscheduled payload and its version
-- as constants (immutable functions of constants are evaluated when planning).
create function cadence.served_schedules(p_keys text[])
returns table (n bigint, schedule_id uuid, version text, payload json)
language plpgsql
stable
set search_path = ''
set plan_cache_mode = force_generic_plan
as $$
begin
  return query
    select r.n, coalesce(own.id, shared.id),
           case when coalesce(own.id, shared.id) is null then cadence.schedule_version(cadence.unscheduled_payload()) else p.version end,
           case when coalesce(own.id, shared.id) is null then cadence.unscheduled_payload() else p.payload end
      from unnest(p_keys) with ordinality as r(key, n)
      -- `= any (...)` restricts the table to the batch through its index, whichever join the
      -- planner picks for a batch it cannot size.
      join public.license_keys as k on k.key = r.key and k.key = any (p_keys)
      -- The key's own schedule wins; otherwise its account's (cadence.key_belongs_to). The first
      -- condition finds the candidate account through indexes; key_belongs_to decides.
      left join public.schedules as own on own.license_key = k.key
      left join public.accounts as a
        on own.id is null
       and (a.id = k.account_id or pg_catalog.lower(a.email) = pg_catalog.lower(k.email))
       and cadence.key_belongs_to(k, a)
      left join public.schedules as shared on shared.account_id = a.id
      left join public.schedule_payloads as p on p.schedule_id = coalesce(own.id, shared.id);
end
$$;
comment on function cadence.served_schedules(text[]) is
  'For each known key (position n, 1-based): the schedule it reads (its own, else its account''s, else none) with that schedule''s stored version and payload; the unscheduled payload for none. No row for an unknown key.';

create or replace function cadence.schedule_payload(p_key text)
returns json
language plpgsql
stable
set search_path = ''
as $$
begin
  return (select cadence.schedule_content(s.schedule_id) from cadence.served_schedules(array[p_key]) as s);
end
$$;
comment on function cadence.schedule_payload(text) is
  'The schedule a license key reads, assembled now from the tables (what public.schedule_payloads must hold): its own schedule, else its account''s, else type null. Null for an unknown key.';

-- The polls: the `fingerprint` a caller holds and gets back is the schedule version.
create or replace function cadence.license_schedules_if_changed(p_keys text[], p_fingerprints text[])
returns table (n bigint, fingerprint text, payload json)
language plpgsql
stable
set search_path = ''
set plan_cache_mode = force_generic_plan
as $$
begin
  return query
    select s.n, s.version, case when s.version is distinct from p_fingerprints[s.n] then s.payload end
      from cadence.served_schedules(p_keys) as s;
end
$$;
comment on function cadence.license_schedules_if_changed(text[], text[]) is
  'For each known key (position n), the version of the schedule it reads, with the payload only when it differs from the version at the same position; no row for an unknown key.';

create or replace function cadence.legacy_schedules_if_changed(p_keys text[], p_emails text[], p_fingerprints text[])
returns table (n bigint, outcome text, fingerprint text, payload json)
language plpgsql
stable
set search_path = ''
set plan_cache_mode = force_generic_plan
as $$
begin
  return query
    select p.n, p.outcome, s.version, case when s.version is distinct from p_fingerprints[p.n] then s.payload end
      from cadence.license_pairings(p_keys, p_emails) as p
      left join cadence.served_schedules(p_keys) as s on p.outcome = 'paired' and s.n = p.n;
end
$$;
comment on function cadence.legacy_schedules_if_changed(text[], text[], text[]) is
  'For each key and e-mail (position n), the pairing outcome and, when paired, the version of the schedule the key reads, with the payload only when it differs from the version at the same position.';

create or replace function cadence.license_key_schedule_version(p_key text)
returns text
language sql
stable
security definer
set search_path = ''
as $$
  select s.version from cadence.served_schedules(array[p_key]) as s
$$;

-- kiosk_status, for a page of the dashboard's table editor whatever the fleet: the owner and the
-- current version are scalar subqueries, which Postgres evaluates only for the rows a page returns
-- (after the sort and limit), where joins on them were evaluated for every key.
create or replace view public.kiosk_status
with (security_invoker = true)
as
select k.key as license_key,
       (select a.email from public.accounts as a where a.id = cadence.license_key_owner(k.key)) as account_email,
       k.system_name,
       k.active,
       k.last_validated_at,
       s.last_seen_at,
       s.last_seen_ip,
       s.schedule_version_held,
       (select cadence.license_key_schedule_version(k.key)) as schedule_version_current,
       -- Null while unknown: never seen, or seen only by calls that carry no schedule.
       s.schedule_version_held = (select cadence.license_key_schedule_version(k.key)) as schedule_is_current,
       case when s.last_seen_at is null then 'never_seen'
            when s.last_seen_at >= pg_catalog.now() - interval '15 minutes' then 'online'
            else 'offline' end as state
from public.license_keys as k
left join public.kiosk_sightings as s on s.license_key = k.key;


alter table public.schedule_payloads enable row level security;
revoke all on public.schedule_payloads from anon, authenticated;

revoke execute on function cadence.unscheduled_payload() from public;
revoke execute on function cadence.schedule_content(uuid) from public;
revoke execute on function cadence.refresh_schedule_payloads(uuid[]) from public;
revoke execute on function cadence.refresh_after_schedules_change() from public;
revoke execute on function cadence.refresh_after_blocks_change() from public;
revoke execute on function cadence.refresh_after_block_proclamations_change() from public;
revoke execute on function cadence.refresh_all_schedule_payloads() from public;
revoke execute on function cadence.served_schedules(text[]) from public;
grant execute on function cadence.unscheduled_payload() to service_role;
grant execute on function cadence.schedule_content(uuid) to service_role;
grant execute on function cadence.refresh_schedule_payloads(uuid[]) to service_role;
grant execute on function cadence.served_schedules(text[]) to service_role;
