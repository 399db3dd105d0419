-- Time zones from the IANA database only (issue 39). A kiosk's or an account's zone was checked
-- against pg_timezone_names, which lists every file of the server's zoneinfo directory, and that
-- directory holds more than IANA's names:
-- - posix/... and right/...: the whole database again, built by IANA's Makefile with other
--   leap-second handling (zic -L); the same zones under a second and third name (Postgres 15 lists
--   no right/ zone here, measured: it reads no zone with leap seconds; the rule names them anyway);
-- - localtime: the host's own zone (on Debian a link to /etc/localtime), so a kiosk "in" it plays by
--   whatever zone the database server runs in, and moves when the server does;
-- - posixrules: the template for POSIX TZ strings, a link the Makefile installs (POSIXRULES);
-- - Factory: in IANA's data (its `factory` file), but a placeholder whose abbreviation is "-00",
--   no place's time.
-- The rule, in SQL because it guards stored data: a zone is a name pg_timezone_names lists (the
-- server's IANA database: canonical zones and their backward links, `US/Eastern` included) that is
-- none of the above (cadence.iana_time_zones()). test/kiosk/kiosk-time-zones.test.ts checks the
-- names it accepts against IANA's own list of zones and links (tzdata.zi) where Postgres uses the
-- system's zoneinfo.
--
-- Existing values are repaired and every change reported (NOTICE, one line per row): posix/X and
-- right/X become X (the same zone, named once); localtime, posixrules and Factory mean no zone of
-- the kiosk's own, so a key's becomes empty (its account's zone) and an account's UTC (the default).

create function cadence.iana_time_zones()
returns setof text
language sql
stable
set search_path = ''
as $$
  select z.name
    from pg_catalog.pg_timezone_names as z
   where z.name not like 'posix/%'
     and z.name not like 'right/%'
     and z.name not in ('localtime', 'posixrules', 'Factory')
$$;
comment on function cadence.iana_time_zones() is
  'The IANA time zones of the server''s database, canonical names and backward links: pg_timezone_names without posix/..., right/..., localtime, posixrules and Factory. The zones a key or an account may have.';

create or replace function cadence.check_time_zone()
returns trigger
language plpgsql
volatile
set search_path = ''
as $$
declare
  -- Zones this transaction already checked: reading pg_timezone_names costs ~30 ms (it opens every
  -- zone file), so a bulk edit that sets one zone on many rows reads it once.
  v_checked text := coalesce(pg_catalog.current_setting('cadence.checked_time_zones', true), '');
begin
  if new.time_zone is null or pg_catalog.strpos(v_checked, '|' || new.time_zone || '|') > 0 then
    return new;
  end if;
  if new.time_zone not in (select cadence.iana_time_zones()) then
    raise exception using
      errcode = 'check_violation',
      constraint = 'time_zone_is_known',
      message = pg_catalog.format('unknown time zone %L: use an IANA name such as Europe/Berlin (pg_timezone_names lists them; not posix/..., right/..., localtime, posixrules or Factory)', new.time_zone),
      hint = 'Pick the zone of the place the kiosk is in: select * from cadence.iana_time_zones() order by 1',
      table = tg_table_name,
      column = 'time_zone';
  end if;
  perform pg_catalog.set_config('cadence.checked_time_zones', v_checked || '|' || new.time_zone || '|', true);
  return new;
end
$$;
comment on function cadence.check_time_zone() is
  'Trigger: refuses a time_zone that is no IANA zone (cadence.iana_time_zones(); constraint time_zone_is_known), naming it.';

revoke execute on function cadence.iana_time_zones() from public;
grant execute on function cadence.iana_time_zones() to authenticated, service_role;

-- The repair: what each stored zone becomes, then every change reported.
do $$
declare
  v_zones text[] := array(select cadence.iana_time_zones());
  v_change record;
  v_changed integer := 0;
begin
  for v_change in
    with repaired as (
      select 'license_keys' as tbl, k.key as id, k.time_zone as old_zone,
             case when k.time_zone ~ '^(posix|right)/' then pg_catalog.substr(k.time_zone, pg_catalog.strpos(k.time_zone, '/') + 1) end as new_zone
        from public.license_keys as k
       where k.time_zone is not null and k.time_zone <> all (v_zones)
      union all
      select 'accounts', a.id::text, a.time_zone,
             coalesce(case when a.time_zone ~ '^(posix|right)/' then pg_catalog.substr(a.time_zone, pg_catalog.strpos(a.time_zone, '/') + 1) end, 'UTC')
        from public.accounts as a
       where a.time_zone <> all (v_zones)
    )
    select r.tbl, r.id, r.old_zone,
           -- A posix/ or right/ name whose zone is not IANA's either (posix/localtime) means no zone too.
           case when r.new_zone = any (v_zones) then r.new_zone
                when r.tbl = 'accounts' then 'UTC' end as new_zone
      from repaired as r
     order by r.tbl, r.id
  loop
    if v_change.tbl = 'license_keys' then
      update public.license_keys as k set time_zone = v_change.new_zone where k.key = v_change.id;
    else
      update public.accounts as a set time_zone = v_change.new_zone where a.id = v_change.id::uuid;
    end if;
    raise notice 'time zone repaired: %.% % -> %', v_change.tbl, v_change.id, v_change.old_zone, coalesce(v_change.new_zone, 'empty (its account''s zone)');
    v_changed := v_changed + 1;
  end loop;
  if v_changed > 0 then
    raise notice 'time zones repaired: % rows (listed above)', v_changed;
  end if;
end
$$;
