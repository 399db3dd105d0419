-- Events: every change to an account or a license key, and the operational facts about a key's
-- kiosk, recorded in the transaction that makes them true by triggers on the tables themselves, so
-- that every writer (the signed calls, onboarding, the dashboard, the Data API, the staff recipes,
-- the passes) produces them alike (issue 61, item 2). The bookkeeping a kiosk writes on every call
-- (last_validated_at after the first, sightings) is no change: the triggers name the columns that
-- are, and a WHEN clause compares them, so a validation pays one comparison and no function call.
--
-- Each event is numbered in its stream: a key's events by the counter on the key's row
-- (license_keys.events_sequence), an account's own events by the counter on the account's row.
-- The change already locks that row, so numbering adds no lock, and two keys never share a counter.
-- Delivery to the endpoints staff configure: 14_events_delivery.sql.

CREATE TABLE public.events (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    -- The order events were recorded in; within one stream it is the sequence's order (the stream's
    -- row is locked while an event is numbered and recorded).
    "position" bigint GENERATED ALWAYS AS IDENTITY NOT NULL,
    type text NOT NULL,
    license_key text,
    account_id uuid,
    previous_account_id uuid,
    sequence bigint NOT NULL,
    occurred_at timestamp with time zone DEFAULT now() NOT NULL,
    data jsonb NOT NULL,
    CONSTRAINT event_sequence_is_positive CHECK ((sequence >= 1)),
    CONSTRAINT event_type_is_known CHECK ((type = ANY (ARRAY['account.created'::text, 'account.email_changed'::text, 'account.updated'::text, 'account.deleted'::text, 'license_key.created'::text, 'license_key.suspended'::text, 'license_key.reinstated'::text, 'license_key.moved'::text, 'license_key.system_name_changed'::text, 'license_key.updated'::text, 'license_key.deleted'::text, 'license_key.first_validated'::text, 'license_key.copy_suspected'::text, 'kiosk.offline'::text, 'kiosk.online'::text]))),
    CONSTRAINT event_stream_matches_type CHECK (((license_key IS NOT NULL) = (type !~~ 'account.%'::text))),
    CONSTRAINT account_event_names_its_account CHECK (((license_key IS NOT NULL) OR (account_id IS NOT NULL)))
);

COMMENT ON TABLE public.events IS 'Written by triggers, do not edit: every change to an account or a license key and every operational fact about a kiosk (offline, online, first validation, copy suspected), recorded in the transaction that made it. Numbered per stream: a key''s events by key, an account''s own events by account.';

COMMENT ON COLUMN public.events.account_id IS 'The account the event belongs to: the account of the key at the time (its new account for a move), or the account itself. Account holders read the events of their own account.';

COMMENT ON COLUMN public.events.previous_account_id IS 'license_key.moved: the account the key belonged to before.';

COMMENT ON COLUMN public.events.sequence IS 'The event''s number in its stream (1, 2, ...): per license key for license_key.* and kiosk.* events, per account for account.* events.';

COMMENT ON COLUMN public.events.data IS 'What the subject is after the event (the key or the account), with what the event adds: previous_email, changed (column names), rules, dark_since, back_at.';

ALTER TABLE ONLY public.events
    ADD CONSTRAINT events_pkey PRIMARY KEY (id);

ALTER TABLE public.events ENABLE ROW LEVEL SECURITY;

-- The streams: one index probe finds a key's last number (a key re-created after a delete continues it).
CREATE UNIQUE INDEX event_sequence_is_unique_per_key ON public.events USING btree (license_key, sequence) WHERE (license_key IS NOT NULL);

CREATE UNIQUE INDEX event_sequence_is_unique_per_account ON public.events USING btree (account_id, sequence) WHERE (license_key IS NULL);

-- An account holder's read: their account's events in order.
CREATE INDEX events_account_position_idx ON public.events USING btree (account_id, "position");

-- What a key is, as its events carry it. This and the two functions below are PL/pgSQL, not SQL:
-- a SQL function with a pinned search_path is never inlined, and one called from a row trigger's
-- statement is parsed and planned again on every row; PL/pgSQL plans once per session. An e-mail
-- change moving 50,000 keys spent 9.9 s in the key trigger with SQL helpers, 4.6 s with these.
CREATE FUNCTION cadence.key_event_data(p_key public.license_keys) RETURNS jsonb
    LANGUAGE plpgsql IMMUTABLE
    SET search_path TO ''
    AS $$
begin
  return pg_catalog.jsonb_build_object(
    'license_key', p_key.key, 'account_id', p_key.belongs_to, 'active', p_key.active, 'system_name', p_key.system_name,
    'email', p_key.email, 'time_zone', p_key.time_zone, 'alerts_muted', p_key.alerts_muted);
end
$$;

