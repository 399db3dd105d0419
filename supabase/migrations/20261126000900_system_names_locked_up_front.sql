-- Two batches deadlocked (test/hardening/races.test.ts, ~1 round in 20; pg_locks during the stall):
-- cadence.set_system_names locked the keys of each pass as the pass began, and a pass leaves out a
-- key whose name asked is the stored one ('unchanged', answered from a plain read). A batch asking
-- key 0001 for its stored name, then for the name in another case, and key 0002 for a new name,
-- locked 0002 and the account's name lock in its first pass and 0001 in its second, against key
-- order. A validation batch (cadence.validate_licenses locks its valid keys in key order) holding
-- 0001 and waiting for 0002 closed the cycle; Postgres aborted one batch after deadlock_timeout.
--
-- Now a batch takes every lock before its first pass, in one global order: the keys it may write
-- in key order, then their accounts' name locks in lock order. A pass takes no row lock, so no row
-- lock follows a name lock, and a caller that locked keys first (cadence.validate_and_name_licenses:
-- the valid keys, in key order) only takes them again. Which keys it may write comes from one plain
-- read up front, which also answers, without a lock, an unknown key's positions and each key's
-- positions before the first that asks another name than the stored one ('unchanged'), as those
-- single writes would answer at that instant; the passes judge the rest under the locks, as before.
-- The one lock a later pass can still need is the name lock of an account created during the
-- batch for the e-mail of one of its unlinked keys: taken only if free, never waited for (so no
-- cycle), else the batch fails with serialization_failure (40001), which the API answers 503 with
-- Retry-After. The answers are those of before.
--
-- Cost, measured here (test database, 20,000 keys of 5,000 accounts, 256 keys a batch, 59 calls
-- each, interleaved): 256 new names 20.4 ms median before and after the change (20.2 / 20.4), 256
-- names re-sent 1.5 / 1.4 ms, 128 keys named twice 11.4 / 10.9 ms.
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
  v_lock bigint;
  v_locks bigint[];
  v_winners bigint[];
  v_winner bigint;
  v_judged bigint[];
  v_verdicts text[];
  v_taken bigint[] := '{}';
  v_passes int := 0;
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

  -- Every lock of the batch, before any pass: the keys in key order, then the accounts' name locks
  -- (serialising name changes within an account, so the check below also covers what the unique
  -- index cannot see: an unlinked key and a linked key of the same account) in lock order.
  perform from public.license_keys as k
    where k.key = any (array(select p_keys[l.n] from unnest(v_left) as l(n)))
    order by k.key
      for update;
  v_locks := array(
    select distinct pg_catalog.hashtextextended('cadence.system_name:' || coalesce(a.id::text, pg_catalog.lower(k.email)), 0) as h
      from unnest(v_left) as l(n)
      join public.license_keys as k on k.key = p_keys[l.n] and k.key = any (p_keys)
      left join public.accounts as a on a.id = cadence.key_account_id(k.account_id, k.email)
     order by h);
  foreach v_lock in array v_locks loop
    perform pg_catalog.pg_advisory_xact_lock(v_lock);
  end loop;

  -- One pass answers each key's first position still unanswered; a key named twice is named twice,
  -- in order, a pass each.
  while pg_catalog.cardinality(v_left) > 0 loop
    select pg_catalog.array_agg(l.n) filter (where l.place = 1), coalesce(pg_catalog.array_agg(l.n) filter (where l.place > 1), '{}')
      into v_pass, v_left
      from (select l.n, pg_catalog.row_number() over (partition by p_keys[l.n] order by l.n) as place
              from unnest(v_left) as l(n)) as l;

    -- Past the first pass, the name lock of an account created since the locks were taken, for the
    -- e-mail of an unlinked key, is taken if free, never waited for (out of order, it could close a
    -- cycle). The first pass judges right after the locks, as every pass did before.
    if v_passes > 0 and exists (
      select from unnest(v_pass) as p(n)
        join public.license_keys as k on k.key = p_keys[p.n] and k.key = any (p_keys)
        left join public.accounts as a on a.id = cadence.key_account_id(k.account_id, k.email)
       where pg_catalog.hashtextextended('cadence.system_name:' || coalesce(a.id::text, pg_catalog.lower(k.email)), 0) <> all (v_locks)
         and not pg_catalog.pg_try_advisory_xact_lock(pg_catalog.hashtextextended('cadence.system_name:' || coalesce(a.id::text, pg_catalog.lower(k.email)), 0))) then
      raise exception using
        errcode = 'serialization_failure',
        message = 'an account of the batch''s keys was created while it ran; try the batch again';
    end if;
    v_passes := v_passes + 1;

    -- Each key's verdict, then the first asker of each name.
    with asked as (
      select p.n, k as key_row, a as account_row, k.key, p_names[p.n] as name, k.system_name as stored,
             coalesce(a.id::text, pg_catalog.lower(k.email)) as account_group
        from unnest(v_pass) as p(n)
        left join public.license_keys as k on k.key = p_keys[p.n] and k.key = any (p_keys)
        left join public.accounts as a on a.id = cadence.key_account_id(k.account_id, k.email)
    ), judged as materialized (
      select q.n, q.key, q.name, q.account_group,
             case
               -- Deleted before it was locked.
               when q.key is null then 'unknown_license'
               -- Re-sent as stored (by another writer before the lock, or by this batch's earlier pass).
               when q.stored = q.name then 'unchanged'
               when exists (
                 select from public.license_keys as other
                  -- Candidates through system_names_in_form_per_account: the named keys linked to
                  -- the account, or unlinked with its e-mail (or the key's, with no account), whose
                  -- name in its form is this one; key_belongs_to decides.
                  where coalesce(other.account_id::text, pg_catalog.lower(other.email))
                          = any (array[(q.account_row).id::text, pg_catalog.lower(coalesce((q.account_row).email, (q.key_row).email))])
                    -- The stored form of a name written before names were normalised, so it blocks its look-alike.
                    and pg_catalog.lower(cadence.system_name_form(other.system_name)) = pg_catalog.lower(q.name)
                    and other.system_name is not null
                    and other.key <> q.key
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
