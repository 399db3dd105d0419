-- The account a key belongs to, stored on the key (issue 53): `license_keys.belongs_to`.
--
-- The rule is unchanged: a key belongs to the account of its owner link (account_id), else to the
-- account whose e-mail equals its stored e-mail, case-insensitively, else to none. It was spelled in
-- cadence.key_belongs_to, cadence.key_account_id, cadence.license_key_owner and the probes of
-- cadence.served_schedules, with nine hand-written index pre-filters beside it, and the two system-name
-- indexes grouped keys by `coalesce(account_id::text, lower(email))`, which put an unlinked key of an
-- account in another group than the account's linked keys; cadence.set_system_names covered that
-- gap with per-account advisory locks.
--
-- Why stored and not one function every rule calls: an index can only use an immutable expression,
-- and which account has an e-mail is data, so a function could never group the unique indexes by
-- the rule. Stored, the answer is a column: every rule reads it (one equality, through an index),
-- and the system-name indexes group by it, so uniqueness within an account is the unique index's
-- job alone and set_system_names takes no lock of its own.
--
-- How it is kept, by the database alone, so no writer can make it disagree:
-- - A key's insert, or a write of its account_id, email or belongs_to itself, sets it
--   (cadence.find_key_account, trigger key_account_is_found): the owner link, else a probe of the
--   accounts' e-mail index. A write of belongs_to by hand is recomputed.
-- - An account created, deleted, or its e-mail changed (case aside), rewrites the unlinked keys of
--   its old and new e-mail (cadence.refresh_key_accounts), found through an index of unlinked keys
--   only: the work follows the keys that change, never the account's linked keys.
-- - A key written while an account with its e-mail is created would otherwise read the accounts
--   before that commit and store none. So statements writing those columns take one shared
--   advisory lock (cadence.await_account_changes), and an account's insert, delete or e-mail
--   change takes it exclusively before it rewrites its keys: each waits for the other to commit
--   and then reads what it wrote (READ COMMITTED, as the API and the dashboard run). One lock for
--   all e-mails: an import of 100,000 unlinked keys takes one lock, not one per e-mail (Postgres'
--   lock table has room for 64 per connection by default); a new account's onboarding waits at
--   most for a staff statement writing keys, or for another new account's onboarding.
-- - The three triggers fire always, with session_replication_role = replica too (bulk loads set
--   it to skip the payload triggers), so no load can store a key without its account.
-- A plain column, not a generated one: adding a stored generated column rewrites the table, and a
-- poll whose snapshot predates the rewrite then reads no key at all (test/schedule/
-- schedule-payloads-migration.test.ts polls through this migration). An insert of a linked key
-- pays one trigger call (the owner link, no probe), as it already does for system_name_is_normalised.
--
-- A change of owner can now meet another key's name: an account's e-mail changed to one its
-- unlinked keys carry, when one of them has a name a linked key has, is refused by
-- system_name_is_unique_per_account, as moving a key already was. Such pairs stored before (only a
-- dashboard edit could make one) stop this migration, which then changes nothing, and are listed.
--
-- Without those locks, two batches naming keys of one account meet in the unique index: the later
-- writer of a name waits for the first, then is taken. A batch writes its names in one statement
-- that may wait a millisecond at most, else one key at a time in (account, name) order, the same
-- order in every batch, so two batches never wait on each other's names (no deadlock). Measured
-- here (backend CPU per call, 25,000 keys of 5,000 accounts, 7 alternating runs): 256 new names
-- 15-16 ms against 18-20 ms before; one key at a time always, 27 ms.

alter table public.license_keys add column belongs_to uuid;
comment on column public.license_keys.belongs_to is
  'The account this key belongs to: its owner link (account_id), else the account whose e-mail equals its stored e-mail (case-insensitively), else null. Kept by the database (cadence.find_key_account); every rule that needs a key''s account reads it.';
comment on table public.license_keys is
  'License keys. account_id is the owner link; a key without one belongs to the account whose e-mail equals its stored e-mail. belongs_to holds the answer.';

update public.license_keys as k set belongs_to = k.account_id where k.account_id is not null;
update public.license_keys as k
   set belongs_to = a.id
  from public.accounts as a
 where k.account_id is null and pg_catalog.lower(a.email) = pg_catalog.lower(k.email);

do $$
declare
  v_pairs text;
