-- Each kiosk's local time: an account has an IANA zone (UTC unless set), a key may have its own
-- (null: its account's). The rule guards stored data, so it is SQL: a zone is a name IANA's database
-- gives (canonical or a backward link), never posix/..., right/..., localtime, posixrules or Factory,
-- which the server's zoneinfo directory also lists.

CREATE FUNCTION cadence.iana_time_zones() RETURNS SETOF text
    LANGUAGE sql STABLE
    SET search_path TO ''
    AS $$
  select z.name
    from pg_catalog.pg_timezone_names as z
   where z.name not like 'posix/%'
     and z.name not like 'right/%'
     and z.name not in ('localtime', 'posixrules', 'Factory')
$$;

COMMENT ON FUNCTION cadence.iana_time_zones() IS 'The IANA time zones of the server''s database, canonical names and backward links: pg_timezone_names without posix/..., right/..., localtime, posixrules and Factory. The zones a key or an account may have.';

-- As its owner: account holders set zones through the Data API and have no USAGE on cadence.
CREATE FUNCTION cadence.check_time_zone() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
declare
  -- Zones this transaction already checked: reading pg_timezone_names costs 30-65 ms (it opens
  -- every zone file), so a bulk edit that sets one zone on many rows reads it once.
  v_checked text := coalesce(pg_catalog.current_setting('cadence.checked_time_zones', true), '');
begin
  -- Read nothing for UTC (an account's default: every onboarding stored it, and paid the read), nor
  -- for a zone the row already had, which was checked when stored. A name with a | is never taken
  -- from the list of checked ones: 'A||B' is in '|A||B|'.
  if new.time_zone is null or new.time_zone = 'UTC'
     or (tg_op = 'UPDATE' and new.time_zone = old.time_zone)
     or (pg_catalog.strpos(new.time_zone, '|') = 0 and pg_catalog.strpos(v_checked, '|' || new.time_zone || '|') > 0) then
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

COMMENT ON FUNCTION cadence.check_time_zone() IS 'Trigger: refuses a time_zone that is no IANA zone (cadence.iana_time_zones(); constraint time_zone_is_known), naming it.';

-- For kiosk_status, one key at a time: the view calls these only for the rows a page returns.
CREATE FUNCTION cadence.license_key_time_zone(p_key text) RETURNS text
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO ''
    AS $$
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

COMMENT ON FUNCTION cadence.license_key_time_zone(p_key text) IS 'The time zone a license key''s kiosk lives in: its own, else its account''s, else UTC. For public.kiosk_status.';

CREATE TRIGGER time_zone_is_known BEFORE INSERT OR UPDATE OF time_zone ON public.accounts FOR EACH ROW WHEN ((new.time_zone IS NOT NULL)) EXECUTE FUNCTION cadence.check_time_zone();

CREATE TRIGGER time_zone_is_known BEFORE INSERT OR UPDATE OF time_zone ON public.license_keys FOR EACH ROW WHEN ((new.time_zone IS NOT NULL)) EXECUTE FUNCTION cadence.check_time_zone();
