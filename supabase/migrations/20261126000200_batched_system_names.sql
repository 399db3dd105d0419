-- System names for many keys in one statement. A fleet booting sets a name per kiosk; one statement
-- per name queued the writes behind the few connections a server instance has (5 through Supabase's
-- pooler, 2 of them for writes), and a 20,000-kiosk boot was shed as 503s while the database idled.
-- The API now sends the names asked for while one statement runs together in the next
-- (functions/app/kiosk-read/batch-while-busy.ts), as it does the kiosk reads: one statement a
-- batch, each name answered as if it had been set alone. cadence.set_system_name and
-- cadence.validate_license now run through these functions, so each rule lives once.

-- The account a key belongs to (cadence.key_belongs_to): its owner link, else the account of its
-- stored e-mail, found by two index lookups. Joined on that rule written as one OR, batches of 256
-- names among 2,000 accounts outran a 1 s deadline in test/hardening/write-burst.test.ts (measured
-- here), and did not with this.
create function cadence.key_account_id(p_account_id uuid, p_email text)
returns uuid
language sql
stable
set search_path = ''
as $$
  select coalesce(p_account_id, (select a.id from public.accounts as a where pg_catalog.lower(a.email) = pg_catalog.lower(p_email)))
$$;
comment on function cadence.key_account_id(uuid, text) is
  'The id of the account a key belongs to: its owner link, else the account of its stored e-mail (case-insensitively), else null.';

-- One pass answers each key's first position still unanswered; a key named twice in a batch is
-- named twice, in order, a pass each. Within a pass:
-- - an unknown key, and a name equal to the stored one, are answered from a plain read (no lock);
-- - the other keys are locked in key order, then their accounts' name locks in lock order (the
--   order of cadence.set_system_name before: key, then account), so two batches cannot deadlock;
-- - a name another key of the account has (as stored, or in its normal form, any case) is taken;
-- - of the names left, two keys of one account asking for the same name in one pass: the first
--   position gets it, the other is taken. A name a key of the batch gives up in the same pass
--   still counts as that key's, so every answer is the one some order of single writes gives;
-- - the winners are written in one UPDATE. Should a writer outside these functions (a dashboard
--   edit) take a name meanwhile, the unique index refuses that statement; the winners are then
--   written one at a time, each refusal `taken` for its key alone.
-- `plan_cache_mode`: the planner cannot see the arrays' sizes (as cadence.validate_licenses).
create function cadence.set_system_names(p_keys text[], p_names text[])
returns table (n bigint, outcome text)
language plpgsql
volatile
set search_path = ''
set plan_cache_mode = force_generic_plan
as $$
declare
  v_left bigint[] := array(select pg_catalog.generate_series(1::bigint, pg_catalog.cardinality(p_keys)::bigint));
  v_pass bigint[];
  v_lock bigint;
  v_winners bigint[];
  v_winner bigint;
  v_judged bigint[];
  v_verdicts text[];
  v_taken bigint[] := '{}';