begin
  select pg_catalog.string_agg(g.keys, '; ') into v_pairs
    from (select pg_catalog.string_agg(pg_catalog.format('%s (%L)', k.key, k.system_name), ', ' order by k.key) as keys
            from public.license_keys as k
           where k.system_name is not null
           group by coalesce(k.belongs_to::text, pg_catalog.lower(k.email)), pg_catalog.lower(k.system_name)
          having pg_catalog.count(*) > 1) as g;
  if v_pairs is not null then
    raise exception using
      errcode = 'unique_violation',
      message = pg_catalog.format('keys of one account share a system name (a linked key and an unlinked key with the account''s e-mail): %s', v_pairs),
      hint = 'Rename all but one key of each group (update public.license_keys set system_name = ... where key = ...), then apply this migration again.';
  end if;
end
$$;

create index license_keys_belongs_to_idx on public.license_keys (belongs_to);
create index license_keys_unlinked_by_email_idx on public.license_keys (pg_catalog.lower(email)) where account_id is null;
drop index public.license_keys_lower_email_idx;

drop index public.system_name_is_unique_per_account;
create unique index system_name_is_unique_per_account
  on public.license_keys (coalesce(belongs_to::text, pg_catalog.lower(email)), pg_catalog.lower(system_name))
  where system_name is not null;
comment on index public.system_name_is_unique_per_account is
  'A system name is used at most once per account (belongs_to; a key of no account, per stored e-mail), regardless of case.';

drop index public.system_names_in_form_per_account;
create index system_names_in_form_per_account
  on public.license_keys (coalesce(belongs_to::text, pg_catalog.lower(email)), pg_catalog.lower(cadence.system_name_form(system_name)))
  where system_name is not null;
comment on index public.system_names_in_form_per_account is
  'Named keys by account (belongs_to; a key of no account, per stored e-mail) and name in cadence.system_name_form, lower-cased: the candidates cadence.set_system_names checks a name against.';

create function cadence.find_key_account()
returns trigger
language plpgsql
volatile
set search_path = ''
as $$
begin
  if new.account_id is not null then
    new.belongs_to := new.account_id;
  else
    new.belongs_to := (select a.id from public.accounts as a where pg_catalog.lower(a.email) = pg_catalog.lower(new.email));
  end if;
  return new;
end
$$;
comment on function cadence.find_key_account() is
  'Trigger: a key''s belongs_to, the pairing rule''s one spelling: its owner link (account_id), else the account whose e-mail equals its stored e-mail (case-insensitively), else null.';
revoke all on function cadence.find_key_account() from public;

create trigger key_account_is_found
  before insert or update of account_id, email, belongs_to on public.license_keys
  for each row execute function cadence.find_key_account();
alter table public.license_keys enable always trigger key_account_is_found;

create function cadence.await_account_changes()
returns trigger
language plpgsql
volatile
set search_path = ''
as $$
begin
  -- Shared, so key writes run beside each other; cadence.refresh_key_accounts takes it exclusively.
  perform pg_catalog.pg_advisory_xact_lock_shared(pg_catalog.hashtextextended('cadence.key_accounts', 0));
  return null;
end
$$;
comment on function cadence.await_account_changes() is
  'Statement trigger on public.license_keys: a statement writing owner links or stored e-mails waits for an account being created, deleted or changing e-mail, and that change waits for it, so each reads what the other wrote.';
revoke all on function cadence.await_account_changes() from public;

create trigger key_writes_await_account_changes
  before insert or update of account_id, email, belongs_to on public.license_keys
  for each statement execute function cadence.await_account_changes();
alter table public.license_keys enable always trigger key_writes_await_account_changes;

create function cadence.refresh_key_accounts()
returns trigger
language plpgsql
volatile
set search_path = ''
as $$
begin
  perform pg_catalog.pg_advisory_xact_lock(pg_catalog.hashtextextended('cadence.key_accounts', 0));
  -- Written as they are: their own trigger (cadence.find_key_account) finds their account again.
  update public.license_keys as k
     set belongs_to = k.belongs_to
   where k.account_id is null
     and pg_catalog.lower(k.email) in (pg_catalog.lower(case when tg_op <> 'DELETE' then new.email end),
                                       pg_catalog.lower(case when tg_op <> 'INSERT' then old.email end));
  return null;
end
$$;
comment on function cadence.refresh_key_accounts() is
  'Trigger on public.accounts: after an account is created or deleted, or its e-mail changes, the unlinked keys of its old and new e-mail find their account again (through license_keys_unlinked_by_email_idx).';
