-- The time-zone check reads nothing for UTC nor for a zone a row already had. Reading
-- pg_timezone_names costs 30-65 ms of the database's CPU a transaction: every onboarding paid it
-- for its account's default zone (UTC), 158 ms an onboarding in all, and in the test suite 1,190
-- reads took 77 s. And a name with a | is no longer taken from the transaction's list of checked
-- zones, where 'A||B' matched once A and B were checked one after the other.

CREATE OR REPLACE FUNCTION cadence.check_time_zone() RETURNS trigger
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
