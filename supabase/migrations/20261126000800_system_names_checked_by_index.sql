-- A fleet's boot set its names in time growing with the names already set: the check whether
-- another key of the account has a name (cadence.set_system_names) found its candidates through
-- `account_id = .. or lower(email) = ..`, and the planner, with statistics taken before the fleet
-- had names, read the whole partial index system_name_is_unique_per_account instead, computing
-- cadence.system_name_form for every named key of every account, for each name asked, twice. With
-- 20,000 named keys a batch of 4 names took 135 ms and 40,000 buffers (EXPLAIN ANALYZE, measured
-- here); in `npm run simulate -- --kiosks 5000 --minutes 2` it was 28.5 s of the run's 32.5 s of
-- cadence.set_system_names (pg_stat_statements), and the 20,000-kiosk boot minute used 71 database
-- CPU-seconds. An account with many keys had the same cost within the account alone.
--
-- Now an index holds what the check compares: per account group (as the unique index groups keys:
-- owner link, else stored e-mail) the name in its form, lower-cased. The check looks up the two
-- groups a key of the account can be in (linked to it; unlinked with its e-mail), so each name
-- costs an index probe, whatever the fleet's and the account's size. The verdicts are computed once
-- (`materialized`: inlined, the window's partition evaluated the check a second time). The rule is
-- unchanged: key_belongs_to still decides among the candidates.
create index system_names_in_form_per_account
  on public.license_keys (coalesce(account_id::text, lower(email)), lower(cadence.system_name_form(system_name)))
  where system_name is not null;
comment on index public.system_names_in_form_per_account is
  'Named keys by account group (owner link, else stored e-mail) and name in cadence.system_name_form, lower-cased: the candidates cadence.set_system_names checks a name against.';

create or replace function cadence.set_system_names(p_keys text[], p_names text[])
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
    ), judged as materialized (
      select q.n, q.key, q.name, q.account_group,
             case
               -- Deleted since the plain read.
               when q.key is null then 'unknown_license'
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