revoke all on function cadence.refresh_key_accounts() from public;

create trigger key_accounts_follow_the_account
  after insert or delete on public.accounts
  for each row execute function cadence.refresh_key_accounts();
create trigger key_accounts_follow_the_account_email
  after update of email on public.accounts
  for each row when (pg_catalog.lower(old.email) is distinct from pg_catalog.lower(new.email))
  execute function cadence.refresh_key_accounts();
alter table public.accounts enable always trigger key_accounts_follow_the_account;
alter table public.accounts enable always trigger key_accounts_follow_the_account_email;

create or replace function cadence.license_pairings(p_keys text[], p_emails text[])
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
comment on function cadence.license_pairings(text[], text[]) is
  'Outcome of pairing each key with the e-mail at the same position n (1-based): key_not_found, user_not_found, not_owner (the key belongs to another account, or none) or paired, with the key''s activity and the account id.';

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
comment on function cadence.validate_licenses(text[], text[]) is
  'Validates each key for the e-mail at the same position (spec 4.3), one row per position n (1-based): key_not_found, key_inactive, user_not_found, not_owner or valid (first failure wins, in that order), with the owner''s e-mail when valid; valid keys get last_validated_at in the validating statement.';

create or replace function cadence.set_system_names(p_keys text[], p_names text[])
returns table (n bigint, outcome text)
language plpgsql
volatile
set search_path = ''
set plan_cache_mode = force_generic_plan
as $$
declare
  v_left bigint[];
  v_pass bigint[];
  v_winners bigint[];
  v_winner bigint;
  v_judged bigint[];
  v_verdicts text[];
  v_taken bigint[] := '{}';
  v_lock_timeout text := pg_catalog.current_setting('lock_timeout');
