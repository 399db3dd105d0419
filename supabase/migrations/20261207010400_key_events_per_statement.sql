-- A key's changes are written once per statement, not once per row (issue 61 kept to the speed of
-- 8e9548f's name writes). The bench's name writes, batches of names through one UPDATE, ran at 3,460
-- requests/s against 6,340 before events: the row trigger's insert, with its own statement and the
-- delivery trigger's, cost 93 us a row in a batch of 1,000. The row trigger now only numbers (5 us);
-- one insert after the statement writes the events (41 us a row). A renamed key's events are still
-- written by the row trigger. The events, their numbers and their order per key are unchanged.

CREATE OR REPLACE FUNCTION cadence.record_key_changes() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
declare
  v_types text[] := cadence.key_event_types(old, new);
  v_base bigint := old.events_sequence;
begin
  if new.key = old.key then
    new.events_sequence := v_base + pg_catalog.cardinality(v_types);
    -- Tells the statement's trigger it has events to write (until the transaction ends): a
    -- statement that changed nothing worth an event (a validation's bookkeeping) skips its query.
    if pg_catalog.current_setting('cadence.key_events_owed', true) is distinct from 'on' then
      perform pg_catalog.set_config('cadence.key_events_owed', 'on', true);
    end if;
    return new;
  end if;
  -- A renamed key continues the stream of its new name, if that name had one.
  v_base := greatest(v_base, coalesce((select max(e.sequence) from public.events as e where e.license_key = new.key), 0));
  insert into public.events (type, license_key, account_id, previous_account_id, sequence, data)
  select t.type, new.key, new.belongs_to,
         case when t.type = 'license_key.moved' then old.belongs_to end,
         v_base + t.n,
         cadence.key_event_data(new) || case when t.type = 'license_key.updated' then pg_catalog.jsonb_build_object('changed', pg_catalog.array_remove(array[
             'key',
             case when old.email <> new.email then 'email' end,
             case when old.time_zone is distinct from new.time_zone then 'time_zone' end,
             case when old.alerts_muted <> new.alerts_muted then 'alerts_muted' end], null))
           else '{}'::jsonb end
    from unnest(v_types) with ordinality as t(type, n);
  new.events_sequence := v_base + pg_catalog.cardinality(v_types);
  return new;
end
$$;

COMMENT ON FUNCTION cadence.record_key_changes() IS 'Trigger: numbers the events of one update of a license key (cadence.key_event_types) on the key''s own counter; cadence.record_updated_keys writes them after the statement, except a renamed key''s, written here.';

-- After the statement, from its old and new rows joined by key: one insert for every key the
-- statement changed. A row whose counter did not move has no event; a renamed key's events are
-- already written (cadence.record_key_changes), found by its last number.
CREATE OR REPLACE FUNCTION cadence.record_updated_keys() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
begin
  if pg_catalog.current_setting('cadence.key_events_owed', true) is distinct from 'on' then
    return null;
  end if;
  insert into public.events (type, license_key, account_id, previous_account_id, sequence, data)
  select t.type, n.key, n.belongs_to,
         case when t.type = 'license_key.moved' then o.belongs_to end,
         n.events_sequence - pg_catalog.cardinality(c.types) + t.at,
         cadence.key_event_data(n::public.license_keys) || case when t.type = 'license_key.updated' then pg_catalog.jsonb_build_object('changed', pg_catalog.array_remove(array[
             case when o.email <> n.email then 'email' end,
             case when o.time_zone is distinct from n.time_zone then 'time_zone' end,
             case when o.alerts_muted <> n.alerts_muted then 'alerts_muted' end], null))
           else '{}'::jsonb end
    from new_rows as n
    join old_rows as o on o.key = n.key and o.events_sequence <> n.events_sequence
    cross join lateral (select cadence.key_event_types(o::public.license_keys, n::public.license_keys) as types) as c
    cross join lateral unnest(c.types) with ordinality as t(type, at)
   -- A probe per row, never a join: a session caches this plan, and one planned for a statement of
   -- 100,000 rows as an anti-join read the whole events table on every later one-key edit (470 ms).
   where (select true from public.events as e where e.license_key = n.key and e.sequence = n.events_sequence) is null
   order by n.key, t.at;
  return null;
end
$$;

COMMENT ON FUNCTION cadence.record_updated_keys() IS 'Trigger: records the events cadence.record_key_changes numbered, for every key one update statement changed (a renamed key''s are written by that trigger).';

CREATE TRIGGER updated_keys_are_events AFTER UPDATE ON public.license_keys REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION cadence.record_updated_keys();

ALTER TABLE public.license_keys ENABLE ALWAYS TRIGGER updated_keys_are_events;

REVOKE ALL ON FUNCTION cadence.record_updated_keys() FROM PUBLIC;