begin
  while pg_catalog.cardinality(v_left) > 0 loop
    v_pass := array(select distinct on (p_keys[l.n]) l.n from unnest(v_left) as l(n) order by p_keys[l.n], l.n);
    v_left := array(select l.n from unnest(v_left) as l(n) where l.n <> all (v_pass));

    -- Answered from a plain read (one statement, so every position is answered or left to write).
    select coalesce(pg_catalog.array_agg(r.n) filter (where r.answer is not null), '{}'),
           coalesce(pg_catalog.array_agg(r.answer) filter (where r.answer is not null), '{}'),
           coalesce(pg_catalog.array_agg(r.n) filter (where r.answer is null), '{}')
      into v_judged, v_verdicts, v_pass
      from (select p.n,
                   case when k.key is null then 'unknown_license'
                        when k.system_name = p_names[p.n] then 'unchanged'
                   end as answer
              from unnest(v_pass) as p(n)
              left join public.license_keys as k on k.key = p_keys[p.n] and k.key = any (p_keys)) as r;
    return query select j.n, j.verdict from unnest(v_judged, v_verdicts) as j(n, verdict);
    continue when pg_catalog.cardinality(v_pass) = 0;

    perform from public.license_keys as k
      where k.key = any (array(select p_keys[p.n] from unnest(v_pass) as p(n)))
      order by k.key
        for update;
    -- Serialises name changes within each account, so the check below also covers what the unique
    -- index cannot see: an unlinked key and a linked key of the same account.
    foreach v_lock in array array(
      select distinct pg_catalog.hashtextextended('cadence.system_name:' || coalesce(a.id::text, pg_catalog.lower(k.email)), 0) as h
        from unnest(v_pass) as p(n)
        join public.license_keys as k on k.key = p_keys[p.n] and k.key = any (p_keys)
        left join public.accounts as a on a.id = cadence.key_account_id(k.account_id, k.email)
       order by h)
    loop
      perform pg_catalog.pg_advisory_xact_lock(v_lock);
    end loop;

    -- Under the locks (a new snapshot): each key's verdict, then the first asker of each name.
    with asked as (
      select p.n, k as key_row, a as account_row, k.key, p_names[p.n] as name, k.system_name as stored,
             coalesce(a.id::text, pg_catalog.lower(k.email)) as account_group
        from unnest(v_pass) as p(n)
        left join public.license_keys as k on k.key = p_keys[p.n] and k.key = any (p_keys)
        left join public.accounts as a on a.id = cadence.key_account_id(k.account_id, k.email)
    ), judged as (
      select q.n, q.key, q.name, q.account_group,
             case
               -- Deleted since the plain read.
               when q.key is null then 'unknown_license'
               when q.stored = q.name then 'unchanged'
               when exists (
                 select from public.license_keys as other
                  where other.key <> q.key
                    -- The stored form of a name written before names were normalised, so it blocks its look-alike.
                    and pg_catalog.lower(cadence.system_name_form(other.system_name)) = pg_catalog.lower(q.name)
                    -- Candidates through indexes (owner link, or stored e-mail); key_belongs_to decides.
                    and (other.account_id = (q.account_row).id
                         or pg_catalog.lower(other.email) = pg_catalog.lower(coalesce((q.account_row).email, (q.key_row).email)))
                    and case when (q.account_row).id is null
                             then other.account_id is null and pg_catalog.lower(other.email) = pg_catalog.lower((q.key_row).email)
                             else cadence.key_belongs_to(other, q.account_row)
                        end)
               then 'taken'
             end as verdict
        from asked as q
    ), ranked as (
      select j.n, j.verdict,
             pg_catalog.row_number() over (partition by j.account_group, pg_catalog.lower(j.name), j.verdict is null order by j.n) as place
        from judged as j
    )
    select pg_catalog.array_agg(r.n order by r.n) filter (where r.verdict is null and r.place = 1),
           pg_catalog.array_agg(r.n order by r.n) filter (where r.verdict is not null or r.place > 1),
           pg_catalog.array_agg(coalesce(r.verdict, 'taken') order by r.n) filter (where r.verdict is not null or r.place > 1)
      into v_winners, v_judged, v_verdicts
      from ranked as r;

    return query select j.n, j.verdict from unnest(v_judged, v_verdicts) as j(n, verdict);

    begin
      update public.license_keys as k
         set system_name = p_names[w.n]
        from unnest(v_winners) as w(n)
       where k.key = p_keys[w.n]
         and k.key = any (p_keys);
    exception when unique_violation then
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

create or replace function cadence.set_system_name(p_key text, p_name text)
returns text
language sql
volatile
set search_path = ''
as $$
  select s.outcome from cadence.set_system_names(array[p_key], array[p_name]) as s
$$;
comment on function cadence.set_system_name(text, text) is
  'Sets a key''s system name (already in cadence.system_name_form): ok, unchanged, taken (another key of the account has it, as stored or in its form, regardless of case) or unknown_license.';

-- Validations that set a system name, many in one statement: validated as cadence.validate_licenses
-- validates (which locks the valid keys in key order), then the valid keys' names set in one call of
-- cadence.set_system_names (the keys' locks, then the accounts'). Only a valid key's name is set.
create function cadence.validate_and_name_licenses(p_keys text[], p_emails text[], p_names text[])
returns table (n bigint, outcome text, owner_email text, system_name_status text)
language plpgsql
volatile
set search_path = ''
as $$
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
comment on function cadence.validate_and_name_licenses(text[], text[], text[]) is
  'Validates each key for the e-mail at the same position (cadence.validate_licenses) and, when valid and a name is given (already in cadence.system_name_form), sets it: one row per position n (1-based) with the outcome, the owner''s e-mail when valid, and system_name_status (unchanged when no name was given, ok, or conflict).';

create or replace function cadence.validate_license(p_key text, p_email text, p_system_name text default null)
returns table (outcome text, owner_email text, system_name_status text)
language sql
volatile
set search_path = ''
as $$
  select v.outcome, v.owner_email, v.system_name_status
    from cadence.validate_and_name_licenses(array[p_key], array[p_email], array[p_system_name]) as v
$$;

revoke execute on function cadence.key_account_id(uuid, text) from public;
grant execute on function cadence.key_account_id(uuid, text) to service_role;
revoke execute on function cadence.set_system_names(text[], text[]) from public;
grant execute on function cadence.set_system_names(text[], text[]) to service_role;
revoke execute on function cadence.validate_and_name_licenses(text[], text[], text[]) from public;
grant execute on function cadence.validate_and_name_licenses(text[], text[], text[]) to service_role;