begin
  -- Up front, from a plain read (one statement): an unknown key's positions, and each key's
  -- positions before the first that asks another name than the stored one, are answered now,
  -- without a lock, as those single writes would answer at this instant. The rest is left to the
  -- passes: only keys some position of which asks another name.
  select coalesce(pg_catalog.array_agg(r.n) filter (where r.answer is not null), '{}'),
         coalesce(pg_catalog.array_agg(r.answer) filter (where r.answer is not null), '{}'),
         coalesce(pg_catalog.array_agg(r.n order by r.n) filter (where r.answer is null), '{}')
    into v_judged, v_verdicts, v_left
    from (select p.n,
                 case when k.key is null then 'unknown_license'
                      when pg_catalog.bool_and(k.system_name is not distinct from p_names[p.n])
                             over (partition by k.key order by p.n) then 'unchanged'
                 end as answer
            from pg_catalog.generate_series(1::bigint, pg_catalog.cardinality(p_keys)::bigint) as p(n)
            left join public.license_keys as k on k.key = p_keys[p.n] and k.key = any (p_keys)) as r;
  return query select j.n, j.verdict from unnest(v_judged, v_verdicts) as j(n, verdict);

  -- The keys it may write, locked in key order before any pass, so a pass waits on no row lock
  -- while it holds a name another batch waits for (cadence.validate_and_name_licenses has already
  -- locked the valid ones, in the same order).
  perform from public.license_keys as k
    where k.key = any (array(select p_keys[l.n] from unnest(v_left) as l(n)))
    order by k.key
      for update;

  -- One pass answers each key's first position still unanswered; a key named twice is named twice,
  -- in order, a pass each.
  while pg_catalog.cardinality(v_left) > 0 loop
    select pg_catalog.array_agg(l.n) filter (where l.place = 1), coalesce(pg_catalog.array_agg(l.n) filter (where l.place > 1), '{}')
      into v_pass, v_left
      from (select l.n, pg_catalog.row_number() over (partition by p_keys[l.n] order by l.n) as place
              from unnest(v_left) as l(n)) as l;

    -- Each key's verdict against the names stored, then the first asker of each name in its account.
    with asked as (
      select p.n, k.key, p_names[p.n] as name, k.system_name as stored,
             coalesce(k.belongs_to::text, pg_catalog.lower(k.email)) as account_group
        from unnest(v_pass) as p(n)
        left join public.license_keys as k on k.key = p_keys[p.n] and k.key = any (p_keys)
    ), judged as materialized (
      select q.n, q.key, q.name, q.account_group,
             case
               -- Deleted before it was locked.
               when q.key is null then 'unknown_license'
               -- Re-sent as stored (by another writer before the lock, or by this batch's earlier pass).
               when q.stored = q.name then 'unchanged'
               when exists (
                 -- One probe of system_names_in_form_per_account: the account's named keys whose
                 -- name in its form is this one.
                 select from public.license_keys as other
                  where coalesce(other.belongs_to::text, pg_catalog.lower(other.email)) = q.account_group
                    -- The stored form of a name written before names were normalised, so it blocks its look-alike.
                    and pg_catalog.lower(cadence.system_name_form(other.system_name)) = pg_catalog.lower(q.name)
                    and other.system_name is not null
                    and other.key <> q.key)
               then 'taken'
             end as verdict
        from asked as q
    ), ranked as (
      select j.n, j.verdict, j.account_group, j.name,
             pg_catalog.row_number() over (partition by j.account_group, pg_catalog.lower(j.name), j.verdict is null order by j.n) as place
        from judged as j
    )
    select pg_catalog.array_agg(r.n order by r.account_group, pg_catalog.lower(r.name)) filter (where r.verdict is null and r.place = 1),
           pg_catalog.array_agg(r.n order by r.n) filter (where r.verdict is not null or r.place > 1),
           pg_catalog.array_agg(coalesce(r.verdict, 'taken') order by r.n) filter (where r.verdict is not null or r.place > 1)
      into v_winners, v_judged, v_verdicts
      from ranked as r;

    return query select j.n, j.verdict from unnest(v_judged, v_verdicts) as j(n, verdict);

    -- One statement, allowed to wait a millisecond at most: a name another transaction holds
    -- uncommitted makes it wait, and a batch waiting while it holds names of its own could close a
    -- cycle with another doing the same. Past that, or on a name taken meanwhile, its writes are
    -- undone and made again one key at a time in (account, name) order, the order every batch
    -- waits in, so no cycle forms; the unique index decides each name.
    begin
      perform pg_catalog.set_config('lock_timeout', '1ms', true);
      update public.license_keys as k
         set system_name = p_names[w.n]
        from unnest(v_winners) as w(n)
       where k.key = p_keys[w.n]
         and k.key = any (p_keys);
      perform pg_catalog.set_config('lock_timeout', v_lock_timeout, true);
    exception when unique_violation or lock_not_available then
      foreach v_winner in array v_winners loop
        begin
          update public.license_keys as k set system_name = p_names[v_winner] where k.key = p_keys[v_winner];
        exception when unique_violation then
          v_taken := v_taken || v_winner;
        end;
      end loop;
    end;
    return query
      select w.n, case when w.n = any (v_taken) then 'taken' else 'ok' end
        from unnest(v_winners) as w(n);
  end loop;
end
$$;
comment on function cadence.set_system_names(text[], text[]) is
  'Sets each key''s system name (already in cadence.system_name_form) to the name at the same position, one row per position n (1-based): ok, unchanged, taken (another key of the account has it, as stored or in its form, regardless of case, or asked for it earlier in the batch) or unknown_license.';

create or replace function cadence.served_schedules(p_keys text[])
returns table (n bigint, schedule_id uuid, version text, payload json)
language plpgsql
stable
set search_path = ''
set plan_cache_mode = force_generic_plan
as $$
begin
  return query
    with served as (
      -- The account's schedule is probed only for a key with none of its own.
      select k.key, coalesce(own.id, shared.id) as id, p.version, p.payload
        from public.license_keys as k
        left join public.schedules as own on own.license_key = k.key
        left join public.schedules as shared on shared.account_id = case when own.id is null then k.belongs_to end
        left join public.schedule_payloads as p on p.schedule_id = coalesce(own.id, shared.id)
       where k.key = any (p_keys)
    )
    select r.n, s.id,
           case when s.id is null then cadence.schedule_version(cadence.unscheduled_payload()) else s.version end,
           case when s.id is null then cadence.unscheduled_payload() else s.payload end
      from unnest(p_keys) with ordinality as r(key, n)
      join served as s on s.key = r.key;
end
$$;
comment on function cadence.served_schedules(text[]) is
  'For each known key (position n, 1-based): the schedule it reads (its own, else its account''s, license_keys.belongs_to, else none) with that schedule''s stored version and payload; the unscheduled payload for none. No row for an unknown key.';

create or replace function cadence.playing_at(p_keys text[], p_at timestamptz)
returns table (
  n bigint, license_key text, time_zone text, local_time timestamp,
  block_id uuid, weekday text, start_time time, end_time time, started_on date, started_at timestamptz,
  proclamation_ids uuid[]
)
language plpgsql
stable
set search_path = ''
set plan_cache_mode = force_generic_plan
as $$
begin
  return query
    with keyed as (
      -- Each known key, the schedule it reads, and its zone: its own, else its owner's, else UTC.
      select s.n, k.key, s.schedule_id, coalesce(k.time_zone, owner.time_zone, 'UTC') as zone
        from cadence.served_schedules(p_keys) as s
        -- `= any (...)` restricts the table to the batch through its index, whichever join the
        -- planner picks for a batch it cannot size (without it, a seq scan of every key per call).
        join public.license_keys as k on k.key = p_keys[s.n] and k.key = any (p_keys)
        left join public.accounts as owner on owner.id = k.belongs_to
    ),
    clocks as (
      -- One wall clock per (schedule, zone): what every key of the group shares.
      select g.schedule_id, g.zone, l.local,
             pg_catalog.to_char(l.local, 'FMday') as today,
             pg_catalog.to_char(l.local - interval '1 day', 'FMday') as yesterday
        from (select distinct k.schedule_id, k.zone from keyed as k where k.schedule_id is not null) as g
       cross join lateral (select p_at at time zone g.zone as local) as l
    ),
    playing as (
      select distinct on (c.schedule_id, c.zone)
             c.schedule_id, c.zone, b.id, b.weekday, b.start_time, b.end_time, o.started_on
        from clocks as c
        join public.schedule_blocks as b on b.schedule_id = c.schedule_id
       cross join lateral (
         -- The day this block's current run started on, if it is running: today (started at or
         -- before now, and not yet ended, or crossing midnight), or yesterday (crossing midnight into
         -- today and not yet ended).
         select case
                  when (b.weekday is null or b.weekday = c.today)
                   and c.local::time >= b.start_time
                   and (b.end_time <= b.start_time or c.local::time < b.end_time)
                    then c.local::date
                  when b.end_time <= b.start_time
                   and (b.weekday is null or b.weekday = c.yesterday)
                   and c.local::time < b.end_time
                    then c.local::date - 1
                end as started_on
       ) as o
       where o.started_on is not null
       order by c.schedule_id, c.zone, o.started_on desc, b.start_time desc, b.id
    )
    select k.n, k.key, k.zone, p_at at time zone k.zone,
           p.id, p.weekday, p.start_time, p.end_time, p.started_on,
           case when p.id is not null then (p.started_on + p.start_time) at time zone k.zone end,
           case when p.id is not null then
             array(select bp.proclamation_id from public.schedule_block_proclamations as bp
                    where bp.block_id = p.id order by bp.position)
           end
      from keyed as k
      left join playing as p on p.schedule_id = k.schedule_id and p.zone = k.zone;