COMMENT ON FUNCTION cadence.key_event_data(p_key public.license_keys) IS 'A license key as its events carry it: license_key, account_id (the account it belongs to), active, system_name, email (stored), time_zone, alerts_muted.';

-- What an account is, as its events carry it.
CREATE FUNCTION cadence.account_event_data(p_account public.accounts) RETURNS jsonb
    LANGUAGE plpgsql IMMUTABLE
    SET search_path TO ''
    AS $$
begin
  return pg_catalog.jsonb_build_object(
    'account_id', p_account.id, 'email', p_account.email, 'display_name', p_account.display_name,
    'time_zone', p_account.time_zone, 'offline_alert_after_seconds', extract(epoch from p_account.offline_alert_after)::integer);
end
$$;

COMMENT ON FUNCTION cadence.account_event_data(p_account public.accounts) IS 'An account as its events carry it: account_id, email, display_name, time_zone, offline_alert_after_seconds.';

-- The changes one write of a key makes, in the order they are numbered. The owner link alone
-- (account_id set to the account the key already belongs to, as an e-mail change does) is the
-- pairing rule's bookkeeping, not a change; a stored e-mail changed by a move is part of the move.
CREATE FUNCTION cadence.key_event_types(p_old public.license_keys, p_new public.license_keys) RETURNS text[]
    LANGUAGE plpgsql IMMUTABLE
    SET search_path TO ''
    AS $$
begin
  return pg_catalog.array_remove(array[
    case when p_old.belongs_to is distinct from p_new.belongs_to then 'license_key.moved' end,
    case when p_old.active and not p_new.active then 'license_key.suspended'
         when not p_old.active and p_new.active then 'license_key.reinstated' end,
    case when p_old.system_name is distinct from p_new.system_name then 'license_key.system_name_changed' end,
    case when p_old.key <> p_new.key or p_old.time_zone is distinct from p_new.time_zone or p_old.alerts_muted <> p_new.alerts_muted
           or (p_old.email <> p_new.email and p_old.belongs_to is not distinct from p_new.belongs_to)
         then 'license_key.updated' end,
    case when p_old.last_validated_at is null and p_new.last_validated_at is not null then 'license_key.first_validated' end
  ], null);
end
$$;

COMMENT ON FUNCTION cadence.key_event_types(p_old public.license_keys, p_new public.license_keys) IS 'The events one update of a license key makes, in order: moved (its account changed), suspended or reinstated, system_name_changed, updated (key, stored e-mail, time zone or mute switch), first_validated.';

-- Before the row is written, so the counter goes into the same row version; the trigger's name
-- sorts after every other BEFORE trigger of the table (they fire in name order), so it sees the
-- account key_account_is_found has just found. It only numbers: the events themselves are written
-- once per statement, by cadence.record_updated_keys, from the statement's old and new rows. One
-- insert per row was most of a name write's cost: a batch of 1,000 names spent 93 us a row in this
-- trigger, against 5 us here and 41 us a row in the statement's one insert. A renamed key alone is
-- written here: its old row cannot be found by its key after the statement.
CREATE FUNCTION cadence.record_key_changes() RETURNS trigger
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
CREATE FUNCTION cadence.record_updated_keys() RETURNS trigger
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

-- A key created continues the stream of a deleted key of the same name: one probe of the index.
CREATE FUNCTION cadence.number_new_key() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
begin
  new.events_sequence := coalesce((select max(e.sequence) from public.events as e where e.license_key = new.key), 0) + 1;
  return new;
end
$$;

COMMENT ON FUNCTION cadence.number_new_key() IS 'Trigger: a new license key''s first event number (license_key.created), after any a deleted key of the same name had.';

-- After the statement, from the rows it did insert: an insert that met a conflict and did nothing
-- records no event. One statement however many keys an import writes.
CREATE FUNCTION cadence.record_new_keys() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
begin
  insert into public.events (type, license_key, account_id, sequence, data)
  select 'license_key.created', n.key, n.belongs_to, n.events_sequence, cadence.key_event_data(n::public.license_keys)
    from new_rows as n
   order by n.key;
  return null;
end
$$;

COMMENT ON FUNCTION cadence.record_new_keys() IS 'Trigger: records license_key.created for each key a statement inserted.';

CREATE FUNCTION cadence.record_deleted_keys() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
begin
  insert into public.events (type, license_key, account_id, sequence, data)
  select 'license_key.deleted', o.key, o.belongs_to, o.events_sequence + 1, cadence.key_event_data(o::public.license_keys)
    from old_rows as o
   order by o.key;
  return null;
end
$$;

COMMENT ON FUNCTION cadence.record_deleted_keys() IS 'Trigger: records license_key.deleted for each key a statement deleted.';