end
$$;
comment on function cadence.playing_at(text[], timestamptz) is
  'For each known key (position n) at instant p_at: its time zone and local time, and the block of the schedule it reads that plays then (null when none): id, weekday, start and end, the local date and instant it started, its proclamations in order. The wall-clock rule and its daylight-saving cases are in the migration that made it.';

create or replace function cadence.license_key_owner(p_key text)
returns uuid
language sql
stable
security definer
set search_path = ''
as $$
  select k.belongs_to from public.license_keys as k where k.key = p_key
$$;
comment on function cadence.license_key_owner(text) is
  'The id of the account a license key belongs to (license_keys.belongs_to), or null. For public.kiosk_status, whose readers may not read that column.';

create or replace function cadence.license_key_time_zone(p_key text)
returns text
language plpgsql
stable
security definer
set search_path = ''
as $$
begin
  -- PL/pgSQL keeps this statement's plan for the connection's life: a `language sql` body that is
  -- SECURITY DEFINER is never inlined, and was planned again for each row of a page.
  return (
    select coalesce(k.time_zone, a.time_zone, 'UTC')
      from public.license_keys as k
      left join public.accounts as a on a.id = k.belongs_to
     where k.key = p_key);
end
$$;
comment on function cadence.license_key_time_zone(text) is
  'The time zone a license key''s kiosk lives in: its own, else its account''s, else UTC. For public.kiosk_status.';

create or replace function cadence.holder_license_keys()
returns text[]
language plpgsql
stable
security definer
set search_path = ''
as $$
begin
  return array(
    select k.key from public.license_keys as k where k.belongs_to = (select cadence.holder_account_id()));
end
$$;
comment on function cadence.holder_license_keys() is
  'The license keys that belong to the signed-in account holder''s account (license_keys.belongs_to); empty for anyone else. For row-level security policies.';

create or replace function cadence.holder_owns_key(p_key text)
returns boolean
language plpgsql
stable
security definer
set search_path = ''
as $$
begin
  return exists (
    select from public.license_keys as k
     where k.key = p_key and k.belongs_to = (select cadence.holder_account_id()));
end
$$;
comment on function cadence.holder_owns_key(text) is
  'Whether a license key belongs to the signed-in account holder''s account (license_keys.belongs_to); false for anyone else. For row-level security policies.';

create or replace function cadence.holder_schedule_ids()
returns uuid[]
language plpgsql
stable
security definer
set search_path = ''
as $$
begin
  -- Key schedules are few beside keys: find them first, then whether each key is the holder's.
  return array(
    select s.id from public.schedules as s where s.account_id = (select cadence.holder_account_id())
    union all
    select s.id
      from public.schedules as s
      join public.license_keys as k on k.key = s.license_key
     where k.belongs_to = (select cadence.holder_account_id()));
end
$$;
comment on function cadence.holder_schedule_ids() is
  'The schedules of the signed-in account holder''s account and of its keys; empty for anyone else. For row-level security policies.';

create or replace function cadence.check_venue_address()
returns trigger
language plpgsql
volatile
security definer
set search_path = ''
as $$
declare
  v_holder boolean := pg_catalog.current_setting('role', true) = 'authenticated';
  v_author text := cadence.change_author();
  v_account public.accounts;
  v_taken cidr;
  v_registered bigint;
  v_active bigint;
begin
  -- Serialises an account's registrations, so two concurrent ones can neither both fit under its
  -- key count nor overlap each other; NO KEY UPDATE leaves the foreign-key checks of other tables
  -- on this row unblocked.
  select * into v_account from public.accounts as a where a.id = new.account_id for no key update;

  select v.network into v_taken
    from public.venue_addresses as v
   where v.network && new.network and v.account_id = new.account_id and v.id is distinct from new.id
   limit 1;
  if found then
    raise exception using
      errcode = 'exclusion_violation',
      constraint = 'venue_addresses_of_an_account_do_not_overlap',
      message = pg_catalog.format('venue address %s overlaps %s, already registered to this account: change that registration''s kiosks instead', new.network, v_taken);
  end if;

  select pg_catalog.count(*) into v_active
    from public.license_keys as k
   where k.belongs_to = v_account.id and k.active;
  select coalesce(pg_catalog.sum(v.kiosks), 0) into v_registered
    from public.venue_addresses as v where v.account_id = new.account_id and v.id is distinct from new.id;
  if v_registered + new.kiosks > v_active then
    raise exception using
      errcode = 'check_violation',
      constraint = 'venue_addresses_hold_at_most_the_active_keys',
      message = pg_catalog.format('venue addresses of this account would hold %s kiosks, but it has %s active license keys: nobody gains a larger allowance than the kiosks they run',
        v_registered + new.kiosks, v_active);
  end if;

  -- One address: /32 for IPv4 (family 4), /64 for IPv6 (family 6).
  if v_holder and pg_catalog.masklen(new.network) <> (pg_catalog.family(new.network) - 4) * 16 + 32 then
    raise exception using
      errcode = 'check_violation',
      constraint = 'venue_address_of_an_account_holder_is_one_address',
      message = pg_catalog.format('venue address %s: an account holder registers one address (an IPv4 /32 or an IPv6 /64), the one its kiosks call from; ask staff for a range', new.network);
  end if;

  if v_holder and not exists (
    select
      from public.kiosk_sightings as s
      join public.license_keys as k on k.key = s.license_key
     where s.last_seen_ip <<= new.network
       and s.last_seen_at >= pg_catalog.now() - interval '24 hours'
       and k.belongs_to = v_account.id) then
    raise exception using
      errcode = 'check_violation',
      constraint = 'venue_address_was_seen_from_the_account',
      message = pg_catalog.format('venue address %s: no kiosk of this account has called from it in the last 24 hours; register the address your kiosks call from (public.kiosk_status.last_seen_ip)', new.network);
  end if;

  if tg_op = 'INSERT' then
    new.created_at := pg_catalog.now();
    new.created_by := v_author;
  else
    new.created_at := old.created_at;
    new.created_by := old.created_by;
  end if;
  new.updated_at := pg_catalog.now();
  new.updated_by := v_author;
  return new;