CREATE FUNCTION cadence.record_account_changes() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
declare
  v_types text[] := pg_catalog.array_remove(array[
    case when old.email is distinct from new.email then 'account.email_changed' end,
    case when old.display_name is distinct from new.display_name or old.time_zone is distinct from new.time_zone
           or old.offline_alert_after is distinct from new.offline_alert_after then 'account.updated' end], null);
begin
  insert into public.events (type, account_id, sequence, data)
  select t.type, new.id, old.events_sequence + t.n,
         cadence.account_event_data(new) || case t.type
           when 'account.email_changed' then pg_catalog.jsonb_build_object('previous_email', old.email)
           else pg_catalog.jsonb_build_object('changed', pg_catalog.array_remove(array[
             case when old.display_name is distinct from new.display_name then 'display_name' end,
             case when old.time_zone is distinct from new.time_zone then 'time_zone' end,
             case when old.offline_alert_after is distinct from new.offline_alert_after then 'offline_alert_after' end], null)) end
    from unnest(v_types) with ordinality as t(type, n);
  new.events_sequence := old.events_sequence + pg_catalog.cardinality(v_types);
  return new;
end
$$;

COMMENT ON FUNCTION cadence.record_account_changes() IS 'Trigger: records the events of one update of an account (email_changed, then updated for its name, time zone or alert threshold) on the account''s own counter. Its Auth link is bookkeeping, not a change.';

CREATE FUNCTION cadence.record_new_accounts() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
begin
  insert into public.events (type, account_id, sequence, data)
  select 'account.created', n.id, n.events_sequence, cadence.account_event_data(n::public.accounts)
    from new_rows as n
   order by n.id;
  return null;
end
$$;

COMMENT ON FUNCTION cadence.record_new_accounts() IS 'Trigger: records account.created for each account a statement inserted (its counter starts at 1).';

CREATE FUNCTION cadence.record_deleted_accounts() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
begin
  insert into public.events (type, account_id, sequence, data)
  select 'account.deleted', o.id, o.events_sequence + 1, cadence.account_event_data(o::public.accounts)
    from old_rows as o
   order by o.id;
  return null;
end
$$;

COMMENT ON FUNCTION cadence.record_deleted_accounts() IS 'Trigger: records account.deleted for each account a statement deleted.';

-- Facts the passes find about kiosks, numbered on their keys' counters: the keys are locked in key
-- order, as a validation batch locks them, so a pass and a validation never deadlock. Work follows
-- the facts, never the fleet.
CREATE FUNCTION cadence.record_key_facts(p_type text, p_keys text[], p_data jsonb[]) RETURNS void
    LANGUAGE sql
    SET search_path TO ''
    AS $$
  with facts as (
    select f.key, f.data from unnest(p_keys, p_data) as f(key, data)
  ), locked as (
    select k.key from public.license_keys as k where k.key in (select f.key from facts as f) order by k.key for update
  ), numbered as (
    update public.license_keys as k
       set events_sequence = k.events_sequence + 1
      from facts as f
     where k.key = f.key and k.key in (select l.key from locked as l)
    returning k.key, k.belongs_to, k.events_sequence, cadence.key_event_data(k) || f.data as data
  )
  insert into public.events (type, license_key, account_id, sequence, data)
  select p_type, n.key, n.belongs_to, n.events_sequence, n.data from numbered as n order by n.key
$$;

COMMENT ON FUNCTION cadence.record_key_facts(p_type text, p_keys text[], p_data jsonb[]) IS 'Records one event of p_type per key (kiosk.offline, kiosk.online, license_key.copy_suspected), each with its p_data, numbered on the key''s counter.';

CREATE FUNCTION cadence.record_outage_events() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
begin
  if tg_op = 'INSERT' then
    perform cadence.record_key_facts('kiosk.offline',
      array(select n.license_key from new_rows as n order by n.license_key),
      array(select pg_catalog.jsonb_build_object('outage_id', n.id, 'dark_since', n.dark_since, 'last_seen_at', n.last_seen_at)
              from new_rows as n order by n.license_key));
  else
    perform cadence.record_key_facts('kiosk.online',
      array(select n.license_key from new_rows as n join old_rows as o on o.id = n.id where o.back_at is null and n.back_at is not null order by n.license_key),
      array(select pg_catalog.jsonb_build_object('outage_id', n.id, 'dark_since', n.dark_since, 'back_at', n.back_at)
              from new_rows as n join old_rows as o on o.id = n.id where o.back_at is null and n.back_at is not null order by n.license_key));
  end if;
  return null;
end
$$;

COMMENT ON FUNCTION cadence.record_outage_events() IS 'Trigger: a kiosk gone dark (an outage recorded by the offline-alert pass) is kiosk.offline; one seen again (its outage ended) is kiosk.online.';

CREATE FUNCTION cadence.record_suspicion_events() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
begin
  -- A key is suspected while flagged within a day (10_seat_checks.sql): a first flag, or a flag after
  -- a day without one, begins a suspicion; the flags of each pass in between do not.
  if tg_op = 'INSERT' then
    perform cadence.record_key_facts('license_key.copy_suspected',
      array(select n.license_key from new_rows as n order by n.license_key),
      array(select pg_catalog.jsonb_build_object('rules', n.rules, 'flagged_at', n.last_flagged_at) from new_rows as n order by n.license_key));
  else
    perform cadence.record_key_facts('license_key.copy_suspected',
      array(select n.license_key from new_rows as n join old_rows as o on o.license_key = n.license_key
             where o.last_flagged_at <= n.last_flagged_at - interval '1 day' order by n.license_key),
      array(select pg_catalog.jsonb_build_object('rules', n.rules, 'flagged_at', n.last_flagged_at)
              from new_rows as n join old_rows as o on o.license_key = n.license_key
             where o.last_flagged_at <= n.last_flagged_at - interval '1 day' order by n.license_key));
  end if;
  return null;
end
$$;

COMMENT ON FUNCTION cadence.record_suspicion_events() IS 'Trigger: a key flagged by the seat checks for the first time, or again after a day without a flag, is license_key.copy_suspected.';

-- The columns that can change what an event says; last_validated_at for the first validation only.
-- Named to sort after the table's other BEFORE triggers (see cadence.record_key_changes).
CREATE TRIGGER written_changes_are_events BEFORE UPDATE OF key, account_id, email, belongs_to, active, system_name, time_zone, alerts_muted, last_validated_at ON public.license_keys FOR EACH ROW WHEN (((old.belongs_to IS DISTINCT FROM new.belongs_to) OR (old.active IS DISTINCT FROM new.active) OR (old.system_name IS DISTINCT FROM new.system_name) OR (old.key IS DISTINCT FROM new.key) OR (old.email IS DISTINCT FROM new.email) OR (old.time_zone IS DISTINCT FROM new.time_zone) OR (old.alerts_muted IS DISTINCT FROM new.alerts_muted) OR ((old.last_validated_at IS NULL) AND (new.last_validated_at IS NOT NULL)))) EXECUTE FUNCTION cadence.record_key_changes();

ALTER TABLE public.license_keys ENABLE ALWAYS TRIGGER written_changes_are_events;

CREATE TRIGGER updated_keys_are_events AFTER UPDATE ON public.license_keys REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION cadence.record_updated_keys();

ALTER TABLE public.license_keys ENABLE ALWAYS TRIGGER updated_keys_are_events;

CREATE TRIGGER written_keys_are_numbered BEFORE INSERT ON public.license_keys FOR EACH ROW EXECUTE FUNCTION cadence.number_new_key();

ALTER TABLE public.license_keys ENABLE ALWAYS TRIGGER written_keys_are_numbered;

CREATE TRIGGER new_keys_are_events AFTER INSERT ON public.license_keys REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION cadence.record_new_keys();

ALTER TABLE public.license_keys ENABLE ALWAYS TRIGGER new_keys_are_events;

CREATE TRIGGER deleted_keys_are_events AFTER DELETE ON public.license_keys REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION cadence.record_deleted_keys();

ALTER TABLE public.license_keys ENABLE ALWAYS TRIGGER deleted_keys_are_events;

CREATE TRIGGER written_changes_are_events BEFORE UPDATE OF email, display_name, time_zone, offline_alert_after ON public.accounts FOR EACH ROW WHEN (((old.email IS DISTINCT FROM new.email) OR (old.display_name IS DISTINCT FROM new.display_name) OR (old.time_zone IS DISTINCT FROM new.time_zone) OR (old.offline_alert_after IS DISTINCT FROM new.offline_alert_after))) EXECUTE FUNCTION cadence.record_account_changes();

ALTER TABLE public.accounts ENABLE ALWAYS TRIGGER written_changes_are_events;

CREATE TRIGGER new_accounts_are_events AFTER INSERT ON public.accounts REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION cadence.record_new_accounts();

ALTER TABLE public.accounts ENABLE ALWAYS TRIGGER new_accounts_are_events;

CREATE TRIGGER deleted_accounts_are_events AFTER DELETE ON public.accounts REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION cadence.record_deleted_accounts();

ALTER TABLE public.accounts ENABLE ALWAYS TRIGGER deleted_accounts_are_events;

CREATE TRIGGER outages_are_events AFTER INSERT ON public.kiosk_outages REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION cadence.record_outage_events();

CREATE TRIGGER recoveries_are_events AFTER UPDATE ON public.kiosk_outages REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION cadence.record_outage_events();

CREATE TRIGGER suspicions_are_events AFTER INSERT ON public.seat_suspicions REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION cadence.record_suspicion_events();

CREATE TRIGGER renewed_suspicions_are_events AFTER UPDATE ON public.seat_suspicions REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION cadence.record_suspicion_events();