end
$$;
comment on function cadence.check_venue_address() is
  'Trigger: refuses a venue address that overlaps another of the same account, holds more kiosks than the account''s active keys, or (for an account holder) is a range or an address no kiosk of the account called from in the last 24 hours; dates and attributes the change.';

create or replace function cadence.kiosk_alert_pass(p_now timestamptz)
returns table (blind boolean, blind_began boolean, watch_restarted boolean, went_dark integer, came_back integer)
language plpgsql
volatile
set search_path = ''
as $$
declare
  v_watch public.kiosk_watch;
  v_newest timestamptz;
  v_gap boolean;
  v_blind boolean;
  v_since timestamptz;
  v_dark integer;
  v_back integer;
begin
  -- One pass at a time (npm start's sweep beside a cron job, say): the second waits, then sees what
  -- the first recorded, so no outage is opened twice.
  perform pg_catalog.pg_advisory_xact_lock(pg_catalog.hashtextextended('cadence.kiosk_alert_pass', 0));
  select * into v_watch from public.kiosk_watch as w for update;
  select max(s.last_seen_at) into v_newest from public.kiosk_sightings as s;
  v_gap := v_watch.last_pass_at is null or p_now - v_watch.last_pass_at > v_watch.gap_after;
  v_blind := v_newest is null or p_now - v_newest > v_watch.blind_after;
  v_since := case when v_gap or v_blind then p_now else coalesce(v_watch.watching_since, p_now) end;
  update public.kiosk_watch as w
     set last_pass_at = greatest(w.last_pass_at, p_now),
         watching_since = v_since,
         blind_since = case when v_blind then coalesce(w.blind_since, p_now) end;
  if v_blind then
    return query select true, v_watch.blind_since is null, true, 0, 0;
    return;
  end if;

  -- Seen again: a sighting newer than the one it went dark after. Silent when the key is muted or
  -- inactive by then.
  with back as (
    update public.kiosk_outages as o
       set back_at = s.last_seen_at, recovered_at = p_now, recovery_silent = k.alerts_muted or not k.active
      from public.kiosk_sightings as s, public.license_keys as k
     where o.back_at is null and s.license_key = o.license_key and k.key = o.license_key and s.last_seen_at > o.last_seen_at
    returning 1
  )
  select count(*)::integer into v_back from back;

  -- Gone dark. Sightings first (stale at all, by the shortest threshold there is), so a healthy
  -- fleet costs one scan; then the rules, then what plays now for the few left.
  with stale as (
    select k.key, s.last_seen_at, a.id as account_id, a.offline_alert_after
      from public.kiosk_sightings as s
      join public.license_keys as k on k.key = s.license_key
      join public.accounts as a on a.id = k.belongs_to
     where greatest(s.last_seen_at, v_since) <= p_now - interval '1 minute'
       and greatest(s.last_seen_at, v_since) <= p_now - a.offline_alert_after
       and k.active and not k.alerts_muted
       and not exists (select from public.kiosk_outages as o where o.license_key = k.key and o.back_at is null)
  ),
  dark as (
    insert into public.kiosk_outages (license_key, account_id, dark_since, last_seen_at, alerted_at, block_id)
    select st.key, st.account_id, greatest(st.last_seen_at, v_since, least(p.started_at, p_now)), st.last_seen_at, p_now, p.block_id
      from cadence.playing_at(array(select st.key from stale as st), p_now) as p
      join stale as st on st.key = p.license_key
     where p.block_id is not null
       and greatest(st.last_seen_at, v_since, least(p.started_at, p_now)) <= p_now - st.offline_alert_after
    returning 1
  )
  select count(*)::integer into v_dark from dark;

  return query select false, false, v_gap, v_dark, v_back;
end
$$;
comment on function cadence.kiosk_alert_pass(timestamptz) is
  'The offline-alert pass at p_now: restarts the watch after a gap in passes or a blind spell (no kiosk seen), then records the kiosks seen again and those gone dark (the rules are in the migration that made it). Their e-mails are queued by cadence.queue_kiosk_alert_email.';

drop function cadence.key_belongs_to(public.license_keys, public.accounts);
drop function cadence.key_account_id(uuid, text);
