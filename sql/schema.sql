-- The current schema: what supabase/migrations define together, dumped from a freshly migrated
-- database (pg_dump --schema-only of the schemas public and cadence). Generated: do not edit, and
-- do not apply it; deploy with the migrations. Regenerate after changing a migration:
--   npm run schema:snapshot

--
-- PostgreSQL database dump
--


SET statement_timeout = 0;
SET lock_timeout = 0;
SET idle_in_transaction_session_timeout = 0;
SET client_encoding = 'UTF8';
SET standard_conforming_strings = on;
SELECT pg_catalog.set_config('search_path', '', false);
SET check_function_bodies = false;
SET xmloption = content;
SET client_min_messages = warning;
SET row_security = off;

--
-- Name: cadence; Type: SCHEMA; Schema: -; Owner: -
--

CREATE SCHEMA cadence;


--
-- Name: SCHEMA cadence; Type: COMMENT; Schema: -; Owner: -
--

COMMENT ON SCHEMA cadence IS 'Cadence internals: functions the API calls. Not exposed through PostgREST.';


--
-- Name: public; Type: SCHEMA; Schema: -; Owner: -
--

CREATE SCHEMA public;


--
-- Name: SCHEMA public; Type: COMMENT; Schema: -; Owner: -
--

COMMENT ON SCHEMA public IS 'standard public schema';


--
-- Name: kiosk_polls; Type: TYPE; Schema: public; Owner: -
--

CREATE TYPE public.kiosk_polls AS (
	hour_started_at timestamp with time zone,
	polls_this_hour integer,
	polls_last_hour integer,
	uneven_this_hour integer,
	uneven_last_hour integer,
	settled_until timestamp with time zone,
	recent timestamp with time zone[],
	firsts timestamp with time zone[],
	lasts timestamp with time zone[],
	starts boolean[]
);


--
-- Name: TYPE kiosk_polls; Type: COMMENT; Schema: public; Owner: -
--

COMMENT ON TYPE public.kiosk_polls IS 'A key''s polls (seat checks: uneven_polls): polls and uneven polls settled this hour (since hour_started_at) and the hour before; settled_until, the last call of the last settled burst; recent, when its last six settled polls began, oldest first; firsts, lasts and starts, its bursts of calls not yet settled (first and last call, whether it holds a kiosk start), as written.';


--
-- Name: await_account_changes(); Type: FUNCTION; Schema: cadence; Owner: -
--

CREATE FUNCTION cadence.await_account_changes() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $$
begin
  -- Shared, so key writes run beside each other; cadence.refresh_key_accounts takes it exclusively.
  perform pg_catalog.pg_advisory_xact_lock_shared(pg_catalog.hashtextextended('cadence.key_accounts', 0));
  return null;
end
$$;


--
-- Name: FUNCTION await_account_changes(); Type: COMMENT; Schema: cadence; Owner: -
--

COMMENT ON FUNCTION cadence.await_account_changes() IS 'Statement trigger on public.license_keys: a statement writing owner links or stored e-mails waits for an account being created, deleted or changing e-mail, and that change waits for it, so each reads what the other wrote.';


--
-- Name: canonical_frequencies(); Type: FUNCTION; Schema: cadence; Owner: -
--

CREATE FUNCTION cadence.canonical_frequencies() RETURNS TABLE(id smallint, hz integer, name text, palette text[])
    LANGUAGE sql IMMUTABLE
    SET search_path TO ''
    AS $$
  values
    (1::smallint, 174, 'Foundation',     array['#FEE2E2','#FECACA','#FCA5A5','#F87171','#EF4444','#DC2626','#B91C1C']),
    (2::smallint, 285, 'Restoration',    array['#FFEDD5','#FED7AA','#FDBA74','#FB923C','#F97316','#EA580C','#C2410C']),
    (3::smallint, 396, 'Liberation',     array['#FEF3C7','#FDE68A','#FCD34D','#FBBF24','#F59E0B','#D97706','#B45309']),
    (4::smallint, 417, 'Change',         array['#FEF9C3','#FEF08A','#FDE047','#FACC15','#EAB308','#CA8A04','#A16207']),
    (5::smallint, 528, 'Transformation', array['#DCFCE7','#BBF7D0','#86EFAC','#4ADE80','#22C55E','#16A34A','#15803D']),
    (6::smallint, 639, 'Connection',     array['#CCFBF1','#99F6E4','#5EEAD4','#2DD4BF','#14B8A6','#0D9488','#0F766E']),
    (7::smallint, 741, 'Expression',     array['#DBEAFE','#BFDBFE','#93C5FD','#60A5FA','#3B82F6','#2563EB','#1D4ED8']),
    (8::smallint, 852, 'Intuition',      array['#E0E7FF','#C7D2FE','#A5B4FC','#818CF8','#6366F1','#4F46E5','#4338CA']),
    (9::smallint, 963, 'Unity',          array['#EDE9FE','#DDD6FE','#C4B5FD','#A78BFA','#8B5CF6','#7C3AED','#6D28D9'])
$$;


--
-- Name: FUNCTION canonical_frequencies(); Type: COMMENT; Schema: cadence; Owner: -
--

COMMENT ON FUNCTION cadence.canonical_frequencies() IS 'The nine canonical frequencies (ids 1-9), with built-in names and light-to-dark palettes.';


--
-- Name: canonical_json(jsonb); Type: FUNCTION; Schema: cadence; Owner: -
--

CREATE FUNCTION cadence.canonical_json(p_value jsonb) RETURNS text
    LANGUAGE plpgsql IMMUTABLE
    SET search_path TO ''
    AS $$
begin
  -- A jsonb scalar prints as JSON.stringify prints it for what payloads hold (strings, integers,
  -- booleans, null). Keys compare byte-wise, as JavaScript sorts the payload's ASCII keys.
  case pg_catalog.jsonb_typeof(p_value)
    when 'object' then
      return '{' || coalesce((
        select pg_catalog.string_agg(pg_catalog.to_json(e.key)::text || ':' || cadence.canonical_json(e.value), ',' order by e.key collate "C")
        from pg_catalog.jsonb_each(p_value) as e), '') || '}';
    when 'array' then
      return '[' || coalesce((
        select pg_catalog.string_agg(cadence.canonical_json(a.value), ',' order by a.n)
        from pg_catalog.jsonb_array_elements(p_value) with ordinality as a(value, n)), '') || ']';
    else
      return p_value::text;
  end case;
end
$$;


--
-- Name: FUNCTION canonical_json(p_value jsonb); Type: COMMENT; Schema: cadence; Owner: -
--

COMMENT ON FUNCTION cadence.canonical_json(p_value jsonb) IS 'JSON with every object''s keys sorted and no whitespace: one spelling for equal content, the text cadence.schedule_version hashes.';


--
-- Name: categories_json(); Type: FUNCTION; Schema: cadence; Owner: -
--

CREATE FUNCTION cadence.categories_json() RETURNS json
    LANGUAGE sql STABLE
    SET search_path TO ''
    AS $$
  select coalesce(json_agg(json_build_object('id', c.id, 'name', c.name, 'sortOrder', c.sort_order)
                            order by c.sort_order, c.id), '[]')
  from public.categories as c
$$;


--
-- Name: FUNCTION categories_json(); Type: COMMENT; Schema: cadence; Owner: -
--

COMMENT ON FUNCTION cadence.categories_json() IS 'GET /api/v2/categories: every category as {id, name, sortOrder}, ordered by sortOrder; [] when there is none.';


--
-- Name: change_author(); Type: FUNCTION; Schema: cadence; Owner: -
--

CREATE FUNCTION cadence.change_author() RETURNS text
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO ''
    AS $$
begin
  -- An account holder through the Data API carries JWT claims; staff in the dashboard, and the API,
  -- are named by their database login (session_user: the definer's rights do not change it).
  return coalesce('account holder ' || (select auth.uid())::text, 'role ' || session_user);
end
$$;


--
-- Name: FUNCTION change_author(); Type: COMMENT; Schema: cadence; Owner: -
--

COMMENT ON FUNCTION cadence.change_author() IS 'Who makes the current change: "account holder <auth user id>" for a signed-in holder, else "role <database login>". For audit columns.';


--
-- Name: check_block_weekday(); Type: FUNCTION; Schema: cadence; Owner: -
--

CREATE FUNCTION cadence.check_block_weekday() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $$
declare
  v_type text;
begin
  -- FOR SHARE waits for, and blocks, a concurrent change of the schedule's type.
  select s.type into v_type from public.schedules as s where s.id = new.schedule_id for share;
  if v_type = 'weekly' and new.weekday is null then
    raise exception using
      errcode = 'check_violation',
      constraint = 'block_weekday_matches_schedule_type',
      message = format('block %s is in a weekly schedule, so it needs a weekday (monday .. sunday)', new.id);
  elsif v_type = 'daily' and new.weekday is not null then
    raise exception using
      errcode = 'check_violation',
      constraint = 'block_weekday_matches_schedule_type',
      message = format('block %s is in a daily schedule, so its weekday must be empty (not %s)', new.id, new.weekday);
  end if;
  return new;
end
$$;


--
-- Name: FUNCTION check_block_weekday(); Type: COMMENT; Schema: cadence; Owner: -
--

COMMENT ON FUNCTION cadence.check_block_weekday() IS 'Trigger: a block has a weekday exactly when its schedule is weekly.';


--
-- Name: check_schedule_type_change(); Type: FUNCTION; Schema: cadence; Owner: -
--

CREATE FUNCTION cadence.check_schedule_type_change() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $$
declare
  v_mismatched integer;
begin
  select count(*) into v_mismatched
  from public.schedule_blocks as b
  where b.schedule_id = new.id and (b.weekday is null) = (new.type = 'weekly');
  if v_mismatched > 0 then
    raise exception using
      errcode = 'check_violation',
      constraint = 'block_weekday_matches_schedule_type',
      message = format('schedule %s cannot become %s: %s of its blocks %s', new.id, new.type, v_mismatched,
                       case new.type when 'weekly' then 'have no weekday' else 'have a weekday' end),
      hint = 'Change or delete those blocks first, or create a new schedule.';
  end if;
  return new;
end
$$;


--
-- Name: FUNCTION check_schedule_type_change(); Type: COMMENT; Schema: cadence; Owner: -
--

COMMENT ON FUNCTION cadence.check_schedule_type_change() IS 'Trigger: a schedule''s type changes only when every block already fits the new type.';


--
-- Name: check_system_name_form(); Type: FUNCTION; Schema: cadence; Owner: -
--

CREATE FUNCTION cadence.check_system_name_form() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $$
begin
  -- An update that leaves the name as it was passes, so a name stored before this rule does not
  -- block other edits of its row (validation's last_validated_at, a dashboard edit of `active`).
  if tg_op = 'UPDATE' and new.system_name is not distinct from old.system_name then
    return new;
  end if;
  if new.system_name is not null
     and (new.system_name <> cadence.system_name_form(new.system_name) or not cadence.system_name_shows(new.system_name)) then
    raise exception 'a system name must be stored in its normal form (no character that renders as nothing) and show something: at least one letter, digit, punctuation or symbol, and no control, private-use, unassigned, noncharacter, line or paragraph separator code point'
      using errcode = 'check_violation', constraint = 'system_name_is_normalised', table = 'license_keys', schema = 'public',
            hint = 'Store cadence.system_name_form(name); cadence.system_name_shows(name) must be true.';
  end if;
  return new;
end
$$;


--
-- Name: FUNCTION check_system_name_form(); Type: COMMENT; Schema: cadence; Owner: -
--

COMMENT ON FUNCTION cadence.check_system_name_form() IS 'Trigger of system_name_is_normalised: refuses a new or changed system name that is not in cadence.system_name_form or does not show anything (cadence.system_name_shows).';


--
-- Name: check_time_zone(); Type: FUNCTION; Schema: cadence; Owner: -
--

CREATE FUNCTION cadence.check_time_zone() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $$
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


--
-- Name: FUNCTION check_time_zone(); Type: COMMENT; Schema: cadence; Owner: -
--

COMMENT ON FUNCTION cadence.check_time_zone() IS 'Trigger: refuses a time_zone that is no IANA zone (cadence.iana_time_zones(); constraint time_zone_is_known), naming it.';


--
-- Name: check_venue_address(); Type: FUNCTION; Schema: cadence; Owner: -
--

CREATE FUNCTION cadence.check_venue_address() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
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


--
-- Name: FUNCTION check_venue_address(); Type: COMMENT; Schema: cadence; Owner: -
--

COMMENT ON FUNCTION cadence.check_venue_address() IS 'Trigger: refuses a venue address that overlaps another of the same account, holds more kiosks than the account''s active keys, or (for an account holder) is a range or an address no kiosk of the account called from in the last 24 hours; dates and attributes the change.';


--
-- Name: check_venue_address_account(); Type: FUNCTION; Schema: cadence; Owner: -
--

CREATE FUNCTION cadence.check_venue_address_account() RETURNS trigger
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO ''
    AS $$
begin
  -- The insert and update policies' own helper (cadence.holder_account_id): this refusal and the
  -- policies decide alike. Definer's rights only to reach that helper, which lives in a schema
  -- account holders hold no usage on.
  if pg_catalog.current_setting('role', true) = 'authenticated'
     and new.account_id is distinct from (select cadence.holder_account_id()) then
    -- Exactly what Postgres says when a row fails a policy's WITH CHECK: the Data API answers a
    -- holder with an error's code, message, details and hint (none here), so this refusal cannot be
    -- told from the policy's.
    raise exception using
      errcode = 'insufficient_privilege',
      message = pg_catalog.format('new row violates row-level security policy for table "%s"', tg_table_name);
  end if;
  return new;
end
$$;


--
-- Name: FUNCTION check_venue_address_account(); Type: COMMENT; Schema: cadence; Owner: -
--

COMMENT ON FUNCTION cadence.check_venue_address_account() IS 'Trigger, first on public.venue_addresses: refuses an account holder''s row for an account not theirs with row-level security''s own error, before cadence.check_venue_address reads or locks that account, so no error tells a holder what another account holds.';


SET default_tablespace = '';

SET default_table_access_method = heap;

--
-- Name: email_outbox; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.email_outbox (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    recipient text NOT NULL,
    subject text NOT NULL,
    text_body text NOT NULL,
    html_body text NOT NULL,
    status text DEFAULT 'pending'::text NOT NULL,
    attempts integer DEFAULT 0 NOT NULL,
    last_error text,
    next_attempt_at timestamp with time zone DEFAULT now() NOT NULL,
    sent_at timestamp with time zone,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT outbox_attempts_are_not_negative CHECK ((attempts >= 0)),
    CONSTRAINT outbox_recipient_is_an_email CHECK (((char_length(recipient) <= 254) AND (recipient ~ '^[^@\s]+@[^@\s]+\.[^@\s]+$'::text))),
    CONSTRAINT outbox_sent_rows_have_sent_at CHECK (((status = 'sent'::text) = (sent_at IS NOT NULL))),
    CONSTRAINT outbox_status_is_known CHECK ((status = ANY (ARRAY['pending'::text, 'sent'::text]))),
    CONSTRAINT outbox_subject_is_not_blank CHECK ((btrim(subject) <> ''::text))
);


--
-- Name: TABLE email_outbox; Type: COMMENT; Schema: public; Owner: -
--

COMMENT ON TABLE public.email_outbox IS 'E-mails to deliver. Pending rows are retried with backoff from next_attempt_at; the bodies may hold license keys.';


--
-- Name: COLUMN email_outbox.next_attempt_at; Type: COMMENT; Schema: public; Owner: -
--

COMMENT ON COLUMN public.email_outbox.next_attempt_at IS 'When the row may next be claimed: a claim pushes it one lease ahead, a failure one backoff ahead.';


--
-- Name: claim_emails(timestamp with time zone, integer, integer, uuid); Type: FUNCTION; Schema: cadence; Owner: -
--

CREATE FUNCTION cadence.claim_emails(p_now timestamp with time zone, p_lease_seconds integer, p_limit integer, p_id uuid DEFAULT NULL::uuid) RETURNS SETOF public.email_outbox
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $$
begin
  -- The claim moves next_attempt_at one lease ahead, so no other worker takes the row while it is
  -- being sent; if this worker dies, the row is due again when the lease ends.
  if p_id is null then
    return query
      update public.email_outbox as o
      set attempts = o.attempts + 1,
          next_attempt_at = p_now + make_interval(secs => p_lease_seconds)
      where o.id in (select d.id from public.email_outbox as d
                     where d.status = 'pending' and d.next_attempt_at <= p_now
                     order by d.next_attempt_at, d.id
                     limit p_limit
                     for update skip locked)
      returning o.*;
  else
    -- attempts = 0: no worker has claimed the row yet, so the request that queued it takes it
    -- before its due time (cadence.enqueue_request_email).
    return query
      update public.email_outbox as o
      set attempts = o.attempts + 1,
          next_attempt_at = p_now + make_interval(secs => p_lease_seconds)
      where o.id in (select d.id from public.email_outbox as d
                     where d.id = p_id and d.status = 'pending' and (d.next_attempt_at <= p_now or d.attempts = 0)
                     limit p_limit
                     for update skip locked)
      returning o.*;
  end if;
end
$$;


--
-- Name: FUNCTION claim_emails(p_now timestamp with time zone, p_lease_seconds integer, p_limit integer, p_id uuid); Type: COMMENT; Schema: cadence; Owner: -
--

COMMENT ON FUNCTION cadence.claim_emails(p_now timestamp with time zone, p_lease_seconds integer, p_limit integer, p_id uuid) IS 'Claims up to p_limit due pending e-mails for p_lease_seconds; with p_id, that row only, due or never claimed (its queuing request sends it first). Rows locked by another worker are skipped.';


--
-- Name: claim_onboarding_key(text, text, bytea, timestamp with time zone, integer); Type: FUNCTION; Schema: cadence; Owner: -
--

CREATE FUNCTION cadence.claim_onboarding_key(p_source text, p_id text, p_body_sha256 bytea, p_now timestamp with time zone, p_lease_seconds integer) RETURNS TABLE(outcome text, claim_token uuid, response_status smallint, response_body text, retry_after_seconds integer)
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $$
declare
  v_row public.onboarding_idempotency_keys;
  v_token uuid := gen_random_uuid();
begin
  insert into public.onboarding_idempotency_keys as k (source, id, body_sha256, claim_token, claimed_until, created_at, expires_at)
  values (p_source, p_id, p_body_sha256, v_token, p_now + make_interval(secs => p_lease_seconds), p_now, p_now + interval '24 hours')
  on conflict on constraint onboarding_idempotency_keys_pkey do nothing;
  if found then
    return query select 'claimed', v_token, null::smallint, null::text, null::integer;
    return;
  end if;

  -- Read without a lock first: a replay, a mismatch or a live claim need none, so simultaneous
  -- retries of a finished id never stand in each other's way.
  select * into v_row from public.onboarding_idempotency_keys as k where k.source = p_source and k.id = p_id;
  if not found then
    -- Released between the insert and this read: the releasing request has just let go of it.
    return query select 'busy', null::uuid, null::smallint, null::text, 1;
    return;
  end if;
  if v_row.expires_at > p_now then
    if v_row.body_sha256 <> p_body_sha256 then
      return query select 'mismatch', null::uuid, null::smallint, null::text, null::integer;
      return;
    elsif v_row.response_status is not null then
      return query select 'replay', null::uuid, v_row.response_status, v_row.response_body, null::integer;
      return;
    elsif v_row.claimed_until > p_now then
      return query select 'busy', null::uuid, null::smallint, null::text,
        greatest(1, ceil(extract(epoch from v_row.claimed_until - p_now)))::integer;
      return;
    end if;
  end if;

  -- Past its 24 hours, or its lease ran out (the request holding it died before completing): taken
  -- over under the row lock. A row locked now is being completed or taken over by another request.
  select * into v_row from public.onboarding_idempotency_keys as k
  where k.source = p_source and k.id = p_id
  for update skip locked;
  if not found then
    return query select 'busy', null::uuid, null::smallint, null::text, 1;
    return;
  end if;
  if v_row.expires_at <= p_now then
    -- The id is new again, whether or not the purge has run yet.
    update public.onboarding_idempotency_keys as k
    set body_sha256 = p_body_sha256, claim_token = v_token, claimed_until = p_now + make_interval(secs => p_lease_seconds),
        response_status = null, response_body = null, created_at = p_now, expires_at = p_now + interval '24 hours'
    where k.source = p_source and k.id = p_id;
    return query select 'claimed', v_token, null::smallint, null::text, null::integer;
  elsif v_row.response_status is not null or v_row.claimed_until > p_now then
    -- Completed or claimed anew between the two reads: the caller asks again and reads that.
    return query select 'busy', null::uuid, null::smallint, null::text, 1;
  else
    -- Only the new token can complete the row now (cadence.onboard_once checks it), so the dead
    -- request and its retry never both take effect.
    update public.onboarding_idempotency_keys as k
    set claim_token = v_token, claimed_until = p_now + make_interval(secs => p_lease_seconds)
    where k.source = p_source and k.id = p_id;
    return query select 'claimed', v_token, null::smallint, null::text, null::integer;
  end if;
end
$$;


--
-- Name: FUNCTION claim_onboarding_key(p_source text, p_id text, p_body_sha256 bytea, p_now timestamp with time zone, p_lease_seconds integer); Type: COMMENT; Schema: cadence; Owner: -
--

COMMENT ON FUNCTION cadence.claim_onboarding_key(p_source text, p_id text, p_body_sha256 bytea, p_now timestamp with time zone, p_lease_seconds integer) IS 'Claims an onboarding id for p_lease_seconds: claimed (with the token to complete it), replay (the first answer), mismatch (another body), or busy (running elsewhere; retry after retry_after_seconds).';


--
-- Name: claim_unlinked_accounts(timestamp with time zone, integer, integer, uuid); Type: FUNCTION; Schema: cadence; Owner: -
--

CREATE FUNCTION cadence.claim_unlinked_accounts(p_now timestamp with time zone, p_lease_seconds integer, p_limit integer, p_id uuid DEFAULT NULL::uuid) RETURNS TABLE(id uuid, email text, display_name text, attempts integer)
    LANGUAGE sql
    SET search_path TO ''
    AS $$
  -- The claim moves auth_link_due_at one lease ahead, so no other worker calls Auth for the same
  -- account meanwhile. `for no key update` does not wait for onboardings still adding keys to
  -- the account (their foreign keys hold `for key share` on it).
  update public.accounts as a
  set auth_link_attempts = a.auth_link_attempts + 1,
      auth_link_due_at = p_now + make_interval(secs => p_lease_seconds)
  where a.id in (select d.id from public.accounts as d
                 where d.auth_user_id is null
                   and (d.auth_link_due_at is null or d.auth_link_due_at <= p_now)
                   and (p_id is null or d.id = p_id)
                 order by d.auth_link_due_at nulls first, d.id
                 limit p_limit
                 for no key update skip locked)
  returning a.id, a.email, a.display_name, a.auth_link_attempts
$$;


--
-- Name: FUNCTION claim_unlinked_accounts(p_now timestamp with time zone, p_lease_seconds integer, p_limit integer, p_id uuid); Type: COMMENT; Schema: cadence; Owner: -
--

COMMENT ON FUNCTION cadence.claim_unlinked_accounts(p_now timestamp with time zone, p_lease_seconds integer, p_limit integer, p_id uuid) IS 'Claims up to p_limit accounts due to be linked to an Auth user (only p_id when given) for p_lease_seconds; rows held by another worker are skipped.';


--
-- Name: color_palettes_json(); Type: FUNCTION; Schema: cadence; Owner: -
--

CREATE FUNCTION cadence.color_palettes_json() RETURNS json
    LANGUAGE sql STABLE
    SET search_path TO ''
    AS $$
  select json_agg(json_build_object('solfeggioFrequencyId', p.canonical_frequency_id, 'colors', to_json(p.colors))
                   order by p.canonical_frequency_id)
  from cadence.palettes() as p
$$;


--
-- Name: FUNCTION color_palettes_json(); Type: COMMENT; Schema: cadence; Owner: -
--

COMMENT ON FUNCTION cadence.color_palettes_json() IS 'GET /api/v2/color-palettes: one palette per canonical frequency, as {solfeggioFrequencyId, colors}.';


--
-- Name: enqueue_email(text, text, text, text, timestamp with time zone); Type: FUNCTION; Schema: cadence; Owner: -
--

CREATE FUNCTION cadence.enqueue_email(p_recipient text, p_subject text, p_text text, p_html text, p_now timestamp with time zone) RETURNS uuid
    LANGUAGE sql
    SET search_path TO ''
    AS $$
  insert into public.email_outbox (recipient, subject, text_body, html_body, next_attempt_at)
  values (p_recipient, p_subject, p_text, p_html, p_now)
  returning id
$$;


--
-- Name: FUNCTION enqueue_email(p_recipient text, p_subject text, p_text text, p_html text, p_now timestamp with time zone); Type: COMMENT; Schema: cadence; Owner: -
--

COMMENT ON FUNCTION cadence.enqueue_email(p_recipient text, p_subject text, p_text text, p_html text, p_now timestamp with time zone) IS 'Queues an e-mail due for sweeps at p_now; call it inside the transaction that makes the e-mail true. A request that sends its e-mail itself calls cadence.enqueue_request_email.';


--
-- Name: enqueue_hook_emails(text, jsonb, timestamp with time zone); Type: FUNCTION; Schema: cadence; Owner: -
--

CREATE FUNCTION cadence.enqueue_hook_emails(p_event text, p_emails jsonb, p_now timestamp with time zone) RETURNS SETOF uuid
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $$
begin
  if jsonb_typeof(p_emails) is distinct from 'array' or jsonb_array_length(p_emails) = 0 then
    raise exception 'p_emails must be a non-empty JSON array' using errcode = '22023';
  end if;
  if not cadence.record_webhook_nonce(p_event, p_now) then
    return;
  end if;
  return query
    select cadence.enqueue_request_email(e ->> 'to', e ->> 'subject', e ->> 'text', e ->> 'html', p_now)
    from jsonb_array_elements(p_emails) with ordinality as m (e, n)
    order by m.n;
end
$$;


--
-- Name: FUNCTION enqueue_hook_emails(p_event text, p_emails jsonb, p_now timestamp with time zone); Type: COMMENT; Schema: cadence; Owner: -
--

COMMENT ON FUNCTION cadence.enqueue_hook_emails(p_event text, p_emails jsonb, p_now timestamp with time zone) IS 'Queues the e-mails of one hook call ([{to, subject, text, html}]) unless p_event was already seen; returns their outbox ids, none for a repeat.';


--
-- Name: enqueue_request_email(text, text, text, text, timestamp with time zone); Type: FUNCTION; Schema: cadence; Owner: -
--

CREATE FUNCTION cadence.enqueue_request_email(p_recipient text, p_subject text, p_text text, p_html text, p_now timestamp with time zone) RETURNS uuid
    LANGUAGE sql
    SET search_path TO ''
    AS $$
  -- A minute: far longer than the one round trip between the request's commit and its own claim
  -- (cadence.claim_emails by id), and soon enough for the sweeps to send it if the request died.
  select cadence.enqueue_email(p_recipient, p_subject, p_text, p_html, p_now + interval '1 minute')
$$;


--
-- Name: FUNCTION enqueue_request_email(p_recipient text, p_subject text, p_text text, p_html text, p_now timestamp with time zone); Type: COMMENT; Schema: cadence; Owner: -
--

COMMENT ON FUNCTION cadence.enqueue_request_email(p_recipient text, p_subject text, p_text text, p_html text, p_now timestamp with time zone) IS 'Queues an e-mail that the calling request sends itself after its commit; sweeps may take it a minute later, if that request died.';


--
-- Name: entitlements(text[], text[]); Type: FUNCTION; Schema: cadence; Owner: -
--

CREATE FUNCTION cadence.entitlements(p_keys text[], p_emails text[]) RETURNS TABLE(n bigint, outcome text, ids uuid[])
    LANGUAGE plpgsql STABLE
    SET search_path TO ''
    SET plan_cache_mode TO 'force_generic_plan'
    AS $$
begin
  return query
    select p.n, p.outcome,
           case when p.outcome = 'paired' then
             array(select ap.proclamation_id from public.account_proclamations as ap where ap.account_id = p.account_id)
           end
      from cadence.license_pairings(p_keys, p_emails) as p;
end
$$;


--
-- Name: FUNCTION entitlements(p_keys text[], p_emails text[]); Type: COMMENT; Schema: cadence; Owner: -
--

COMMENT ON FUNCTION cadence.entitlements(p_keys text[], p_emails text[]) IS 'For each key and e-mail (position n), the pairing outcome and, when paired, the ids of the account''s proclamations.';


--
-- Name: find_key_account(); Type: FUNCTION; Schema: cadence; Owner: -
--

CREATE FUNCTION cadence.find_key_account() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $$
begin
  if new.account_id is not null then
    new.belongs_to := new.account_id;
  else
    new.belongs_to := (select a.id from public.accounts as a where pg_catalog.lower(a.email) = pg_catalog.lower(new.email));
  end if;
  return new;
end
$$;


--
-- Name: FUNCTION find_key_account(); Type: COMMENT; Schema: cadence; Owner: -
--

COMMENT ON FUNCTION cadence.find_key_account() IS 'Trigger: a key''s belongs_to, the pairing rule''s one spelling: its owner link (account_id), else the account whose e-mail equals its stored e-mail (case-insensitively), else null.';


--
-- Name: forget_deleted_key_sightings(); Type: FUNCTION; Schema: cadence; Owner: -
--

CREATE FUNCTION cadence.forget_deleted_key_sightings() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $$
begin
  delete from public.kiosk_sightings as s where s.license_key in (select o.key from old_rows as o);
  return null;
end
$$;


--
-- Name: FUNCTION forget_deleted_key_sightings(); Type: COMMENT; Schema: cadence; Owner: -
--

COMMENT ON FUNCTION cadence.forget_deleted_key_sightings() IS 'Trigger: a deleted license key''s sighting goes with it.';


--
-- Name: frequencies_json(); Type: FUNCTION; Schema: cadence; Owner: -
--

CREATE FUNCTION cadence.frequencies_json() RETURNS json
    LANGUAGE sql IMMUTABLE
    SET search_path TO ''
    AS $$
  select json_agg(json_build_object('id', c.id, 'name', c.name, 'value', c.hz) order by c.id)
  from cadence.canonical_frequencies() as c
$$;


--
-- Name: FUNCTION frequencies_json(); Type: COMMENT; Schema: cadence; Owner: -
--

COMMENT ON FUNCTION cadence.frequencies_json() IS 'GET /api/v2/frequencies: the nine canonical frequencies (cadence.canonical_frequencies) as {id, name, value}, by id.';


--
-- Name: groups_json(); Type: FUNCTION; Schema: cadence; Owner: -
--

CREATE FUNCTION cadence.groups_json() RETURNS json
    LANGUAGE sql STABLE
    SET search_path TO ''
    AS $$
  select coalesce(json_agg(json_build_object('id', g.id, 'name', g.name, 'sortOrder', g.sort_order)
                            order by g.sort_order, g.id), '[]')
  from public.groups as g
$$;


--
-- Name: FUNCTION groups_json(); Type: COMMENT; Schema: cadence; Owner: -
--

COMMENT ON FUNCTION cadence.groups_json() IS 'GET /api/v2/groups: every group as {id, name, sortOrder}, ordered by sortOrder; [] when there is none.';


--
-- Name: holder_account_id(); Type: FUNCTION; Schema: cadence; Owner: -
--

CREATE FUNCTION cadence.holder_account_id() RETURNS uuid
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO ''
    AS $$
begin
  return (select a.id from public.accounts as a where a.auth_user_id = (select auth.uid()));
end
$$;


--
-- Name: FUNCTION holder_account_id(); Type: COMMENT; Schema: cadence; Owner: -
--

COMMENT ON FUNCTION cadence.holder_account_id() IS 'The account of the signed-in Supabase Auth user (accounts.auth_user_id = auth.uid()), or null. For row-level security policies.';


--
-- Name: holder_block_ids(); Type: FUNCTION; Schema: cadence; Owner: -
--

CREATE FUNCTION cadence.holder_block_ids() RETURNS uuid[]
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO ''
    AS $$
begin
  return array(select b.id from public.schedule_blocks as b where b.schedule_id = any ((select cadence.holder_schedule_ids())::uuid[]));
end
$$;


--
-- Name: FUNCTION holder_block_ids(); Type: COMMENT; Schema: cadence; Owner: -
--

COMMENT ON FUNCTION cadence.holder_block_ids() IS 'The blocks of the signed-in account holder''s schedules; empty for anyone else. For row-level security policies.';


--
-- Name: holder_license_keys(); Type: FUNCTION; Schema: cadence; Owner: -
--

CREATE FUNCTION cadence.holder_license_keys() RETURNS text[]
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO ''
    AS $$
begin
  return array(
    select k.key from public.license_keys as k where k.belongs_to = (select cadence.holder_account_id()));
end
$$;


--
-- Name: FUNCTION holder_license_keys(); Type: COMMENT; Schema: cadence; Owner: -
--

COMMENT ON FUNCTION cadence.holder_license_keys() IS 'The license keys that belong to the signed-in account holder''s account (license_keys.belongs_to); empty for anyone else. For row-level security policies.';


--
-- Name: holder_owns_key(text); Type: FUNCTION; Schema: cadence; Owner: -
--

CREATE FUNCTION cadence.holder_owns_key(p_key text) RETURNS boolean
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO ''
    AS $$
begin
  return exists (
    select from public.license_keys as k
     where k.key = p_key and k.belongs_to = (select cadence.holder_account_id()));
end
$$;


--
-- Name: FUNCTION holder_owns_key(p_key text); Type: COMMENT; Schema: cadence; Owner: -
--

COMMENT ON FUNCTION cadence.holder_owns_key(p_key text) IS 'Whether a license key belongs to the signed-in account holder''s account (license_keys.belongs_to); false for anyone else. For row-level security policies.';


--
-- Name: holder_proclamation_ids(); Type: FUNCTION; Schema: cadence; Owner: -
--

CREATE FUNCTION cadence.holder_proclamation_ids() RETURNS uuid[]
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO ''
    AS $$
begin
  -- Entitled and served: a proclamation whose frequency has no canonical id is never served (the
  -- join cadence.proclamations_json makes), so an account holder never reads it or plays it either.
  return array(
    select pr.id
    from public.account_proclamations as ap
    join public.proclamations as pr on pr.id = ap.proclamation_id
    join public.frequencies as f on f.id = pr.frequency_id
    join cadence.canonical_frequencies() as c on c.hz = f.hz
    where ap.account_id = (select cadence.holder_account_id()));
end
$$;


--
-- Name: FUNCTION holder_proclamation_ids(); Type: COMMENT; Schema: cadence; Owner: -
--

COMMENT ON FUNCTION cadence.holder_proclamation_ids() IS 'The proclamations the signed-in account holder''s account is entitled to and that are served (canonical frequency); empty for anyone else. For row-level security policies.';


--
-- Name: holder_schedule_ids(); Type: FUNCTION; Schema: cadence; Owner: -
--

CREATE FUNCTION cadence.holder_schedule_ids() RETURNS uuid[]
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO ''
    AS $$
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


--
-- Name: FUNCTION holder_schedule_ids(); Type: COMMENT; Schema: cadence; Owner: -
--

COMMENT ON FUNCTION cadence.holder_schedule_ids() IS 'The schedules of the signed-in account holder''s account and of its keys; empty for anyone else. For row-level security policies.';


--
-- Name: iana_time_zones(); Type: FUNCTION; Schema: cadence; Owner: -
--

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


--
-- Name: FUNCTION iana_time_zones(); Type: COMMENT; Schema: cadence; Owner: -
--

COMMENT ON FUNCTION cadence.iana_time_zones() IS 'The IANA time zones of the server''s database, canonical names and backward links: pg_timezone_names without posix/..., right/..., localtime, posixrules and Factory. The zones a key or an account may have.';


--
-- Name: kiosk_alert_pass(timestamp with time zone); Type: FUNCTION; Schema: cadence; Owner: -
--

CREATE FUNCTION cadence.kiosk_alert_pass(p_now timestamp with time zone) RETURNS TABLE(blind boolean, blind_began boolean, watch_restarted boolean, went_dark integer, came_back integer)
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $$
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


--
-- Name: FUNCTION kiosk_alert_pass(p_now timestamp with time zone); Type: COMMENT; Schema: cadence; Owner: -
--

COMMENT ON FUNCTION cadence.kiosk_alert_pass(p_now timestamp with time zone) IS 'The offline-alert pass at p_now: restarts the watch after a gap in passes or a blind spell (no kiosk seen), then records the kiosks seen again and those gone dark (the rules are in the migration that made it). Their e-mails are queued by cadence.queue_kiosk_alert_email.';


--
-- Name: legacy_schedules_if_changed(text[], text[], text[]); Type: FUNCTION; Schema: cadence; Owner: -
--

CREATE FUNCTION cadence.legacy_schedules_if_changed(p_keys text[], p_emails text[], p_fingerprints text[]) RETURNS TABLE(n bigint, outcome text, fingerprint text, payload json)
    LANGUAGE plpgsql STABLE
    SET search_path TO ''
    SET plan_cache_mode TO 'force_generic_plan'
    AS $$
begin
  return query select s.n, s.outcome, s.version, s.payload from cadence.legacy_schedules_unless_held(p_keys, p_emails, p_fingerprints) as s;
end
$$;


--
-- Name: FUNCTION legacy_schedules_if_changed(p_keys text[], p_emails text[], p_fingerprints text[]); Type: COMMENT; Schema: cadence; Owner: -
--

COMMENT ON FUNCTION cadence.legacy_schedules_if_changed(p_keys text[], p_emails text[], p_fingerprints text[]) IS 'Former name of cadence.legacy_schedules_unless_held, for API instances deployed before it (their `fingerprint` is the version); dropped once none runs.';


--
-- Name: legacy_schedules_unless_held(text[], text[], text[]); Type: FUNCTION; Schema: cadence; Owner: -
--

CREATE FUNCTION cadence.legacy_schedules_unless_held(p_keys text[], p_emails text[], p_versions text[]) RETURNS TABLE(n bigint, outcome text, version text, payload json)
    LANGUAGE plpgsql STABLE
    SET search_path TO ''
    SET plan_cache_mode TO 'force_generic_plan'
    AS $$
begin
  return query
    select p.n, p.outcome, s.version, case when s.version is distinct from p_versions[p.n] then s.payload end
      from cadence.license_pairings(p_keys, p_emails) as p
      left join cadence.served_schedules(p_keys) as s on p.outcome = 'paired' and s.n = p.n;
end
$$;


--
-- Name: FUNCTION legacy_schedules_unless_held(p_keys text[], p_emails text[], p_versions text[]); Type: COMMENT; Schema: cadence; Owner: -
--

COMMENT ON FUNCTION cadence.legacy_schedules_unless_held(p_keys text[], p_emails text[], p_versions text[]) IS 'For each key and e-mail (position n), the pairing outcome and, when paired, the version of the schedule the key reads, with the payload only when it differs from the version the caller holds at the same position.';


--
-- Name: license_key_offline_after(text); Type: FUNCTION; Schema: cadence; Owner: -
--

CREATE FUNCTION cadence.license_key_offline_after(p_key text) RETURNS interval
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO ''
    AS $$
begin
  -- PL/pgSQL, so the plan is kept across the rows of a page (see cadence.license_key_time_zone).
  return coalesce(
    (select a.offline_alert_after from public.accounts as a where a.id = cadence.license_key_owner(p_key)),
    interval '15 minutes');
end
$$;


--
-- Name: FUNCTION license_key_offline_after(p_key text); Type: COMMENT; Schema: cadence; Owner: -
--

COMMENT ON FUNCTION cadence.license_key_offline_after(p_key text) IS 'How long a license key''s kiosk may stay unseen before it counts as offline: its account''s offline_alert_after, else 15 minutes. For public.kiosk_status.';


--
-- Name: license_key_owner(text); Type: FUNCTION; Schema: cadence; Owner: -
--

CREATE FUNCTION cadence.license_key_owner(p_key text) RETURNS uuid
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO ''
    AS $$
  select k.belongs_to from public.license_keys as k where k.key = p_key
$$;


--
-- Name: FUNCTION license_key_owner(p_key text); Type: COMMENT; Schema: cadence; Owner: -
--

COMMENT ON FUNCTION cadence.license_key_owner(p_key text) IS 'The id of the account a license key belongs to (license_keys.belongs_to), or null. For public.kiosk_status, whose readers may not read that column.';


--
-- Name: license_key_playing(text, timestamp with time zone); Type: FUNCTION; Schema: cadence; Owner: -
--

CREATE FUNCTION cadence.license_key_playing(p_key text, p_at timestamp with time zone) RETURNS jsonb
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO ''
    AS $$
begin
  -- PL/pgSQL, so the plan is kept across the rows of a page (see license_key_time_zone).
  return (
    select pg_catalog.jsonb_build_object(
             'blockId', p.block_id,
             'weekday', p.weekday,
             'startTime', pg_catalog.to_char(p.start_time, 'HH24:MI'),
             'endTime', pg_catalog.to_char(p.end_time, 'HH24:MI'),
             'startedOn', p.started_on,
             'proclamationIds', pg_catalog.to_jsonb(p.proclamation_ids))
      from cadence.playing_at(array[p_key], p_at) as p
     where p.block_id is not null);
end
$$;


--
-- Name: FUNCTION license_key_playing(p_key text, p_at timestamp with time zone); Type: COMMENT; Schema: cadence; Owner: -
--

COMMENT ON FUNCTION cadence.license_key_playing(p_key text, p_at timestamp with time zone) IS 'The block a license key''s kiosk should play at p_at (cadence.playing_at) as {blockId, weekday, startTime, endTime, startedOn, proclamationIds}, or null. For public.kiosk_status.';


--
-- Name: license_key_schedule_version(text); Type: FUNCTION; Schema: cadence; Owner: -
--

CREATE FUNCTION cadence.license_key_schedule_version(p_key text) RETURNS text
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO ''
    AS $$
  select s.version from cadence.served_schedules(array[p_key]) as s
$$;


--
-- Name: FUNCTION license_key_schedule_version(p_key text); Type: COMMENT; Schema: cadence; Owner: -
--

COMMENT ON FUNCTION cadence.license_key_schedule_version(p_key text) IS 'The schedule version the API serves for a license key now (its ETag, unquoted). For public.kiosk_status.';


--
-- Name: license_key_time_zone(text); Type: FUNCTION; Schema: cadence; Owner: -
--

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


--
-- Name: FUNCTION license_key_time_zone(p_key text); Type: COMMENT; Schema: cadence; Owner: -
--

COMMENT ON FUNCTION cadence.license_key_time_zone(p_key text) IS 'The time zone a license key''s kiosk lives in: its own, else its account''s, else UTC. For public.kiosk_status.';


--
-- Name: license_pairing(text, text); Type: FUNCTION; Schema: cadence; Owner: -
--

CREATE FUNCTION cadence.license_pairing(p_key text, p_email text) RETURNS TABLE(outcome text, key_active boolean, account_id uuid)
    LANGUAGE sql STABLE
    SET search_path TO ''
    AS $$
  select p.outcome, p.key_active, p.account_id from cadence.license_pairings(array[p_key], array[p_email]) as p
$$;


--
-- Name: FUNCTION license_pairing(p_key text, p_email text); Type: COMMENT; Schema: cadence; Owner: -
--

COMMENT ON FUNCTION cadence.license_pairing(p_key text, p_email text) IS 'Outcome of pairing a key with an e-mail: key_not_found, user_not_found, not_owner or paired, with the key''s activity and the account id.';


--
-- Name: license_pairings(text[], text[]); Type: FUNCTION; Schema: cadence; Owner: -
--

CREATE FUNCTION cadence.license_pairings(p_keys text[], p_emails text[]) RETURNS TABLE(n bigint, outcome text, key_active boolean, account_id uuid)
    LANGUAGE plpgsql STABLE
    SET search_path TO ''
    SET plan_cache_mode TO 'force_generic_plan'
    AS $$
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


--
-- Name: FUNCTION license_pairings(p_keys text[], p_emails text[]); Type: COMMENT; Schema: cadence; Owner: -
--

COMMENT ON FUNCTION cadence.license_pairings(p_keys text[], p_emails text[]) IS 'Outcome of pairing each key with the e-mail at the same position n (1-based): key_not_found, user_not_found, not_owner (the key belongs to another account, or none) or paired, with the key''s activity and the account id.';


--
-- Name: license_schedules_if_changed(text[], text[]); Type: FUNCTION; Schema: cadence; Owner: -
--

CREATE FUNCTION cadence.license_schedules_if_changed(p_keys text[], p_fingerprints text[]) RETURNS TABLE(n bigint, fingerprint text, payload json)
    LANGUAGE plpgsql STABLE
    SET search_path TO ''
    SET plan_cache_mode TO 'force_generic_plan'
    AS $$
begin
  return query select s.n, s.version, s.payload from cadence.license_schedules_unless_held(p_keys, p_fingerprints) as s;
end
$$;


--
-- Name: FUNCTION license_schedules_if_changed(p_keys text[], p_fingerprints text[]); Type: COMMENT; Schema: cadence; Owner: -
--

COMMENT ON FUNCTION cadence.license_schedules_if_changed(p_keys text[], p_fingerprints text[]) IS 'Former name of cadence.license_schedules_unless_held, for API instances deployed before it (their `fingerprint` is the version); dropped once none runs.';


--
-- Name: license_schedules_unless_held(text[], text[]); Type: FUNCTION; Schema: cadence; Owner: -
--

CREATE FUNCTION cadence.license_schedules_unless_held(p_keys text[], p_versions text[]) RETURNS TABLE(n bigint, version text, payload json)
    LANGUAGE plpgsql STABLE
    SET search_path TO ''
    SET plan_cache_mode TO 'force_generic_plan'
    AS $$
begin
  return query
    select s.n, s.version, case when s.version is distinct from p_versions[s.n] then s.payload end
      from cadence.served_schedules(p_keys) as s;
end
$$;


--
-- Name: FUNCTION license_schedules_unless_held(p_keys text[], p_versions text[]); Type: COMMENT; Schema: cadence; Owner: -
--

COMMENT ON FUNCTION cadence.license_schedules_unless_held(p_keys text[], p_versions text[]) IS 'For each known key (position n), the version of the schedule it reads, with the payload only when it differs from the version the caller holds at the same position; no row for an unknown key.';


--
-- Name: link_auth_user(uuid, uuid); Type: FUNCTION; Schema: cadence; Owner: -
--

CREATE FUNCTION cadence.link_auth_user(p_account_id uuid, p_auth_user_id uuid) RETURNS boolean
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $$
begin
  update public.accounts
  set auth_user_id = p_auth_user_id, auth_link_error = null, auth_link_due_at = null
  where id = p_account_id and (auth_user_id is null or auth_user_id = p_auth_user_id);
  return found;
end
$$;


--
-- Name: FUNCTION link_auth_user(p_account_id uuid, p_auth_user_id uuid); Type: COMMENT; Schema: cadence; Owner: -
--

COMMENT ON FUNCTION cadence.link_auth_user(p_account_id uuid, p_auth_user_id uuid) IS 'Links the account to its Auth user; true when linked (or already linked to that user), false when the account is linked to another.';


--
-- Name: mark_auth_link_failed(uuid, text, timestamp with time zone); Type: FUNCTION; Schema: cadence; Owner: -
--

CREATE FUNCTION cadence.mark_auth_link_failed(p_account_id uuid, p_error text, p_retry_at timestamp with time zone) RETURNS void
    LANGUAGE sql
    SET search_path TO ''
    AS $$
  update public.accounts
  set auth_link_error = left(p_error, 1000), auth_link_due_at = p_retry_at
  where id = p_account_id and auth_user_id is null
$$;


--
-- Name: FUNCTION mark_auth_link_failed(p_account_id uuid, p_error text, p_retry_at timestamp with time zone); Type: COMMENT; Schema: cadence; Owner: -
--

COMMENT ON FUNCTION cadence.mark_auth_link_failed(p_account_id uuid, p_error text, p_retry_at timestamp with time zone) IS 'Records a failed try to link an Auth user: the account stays unlinked, due again at p_retry_at.';


--
-- Name: mark_email_failed(uuid, text, timestamp with time zone); Type: FUNCTION; Schema: cadence; Owner: -
--

CREATE FUNCTION cadence.mark_email_failed(p_id uuid, p_error text, p_retry_at timestamp with time zone) RETURNS void
    LANGUAGE sql
    SET search_path TO ''
    AS $$
  update public.email_outbox
  set last_error = left(p_error, 1000), next_attempt_at = p_retry_at
  where id = p_id and status = 'pending'
$$;


--
-- Name: FUNCTION mark_email_failed(p_id uuid, p_error text, p_retry_at timestamp with time zone); Type: COMMENT; Schema: cadence; Owner: -
--

COMMENT ON FUNCTION cadence.mark_email_failed(p_id uuid, p_error text, p_retry_at timestamp with time zone) IS 'Records a failed delivery: the row stays pending, due again at p_retry_at.';


--
-- Name: mark_email_sent(uuid, timestamp with time zone); Type: FUNCTION; Schema: cadence; Owner: -
--

CREATE FUNCTION cadence.mark_email_sent(p_id uuid, p_now timestamp with time zone) RETURNS void
    LANGUAGE sql
    SET search_path TO ''
    AS $$
  update public.email_outbox set status = 'sent', sent_at = p_now where id = p_id and status = 'pending'
$$;


--
-- Name: FUNCTION mark_email_sent(p_id uuid, p_now timestamp with time zone); Type: COMMENT; Schema: cadence; Owner: -
--

COMMENT ON FUNCTION cadence.mark_email_sent(p_id uuid, p_now timestamp with time zone) IS 'Records that a mailer accepted the e-mail.';


--
-- Name: onboard(text, text, text, text, text, text, timestamp with time zone); Type: FUNCTION; Schema: cadence; Owner: -
--

CREATE FUNCTION cadence.onboard(p_email text, p_name text, p_key text, p_subject text, p_text text, p_html text, p_now timestamp with time zone) RETURNS TABLE(account_id uuid, key_issued boolean, outbox_id uuid)
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $$
declare
  v_email text := lower(btrim(p_email));
  v_account uuid;
begin
  -- Two simultaneous onboardings of one new e-mail: the unique index makes the second wait for the
  -- first, do nothing, and then read the account the first created.
  insert into public.accounts (email, display_name)
  values (v_email, btrim(p_name))
  on conflict ((lower(email))) do nothing
  returning id into v_account;
  if v_account is null then
    select a.id into v_account from public.accounts as a where lower(a.email) = v_email;
  end if;

  insert into public.license_keys (key, account_id, email)
  values (p_key, v_account, v_email)
  on conflict (key) do nothing;
  if not found then
    -- The key is taken: the caller draws another and renders its e-mail again.
    return query select v_account, false, null::uuid;
    return;
  end if;

  return query select v_account, true, cadence.enqueue_request_email(v_email, p_subject, p_text, p_html, p_now);
end
$$;


--
-- Name: FUNCTION onboard(p_email text, p_name text, p_key text, p_subject text, p_text text, p_html text, p_now timestamp with time zone); Type: COMMENT; Schema: cadence; Owner: -
--

COMMENT ON FUNCTION cadence.onboard(p_email text, p_name text, p_key text, p_subject text, p_text text, p_html text, p_now timestamp with time zone) IS 'Creates the account for p_email if absent (case-insensitive), issues p_key to it and queues its e-mail; key_issued is false when p_key already exists.';


--
-- Name: onboard_once(text, text, uuid, text, text, text, text, text, text, timestamp with time zone, text); Type: FUNCTION; Schema: cadence; Owner: -
--

CREATE FUNCTION cadence.onboard_once(p_source text, p_id text, p_claim_token uuid, p_email text, p_name text, p_key text, p_subject text, p_text text, p_html text, p_now timestamp with time zone, p_answer_template text) RETURNS TABLE(outcome text, account_id uuid, key_issued boolean, outbox_id uuid, response_body text)
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $$
declare
  v_claim public.onboarding_idempotency_keys;
  v_onboarded record;
  v_body text;
begin
  -- Locked first, so a request whose lease was taken over cannot complete beside the new holder.
  select * into v_claim from public.onboarding_idempotency_keys as k
  where k.source = p_source and k.id = p_id
  for update;
  if not found or v_claim.claim_token is distinct from p_claim_token then
    return query select 'lost', null::uuid, false, null::uuid, null::text;
    return;
  end if;

  select o.account_id, o.key_issued, o.outbox_id into v_onboarded
  from cadence.onboard(p_email, p_name, p_key, p_subject, p_text, p_html, p_now) as o;
  if not v_onboarded.key_issued then
    -- The key is taken: the claim stays, the caller draws another key.
    return query select 'key_taken', v_onboarded.account_id, false, null::uuid, null::text;
    return;
  end if;

  -- The answer's text comes from the API with the JSON string "{user_id}" standing for the
  -- account id, so its shape stays in one place and the replay is the first answer's exact bytes.
  v_body := replace(p_answer_template, '"{user_id}"', to_json(v_onboarded.account_id::text)::text);
  update public.onboarding_idempotency_keys as k
  set claim_token = null, claimed_until = null, response_status = 200, response_body = v_body
  where k.source = p_source and k.id = p_id;
  return query select 'done', v_onboarded.account_id, true, v_onboarded.outbox_id, v_body;
end
$$;


--
-- Name: FUNCTION onboard_once(p_source text, p_id text, p_claim_token uuid, p_email text, p_name text, p_key text, p_subject text, p_text text, p_html text, p_now timestamp with time zone, p_answer_template text); Type: COMMENT; Schema: cadence; Owner: -
--

COMMENT ON FUNCTION cadence.onboard_once(p_source text, p_id text, p_claim_token uuid, p_email text, p_name text, p_key text, p_subject text, p_text text, p_html text, p_now timestamp with time zone, p_answer_template text) IS 'cadence.onboard for a claimed id: the account, key and e-mail and the answer to replay in one transaction; lost when p_claim_token no longer holds the id.';


--
-- Name: palettes(); Type: FUNCTION; Schema: cadence; Owner: -
--

CREATE FUNCTION cadence.palettes() RETURNS TABLE(canonical_frequency_id smallint, colors text[])
    LANGUAGE sql STABLE
    SET search_path TO ''
    AS $$
  select c.id, coalesce(p.colors, c.palette)
  from cadence.canonical_frequencies() as c
  left join public.color_palettes as p on p.canonical_frequency_id = c.id
$$;


--
-- Name: FUNCTION palettes(); Type: COMMENT; Schema: cadence; Owner: -
--

COMMENT ON FUNCTION cadence.palettes() IS 'One palette per canonical id: the stored row if any, else the built-in one.';


--
-- Name: playing_at(text[], timestamp with time zone); Type: FUNCTION; Schema: cadence; Owner: -
--

CREATE FUNCTION cadence.playing_at(p_keys text[], p_at timestamp with time zone) RETURNS TABLE(n bigint, license_key text, time_zone text, local_time timestamp without time zone, block_id uuid, weekday text, start_time time without time zone, end_time time without time zone, started_on date, started_at timestamp with time zone, proclamation_ids uuid[])
    LANGUAGE plpgsql STABLE
    SET search_path TO ''
    SET plan_cache_mode TO 'force_generic_plan'
    AS $$
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


--
-- Name: FUNCTION playing_at(p_keys text[], p_at timestamp with time zone); Type: COMMENT; Schema: cadence; Owner: -
--

COMMENT ON FUNCTION cadence.playing_at(p_keys text[], p_at timestamp with time zone) IS 'For each known key (position n) at instant p_at: its time zone and local time, and the block of the schedule it reads that plays then (null when none): id, weekday, start and end, the local date and instant it started, its proclamations in order. The wall-clock rule and its daylight-saving cases are in the migration that made it.';


--
-- Name: proclamations_json(); Type: FUNCTION; Schema: cadence; Owner: -
--

CREATE FUNCTION cadence.proclamations_json() RETURNS json
    LANGUAGE sql STABLE
    SET search_path TO ''
    AS $$
  -- json_strip_nulls leaves colorPalette out when no palette exists for the canonical id.
  select coalesce(json_agg(
           json_strip_nulls(json_build_object(
             'id', pr.id,
             'name', pr.name,
             'content', pr.content,
             'categoryId', pr.category_id,
             'groupId', pr.group_id,
             'solfeggioFrequencyId', c.id,
             'colorPalette', to_json(pal.colors)
           ))
           order by pr.created_at, pr.id), '[]')
  from public.proclamations as pr
  join public.frequencies as f on f.id = pr.frequency_id
  join cadence.canonical_frequencies() as c on c.hz = f.hz
  left join cadence.palettes() as pal on pal.canonical_frequency_id = c.id
$$;


--
-- Name: FUNCTION proclamations_json(); Type: COMMENT; Schema: cadence; Owner: -
--

COMMENT ON FUNCTION cadence.proclamations_json() IS 'GET /api/v2/proclamations: every served proclamation (its frequency has a canonical id), with its canonical frequency id.';


--
-- Name: purge_onboarding_keys(timestamp with time zone, integer); Type: FUNCTION; Schema: cadence; Owner: -
--

CREATE FUNCTION cadence.purge_onboarding_keys(p_now timestamp with time zone, p_limit integer) RETURNS integer
    LANGUAGE sql
    SET search_path TO ''
    AS $$
  -- Rows another caller holds are skipped: a purge never waits on a request.
  with purged as (
    delete from public.onboarding_idempotency_keys as k
    where (k.source, k.id) in (select e.source, e.id from public.onboarding_idempotency_keys as e
                               where e.expires_at <= p_now
                               limit p_limit
                               for update skip locked)
    returning 1
  )
  select count(*)::integer from purged
$$;


--
-- Name: FUNCTION purge_onboarding_keys(p_now timestamp with time zone, p_limit integer); Type: COMMENT; Schema: cadence; Owner: -
--

COMMENT ON FUNCTION cadence.purge_onboarding_keys(p_now timestamp with time zone, p_limit integer) IS 'Deletes up to p_limit onboarding ids past their 24 hours; returns how many.';


--
-- Name: queue_kiosk_alert_email(uuid[], uuid[], text, text, text, text, timestamp with time zone); Type: FUNCTION; Schema: cadence; Owner: -
--

CREATE FUNCTION cadence.queue_kiosk_alert_email(p_dark uuid[], p_back uuid[], p_recipient text, p_subject text, p_text text, p_html text, p_now timestamp with time zone) RETURNS uuid
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $$
declare
  v_id uuid;
begin
  -- All or nothing, under the rows' locks: a worker that rendered the same changes a moment later
  -- finds them announced and queues nothing, so the account gets one e-mail.
  perform from public.kiosk_outages as o where o.id = any (p_dark || p_back) order by o.id for update;
  if (select count(*) from public.kiosk_outages as o where o.id = any (p_dark) and o.alert_email_id is null) <> cardinality(p_dark)
     or (select count(*) from public.kiosk_outages as o
          where o.id = any (p_back) and o.back_at is not null and o.recovery_email_id is null and not o.recovery_silent) <> cardinality(p_back) then
    return null;
  end if;
  v_id := cadence.enqueue_email(p_recipient, p_subject, p_text, p_html, p_now);
  update public.kiosk_outages as o set alert_email_id = v_id where o.id = any (p_dark);
  update public.kiosk_outages as o set recovery_email_id = v_id where o.id = any (p_back);
  return v_id;
end
$$;


--
-- Name: FUNCTION queue_kiosk_alert_email(p_dark uuid[], p_back uuid[], p_recipient text, p_subject text, p_text text, p_html text, p_now timestamp with time zone); Type: COMMENT; Schema: cadence; Owner: -
--

COMMENT ON FUNCTION cadence.queue_kiosk_alert_email(p_dark uuid[], p_back uuid[], p_recipient text, p_subject text, p_text text, p_html text, p_now timestamp with time zone) IS 'Queues one e-mail announcing the given outages (p_dark) and recoveries (p_back) and records it on them, in one transaction; queues nothing and returns null when any was announced meanwhile.';


--
-- Name: queue_seat_digest(timestamp with time zone, text, text, text, timestamp with time zone); Type: FUNCTION; Schema: cadence; Owner: -
--

CREATE FUNCTION cadence.queue_seat_digest(p_since timestamp with time zone, p_subject text, p_text text, p_html text, p_now timestamp with time zone) RETURNS uuid
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $$
declare
  v_watch public.seat_watch;
  v_id uuid;
begin
  -- Under the settings row's lock: a worker that rendered the same digest a moment later finds it
  -- queued (last_digest_at moved) and queues nothing.
  select * into v_watch from public.seat_watch as w for update;
  if v_watch.digest_to is null or v_watch.last_digest_at is distinct from p_since then
    return null;
  end if;
  v_id := cadence.enqueue_email(v_watch.digest_to, p_subject, p_text, p_html, p_now);
  update public.seat_watch as w set last_digest_at = p_now;
  return v_id;
end
$$;


--
-- Name: FUNCTION queue_seat_digest(p_since timestamp with time zone, p_subject text, p_text text, p_html text, p_now timestamp with time zone); Type: COMMENT; Schema: cadence; Owner: -
--

COMMENT ON FUNCTION cadence.queue_seat_digest(p_since timestamp with time zone, p_subject text, p_text text, p_html text, p_now timestamp with time zone) IS 'Queues the digest to seat_watch.digest_to and records it, unless another worker did since p_since (the previous digest''s time); returns the e-mail''s id, or null.';


--
-- Name: record_kiosk_polls(text[], timestamp with time zone[], inet[], text[], text[], text[], integer[], interval, integer[], integer[], timestamp with time zone[], timestamp with time zone[], boolean[]); Type: FUNCTION; Schema: cadence; Owner: -
--

CREATE FUNCTION cadence.record_kiosk_polls(p_keys text[], p_seen_at timestamp with time zone[], p_ips inet[], p_versions text[], p_first_names text[] DEFAULT '{}'::text[], p_last_names text[] DEFAULT '{}'::text[], p_name_changes integer[] DEFAULT '{}'::integer[], p_poll_gap interval DEFAULT '00:00:05'::interval, p_burst_from integer[] DEFAULT '{}'::integer[], p_burst_count integer[] DEFAULT '{}'::integer[], p_burst_firsts timestamp with time zone[] DEFAULT '{}'::timestamp with time zone[], p_burst_lasts timestamp with time zone[] DEFAULT '{}'::timestamp with time zone[], p_burst_starts boolean[] DEFAULT '{}'::boolean[]) RETURNS void
    LANGUAGE sql
    SET search_path TO ''
    SET jit TO 'off'
    AS $$
  -- Several instances write concurrently, each what it saw: the latest sighting wins, and a sighting
  -- that names no version (a validation) keeps the version a schedule read recorded. Rows are taken
  -- in key order, so two instances' statements cannot deadlock. A new row holds this write's bursts
  -- unsettled. An existing one adds them to its own, an expression; once six or more are held, the
  -- write settles them instead (cadence.settle_polls): every fourth write of a key polled once
  -- between writes, so the function's cost (a few microseconds) is paid a quarter of the time.
  insert into public.kiosk_sightings as s (
    license_key, last_seen_at, last_seen_ip, schedule_version_held,
    system_name_written, system_name_changes, system_name_changes_since, polls)
  select u.key, u.seen_at, u.ip, u.version, u.last_name,
         -- A change is a written name other than the one before it: within this write (counted in
         -- memory), and this write's first name against the stored one.
         coalesce(u.name_changes, 0) + case when u.first_name <> old.system_name_written then 1 else 0 end,
         case when u.last_name is not null then u.seen_at end,
         row(null, 0, 0, 0, 0, null, null, p_burst_firsts[u.burst_from : u.burst_from + u.bursts - 1],
             p_burst_lasts[u.burst_from : u.burst_from + u.bursts - 1], p_burst_starts[u.burst_from : u.burst_from + u.bursts - 1])::public.kiosk_polls
  from unnest(p_keys, p_seen_at, p_ips, p_versions, p_first_names, p_last_names, p_name_changes, p_burst_from, p_burst_count)
       as u(key, seen_at, ip, version, first_name, last_name, name_changes, burst_from, bursts)
  left join public.kiosk_sightings as old on old.license_key = u.key
  where exists (select from public.license_keys as k where k.key = u.key)
  order by u.key
  on conflict (license_key) do update set
    last_seen_at = greatest(s.last_seen_at, excluded.last_seen_at),
    last_seen_ip = case when excluded.last_seen_at >= s.last_seen_at then excluded.last_seen_ip else s.last_seen_ip end,
    schedule_version_held = case when excluded.last_seen_at >= s.last_seen_at
                                 then coalesce(excluded.schedule_version_held, s.schedule_version_held)
                                 else coalesce(s.schedule_version_held, excluded.schedule_version_held) end,
    system_name_written = coalesce(excluded.system_name_written, s.system_name_written),
    system_name_changes_since = case when excluded.system_name_written is null then s.system_name_changes_since
                                     when s.system_name_changes_since is null or s.system_name_changes_since < excluded.last_seen_at - interval '1 day'
                                     then excluded.last_seen_at else s.system_name_changes_since end,
    system_name_changes = case when excluded.system_name_written is null then s.system_name_changes
                               else (case when s.system_name_changes_since is null or s.system_name_changes_since < excluded.last_seen_at - interval '1 day'
                                          then 0 else s.system_name_changes end)
                                    + excluded.system_name_changes end,
    polls = case when coalesce(cardinality((s.polls).firsts), 0) + coalesce(cardinality((excluded.polls).firsts), 0) >= 6
                 then cadence.settle_polls(s.polls, (excluded.polls).firsts, (excluded.polls).lasts, (excluded.polls).starts, p_poll_gap, excluded.last_seen_at)
                 else row((s.polls).hour_started_at, (s.polls).polls_this_hour, (s.polls).polls_last_hour, (s.polls).uneven_this_hour,
                          (s.polls).uneven_last_hour, (s.polls).settled_until, (s.polls).recent, (s.polls).firsts || (excluded.polls).firsts,
                          (s.polls).lasts || (excluded.polls).lasts, (s.polls).starts || (excluded.polls).starts)::public.kiosk_polls end
$$;


--
-- Name: FUNCTION record_kiosk_polls(p_keys text[], p_seen_at timestamp with time zone[], p_ips inet[], p_versions text[], p_first_names text[], p_last_names text[], p_name_changes integer[], p_poll_gap interval, p_burst_from integer[], p_burst_count integer[], p_burst_firsts timestamp with time zone[], p_burst_lasts timestamp with time zone[], p_burst_starts boolean[]); Type: COMMENT; Schema: cadence; Owner: -
--

COMMENT ON FUNCTION cadence.record_kiosk_polls(p_keys text[], p_seen_at timestamp with time zone[], p_ips inet[], p_versions text[], p_first_names text[], p_last_names text[], p_name_changes integer[], p_poll_gap interval, p_burst_from integer[], p_burst_count integer[], p_burst_firsts timestamp with time zone[], p_burst_lasts timestamp with time zone[], p_burst_starts boolean[]) IS 'Records sightings of license keys (one per key in the first arrays: the latest wins; a sighting without a version keeps the held one) and the seat-check evidence of the same write: system names per key, and each key''s bursts of calls (first and last call, whether it holds a kiosk start) formed with p_poll_gap, settled into its polls (public.kiosk_polls) every few writes.';


--
-- Name: record_kiosk_sightings(text[], timestamp with time zone[], inet[], text[], integer[], text[], text[], integer[], text[], cidr[], timestamp with time zone[], timestamp with time zone[], integer[], integer[]); Type: FUNCTION; Schema: cadence; Owner: -
--

CREATE FUNCTION cadence.record_kiosk_sightings(p_keys text[], p_seen_at timestamp with time zone[], p_ips inet[], p_versions text[], p_calls integer[] DEFAULT '{}'::integer[], p_first_names text[] DEFAULT '{}'::text[], p_last_names text[] DEFAULT '{}'::text[], p_name_changes integer[] DEFAULT '{}'::integer[], p_net_keys text[] DEFAULT '{}'::text[], p_networks cidr[] DEFAULT '{}'::cidr[], p_net_first timestamp with time zone[] DEFAULT '{}'::timestamp with time zone[], p_net_last timestamp with time zone[] DEFAULT '{}'::timestamp with time zone[], p_net_calls integer[] DEFAULT '{}'::integer[], p_net_returns integer[] DEFAULT '{}'::integer[]) RETURNS void
    LANGUAGE sql
    SET search_path TO ''
    AS $$
  select cadence.record_kiosk_polls(p_keys, p_seen_at, p_ips, p_versions, p_first_names, p_last_names, p_name_changes)
$$;


--
-- Name: FUNCTION record_kiosk_sightings(p_keys text[], p_seen_at timestamp with time zone[], p_ips inet[], p_versions text[], p_calls integer[], p_first_names text[], p_last_names text[], p_name_changes integer[], p_net_keys text[], p_networks cidr[], p_net_first timestamp with time zone[], p_net_last timestamp with time zone[], p_net_calls integer[], p_net_returns integer[]); Type: COMMENT; Schema: cadence; Owner: -
--

COMMENT ON FUNCTION cadence.record_kiosk_sightings(p_keys text[], p_seen_at timestamp with time zone[], p_ips inet[], p_versions text[], p_calls integer[], p_first_names text[], p_last_names text[], p_name_changes integer[], p_net_keys text[], p_networks cidr[], p_net_first timestamp with time zone[], p_net_last timestamp with time zone[], p_net_calls integer[], p_net_returns integer[]) IS 'For API instances deployed before 20261127000400: records their sightings and system names through cadence.record_kiosk_polls, without bursts.';


--
-- Name: record_venue_address_change(); Type: FUNCTION; Schema: cadence; Owner: -
--

CREATE FUNCTION cadence.record_venue_address_change() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
declare
  v_row public.venue_addresses := case when tg_op = 'DELETE' then old else new end;
begin
  insert into public.venue_address_changes (venue_address_id, account_id, change, network, kiosks, changed_by)
  values (v_row.id, v_row.account_id, pg_catalog.lower(tg_op), v_row.network, v_row.kiosks, cadence.change_author());
  return null;
end
$$;


--
-- Name: FUNCTION record_venue_address_change(); Type: COMMENT; Schema: cadence; Owner: -
--

COMMENT ON FUNCTION cadence.record_venue_address_change() IS 'Trigger: records each change of public.venue_addresses in public.venue_address_changes.';


--
-- Name: record_webhook_nonce(text, timestamp with time zone); Type: FUNCTION; Schema: cadence; Owner: -
--

CREATE FUNCTION cadence.record_webhook_nonce(p_nonce text, p_now timestamp with time zone) RETURNS boolean
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $$
begin
  -- A request is accepted only while its timestamp is within 300 s of the clock either way, so a
  -- nonce seen at p_now can come back until p_now + 600 s; only then is forgetting it safe.
  -- Purging skips rows another caller is purging: no waits, no deadlocks.
  delete from public.webhook_nonces
  where nonce in (select n.nonce from public.webhook_nonces as n
                  where n.expires_at < p_now
                  limit 100
                  for update skip locked);

  insert into public.webhook_nonces (nonce, expires_at)
  values (p_nonce, p_now + interval '600 seconds')
  on conflict (nonce) do nothing;
  return found;
end
$$;


--
-- Name: FUNCTION record_webhook_nonce(p_nonce text, p_now timestamp with time zone); Type: COMMENT; Schema: cadence; Owner: -
--

COMMENT ON FUNCTION cadence.record_webhook_nonce(p_nonce text, p_now timestamp with time zone) IS 'Records a webhook nonce; true when it was new, false for a replay. Purges expired nonces on the way.';


--
-- Name: refresh_after_block_proclamations_change(); Type: FUNCTION; Schema: cadence; Owner: -
--

CREATE FUNCTION cadence.refresh_after_block_proclamations_change() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
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


--
-- Name: FUNCTION refresh_after_block_proclamations_change(); Type: COMMENT; Schema: cadence; Owner: -
--

COMMENT ON FUNCTION cadence.refresh_after_block_proclamations_change() IS 'Trigger: refreshes the payload of the schedule of each block whose proclamations changed.';


--
-- Name: refresh_after_blocks_change(); Type: FUNCTION; Schema: cadence; Owner: -
--

CREATE FUNCTION cadence.refresh_after_blocks_change() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
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


--
-- Name: FUNCTION refresh_after_blocks_change(); Type: COMMENT; Schema: cadence; Owner: -
--

COMMENT ON FUNCTION cadence.refresh_after_blocks_change() IS 'Trigger: refreshes the payload of the schedule of each changed block, before and after the change.';


--
-- Name: refresh_after_schedules_change(); Type: FUNCTION; Schema: cadence; Owner: -
--

CREATE FUNCTION cadence.refresh_after_schedules_change() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
begin
  -- A deleted schedule's payload goes with it (on delete cascade). An owner change stores nothing
  -- new but is cheap to refresh; a type change alters the payload.
  perform cadence.refresh_schedule_payloads(array(select n.id from new_rows as n));
  return null;
end
$$;


--
-- Name: FUNCTION refresh_after_schedules_change(); Type: COMMENT; Schema: cadence; Owner: -
--

COMMENT ON FUNCTION cadence.refresh_after_schedules_change() IS 'Trigger: stores the payload of each created or changed schedule.';


--
-- Name: refresh_all_schedule_payloads(); Type: FUNCTION; Schema: cadence; Owner: -
--

CREATE FUNCTION cadence.refresh_all_schedule_payloads() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
begin
  perform cadence.refresh_schedule_payloads(array(select s.id from public.schedules as s));
  return null;
end
$$;


--
-- Name: FUNCTION refresh_all_schedule_payloads(); Type: COMMENT; Schema: cadence; Owner: -
--

COMMENT ON FUNCTION cadence.refresh_all_schedule_payloads() IS 'Trigger (after truncate): refreshes every schedule''s payload.';


--
-- Name: refresh_key_accounts(); Type: FUNCTION; Schema: cadence; Owner: -
--

CREATE FUNCTION cadence.refresh_key_accounts() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $$
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


--
-- Name: FUNCTION refresh_key_accounts(); Type: COMMENT; Schema: cadence; Owner: -
--

COMMENT ON FUNCTION cadence.refresh_key_accounts() IS 'Trigger on public.accounts: after an account is created or deleted, or its e-mail changes, the unlinked keys of its old and new e-mail find their account again (through license_keys_unlinked_by_email_idx).';


--
-- Name: refresh_schedule_payloads(uuid[]); Type: FUNCTION; Schema: cadence; Owner: -
--

CREATE FUNCTION cadence.refresh_schedule_payloads(p_schedule_ids uuid[]) RETURNS void
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $$
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


--
-- Name: FUNCTION refresh_schedule_payloads(p_schedule_ids uuid[]); Type: COMMENT; Schema: cadence; Owner: -
--

COMMENT ON FUNCTION cadence.refresh_schedule_payloads(p_schedule_ids uuid[]) IS 'Stores the current payload (cadence.schedule_content) of each given schedule. Triggers call it; staff may, to rebuild.';


--
-- Name: release_onboarding_key(text, text, uuid); Type: FUNCTION; Schema: cadence; Owner: -
--

CREATE FUNCTION cadence.release_onboarding_key(p_source text, p_id text, p_claim_token uuid) RETURNS void
    LANGUAGE sql
    SET search_path TO ''
    AS $$
  delete from public.onboarding_idempotency_keys as k
  where k.source = p_source and k.id = p_id and k.claim_token = p_claim_token
$$;


--
-- Name: FUNCTION release_onboarding_key(p_source text, p_id text, p_claim_token uuid); Type: COMMENT; Schema: cadence; Owner: -
--

COMMENT ON FUNCTION cadence.release_onboarding_key(p_source text, p_id text, p_claim_token uuid) IS 'Gives up a claim that carried nothing out (refused or failed), so a retry may run at once; a completed id is never released.';


--
-- Name: schedule_content(uuid); Type: FUNCTION; Schema: cadence; Owner: -
--

CREATE FUNCTION cadence.schedule_content(p_schedule_id uuid) RETURNS json
    LANGUAGE plpgsql STABLE
    SET search_path TO ''
    AS $$
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


--
-- Name: FUNCTION schedule_content(p_schedule_id uuid); Type: COMMENT; Schema: cadence; Owner: -
--

COMMENT ON FUNCTION cadence.schedule_content(p_schedule_id uuid) IS 'A schedule''s payload as {type, daily, weekly, blocks}, assembled from its blocks; the unscheduled payload for null; null for an unknown schedule.';


--
-- Name: schedule_payload(text); Type: FUNCTION; Schema: cadence; Owner: -
--

CREATE FUNCTION cadence.schedule_payload(p_key text) RETURNS json
    LANGUAGE plpgsql STABLE
    SET search_path TO ''
    AS $$
begin
  return (select cadence.schedule_content(s.schedule_id) from cadence.served_schedules(array[p_key]) as s);
end
$$;


--
-- Name: FUNCTION schedule_payload(p_key text); Type: COMMENT; Schema: cadence; Owner: -
--

COMMENT ON FUNCTION cadence.schedule_payload(p_key text) IS 'The schedule a license key reads, assembled now from the tables (what public.schedule_payloads must hold): its own schedule, else its account''s, else type null. Null for an unknown key.';


--
-- Name: schedule_version(json); Type: FUNCTION; Schema: cadence; Owner: -
--

CREATE FUNCTION cadence.schedule_version(p_payload json) RETURNS text
    LANGUAGE sql IMMUTABLE
    SET search_path TO ''
    AS $$
  select pg_catalog.encode(pg_catalog.sha256(pg_catalog.convert_to(cadence.canonical_json(pg_catalog.jsonb_build_object(
           'type', p_payload::jsonb -> 'type',
           'daily', p_payload::jsonb -> 'daily',
           'weekly', p_payload::jsonb -> 'weekly')), 'UTF8')), 'hex')
$$;


--
-- Name: FUNCTION schedule_version(p_payload json); Type: COMMENT; Schema: cadence; Owner: -
--

COMMENT ON FUNCTION cadence.schedule_version(p_payload json) IS 'The schedule version of a payload: hex SHA-256 of the canonical JSON of type, daily and weekly. Computed here, once, when a payload is stored (public.schedule_payloads.version); the API serves it as the ETag as it is.';


--
-- Name: seat_check_pass(timestamp with time zone); Type: FUNCTION; Schema: cadence; Owner: -
--

CREATE FUNCTION cadence.seat_check_pass(p_now timestamp with time zone) RETURNS integer
    LANGUAGE sql
    SET search_path TO ''
    SET jit TO 'off'
    AS $$
  -- Both rules in one scan of the sightings, the few keys over a threshold first; counts of a key
  -- not seen for two hours are stale and flag nothing.
  with found as (
    select s.license_key, r.rule
      from (select s.license_key, s.last_seen_at, s.system_name_changes, s.system_name_changes_since,
                   (s.polls).uneven_this_hour + (s.polls).uneven_last_hour as uneven, (s.polls).polls_this_hour + (s.polls).polls_last_hour as polls,
                   w.uneven_polls_to_flag, w.uneven_polls_share, w.name_changes_to_flag
              from public.kiosk_sightings as s cross join public.seat_watch as w
             where (s.polls).uneven_this_hour + (s.polls).uneven_last_hour >= w.uneven_polls_to_flag
                or s.system_name_changes >= w.name_changes_to_flag
            offset 0) as s
     cross join lateral unnest(array[
       case when s.uneven >= s.uneven_polls_to_flag and s.uneven >= s.uneven_polls_share * s.polls
             and s.last_seen_at > p_now - interval '2 hours' then 'uneven_polls' end,
       case when s.system_name_changes >= s.name_changes_to_flag and s.system_name_changes_since > p_now - interval '1 day' then 'system_name_flips' end
     ]) as r(rule)
     where r.rule is not null
  ),
  flagged as (
    insert into public.seat_suspicions as q (license_key, rules, first_flagged_at, last_flagged_at)
    select f.license_key, array_agg(distinct f.rule order by f.rule), p_now, p_now
      from found as f
     where exists (select from public.license_keys as k where k.key = f.license_key)
     group by f.license_key
     order by f.license_key
    on conflict (license_key) do update set
      rules = array(select distinct r from unnest(q.rules || excluded.rules) as r order by r),
      last_flagged_at = greatest(q.last_flagged_at, excluded.last_flagged_at),
      flags = q.flags + 1
    returning 1
  )
  select count(*)::integer from flagged
$$;


--
-- Name: FUNCTION seat_check_pass(p_now timestamp with time zone); Type: COMMENT; Schema: cadence; Owner: -
--

COMMENT ON FUNCTION cadence.seat_check_pass(p_now timestamp with time zone) IS 'The seat-check pass at p_now: records (public.seat_suspicions) every key a rule flags now (uneven_polls, system_name_flips); returns how many. The rules are in 20261127000400_seat_checks_uneven_polls.sql and 20261126000600_seat_checks.sql.';


--
-- Name: seat_digest(timestamp with time zone); Type: FUNCTION; Schema: cadence; Owner: -
--

CREATE FUNCTION cadence.seat_digest(p_now timestamp with time zone) RETURNS TABLE(recipient text, since timestamp with time zone, suspects jsonb)
    LANGUAGE plpgsql STABLE
    SET search_path TO ''
    AS $$
declare
  v_watch public.seat_watch;
begin
  -- Due once a day when staff set digest_to, and only when some key was flagged since the last one.
  -- The settings first, alone: the minute's usual answer (not due) costs one row's read.
  select * into v_watch from public.seat_watch as w;
  if v_watch.digest_to is null or v_watch.last_digest_at > p_now - interval '1 day' then
    return;
  end if;
  return query
  select v_watch.digest_to, v_watch.last_digest_at,
         pg_catalog.jsonb_agg(pg_catalog.jsonb_build_object(
           'licenseKey', q.license_key, 'systemName', k.system_name, 'rules', q.rules,
           'firstFlaggedAt', q.first_flagged_at, 'lastFlaggedAt', q.last_flagged_at,
           'unevenPolls', coalesce((s.polls).uneven_this_hour + (s.polls).uneven_last_hour, 0)
         ) order by q.license_key)
    from public.seat_suspicions as q
    join public.license_keys as k on k.key = q.license_key
    left join public.kiosk_sightings as s on s.license_key = q.license_key
   where q.last_flagged_at > coalesce(v_watch.last_digest_at, '-infinity')
  having count(*) > 0;
end
$$;


--
-- Name: FUNCTION seat_digest(p_now timestamp with time zone); Type: COMMENT; Schema: cadence; Owner: -
--

COMMENT ON FUNCTION cadence.seat_digest(p_now timestamp with time zone) IS 'The daily digest due at p_now: its recipient, the previous digest''s time and the keys flagged since; no row when digest_to is empty, a digest went out within a day, or nothing was flagged since.';


--
-- Name: served_schedules(text[]); Type: FUNCTION; Schema: cadence; Owner: -
--

CREATE FUNCTION cadence.served_schedules(p_keys text[]) RETURNS TABLE(n bigint, schedule_id uuid, version text, payload json)
    LANGUAGE plpgsql STABLE
    SET search_path TO ''
    SET plan_cache_mode TO 'force_generic_plan'
    AS $$
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


--
-- Name: FUNCTION served_schedules(p_keys text[]); Type: COMMENT; Schema: cadence; Owner: -
--

COMMENT ON FUNCTION cadence.served_schedules(p_keys text[]) IS 'For each known key (position n, 1-based): the schedule it reads (its own, else its account''s, license_keys.belongs_to, else none) with that schedule''s stored version and payload; the unscheduled payload for none. No row for an unknown key.';


--
-- Name: set_system_name(text, text); Type: FUNCTION; Schema: cadence; Owner: -
--

CREATE FUNCTION cadence.set_system_name(p_key text, p_name text) RETURNS text
    LANGUAGE sql
    SET search_path TO ''
    AS $$
  select s.outcome from cadence.set_system_names(array[p_key], array[p_name]) as s
$$;


--
-- Name: FUNCTION set_system_name(p_key text, p_name text); Type: COMMENT; Schema: cadence; Owner: -
--

COMMENT ON FUNCTION cadence.set_system_name(p_key text, p_name text) IS 'Sets a key''s system name (already in cadence.system_name_form): ok, unchanged, taken (another key of the account has it, as stored or in its form, regardless of case) or unknown_license.';


--
-- Name: set_system_names(text[], text[]); Type: FUNCTION; Schema: cadence; Owner: -
--

CREATE FUNCTION cadence.set_system_names(p_keys text[], p_names text[]) RETURNS TABLE(n bigint, outcome text)
    LANGUAGE plpgsql
    SET search_path TO ''
    SET plan_cache_mode TO 'force_generic_plan'
    AS $$
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


--
-- Name: FUNCTION set_system_names(p_keys text[], p_names text[]); Type: COMMENT; Schema: cadence; Owner: -
--

COMMENT ON FUNCTION cadence.set_system_names(p_keys text[], p_names text[]) IS 'Sets each key''s system name (already in cadence.system_name_form) to the name at the same position, one row per position n (1-based): ok, unchanged, taken (another key of the account has it, as stored or in its form, regardless of case, or asked for it earlier in the batch) or unknown_license.';


--
-- Name: settle_polls(public.kiosk_polls, timestamp with time zone[], timestamp with time zone[], boolean[], interval, timestamp with time zone); Type: FUNCTION; Schema: cadence; Owner: -
--

CREATE FUNCTION cadence.settle_polls(p_polls public.kiosk_polls, p_firsts timestamp with time zone[], p_lasts timestamp with time zone[], p_starts boolean[], p_gap interval, p_at timestamp with time zone) RETURNS public.kiosk_polls
    LANGUAGE plpgsql IMMUTABLE
    SET search_path TO ''
    AS $$
declare
  v_firsts timestamptz[] := coalesce(p_polls.firsts, '{}') || coalesce(p_firsts, '{}');
  v_lasts timestamptz[] := coalesce(p_polls.lasts, '{}') || coalesce(p_lasts, '{}');
  v_starts boolean[] := coalesce(p_polls.starts, '{}') || coalesce(p_starts, '{}');
  v_order integer[] := '{}';
  v_first timestamptz[] := '{}';
  v_last timestamptz[] := '{}';
  v_start boolean[] := '{}';
  v_polls timestamptz[] := coalesce(p_polls.recent, '{}');
  v_settled_until timestamptz := p_polls.settled_until;
  v_settled integer := 0;
  v_uneven integer := 0;
  v_hours integer;
  v_n integer := 0;
  v_i integer;
  v_j integer;
  v_k integer := 1;
  v_g0 float8;
  v_g1 float8;
  v_g2 float8;
  v_g3 float8;
  v_g4 float8;
  v_ratio float8;
  v_is_uneven boolean;
begin
  -- The bursts in time order (an insertion sort: a dozen at most), merged where less than p_gap
  -- apart (a poll whose calls reached two instances, or straddled a write). A burst that began
  -- within p_gap of the last settled burst's last call, or before, was part of what settled (a
  -- piece written late by another instance, or held across an outage): left out, never counted
  -- as a poll of its own.
  for v_i in 1 .. coalesce(cardinality(v_firsts), 0) loop
    continue when v_firsts[v_i] <= v_settled_until + p_gap;
    v_j := coalesce(cardinality(v_order), 0);
    v_order := v_order || v_i;
    while v_j > 0 and v_firsts[v_order[v_j]] > v_firsts[v_i] loop
      v_order[v_j + 1] := v_order[v_j];
      v_order[v_j] := v_i;
      v_j := v_j - 1;
    end loop;
  end loop;
  foreach v_i in array v_order loop
    if v_n > 0 and v_firsts[v_i] - v_last[v_n] <= p_gap then
      v_last[v_n] := greatest(v_last[v_n], v_lasts[v_i]);
      v_start[v_n] := v_start[v_n] or v_starts[v_i];
    else
      v_n := v_n + 1;
      v_first[v_n] := v_firsts[v_i];
      v_last[v_n] := v_lasts[v_i];
      v_start[v_n] := v_starts[v_i];
    end if;
  end loop;

  -- All but the last two settle: a burst settles once two newer ones began, so every part of it
  -- has been written (an instance holds a key's calls 35 s at most, two polls of a kiosk polling
  -- every 30 s). A settled poll joins recent; a settled start is dropped (the gap across it is the
  -- gap between the polls around it). Each settled poll judges the one before it.
  while v_n - v_k + 1 > 2 loop
    if not v_start[v_k] then
      v_polls := v_polls || v_first[v_k];
      v_settled := v_settled + 1;
      v_j := cardinality(v_polls);
      -- The last five gaps between settled polls, oldest first (null where there are fewer).
      v_g0 := pg_catalog.date_part('epoch', v_polls[v_j - 4] - v_polls[v_j - 5]);
      v_g1 := pg_catalog.date_part('epoch', v_polls[v_j - 3] - v_polls[v_j - 4]);
      v_g2 := pg_catalog.date_part('epoch', v_polls[v_j - 2] - v_polls[v_j - 3]);
      v_g3 := pg_catalog.date_part('epoch', v_polls[v_j - 1] - v_polls[v_j - 2]);
      v_g4 := pg_catalog.date_part('epoch', v_polls[v_j] - v_polls[v_j - 1]);
      -- Interleaved: the poll before this one came less than 0.3 of either neighbouring gap after
      -- its predecessor (g3 beside g2 and g4). One device's gaps are its interval (jitter of 10 %
      -- either way: 0.82 at least) or multiples where polls failed: with two lost in a row on each
      -- side, 0.27 to 0.41; below 0.3 mostly with three lost on each side (a share p^6 of its polls
      -- for a loss rate p). A crash loop's polls follow their starts by a whole interval. A second
      -- device's poll at a fraction f of the first's interval makes it f/(1-f): below 0.3 for f up to
      -- 0.23 either way, a band its jitter moves it through.
      v_is_uneven := v_j >= 4 and v_g3 < 0.3 * least(v_g2, v_g4);
      -- Alternating: the last five gaps alternate between two lengths (each within 2 % of the one
      -- two before), the shorter at most 0.85 of the longer: two devices whose timers never drift
      -- (setInterval), at a fraction of the interval the first test does not reach. One device with
      -- such timers has one length, or multiples where polls failed: ratios of 1/4, 1/3, 1/2, 2/3
      -- and 3/4 (within 0.02) are those, and not counted. A jittered device matches three times in a
      -- row by chance, a few of its polls a day at most (the corpus, test/bench/results.md).
      if not v_is_uneven and v_j >= 6 then
        v_ratio := least(v_g1, v_g2) / greatest(v_g1, v_g2);
        v_is_uneven := abs(v_g0 - v_g2) <= 0.02 * greatest(v_g0, v_g2)
                   and abs(v_g2 - v_g4) <= 0.02 * greatest(v_g2, v_g4)
                   and abs(v_g1 - v_g3) <= 0.02 * greatest(v_g1, v_g3)
                   and v_ratio <= 0.85
                   and abs(v_ratio - 0.25) > 0.02 and abs(v_ratio - 1.0 / 3) > 0.02 and abs(v_ratio - 0.5) > 0.02
                   and abs(v_ratio - 2.0 / 3) > 0.02 and abs(v_ratio - 0.75) > 0.02;
      end if;
      if v_is_uneven then
        v_uneven := v_uneven + 1;
      end if;
    end if;
    v_settled_until := v_last[v_k];
    v_k := v_k + 1;
  end loop;

  -- Hours since the counting hour began (p_at: the write's latest call): a new one begins at the
  -- first settling an hour after it, the hour before then holding the ended one's counts (none
  -- after two hours, or before any).
  v_hours := case when p_polls.hour_started_at is null or p_polls.hour_started_at + interval '2 hours' <= p_at then 2
                  when p_polls.hour_started_at + interval '1 hour' <= p_at then 1
                  else 0 end;
  v_j := cardinality(v_polls);
  return row(
    case when v_hours > 0 then p_at else p_polls.hour_started_at end,
    case when v_hours > 0 then 0 else p_polls.polls_this_hour end + v_settled,
    case v_hours when 0 then p_polls.polls_last_hour when 1 then p_polls.polls_this_hour else 0 end,
    case when v_hours > 0 then 0 else p_polls.uneven_this_hour end + v_uneven,
    case v_hours when 0 then p_polls.uneven_last_hour when 1 then p_polls.uneven_this_hour else 0 end,
    v_settled_until, v_polls[greatest(1, v_j - 5):], v_first[v_k:v_n], v_last[v_k:v_n], v_start[v_k:v_n]
  )::public.kiosk_polls;
end
$$;


--
-- Name: FUNCTION settle_polls(p_polls public.kiosk_polls, p_firsts timestamp with time zone[], p_lasts timestamp with time zone[], p_starts boolean[], p_gap interval, p_at timestamp with time zone); Type: COMMENT; Schema: cadence; Owner: -
--

COMMENT ON FUNCTION cadence.settle_polls(p_polls public.kiosk_polls, p_firsts timestamp with time zone[], p_lasts timestamp with time zone[], p_starts boolean[], p_gap interval, p_at timestamp with time zone) IS 'A key''s polls after a write at p_at: its unsettled bursts and this write''s (p_firsts, p_lasts, p_starts) merged where less than p_gap apart, all but the last two settled into recent polls (the last six kept), each settled poll judged uneven or not (uneven_polls), and the hour''s counts rolled.';


--
-- Name: system_name_form(text); Type: FUNCTION; Schema: cadence; Owner: -
--

CREATE FUNCTION cadence.system_name_form(p_name text) RETURNS text
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
    SET search_path TO ''
    AS $$
  select pg_catalog.btrim(
    pg_catalog.normalize(
      pg_catalog.regexp_replace(
        p_name,
        '[\u00ad\u034f\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891\u08e2\u115f\u1160\u17b4\u17b5'
        '\u180b-\u180f\u200b-\u200f\u202a-\u202e\u2060-\u206f\u2800\u3164\ufe00-\ufe0f\ufeff\uffa0'
        '\ufff0-\ufffb\U000110bd\U000110cd\U00013430-\U0001343f\U0001bca0-\U0001bca3\U0001d159'
        '\U0001d173-\U0001d17a\U000e0000-\U000e0fff]',
        '', 'g'),
      'NFC'),
    -- What JavaScript's String.prototype.trim removes (U+FEFF, also whitespace there, is removed above).
    U&'\0009\000A\000B\000C\000D\0020\00A0\1680\2000\2001\2002\2003\2004\2005\2006\2007\2008\2009\200A\2028\2029\202F\205F\3000')
$$;


--
-- Name: FUNCTION system_name_form(p_name text); Type: COMMENT; Schema: cadence; Owner: -
--

COMMENT ON FUNCTION cadence.system_name_form(p_name text) IS 'The form a system name is stored and compared in: characters that render as nothing removed (Unicode Cf and Default_Ignorable_Code_Point, U+2800, U+1D159), NFC, trimmed. Empty means no name.';


--
-- Name: system_name_shows(text); Type: FUNCTION; Schema: cadence; Owner: -
--

CREATE FUNCTION cadence.system_name_shows(p_name text) RETURNS boolean
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
    SET search_path TO ''
    AS $$
  select p_name !~
      '[\u0001-\u001f\u007f-\u009f\u0378\u0379\u0380-\u0383\u038b\u038d\u03a2\u0530\u0557\u0558'
      '\u058b\u058c\u0590\u05c8-\u05cf\u05eb-\u05ee\u05f5-\u05ff\u070e\u074b\u074c\u07b2-\u07bf'
      '\u07fb\u07fc\u082e\u082f\u083f\u085c\u085d\u085f\u086b-\u086f\u0892-\u0896\u0984\u098d\u098e'
      '\u0991\u0992\u09a9\u09b1\u09b3-\u09b5\u09ba\u09bb\u09c5\u09c6\u09c9\u09ca\u09cf-\u09d6'
      '\u09d8-\u09db\u09de\u09e4\u09e5\u09ff\u0a00\u0a04\u0a0b-\u0a0e\u0a11\u0a12\u0a29\u0a31\u0a34'
      '\u0a37\u0a3a\u0a3b\u0a3d\u0a43-\u0a46\u0a49\u0a4a\u0a4e-\u0a50\u0a52-\u0a58\u0a5d'
      '\u0a5f-\u0a65\u0a77-\u0a80\u0a84\u0a8e\u0a92\u0aa9\u0ab1\u0ab4\u0aba\u0abb\u0ac6\u0aca'
      '\u0ace\u0acf\u0ad1-\u0adf\u0ae4\u0ae5\u0af2-\u0af8\u0b00\u0b04\u0b0d\u0b0e\u0b11\u0b12\u0b29'
      '\u0b31\u0b34\u0b3a\u0b3b\u0b45\u0b46\u0b49\u0b4a\u0b4e-\u0b54\u0b58-\u0b5b\u0b5e\u0b64\u0b65'
      '\u0b78-\u0b81\u0b84\u0b8b-\u0b8d\u0b91\u0b96-\u0b98\u0b9b\u0b9d\u0ba0-\u0ba2\u0ba5-\u0ba7'
      '\u0bab-\u0bad\u0bba-\u0bbd\u0bc3-\u0bc5\u0bc9\u0bce\u0bcf\u0bd1-\u0bd6\u0bd8-\u0be5'
      '\u0bfb-\u0bff\u0c0d\u0c11\u0c29\u0c3a\u0c3b\u0c45\u0c49\u0c4e-\u0c54\u0c57\u0c5b\u0c5e\u0c5f'
      '\u0c64\u0c65\u0c70-\u0c76\u0c8d\u0c91\u0ca9\u0cb4\u0cba\u0cbb\u0cc5\u0cc9\u0cce-\u0cd4'
      '\u0cd7-\u0cdb\u0cdf\u0ce4\u0ce5\u0cf0\u0cf4-\u0cff\u0d0d\u0d11\u0d45\u0d49\u0d50-\u0d53'
      '\u0d64\u0d65\u0d80\u0d84\u0d97-\u0d99\u0db2\u0dbc\u0dbe\u0dbf\u0dc7-\u0dc9\u0dcb-\u0dce'
      '\u0dd5\u0dd7\u0de0-\u0de5\u0df0\u0df1\u0df5-\u0e00\u0e3b-\u0e3e\u0e5c-\u0e80\u0e83\u0e85'
      '\u0e8b\u0ea4\u0ea6\u0ebe\u0ebf\u0ec5\u0ec7\u0ecf\u0eda\u0edb\u0ee0-\u0eff\u0f48\u0f6d-\u0f70'
      '\u0f98\u0fbd\u0fcd\u0fdb-\u0fff\u10c6\u10c8-\u10cc\u10ce\u10cf\u1249\u124e\u124f\u1257\u1259'
      '\u125e\u125f\u1289\u128e\u128f\u12b1\u12b6\u12b7\u12bf\u12c1\u12c6\u12c7\u12d7\u1311'
      '\u1316\u1317\u135b\u135c\u137d-\u137f\u139a-\u139f\u13f6\u13f7\u13fe\u13ff\u169d-\u169f'
      '\u16f9-\u16ff\u1716-\u171e\u1737-\u173f\u1754-\u175f\u176d\u1771\u1774-\u177f\u17de\u17df'
      '\u17ea-\u17ef\u17fa-\u17ff\u181a-\u181f\u1879-\u187f\u18ab-\u18af\u18f6-\u18ff\u191f'
      '\u192c-\u192f\u193c-\u193f\u1941-\u1943\u196e\u196f\u1975-\u197f\u19ac-\u19af\u19ca-\u19cf'
      '\u19db-\u19dd\u1a1c\u1a1d\u1a5f\u1a7d\u1a7e\u1a8a-\u1a8f\u1a9a-\u1a9f\u1aae\u1aaf'
      '\u1ade\u1adf\u1aec-\u1aff\u1b4d\u1bf4-\u1bfb\u1c38-\u1c3a\u1c4a-\u1c4c\u1c8b-\u1c8f'
      '\u1cbb\u1cbc\u1cc8-\u1ccf\u1cfb-\u1cff\u1f16\u1f17\u1f1e\u1f1f\u1f46\u1f47\u1f4e\u1f4f\u1f58'
      '\u1f5a\u1f5c\u1f5e\u1f7e\u1f7f\u1fb5\u1fc5\u1fd4\u1fd5\u1fdc\u1ff0\u1ff1\u1ff5\u1fff'
      '\u2028\u2029\u2065\u2072\u2073\u208f\u209d-\u209f\u20c2-\u20cf\u20f1-\u20ff\u218c-\u218f'
      '\u242a-\u243f\u244b-\u245f\u2b74\u2b75\u2cf4-\u2cf8\u2d26\u2d28-\u2d2c\u2d2e\u2d2f'
      '\u2d68-\u2d6e\u2d71-\u2d7e\u2d97-\u2d9f\u2da7\u2daf\u2db7\u2dbf\u2dc7\u2dcf\u2dd7\u2ddf'
      '\u2e5e-\u2e7f\u2e9a\u2ef4-\u2eff\u2fd6-\u2fef\u3040\u3097\u3098\u3100-\u3104\u3130\u318f'
      '\u31e6-\u31ee\u321f\ua48d-\ua48f\ua4c7-\ua4cf\ua62c-\ua63f\ua6f8-\ua6ff\ua7dd-\ua7f0'
      '\ua82d-\ua82f\ua83a-\ua83f\ua878-\ua87f\ua8c6-\ua8cd\ua8da-\ua8df\ua954-\ua95e\ua97d-\ua97f'
      '\ua9ce\ua9da-\ua9dd\ua9ff\uaa37-\uaa3f\uaa4e\uaa4f\uaa5a\uaa5b\uaac3-\uaada\uaaf7-\uab00'
      '\uab07\uab08\uab0f\uab10\uab17-\uab1f\uab27\uab2f\uab6c-\uab6f\uabee\uabef\uabfa-\uabff'
      '\ud7a4-\ud7af\ud7c7-\ud7ca\ud7fc-\ud7ff\ue000-\uf8ff\ufa6e\ufa6f\ufada-\ufaff\ufb07-\ufb12'
      '\ufb18-\ufb1c\ufb37\ufb3d\ufb3f\ufb42\ufb45\ufdd0-\ufdef\ufe1a-\ufe1f\ufe53\ufe67'
      '\ufe6c-\ufe6f\ufe75\ufefd\ufefe\uff00\uffbf-\uffc1\uffc8\uffc9\uffd0\uffd1\uffd8\uffd9'
      '\uffdd-\uffdf\uffe7\uffef-\ufff8\ufffd-\uffff\U0001000c\U00010027\U0001003b\U0001003e'
      '\U0001004e\U0001004f\U0001005e-\U0001007f\U000100fb-\U000100ff\U00010103-\U00010106'
      '\U00010134-\U00010136\U0001018f\U0001019d-\U0001019f\U000101a1-\U000101cf'
      '\U000101fe-\U0001027f\U0001029d-\U0001029f\U000102d1-\U000102df\U000102fc-\U000102ff'
      '\U00010324-\U0001032c\U0001034b-\U0001034f\U0001037b-\U0001037f\U0001039e'
      '\U000103c4-\U000103c7\U000103d6-\U000103ff\U0001049e\U0001049f\U000104aa-\U000104af'
      '\U000104d4-\U000104d7\U000104fc-\U000104ff\U00010528-\U0001052f\U00010564-\U0001056e'
      '\U0001057b\U0001058b\U00010593\U00010596\U000105a2\U000105b2\U000105ba\U000105bd-\U000105bf'
      '\U000105f4-\U000105ff\U00010737-\U0001073f\U00010756-\U0001075f\U00010768-\U0001077f'
      '\U00010786\U000107b1\U000107bb-\U000107ff\U00010806\U00010807\U00010809\U00010836'
      '\U00010839-\U0001083b\U0001083d\U0001083e\U00010856\U0001089f-\U000108a6'
      '\U000108b0-\U000108df\U000108f3\U000108f6-\U000108fa\U0001091c-\U0001091e'
      '\U0001093a-\U0001093e\U0001095a-\U0001097f\U000109b8-\U000109bb\U000109d0\U000109d1'
      '\U00010a04\U00010a07-\U00010a0b\U00010a14\U00010a18\U00010a36\U00010a37\U00010a3b-\U00010a3e'
      '\U00010a49-\U00010a4f\U00010a59-\U00010a5f\U00010aa0-\U00010abf\U00010ae7-\U00010aea'
      '\U00010af7-\U00010aff\U00010b36-\U00010b38\U00010b56\U00010b57\U00010b73-\U00010b77'
      '\U00010b92-\U00010b98\U00010b9d-\U00010ba8\U00010bb0-\U00010bff\U00010c49-\U00010c7f'
      '\U00010cb3-\U00010cbf\U00010cf3-\U00010cf9\U00010d28-\U00010d2f\U00010d3a-\U00010d3f'
      '\U00010d66-\U00010d68\U00010d86-\U00010d8d\U00010d90-\U00010e5f\U00010e7f\U00010eaa'
      '\U00010eae\U00010eaf\U00010eb2-\U00010ec1\U00010ec8-\U00010ecf\U00010ed9-\U00010ef9'
      '\U00010f28-\U00010f2f\U00010f5a-\U00010f6f\U00010f8a-\U00010faf\U00010fcc-\U00010fdf'
      '\U00010ff7-\U00010fff\U0001104e-\U00011051\U00011076-\U0001107e\U000110c3-\U000110cc'
      '\U000110ce\U000110cf\U000110e9-\U000110ef\U000110fa-\U000110ff\U00011135'
      '\U00011148-\U0001114f\U00011177-\U0001117f\U000111e0\U000111f5-\U000111ff\U00011212'
      '\U00011242-\U0001127f\U00011287\U00011289\U0001128e\U0001129e\U000112aa-\U000112af'
      '\U000112eb-\U000112ef\U000112fa-\U000112ff\U00011304\U0001130d\U0001130e\U00011311\U00011312'
      '\U00011329\U00011331\U00011334\U0001133a\U00011345\U00011346\U00011349\U0001134a'
      '\U0001134e\U0001134f\U00011351-\U00011356\U00011358-\U0001135c\U00011364\U00011365'
      '\U0001136d-\U0001136f\U00011375-\U0001137f\U0001138a\U0001138c\U0001138d\U0001138f\U000113b6'
      '\U000113c1\U000113c3\U000113c4\U000113c6\U000113cb\U000113d6\U000113d9-\U000113e0'
      '\U000113e3-\U000113ff\U0001145c\U00011462-\U0001147f\U000114c8-\U000114cf'
      '\U000114da-\U0001157f\U000115b6\U000115b7\U000115de-\U000115ff\U00011645-\U0001164f'
      '\U0001165a-\U0001165f\U0001166d-\U0001167f\U000116ba-\U000116bf\U000116ca-\U000116cf'
      '\U000116e4-\U000116ff\U0001171b\U0001171c\U0001172c-\U0001172f\U00011747-\U000117ff'
      '\U0001183c-\U0001189f\U000118f3-\U000118fe\U00011907\U00011908\U0001190a\U0001190b\U00011914'
      '\U00011917\U00011936\U00011939\U0001193a\U00011947-\U0001194f\U0001195a-\U0001199f'
      '\U000119a8\U000119a9\U000119d8\U000119d9\U000119e5-\U000119ff\U00011a48-\U00011a4f'
      '\U00011aa3-\U00011aaf\U00011af9-\U00011aff\U00011b0a-\U00011b5f\U00011b68-\U00011bbf'
      '\U00011be2-\U00011bef\U00011bfa-\U00011bff\U00011c09\U00011c37\U00011c46-\U00011c4f'
      '\U00011c6d-\U00011c6f\U00011c90\U00011c91\U00011ca8\U00011cb7-\U00011cff\U00011d07\U00011d0a'
      '\U00011d37-\U00011d39\U00011d3b\U00011d3e\U00011d48-\U00011d4f\U00011d5a-\U00011d5f'
      '\U00011d66\U00011d69\U00011d8f\U00011d92\U00011d99-\U00011d9f\U00011daa-\U00011daf'
      '\U00011ddc-\U00011ddf\U00011dea-\U00011edf\U00011ef9-\U00011eff\U00011f11'
      '\U00011f3b-\U00011f3d\U00011f5b-\U00011faf\U00011fb1-\U00011fbf\U00011ff2-\U00011ffe'
      '\U0001239a-\U000123ff\U0001246f\U00012475-\U0001247f\U00012544-\U00012f8f'
      '\U00012ff3-\U00012fff\U00013456-\U0001345f\U000143fb-\U000143ff\U00014647-\U000160ff'
      '\U0001613a-\U000167ff\U00016a39-\U00016a3f\U00016a5f\U00016a6a-\U00016a6d\U00016abf'
      '\U00016aca-\U00016acf\U00016aee\U00016aef\U00016af6-\U00016aff\U00016b46-\U00016b4f'
      '\U00016b5a\U00016b62\U00016b78-\U00016b7c\U00016b90-\U00016d3f\U00016d7a-\U00016e3f'
      '\U00016e9b-\U00016e9f\U00016eb9\U00016eba\U00016ed4-\U00016eff\U00016f4b-\U00016f4e'
      '\U00016f88-\U00016f8e\U00016fa0-\U00016fdf\U00016fe5-\U00016fef\U00016ff7-\U00016fff'
      '\U00018cd6-\U00018cfe\U00018d1f-\U00018d7f\U00018df3-\U0001afef\U0001aff4\U0001affc'
      '\U0001afff\U0001b123-\U0001b131\U0001b133-\U0001b14f\U0001b153\U0001b154'
      '\U0001b156-\U0001b163\U0001b168-\U0001b16f\U0001b2fc-\U0001bbff\U0001bc6b-\U0001bc6f'
      '\U0001bc7d-\U0001bc7f\U0001bc89-\U0001bc8f\U0001bc9a\U0001bc9b\U0001bca4-\U0001cbff'
      '\U0001ccfd-\U0001ccff\U0001ceb4-\U0001ceb9\U0001ced1-\U0001cedf\U0001cef1-\U0001ceff'
      '\U0001cf2e\U0001cf2f\U0001cf47-\U0001cf4f\U0001cfc4-\U0001cfff\U0001d0f6-\U0001d0ff'
      '\U0001d127\U0001d128\U0001d1eb-\U0001d1ff\U0001d246-\U0001d2bf\U0001d2d4-\U0001d2df'
      '\U0001d2f4-\U0001d2ff\U0001d357-\U0001d35f\U0001d379-\U0001d3ff\U0001d455\U0001d49d'
      '\U0001d4a0\U0001d4a1\U0001d4a3\U0001d4a4\U0001d4a7\U0001d4a8\U0001d4ad\U0001d4ba\U0001d4bc'
      '\U0001d4c4\U0001d506\U0001d50b\U0001d50c\U0001d515\U0001d51d\U0001d53a\U0001d53f\U0001d545'
      '\U0001d547-\U0001d549\U0001d551\U0001d6a6\U0001d6a7\U0001d7cc\U0001d7cd\U0001da8c-\U0001da9a'
      '\U0001daa0\U0001dab0-\U0001deff\U0001df1f-\U0001df24\U0001df2b-\U0001dfff\U0001e007'
      '\U0001e019\U0001e01a\U0001e022\U0001e025\U0001e02b-\U0001e02f\U0001e06e-\U0001e08e'
      '\U0001e090-\U0001e0ff\U0001e12d-\U0001e12f\U0001e13e\U0001e13f\U0001e14a-\U0001e14d'
      '\U0001e150-\U0001e28f\U0001e2af-\U0001e2bf\U0001e2fa-\U0001e2fe\U0001e300-\U0001e4cf'
      '\U0001e4fa-\U0001e5cf\U0001e5fb-\U0001e5fe\U0001e600-\U0001e6bf\U0001e6df'
      '\U0001e6f6-\U0001e6fd\U0001e700-\U0001e7df\U0001e7e7\U0001e7ec\U0001e7ef\U0001e7ff'
      '\U0001e8c5\U0001e8c6\U0001e8d7-\U0001e8ff\U0001e94c-\U0001e94f\U0001e95a-\U0001e95d'
      '\U0001e960-\U0001ec70\U0001ecb5-\U0001ed00\U0001ed3e-\U0001edff\U0001ee04\U0001ee20'
      '\U0001ee23\U0001ee25\U0001ee26\U0001ee28\U0001ee33\U0001ee38\U0001ee3a\U0001ee3c-\U0001ee41'
      '\U0001ee43-\U0001ee46\U0001ee48\U0001ee4a\U0001ee4c\U0001ee50\U0001ee53\U0001ee55\U0001ee56'
      '\U0001ee58\U0001ee5a\U0001ee5c\U0001ee5e\U0001ee60\U0001ee63\U0001ee65\U0001ee66\U0001ee6b'
      '\U0001ee73\U0001ee78\U0001ee7d\U0001ee7f\U0001ee8a\U0001ee9c-\U0001eea0\U0001eea4\U0001eeaa'
      '\U0001eebc-\U0001eeef\U0001eef2-\U0001efff\U0001f02c-\U0001f02f\U0001f094-\U0001f09f'
      '\U0001f0af\U0001f0b0\U0001f0c0\U0001f0d0\U0001f0f6-\U0001f0ff\U0001f1ae-\U0001f1e5'
      '\U0001f203-\U0001f20f\U0001f23c-\U0001f23f\U0001f249-\U0001f24f\U0001f252-\U0001f25f'
      '\U0001f266-\U0001f2ff\U0001f6d9-\U0001f6db\U0001f6ed-\U0001f6ef\U0001f6fd-\U0001f6ff'
      '\U0001f7da-\U0001f7df\U0001f7ec-\U0001f7ef\U0001f7f1-\U0001f7ff\U0001f80c-\U0001f80f'
      '\U0001f848-\U0001f84f\U0001f85a-\U0001f85f\U0001f888-\U0001f88f\U0001f8ae\U0001f8af'
      '\U0001f8bc-\U0001f8bf\U0001f8c2-\U0001f8cf\U0001f8d9-\U0001f8ff\U0001fa58-\U0001fa5f'
      '\U0001fa6e\U0001fa6f\U0001fa7d-\U0001fa7f\U0001fa8b-\U0001fa8d\U0001fac7'
      '\U0001fac9-\U0001facc\U0001fadd\U0001fade\U0001faeb-\U0001faee\U0001faf9-\U0001faff'
      '\U0001fb93\U0001fbfb-\U0001ffff\U0002a6e0-\U0002a6ff\U0002b81e\U0002b81f\U0002ceae\U0002ceaf'
      '\U0002ebe1-\U0002ebef\U0002ee5e-\U0002f7ff\U0002fa1e-\U0002ffff\U0003134b-\U0003134f'
      '\U0003347a-\U000e0000\U000e0002-\U000e001f\U000e0080-\U000e00ff\U000e01f0-\U0010ffff]'
     -- What is left once nothing that shows is removed: Z, M, Cf, default-ignorables, the blank symbols.
     and pg_catalog.regexp_replace(p_name,
      '[\u0020\u00a0\u00ad\u0300-\u036f\u0483-\u0489\u0591-\u05bd\u05bf\u05c1\u05c2\u05c4\u05c5'
      '\u05c7\u0600-\u0605\u0610-\u061a\u061c\u064b-\u065f\u0670\u06d6-\u06dd\u06df-\u06e4'
      '\u06e7\u06e8\u06ea-\u06ed\u070f\u0711\u0730-\u074a\u07a6-\u07b0\u07eb-\u07f3\u07fd'
      '\u0816-\u0819\u081b-\u0823\u0825-\u0827\u0829-\u082d\u0859-\u085b\u0890\u0891\u0897-\u089f'
      '\u08ca-\u0903\u093a-\u093c\u093e-\u094f\u0951-\u0957\u0962\u0963\u0981-\u0983\u09bc'
      '\u09be-\u09c4\u09c7\u09c8\u09cb-\u09cd\u09d7\u09e2\u09e3\u09fe\u0a01-\u0a03\u0a3c'
      '\u0a3e-\u0a42\u0a47\u0a48\u0a4b-\u0a4d\u0a51\u0a70\u0a71\u0a75\u0a81-\u0a83\u0abc'
      '\u0abe-\u0ac5\u0ac7-\u0ac9\u0acb-\u0acd\u0ae2\u0ae3\u0afa-\u0aff\u0b01-\u0b03\u0b3c'
      '\u0b3e-\u0b44\u0b47\u0b48\u0b4b-\u0b4d\u0b55-\u0b57\u0b62\u0b63\u0b82\u0bbe-\u0bc2'
      '\u0bc6-\u0bc8\u0bca-\u0bcd\u0bd7\u0c00-\u0c04\u0c3c\u0c3e-\u0c44\u0c46-\u0c48\u0c4a-\u0c4d'
      '\u0c55\u0c56\u0c62\u0c63\u0c81-\u0c83\u0cbc\u0cbe-\u0cc4\u0cc6-\u0cc8\u0cca-\u0ccd'
      '\u0cd5\u0cd6\u0ce2\u0ce3\u0cf3\u0d00-\u0d03\u0d3b\u0d3c\u0d3e-\u0d44\u0d46-\u0d48'
      '\u0d4a-\u0d4d\u0d57\u0d62\u0d63\u0d81-\u0d83\u0dca\u0dcf-\u0dd4\u0dd6\u0dd8-\u0ddf'
      '\u0df2\u0df3\u0e31\u0e34-\u0e3a\u0e47-\u0e4e\u0eb1\u0eb4-\u0ebc\u0ec8-\u0ece\u0f18\u0f19'
      '\u0f35\u0f37\u0f39\u0f3e\u0f3f\u0f71-\u0f84\u0f86\u0f87\u0f8d-\u0f97\u0f99-\u0fbc\u0fc6'
      '\u102b-\u103e\u1056-\u1059\u105e-\u1060\u1062-\u1064\u1067-\u106d\u1071-\u1074\u1082-\u108d'
      '\u108f\u109a-\u109d\u115f\u1160\u135d-\u135f\u1680\u1712-\u1715\u1732-\u1734\u1752\u1753'
      '\u1772\u1773\u17b4-\u17d3\u17dd\u180b-\u180f\u1885\u1886\u18a9\u1920-\u192b\u1930-\u193b'
      '\u1a17-\u1a1b\u1a55-\u1a5e\u1a60-\u1a7c\u1a7f\u1ab0-\u1add\u1ae0-\u1aeb\u1b00-\u1b04'
      '\u1b34-\u1b44\u1b6b-\u1b73\u1b80-\u1b82\u1ba1-\u1bad\u1be6-\u1bf3\u1c24-\u1c37\u1cd0-\u1cd2'
      '\u1cd4-\u1ce8\u1ced\u1cf4\u1cf7-\u1cf9\u1dc0-\u1dff\u2000-\u200f\u2028-\u202f\u205f-\u206f'
      '\u20d0-\u20f0\u2800\u2cef-\u2cf1\u2d7f\u2de0-\u2dff\u3000\u302a-\u302f\u3099\u309a\u3164'
      '\ua66f-\ua672\ua674-\ua67d\ua69e\ua69f\ua6f0\ua6f1\ua802\ua806\ua80b\ua823-\ua827\ua82c'
      '\ua880\ua881\ua8b4-\ua8c5\ua8e0-\ua8f1\ua8ff\ua926-\ua92d\ua947-\ua953\ua980-\ua983'
      '\ua9b3-\ua9c0\ua9e5\uaa29-\uaa36\uaa43\uaa4c\uaa4d\uaa7b-\uaa7d\uaab0\uaab2-\uaab4'
      '\uaab7\uaab8\uaabe\uaabf\uaac1\uaaeb-\uaaef\uaaf5\uaaf6\uabe3-\uabea\uabec\uabed\ufb1e'
      '\ufe00-\ufe0f\ufe20-\ufe2f\ufeff\uffa0\ufff0-\ufffb\U000101fd\U000102e0\U00010376-\U0001037a'
      '\U00010a01-\U00010a03\U00010a05\U00010a06\U00010a0c-\U00010a0f\U00010a38-\U00010a3a'
      '\U00010a3f\U00010ae5\U00010ae6\U00010d24-\U00010d27\U00010d69-\U00010d6d\U00010eab\U00010eac'
      '\U00010efa-\U00010eff\U00010f46-\U00010f50\U00010f82-\U00010f85\U00011000-\U00011002'
      '\U00011038-\U00011046\U00011070\U00011073\U00011074\U0001107f-\U00011082'
      '\U000110b0-\U000110ba\U000110bd\U000110c2\U000110cd\U00011100-\U00011102'
      '\U00011127-\U00011134\U00011145\U00011146\U00011173\U00011180-\U00011182'
      '\U000111b3-\U000111c0\U000111c9-\U000111cc\U000111ce\U000111cf\U0001122c-\U00011237'
      '\U0001123e\U00011241\U000112df-\U000112ea\U00011300-\U00011303\U0001133b\U0001133c'
      '\U0001133e-\U00011344\U00011347\U00011348\U0001134b-\U0001134d\U00011357\U00011362\U00011363'
      '\U00011366-\U0001136c\U00011370-\U00011374\U000113b8-\U000113c0\U000113c2\U000113c5'
      '\U000113c7-\U000113ca\U000113cc-\U000113d0\U000113d2\U000113e1\U000113e2'
      '\U00011435-\U00011446\U0001145e\U000114b0-\U000114c3\U000115af-\U000115b5'
      '\U000115b8-\U000115c0\U000115dc\U000115dd\U00011630-\U00011640\U000116ab-\U000116b7'
      '\U0001171d-\U0001172b\U0001182c-\U0001183a\U00011930-\U00011935\U00011937\U00011938'
      '\U0001193b-\U0001193e\U00011940\U00011942\U00011943\U000119d1-\U000119d7'
      '\U000119da-\U000119e0\U000119e4\U00011a01-\U00011a0a\U00011a33-\U00011a39'
      '\U00011a3b-\U00011a3e\U00011a47\U00011a51-\U00011a5b\U00011a8a-\U00011a99'
      '\U00011b60-\U00011b67\U00011c2f-\U00011c36\U00011c38-\U00011c3f\U00011c92-\U00011ca7'
      '\U00011ca9-\U00011cb6\U00011d31-\U00011d36\U00011d3a\U00011d3c\U00011d3d'
      '\U00011d3f-\U00011d45\U00011d47\U00011d8a-\U00011d8e\U00011d90\U00011d91'
      '\U00011d93-\U00011d97\U00011ef3-\U00011ef6\U00011f00\U00011f01\U00011f03'
      '\U00011f34-\U00011f3a\U00011f3e-\U00011f42\U00011f5a\U00013430-\U00013440'
      '\U00013447-\U00013455\U0001611e-\U0001612f\U00016af0-\U00016af4\U00016b30-\U00016b36'
      '\U00016f4f\U00016f51-\U00016f87\U00016f8f-\U00016f92\U00016fe4\U00016ff0\U00016ff1'
      '\U0001bc9d\U0001bc9e\U0001bca0-\U0001bca3\U0001cf00-\U0001cf2d\U0001cf30-\U0001cf46'
      '\U0001d159\U0001d165-\U0001d169\U0001d16d-\U0001d182\U0001d185-\U0001d18b'
      '\U0001d1aa-\U0001d1ad\U0001d242-\U0001d244\U0001da00-\U0001da36\U0001da3b-\U0001da6c'
      '\U0001da75\U0001da84\U0001da9b-\U0001da9f\U0001daa1-\U0001daaf\U0001e000-\U0001e006'
      '\U0001e008-\U0001e018\U0001e01b-\U0001e021\U0001e023\U0001e024\U0001e026-\U0001e02a'
      '\U0001e08f\U0001e130-\U0001e136\U0001e2ae\U0001e2ec-\U0001e2ef\U0001e4ec-\U0001e4ef'
      '\U0001e5ee\U0001e5ef\U0001e6e3\U0001e6e6\U0001e6ee\U0001e6ef\U0001e6f5\U0001e8d0-\U0001e8d6'
      '\U0001e944-\U0001e94a\U000e0000-\U000e0fff]',
      '', 'g') <> ''
$$;


--
-- Name: FUNCTION system_name_shows(p_name text); Type: COMMENT; Schema: cadence; Owner: -
--

COMMENT ON FUNCTION cadence.system_name_shows(p_name text) IS 'Whether a system name (in cadence.system_name_form) shows something: no control, private-use, unassigned, noncharacter, U+FFFD, line or paragraph separator code point, and at least one letter, digit, punctuation or symbol that is not default-ignorable nor a blank symbol (U+2800, U+1D159).';


--
-- Name: unannounced_kiosk_alerts(); Type: FUNCTION; Schema: cadence; Owner: -
--

CREATE FUNCTION cadence.unannounced_kiosk_alerts() RETURNS TABLE(account_id uuid, recipient text, display_name text, changes jsonb)
    LANGUAGE sql STABLE
    SET search_path TO ''
    AS $$
  -- Per account, every recorded change no e-mail has announced yet: a crash between the pass and
  -- the e-mail leaves them here for the next run, so none is lost.
  select a.id, a.email, a.display_name,
         pg_catalog.jsonb_agg(pg_catalog.jsonb_build_object(
           'outageId', c.id,
           'kind', c.kind,
           'licenseKey', c.license_key,
           'systemName', k.system_name,
           'timeZone', z.zone,
           'lastSeenLocal', pg_catalog.to_char(c.last_seen_at at time zone z.zone, 'YYYY-MM-DD HH24:MI'),
           'backLocal', pg_catalog.to_char(c.back_at at time zone z.zone, 'YYYY-MM-DD HH24:MI'),
           'block', case when b.id is not null then pg_catalog.jsonb_build_object(
                      'weekday', b.weekday, 'startTime', pg_catalog.to_char(b.start_time, 'HH24:MI'), 'endTime', pg_catalog.to_char(b.end_time, 'HH24:MI')) end
         ) order by c.kind desc, c.license_key)
    from (
      select o.id, 'dark' as kind, o.account_id, o.license_key, o.last_seen_at, null::timestamptz as back_at, o.block_id
        from public.kiosk_outages as o where o.alert_email_id is null
      union all
      select o.id, 'back', o.account_id, o.license_key, o.last_seen_at, o.back_at, o.block_id
        from public.kiosk_outages as o
       where o.back_at is not null and o.recovery_email_id is null and not o.recovery_silent
    ) as c
    join public.accounts as a on a.id = c.account_id
    join public.license_keys as k on k.key = c.license_key
    cross join lateral (select coalesce(k.time_zone, a.time_zone) as zone) as z
    left join public.schedule_blocks as b on b.id = c.block_id
   group by a.id
$$;


--
-- Name: FUNCTION unannounced_kiosk_alerts(); Type: COMMENT; Schema: cadence; Owner: -
--

COMMENT ON FUNCTION cadence.unannounced_kiosk_alerts() IS 'Per account, the outages (kind dark) and recoveries (kind back) no e-mail has announced yet, with what the e-mail says of each.';


--
-- Name: unscheduled_payload(); Type: FUNCTION; Schema: cadence; Owner: -
--

CREATE FUNCTION cadence.unscheduled_payload() RETURNS json
    LANGUAGE sql IMMUTABLE
    SET search_path TO ''
    AS $$
  select '{"type":null,"daily":[],"weekly":{},"blocks":[]}'::json
$$;


--
-- Name: FUNCTION unscheduled_payload(); Type: COMMENT; Schema: cadence; Owner: -
--

COMMENT ON FUNCTION cadence.unscheduled_payload() IS 'The payload of a key with no schedule to read (type null). Immutable, so a query plan holds it, and its version, as constants.';


--
-- Name: validate_and_name_licenses(text[], text[], text[]); Type: FUNCTION; Schema: cadence; Owner: -
--

CREATE FUNCTION cadence.validate_and_name_licenses(p_keys text[], p_emails text[], p_names text[]) RETURNS TABLE(n bigint, outcome text, owner_email text, system_name_status text)
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $$
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


--
-- Name: FUNCTION validate_and_name_licenses(p_keys text[], p_emails text[], p_names text[]); Type: COMMENT; Schema: cadence; Owner: -
--

COMMENT ON FUNCTION cadence.validate_and_name_licenses(p_keys text[], p_emails text[], p_names text[]) IS 'Validates each key for the e-mail at the same position (cadence.validate_licenses) and, when valid and a name is given (already in cadence.system_name_form), sets it: one row per position n (1-based) with the outcome, the owner''s e-mail when valid, and system_name_status (unchanged when no name was given, ok, or conflict).';


--
-- Name: validate_license(text, text, text); Type: FUNCTION; Schema: cadence; Owner: -
--

CREATE FUNCTION cadence.validate_license(p_key text, p_email text, p_system_name text DEFAULT NULL::text) RETURNS TABLE(outcome text, owner_email text, system_name_status text)
    LANGUAGE sql
    SET search_path TO ''
    AS $$
  select v.outcome, v.owner_email, v.system_name_status
    from cadence.validate_and_name_licenses(array[p_key], array[p_email], array[p_system_name]) as v
$$;


--
-- Name: FUNCTION validate_license(p_key text, p_email text, p_system_name text); Type: COMMENT; Schema: cadence; Owner: -
--

COMMENT ON FUNCTION cadence.validate_license(p_key text, p_email text, p_system_name text) IS 'Validates a key for an e-mail (spec 4.3): key_not_found, key_inactive, user_not_found, not_owner or valid (first failure wins, in that order); a valid key gets last_validated_at in the validating statement, the owner''s e-mail, and the outcome of the optional system name (unchanged when none is given, ok or conflict).';


--
-- Name: validate_licenses(text[], text[]); Type: FUNCTION; Schema: cadence; Owner: -
--

CREATE FUNCTION cadence.validate_licenses(p_keys text[], p_emails text[]) RETURNS TABLE(n bigint, outcome text, owner_email text)
    LANGUAGE plpgsql
    SET search_path TO ''
    SET plan_cache_mode TO 'force_generic_plan'
    AS $$
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


--
-- Name: FUNCTION validate_licenses(p_keys text[], p_emails text[]); Type: COMMENT; Schema: cadence; Owner: -
--

COMMENT ON FUNCTION cadence.validate_licenses(p_keys text[], p_emails text[]) IS 'Validates each key for the e-mail at the same position (spec 4.3), one row per position n (1-based): key_not_found, key_inactive, user_not_found, not_owner or valid (first failure wins, in that order), with the owner''s e-mail when valid; valid keys get last_validated_at in the validating statement.';


--
-- Name: venue_allowances(integer); Type: FUNCTION; Schema: cadence; Owner: -
--

CREATE FUNCTION cadence.venue_allowances(p_most integer) RETURNS TABLE(network text, kiosks integer)
    LANGUAGE sql STABLE
    SET search_path TO ''
    AS $$
  -- One row per network, every account's registrations of it added up; largest allowances first,
  -- so a table past `p_most` networks drops the smallest (those fall back to the contract's limit,
  -- never to less).
  select v.network::text, pg_catalog.sum(v.kiosks)::integer
    from public.venue_addresses as v
   group by v.network
   order by 2 desc, v.network
   limit p_most
$$;


--
-- Name: FUNCTION venue_allowances(p_most integer); Type: COMMENT; Schema: cadence; Owner: -
--

COMMENT ON FUNCTION cadence.venue_allowances(p_most integer) IS 'Every registered venue network (text) and the kiosks of all its registrations, at most p_most, largest first: what each API instance caches for the rate limits.';


--
-- Name: account_proclamations; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.account_proclamations (
    account_id uuid NOT NULL,
    proclamation_id uuid NOT NULL
);


--
-- Name: TABLE account_proclamations; Type: COMMENT; Schema: public; Owner: -
--

COMMENT ON TABLE public.account_proclamations IS 'The proclamations an account is entitled to.';


--
-- Name: accounts; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.accounts (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    email text NOT NULL,
    display_name text NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    auth_user_id uuid,
    auth_link_attempts integer DEFAULT 0 NOT NULL,
    auth_link_error text,
    auth_link_due_at timestamp with time zone,
    time_zone text DEFAULT 'UTC'::text NOT NULL,
    offline_alert_after interval DEFAULT '00:15:00'::interval NOT NULL,
    CONSTRAINT account_display_name_length CHECK (((char_length(btrim(display_name)) >= 1) AND (char_length(btrim(display_name)) <= 120))),
    CONSTRAINT account_email_has_no_invisible_characters CHECK ((email !~ '[[:cntrl:]\u0080-\u009f\u00ad\u0600-\u0605\u061c\u06dd\u070f\u0890-\u0891\u08e2\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u206f\ufeff\ufff9-\ufffb\U000110bd\U000110cd\U00013430-\U0001343f\U0001bca0-\U0001bca3\U0001d173-\U0001d17a\U000e0001\U000e0020-\U000e007f]'::text)),
    CONSTRAINT account_email_is_valid CHECK (((char_length(email) <= 254) AND (email ~ '^[^@\s]+@[^@\s]+\.[^@\s]+$'::text))),
    CONSTRAINT auth_link_attempts_are_not_negative CHECK ((auth_link_attempts >= 0)),
    CONSTRAINT offline_alert_after_is_between_a_minute_and_a_week CHECK (((offline_alert_after >= '00:01:00'::interval) AND (offline_alert_after <= '7 days'::interval)))
);


--
-- Name: TABLE accounts; Type: COMMENT; Schema: public; Owner: -
--

COMMENT ON TABLE public.accounts IS 'Owners of license keys. E-mail is unique regardless of case.';


--
-- Name: COLUMN accounts.auth_user_id; Type: COMMENT; Schema: public; Owner: -
--

COMMENT ON COLUMN public.accounts.auth_user_id IS 'The Supabase Auth user (auth.users.id) of this account; null until linked. Cadence creates it with the account id.';


--
-- Name: COLUMN accounts.auth_link_attempts; Type: COMMENT; Schema: public; Owner: -
--

COMMENT ON COLUMN public.accounts.auth_link_attempts IS 'How often linking an Auth user was tried.';


--
-- Name: COLUMN accounts.auth_link_error; Type: COMMENT; Schema: public; Owner: -
--

COMMENT ON COLUMN public.accounts.auth_link_error IS 'Why the last try to link an Auth user failed, e.g. the e-mail already belongs to an Auth user Cadence did not create.';


--
-- Name: COLUMN accounts.auth_link_due_at; Type: COMMENT; Schema: public; Owner: -
--

COMMENT ON COLUMN public.accounts.auth_link_due_at IS 'When linking may next be tried: null means at once (never tried); a claim moves it one lease ahead, a failure one backoff ahead.';


--
-- Name: COLUMN accounts.time_zone; Type: COMMENT; Schema: public; Owner: -
--

COMMENT ON COLUMN public.accounts.time_zone IS 'The IANA time zone (pg_timezone_names) of the account''s kiosks, unless a key has its own; UTC by default.';


--
-- Name: COLUMN accounts.offline_alert_after; Type: COMMENT; Schema: public; Owner: -
--

COMMENT ON COLUMN public.accounts.offline_alert_after IS 'How long a kiosk that should be playing may stay unseen before the account holder is e-mailed (1 minute to 7 days; 15 minutes by default).';


--
-- Name: categories; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.categories (
    id integer NOT NULL,
    name text NOT NULL,
    sort_order integer DEFAULT 0 NOT NULL,
    CONSTRAINT category_name_is_not_blank CHECK ((btrim(name) <> ''::text))
);


--
-- Name: TABLE categories; Type: COMMENT; Schema: public; Owner: -
--

COMMENT ON TABLE public.categories IS 'Proclamation categories, served in sort_order.';


--
-- Name: categories_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

ALTER TABLE public.categories ALTER COLUMN id ADD GENERATED BY DEFAULT AS IDENTITY (
    SEQUENCE NAME public.categories_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);


--
-- Name: color_palettes; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.color_palettes (
    canonical_frequency_id smallint NOT NULL,
    colors text[] NOT NULL,
    CONSTRAINT palette_colors_are_hex CHECK ((array_to_string(colors, ','::text) ~ '^#[0-9A-Fa-f]{6}(,#[0-9A-Fa-f]{6})*$'::text)),
    CONSTRAINT palette_frequency_is_canonical CHECK (((canonical_frequency_id >= 1) AND (canonical_frequency_id <= 9))),
    CONSTRAINT palette_has_colors CHECK (((cardinality(colors) >= 1) AND (array_position(colors, NULL::text) IS NULL)))
);


--
-- Name: TABLE color_palettes; Type: COMMENT; Schema: public; Owner: -
--

COMMENT ON TABLE public.color_palettes IS 'A stored palette for a canonical frequency id (1-9) replaces the built-in one. Colours light to dark.';


--
-- Name: frequencies; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.frequencies (
    id integer NOT NULL,
    name text NOT NULL,
    hz integer NOT NULL,
    CONSTRAINT frequency_hz_is_positive CHECK ((hz > 0)),
    CONSTRAINT frequency_name_is_not_blank CHECK ((btrim(name) <> ''::text))
);


--
-- Name: TABLE frequencies; Type: COMMENT; Schema: public; Owner: -
--

COMMENT ON TABLE public.frequencies IS 'Stored frequencies. Only the nine canonical Hz values (cadence.canonical_frequencies) reach kiosks.';


--
-- Name: frequencies_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

ALTER TABLE public.frequencies ALTER COLUMN id ADD GENERATED BY DEFAULT AS IDENTITY (
    SEQUENCE NAME public.frequencies_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);


--
-- Name: groups; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.groups (
    id integer NOT NULL,
    name text NOT NULL,
    sort_order integer DEFAULT 0 NOT NULL,
    CONSTRAINT group_name_is_not_blank CHECK ((btrim(name) <> ''::text))
);


--
-- Name: TABLE groups; Type: COMMENT; Schema: public; Owner: -
--

COMMENT ON TABLE public.groups IS 'Proclamation groups, served in sort_order.';


--
-- Name: groups_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

ALTER TABLE public.groups ALTER COLUMN id ADD GENERATED BY DEFAULT AS IDENTITY (
    SEQUENCE NAME public.groups_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);


--
-- Name: kiosk_outages; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.kiosk_outages (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    license_key text NOT NULL,
    account_id uuid NOT NULL,
    dark_since timestamp with time zone NOT NULL,
    last_seen_at timestamp with time zone NOT NULL,
    alerted_at timestamp with time zone NOT NULL,
    block_id uuid,
    alert_email_id uuid,
    back_at timestamp with time zone,
    recovered_at timestamp with time zone,
    recovery_email_id uuid,
    recovery_silent boolean DEFAULT false NOT NULL,
    CONSTRAINT kiosk_outage_end_is_recorded_whole CHECK (((back_at IS NULL) = (recovered_at IS NULL))),
    CONSTRAINT kiosk_outage_ends_after_its_last_sighting CHECK (((back_at IS NULL) OR (back_at > last_seen_at)))
);


--
-- Name: TABLE kiosk_outages; Type: COMMENT; Schema: public; Owner: -
--

COMMENT ON TABLE public.kiosk_outages IS 'Written by the offline-alert pass, do not edit: each time a kiosk that should be playing went dark (the alert) and when it was seen again (the recovery).';


--
-- Name: COLUMN kiosk_outages.dark_since; Type: COMMENT; Schema: public; Owner: -
--

COMMENT ON COLUMN public.kiosk_outages.dark_since IS 'From when it counts as unseen: the latest of its last sighting, its block''s start and the start of Cadence''s watch.';


--
-- Name: COLUMN kiosk_outages.last_seen_at; Type: COMMENT; Schema: public; Owner: -
--

COMMENT ON COLUMN public.kiosk_outages.last_seen_at IS 'The last sighting before it went dark.';


--
-- Name: COLUMN kiosk_outages.alerted_at; Type: COMMENT; Schema: public; Owner: -
--

COMMENT ON COLUMN public.kiosk_outages.alerted_at IS 'The pass that found it dark.';


--
-- Name: COLUMN kiosk_outages.block_id; Type: COMMENT; Schema: public; Owner: -
--

COMMENT ON COLUMN public.kiosk_outages.block_id IS 'The block it should have been playing then.';


--
-- Name: COLUMN kiosk_outages.alert_email_id; Type: COMMENT; Schema: public; Owner: -
--

COMMENT ON COLUMN public.kiosk_outages.alert_email_id IS 'The e-mail (public.email_outbox) that announced it; empty until queued.';


--
-- Name: COLUMN kiosk_outages.back_at; Type: COMMENT; Schema: public; Owner: -
--

COMMENT ON COLUMN public.kiosk_outages.back_at IS 'The sighting that ended it; empty while it lasts.';


--
-- Name: COLUMN kiosk_outages.recovered_at; Type: COMMENT; Schema: public; Owner: -
--

COMMENT ON COLUMN public.kiosk_outages.recovered_at IS 'The pass that found it back.';


--
-- Name: COLUMN kiosk_outages.recovery_email_id; Type: COMMENT; Schema: public; Owner: -
--

COMMENT ON COLUMN public.kiosk_outages.recovery_email_id IS 'The e-mail that announced the recovery; empty until queued, or when silent.';


--
-- Name: COLUMN kiosk_outages.recovery_silent; Type: COMMENT; Schema: public; Owner: -
--

COMMENT ON COLUMN public.kiosk_outages.recovery_silent IS 'Ended without an e-mail: the key was muted or inactive when the kiosk came back.';


--
-- Name: kiosk_sightings; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.kiosk_sightings (
    license_key text NOT NULL,
    last_seen_at timestamp with time zone NOT NULL,
    last_seen_ip inet,
    schedule_version_held text,
    system_name_written text,
    system_name_changes integer DEFAULT 0 NOT NULL,
    system_name_changes_since timestamp with time zone,
    polls public.kiosk_polls,
    CONSTRAINT schedule_version_held_is_a_version CHECK ((schedule_version_held ~ '^[0-9a-f]{64}$'::text))
);


--
-- Name: TABLE kiosk_sightings; Type: COMMENT; Schema: public; Owner: -
--

COMMENT ON TABLE public.kiosk_sightings IS 'Written by the API, do not edit: the last call a kiosk made with each license key. Read public.kiosk_status.';


--
-- Name: COLUMN kiosk_sightings.system_name_written; Type: COMMENT; Schema: public; Owner: -
--

COMMENT ON COLUMN public.kiosk_sightings.system_name_written IS 'The system name the kiosk last wrote (PUT system-name).';


--
-- Name: COLUMN kiosk_sightings.system_name_changes; Type: COMMENT; Schema: public; Owner: -
--

COMMENT ON COLUMN public.kiosk_sightings.system_name_changes IS 'Changes of the written name since system_name_changes_since, a day at most (seat checks: system_name_flips).';


--
-- Name: COLUMN kiosk_sightings.polls; Type: COMMENT; Schema: public; Owner: -
--

COMMENT ON COLUMN public.kiosk_sightings.polls IS 'The key''s polls (public.kiosk_polls): its last settled polls, its bursts still unsettled, and its polls and uneven polls this hour and the last (seat checks: uneven_polls).';


--
-- Name: license_keys; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.license_keys (
    key text NOT NULL,
    account_id uuid,
    email text NOT NULL,
    active boolean DEFAULT true NOT NULL,
    last_validated_at timestamp with time zone,
    system_name text,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    time_zone text,
    alerts_muted boolean DEFAULT false NOT NULL,
    belongs_to uuid,
    CONSTRAINT license_key_email_is_not_blank CHECK ((btrim(email) <> ''::text)),
    CONSTRAINT license_key_format CHECK ((key ~ '^[A-Z0-9]{4}-[A-Z0-9]{4}-[A-Z0-9]{4}-[A-Z0-9]{4}$'::text)),
    CONSTRAINT system_name_is_trimmed CHECK ((system_name = btrim(system_name))),
    CONSTRAINT system_name_length CHECK (((char_length(system_name) >= 1) AND (char_length(system_name) <= 40)))
);


--
-- Name: TABLE license_keys; Type: COMMENT; Schema: public; Owner: -
--

COMMENT ON TABLE public.license_keys IS 'License keys. account_id is the owner link; a key without one belongs to the account whose e-mail equals its stored e-mail. belongs_to holds the answer.';


--
-- Name: COLUMN license_keys.system_name; Type: COMMENT; Schema: public; Owner: -
--

COMMENT ON COLUMN public.license_keys.system_name IS 'Set by the kiosk only; unique per account regardless of case.';


--
-- Name: COLUMN license_keys.time_zone; Type: COMMENT; Schema: public; Owner: -
--

COMMENT ON COLUMN public.license_keys.time_zone IS 'The kiosk''s IANA time zone (pg_timezone_names); empty: its account''s.';


--
-- Name: COLUMN license_keys.alerts_muted; Type: COMMENT; Schema: public; Owner: -
--

COMMENT ON COLUMN public.license_keys.alerts_muted IS 'When true, the account holder gets no e-mail when this kiosk goes dark or comes back.';


--
-- Name: COLUMN license_keys.belongs_to; Type: COMMENT; Schema: public; Owner: -
--

COMMENT ON COLUMN public.license_keys.belongs_to IS 'The account this key belongs to: its owner link (account_id), else the account whose e-mail equals its stored e-mail (case-insensitively), else null. Kept by the database (cadence.find_key_account); every rule that needs a key''s account reads it.';


--
-- Name: seat_suspicions; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.seat_suspicions (
    license_key text NOT NULL,
    rules text[] NOT NULL,
    first_flagged_at timestamp with time zone NOT NULL,
    last_flagged_at timestamp with time zone NOT NULL,
    flags integer DEFAULT 1 NOT NULL,
    CONSTRAINT seat_suspicion_rules_are_known CHECK (((rules <@ ARRAY['interleaved_networks'::text, 'interleaved_families'::text, 'poll_rate'::text, 'system_name_flips'::text, 'uneven_polls'::text]) AND (cardinality(rules) > 0)))
);


--
-- Name: TABLE seat_suspicions; Type: COMMENT; Schema: public; Owner: -
--

COMMENT ON TABLE public.seat_suspicions IS 'Written by the seat-check pass, do not edit: each license key suspected of being used by more than one kiosk, the rules that found it, when first and last (a key flagged within a day is suspected now), and in how many passes.';


--
-- Name: kiosk_status; Type: VIEW; Schema: public; Owner: -
--

CREATE VIEW public.kiosk_status WITH (security_invoker='true') AS
 SELECT k.key AS license_key,
    ( SELECT a.email
           FROM public.accounts a
          WHERE (a.id = cadence.license_key_owner(k.key))) AS account_email,
    k.system_name,
    k.active,
    k.last_validated_at,
    s.last_seen_at,
    s.last_seen_ip,
    s.schedule_version_held,
    ( SELECT cadence.license_key_schedule_version(k.key) AS license_key_schedule_version) AS schedule_version_current,
    (s.schedule_version_held = ( SELECT cadence.license_key_schedule_version(k.key) AS license_key_schedule_version)) AS schedule_is_current,
        CASE
            WHEN (s.last_seen_at IS NULL) THEN 'never_seen'::text
            WHEN (s.last_seen_at > (now() - ( SELECT cadence.license_key_offline_after(k.key) AS license_key_offline_after))) THEN 'online'::text
            ELSE 'offline'::text
        END AS state,
    ( SELECT cadence.license_key_time_zone(k.key) AS license_key_time_zone) AS time_zone,
    ( SELECT (now() AT TIME ZONE cadence.license_key_time_zone(k.key)) AS timezone) AS local_time,
    ( SELECT cadence.license_key_playing(k.key, now()) AS license_key_playing) AS playing_now,
    ( SELECT o.dark_since
           FROM public.kiosk_outages o
          WHERE ((o.license_key = k.key) AND (o.back_at IS NULL))) AS dark_since,
    (EXISTS ( SELECT
           FROM public.seat_suspicions q
          WHERE ((q.license_key = k.key) AND (q.last_flagged_at > (now() - '1 day'::interval))))) AS suspected_copy
   FROM (public.license_keys k
     LEFT JOIN public.kiosk_sightings s ON ((s.license_key = k.key)));


--
-- Name: VIEW kiosk_status; Type: COMMENT; Schema: public; Owner: -
--

COMMENT ON VIEW public.kiosk_status IS 'One row per license key: owner, kiosk name, last validation, last call (time, client IP), schedule version held and current, and state: online (seen in the last 15 minutes), offline, never_seen. Sightings are written every few seconds, at most every 30 s per key.';


--
-- Name: COLUMN kiosk_status.account_email; Type: COMMENT; Schema: public; Owner: -
--

COMMENT ON COLUMN public.kiosk_status.account_email IS 'The owner''s e-mail by the pairing rule; null when no account pairs.';


--
-- Name: COLUMN kiosk_status.last_seen_at; Type: COMMENT; Schema: public; Owner: -
--

COMMENT ON COLUMN public.kiosk_status.last_seen_at IS 'The last call with the key that the API answered (validation, schedule reads, system name, entitled proclamations); null if never.';


--
-- Name: COLUMN kiosk_status.last_seen_ip; Type: COMMENT; Schema: public; Owner: -
--

COMMENT ON COLUMN public.kiosk_status.last_seen_ip IS 'The client IP of that call (CLIENT_IP_HEADER decides); null when unknown.';


--
-- Name: COLUMN kiosk_status.schedule_version_held; Type: COMMENT; Schema: public; Owner: -
--

COMMENT ON COLUMN public.kiosk_status.schedule_version_held IS 'The schedule version the kiosk holds: last sent in a 200, or named by its If-None-Match in a 304.';


--
-- Name: COLUMN kiosk_status.schedule_version_current; Type: COMMENT; Schema: public; Owner: -
--

COMMENT ON COLUMN public.kiosk_status.schedule_version_current IS 'The version the API serves for the key now.';


--
-- Name: COLUMN kiosk_status.schedule_is_current; Type: COMMENT; Schema: public; Owner: -
--

COMMENT ON COLUMN public.kiosk_status.schedule_is_current IS 'Whether the kiosk holds the current version; null if it never read a schedule.';


--
-- Name: COLUMN kiosk_status.state; Type: COMMENT; Schema: public; Owner: -
--

COMMENT ON COLUMN public.kiosk_status.state IS 'online: seen within its account''s offline_alert_after (15 minutes without an account), the threshold of the offline alerts; offline: seen before that; never_seen.';


--
-- Name: COLUMN kiosk_status.time_zone; Type: COMMENT; Schema: public; Owner: -
--

COMMENT ON COLUMN public.kiosk_status.time_zone IS 'The kiosk''s time zone: its key''s, else its account''s (UTC unless set).';


--
-- Name: COLUMN kiosk_status.local_time; Type: COMMENT; Schema: public; Owner: -
--

COMMENT ON COLUMN public.kiosk_status.local_time IS 'The kiosk''s wall-clock time now, in that zone.';


--
-- Name: COLUMN kiosk_status.playing_now; Type: COMMENT; Schema: public; Owner: -
--

COMMENT ON COLUMN public.kiosk_status.playing_now IS 'The block it should be playing now, from the schedule it reads: {blockId, weekday, startTime, endTime, startedOn, proclamationIds}; empty outside every block.';


--
-- Name: COLUMN kiosk_status.dark_since; Type: COMMENT; Schema: public; Owner: -
--

COMMENT ON COLUMN public.kiosk_status.dark_since IS 'While the offline alerts count the kiosk as dark: since when (public.kiosk_outages); empty otherwise.';


--
-- Name: COLUMN kiosk_status.suspected_copy; Type: COMMENT; Schema: public; Owner: -
--

COMMENT ON COLUMN public.kiosk_status.suspected_copy IS 'Flagged by the seat checks within the last day: the key may be used by more than one kiosk (public.suspected_copies has the evidence). Nobody is refused for it.';


--
-- Name: kiosk_uptime; Type: VIEW; Schema: public; Owner: -
--

CREATE VIEW public.kiosk_uptime WITH (security_invoker='true') AS
 SELECT k.key AS license_key,
    k.system_name,
    u.outages,
    u.downtime,
    round(((100)::numeric * ((1)::numeric - (EXTRACT(epoch FROM u.downtime) / EXTRACT(epoch FROM '30 days'::interval)))), 3) AS uptime_percent
   FROM (public.license_keys k
     CROSS JOIN LATERAL ( SELECT (count(*))::integer AS outages,
            COALESCE(sum(GREATEST('00:00:00'::interval, (LEAST(COALESCE(o.back_at, now()), now()) - GREATEST(o.dark_since, (now() - '30 days'::interval))))), '00:00:00'::interval) AS downtime
           FROM public.kiosk_outages o
          WHERE ((o.license_key = k.key) AND (COALESCE(o.back_at, 'infinity'::timestamp with time zone) > (now() - '30 days'::interval)))) u);


--
-- Name: VIEW kiosk_uptime; Type: COMMENT; Schema: public; Owner: -
--

COMMENT ON VIEW public.kiosk_uptime IS 'Per license key, over the last 30 days: the outages recorded by the offline alerts, the time they lasted (an open one until now), and the uptime as a percentage of the 30 days.';


--
-- Name: kiosk_watch; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.kiosk_watch (
    id boolean DEFAULT true NOT NULL,
    blind_after interval DEFAULT '00:02:00'::interval NOT NULL,
    gap_after interval DEFAULT '00:05:00'::interval NOT NULL,
    last_pass_at timestamp with time zone,
    watching_since timestamp with time zone,
    blind_since timestamp with time zone,
    CONSTRAINT blind_after_is_between_10_seconds_and_an_hour CHECK (((blind_after >= '00:00:10'::interval) AND (blind_after <= '01:00:00'::interval))),
    CONSTRAINT gap_after_is_between_a_minute_and_a_day CHECK (((gap_after >= '00:01:00'::interval) AND (gap_after <= '1 day'::interval))),
    CONSTRAINT kiosk_watch_is_one_row CHECK (id)
);


--
-- Name: TABLE kiosk_watch; Type: COMMENT; Schema: public; Owner: -
--

COMMENT ON TABLE public.kiosk_watch IS 'One row: the offline-alert pass''s settings (blind_after, gap_after) and state. Staff may change the settings; the pass writes the rest.';


--
-- Name: COLUMN kiosk_watch.blind_after; Type: COMMENT; Schema: public; Owner: -
--

COMMENT ON COLUMN public.kiosk_watch.blind_after IS 'No kiosk at all seen for this long: Cadence itself is down or unreachable, and no kiosk is reported dark.';


--
-- Name: COLUMN kiosk_watch.gap_after; Type: COMMENT; Schema: public; Owner: -
--

COMMENT ON COLUMN public.kiosk_watch.gap_after IS 'The previous pass older than this: Cadence was not watching meanwhile, and every kiosk gets a full threshold again.';


--
-- Name: COLUMN kiosk_watch.watching_since; Type: COMMENT; Schema: public; Owner: -
--

COMMENT ON COLUMN public.kiosk_watch.watching_since IS 'Since when the pass has watched without a gap or a blind spell: no kiosk counts as unseen from before.';


--
-- Name: COLUMN kiosk_watch.blind_since; Type: COMMENT; Schema: public; Owner: -
--

COMMENT ON COLUMN public.kiosk_watch.blind_since IS 'When the current blind spell began; empty while kiosks are seen.';


--
-- Name: onboarding_idempotency_keys; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.onboarding_idempotency_keys (
    source text NOT NULL,
    id text NOT NULL,
    body_sha256 bytea NOT NULL,
    claim_token uuid,
    claimed_until timestamp with time zone,
    response_status smallint,
    response_body text,
    created_at timestamp with time zone NOT NULL,
    expires_at timestamp with time zone NOT NULL,
    CONSTRAINT idempotency_body_digest_is_sha256 CHECK ((octet_length(body_sha256) = 32)),
    CONSTRAINT idempotency_expires_after_creation CHECK ((expires_at > created_at)),
    CONSTRAINT idempotency_id_is_printable_ascii CHECK ((id ~ '^[!-~]{1,255}$'::text)),
    CONSTRAINT idempotency_is_running_or_done CHECK ((((claim_token IS NOT NULL) AND (claimed_until IS NOT NULL) AND (response_status IS NULL) AND (response_body IS NULL)) OR ((claim_token IS NULL) AND (claimed_until IS NULL) AND (response_status IS NOT NULL) AND (response_body IS NOT NULL)))),
    CONSTRAINT idempotency_response_status_is_http CHECK (((response_status >= 100) AND (response_status <= 599))),
    CONSTRAINT idempotency_source_is_known CHECK ((source = ANY (ARRAY['idempotency-key'::text, 'webhook-id'::text])))
);


--
-- Name: TABLE onboarding_idempotency_keys; Type: COMMENT; Schema: public; Owner: -
--

COMMENT ON TABLE public.onboarding_idempotency_keys IS 'Onboarding requests by Idempotency-Key or webhook-id, kept 24 h: the running claim, then the first answer, replayed to retries. Expired rows are purged by the outbox delivery pass.';


--
-- Name: COLUMN onboarding_idempotency_keys.body_sha256; Type: COMMENT; Schema: public; Owner: -
--

COMMENT ON COLUMN public.onboarding_idempotency_keys.body_sha256 IS 'SHA-256 of the raw request body: the same id with another body is refused, never carried out.';


--
-- Name: COLUMN onboarding_idempotency_keys.response_body; Type: COMMENT; Schema: public; Owner: -
--

COMMENT ON COLUMN public.onboarding_idempotency_keys.response_body IS 'The exact bytes of the first answer; may hold an account id, never a key or an e-mail.';


--
-- Name: proclamations; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.proclamations (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    name text NOT NULL,
    content text NOT NULL,
    category_id integer NOT NULL,
    group_id integer NOT NULL,
    frequency_id integer NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT proclamation_name_is_not_blank CHECK ((btrim(name) <> ''::text))
);


--
-- Name: TABLE proclamations; Type: COMMENT; Schema: public; Owner: -
--

COMMENT ON TABLE public.proclamations IS 'HTML proclamations. One whose frequency has no canonical id (e.g. 936 Hz) is never served.';


--
-- Name: schedule_block_proclamations; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.schedule_block_proclamations (
    block_id uuid NOT NULL,
    "position" integer NOT NULL,
    proclamation_id uuid NOT NULL,
    CONSTRAINT block_position_is_positive CHECK (("position" >= 1))
);


--
-- Name: TABLE schedule_block_proclamations; Type: COMMENT; Schema: public; Owner: -
--

COMMENT ON TABLE public.schedule_block_proclamations IS 'The proclamations a block plays, in position order (1, 2, ...). The same proclamation may appear more than once.';


--
-- Name: schedule_blocks; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.schedule_blocks (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    schedule_id uuid NOT NULL,
    weekday text,
    start_time time without time zone NOT NULL,
    end_time time without time zone NOT NULL,
    dynamic_audio boolean DEFAULT false NOT NULL,
    CONSTRAINT block_start_is_before_midnight CHECK ((start_time < '24:00:00'::time without time zone)),
    CONSTRAINT block_times_are_whole_minutes CHECK (((EXTRACT(second FROM start_time) = (0)::numeric) AND (EXTRACT(second FROM end_time) = (0)::numeric))),
    CONSTRAINT block_weekday_is_monday_to_sunday CHECK ((weekday = ANY (ARRAY['monday'::text, 'tuesday'::text, 'wednesday'::text, 'thursday'::text, 'friday'::text, 'saturday'::text, 'sunday'::text])))
);


--
-- Name: TABLE schedule_blocks; Type: COMMENT; Schema: public; Owner: -
--

COMMENT ON TABLE public.schedule_blocks IS 'A time block of a schedule. An end at or before the start crosses midnight (22:00-06:00); 00:00-24:00 is the whole day.';


--
-- Name: COLUMN schedule_blocks.weekday; Type: COMMENT; Schema: public; Owner: -
--

COMMENT ON COLUMN public.schedule_blocks.weekday IS 'monday .. sunday for a weekly schedule; empty for a daily one.';


--
-- Name: COLUMN schedule_blocks.end_time; Type: COMMENT; Schema: public; Owner: -
--

COMMENT ON COLUMN public.schedule_blocks.end_time IS '00:00 to 24:00; an end equal to the start is a full 24 hours.';


--
-- Name: COLUMN schedule_blocks.dynamic_audio; Type: COMMENT; Schema: public; Owner: -
--

COMMENT ON COLUMN public.schedule_blocks.dynamic_audio IS 'The kiosk turns dynamic audio on while the block is active.';


--
-- Name: schedule_payloads; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.schedule_payloads (
    schedule_id uuid NOT NULL,
    payload json NOT NULL,
    version text GENERATED ALWAYS AS (cadence.schedule_version(payload)) STORED
);


--
-- Name: TABLE schedule_payloads; Type: COMMENT; Schema: public; Owner: -
--

COMMENT ON TABLE public.schedule_payloads IS 'Derived, do not edit: each schedule''s payload as kiosks read it (cadence.schedule_content) and its version, kept current by triggers. To rebuild: select cadence.refresh_schedule_payloads(array(select id from public.schedules));';


--
-- Name: COLUMN schedule_payloads.version; Type: COMMENT; Schema: public; Owner: -
--

COMMENT ON COLUMN public.schedule_payloads.version IS 'The schedule version the API serves to every key that reads this schedule (its ETag, unquoted).';


--
-- Name: schedules; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.schedules (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    license_key text,
    account_id uuid,
    type text NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT schedule_has_exactly_one_owner CHECK ((num_nonnulls(license_key, account_id) = 1)),
    CONSTRAINT schedule_type_is_daily_or_weekly CHECK ((type = ANY (ARRAY['daily'::text, 'weekly'::text])))
);


--
-- Name: TABLE schedules; Type: COMMENT; Schema: public; Owner: -
--

COMMENT ON TABLE public.schedules IS 'A daily or weekly listening schedule of one license key or one account. A key''s own schedule wins over its account''s.';


--
-- Name: COLUMN schedules.license_key; Type: COMMENT; Schema: public; Owner: -
--

COMMENT ON COLUMN public.schedules.license_key IS 'Set this or account_id, not both.';


--
-- Name: COLUMN schedules.type; Type: COMMENT; Schema: public; Owner: -
--

COMMENT ON COLUMN public.schedules.type IS 'daily or weekly. Blocks of a weekly schedule have a weekday; blocks of a daily one have none.';


--
-- Name: seat_watch; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.seat_watch (
    id boolean DEFAULT true NOT NULL,
    digest_to text,
    name_changes_to_flag integer DEFAULT 3 NOT NULL,
    last_digest_at timestamp with time zone,
    uneven_polls_to_flag integer DEFAULT 6 NOT NULL,
    uneven_polls_share real DEFAULT 0.05 NOT NULL,
    CONSTRAINT name_changes_to_flag_is_at_least_2 CHECK ((name_changes_to_flag >= 2)),
    CONSTRAINT seat_digest_to_is_an_email CHECK ((digest_to ~ '^[^@[:space:]]+@[^@[:space:]]+$'::text)),
    CONSTRAINT seat_watch_is_one_row CHECK (id),
    CONSTRAINT uneven_polls_share_is_a_share CHECK (((uneven_polls_share > (0)::double precision) AND (uneven_polls_share <= (1)::double precision))),
    CONSTRAINT uneven_polls_to_flag_is_at_least_2 CHECK ((uneven_polls_to_flag >= 2))
);


--
-- Name: TABLE seat_watch; Type: COMMENT; Schema: public; Owner: -
--

COMMENT ON TABLE public.seat_watch IS 'One row: the seat checks'' settings (staff may change them) and when the last digest was queued (the pass writes it).';


--
-- Name: COLUMN seat_watch.digest_to; Type: COMMENT; Schema: public; Owner: -
--

COMMENT ON COLUMN public.seat_watch.digest_to IS 'Where the daily digest of suspected copies goes; empty (the default): no digest.';


--
-- Name: COLUMN seat_watch.name_changes_to_flag; Type: COMMENT; Schema: public; Owner: -
--

COMMENT ON COLUMN public.seat_watch.name_changes_to_flag IS 'Changes of the written system name within a day that flag system_name_flips.';


--
-- Name: COLUMN seat_watch.uneven_polls_to_flag; Type: COMMENT; Schema: public; Owner: -
--

COMMENT ON COLUMN public.seat_watch.uneven_polls_to_flag IS 'Uneven polls (cadence.settle_polls) in the current and previous hour that flag uneven_polls, with uneven_polls_share: one device makes none but where several of its polls fail in a row; a second device makes many.';


--
-- Name: COLUMN seat_watch.uneven_polls_share; Type: COMMENT; Schema: public; Owner: -
--

COMMENT ON COLUMN public.seat_watch.uneven_polls_share IS 'The least share of the key''s polls in the current and previous hour that must be uneven to flag uneven_polls: one device losing a third of its polls makes 0.14 % in a day, half of them 0.8 %, 60 % of them 2.2 % (and 5 % in some two hours).';


--
-- Name: suspected_copies; Type: VIEW; Schema: public; Owner: -
--

CREATE VIEW public.suspected_copies WITH (security_invoker='true') AS
 SELECT q.license_key,
    ( SELECT a.email
           FROM public.accounts a
          WHERE (a.id = cadence.license_key_owner(q.license_key))) AS account_email,
    k.system_name,
    k.active,
    q.rules,
    q.first_flagged_at,
    q.last_flagged_at,
    q.flags,
    (s.polls).polls_this_hour AS polls_this_hour,
    (s.polls).polls_last_hour AS polls_last_hour,
    (s.polls).uneven_this_hour AS uneven_polls_this_hour,
    (s.polls).uneven_last_hour AS uneven_polls_last_hour,
    (s.polls).recent AS recent_polls,
    s.last_seen_ip,
    s.system_name_changes
   FROM ((public.seat_suspicions q
     JOIN public.license_keys k ON ((k.key = q.license_key)))
     LEFT JOIN public.kiosk_sightings s ON ((s.license_key = q.license_key)))
  WHERE (q.last_flagged_at > (now() - '1 day'::interval));


--
-- Name: VIEW suspected_copies; Type: COMMENT; Schema: public; Owner: -
--

COMMENT ON VIEW public.suspected_copies IS 'Staff: license keys suspected of being used by more than one kiosk in the last day, with the rules that found them and the evidence: polls and uneven polls this hour and the last, when the last six polls began, the latest client IP, system-name changes. A suspicion refuses nobody.';


--
-- Name: venue_address_changes; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.venue_address_changes (
    id bigint NOT NULL,
    venue_address_id uuid NOT NULL,
    account_id uuid NOT NULL,
    change text NOT NULL,
    network cidr NOT NULL,
    kiosks integer NOT NULL,
    changed_at timestamp with time zone DEFAULT now() NOT NULL,
    changed_by text NOT NULL,
    CONSTRAINT venue_address_change_is_a_verb CHECK ((change = ANY (ARRAY['insert'::text, 'update'::text, 'delete'::text])))
);


--
-- Name: TABLE venue_address_changes; Type: COMMENT; Schema: public; Owner: -
--

COMMENT ON TABLE public.venue_address_changes IS 'Written by a trigger, do not edit: every insert, update and delete of public.venue_addresses, when and by whom.';


--
-- Name: venue_address_changes_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

ALTER TABLE public.venue_address_changes ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME public.venue_address_changes_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);


--
-- Name: venue_addresses; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.venue_addresses (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    account_id uuid NOT NULL,
    network cidr NOT NULL,
    kiosks integer NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    created_by text NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_by text NOT NULL,
    CONSTRAINT venue_address_holds_at_least_one_kiosk CHECK ((kiosks >= 1)),
    CONSTRAINT venue_address_is_at_most_an_ipv4_24_or_ipv6_48 CHECK (
CASE family((network)::inet)
    WHEN 4 THEN (masklen((network)::inet) >= 24)
    ELSE (masklen((network)::inet) >= 48)
END)
);


--
-- Name: TABLE venue_addresses; Type: COMMENT; Schema: public; Owner: -
--

COMMENT ON TABLE public.venue_addresses IS 'Venue addresses: an IP or CIDR range and the kiosks behind it; the kiosk routes add kiosks x the contract''s per-address rate limit to what its addresses have alone, never less. Staff edit in the dashboard; holders register one recently seen address through the Data API. Rules in cadence.check_venue_address.';


--
-- Name: COLUMN venue_addresses.network; Type: COMMENT; Schema: public; Owner: -
--

COMMENT ON COLUMN public.venue_addresses.network IS 'An IP (203.0.113.7/32) or range (203.0.113.0/28), at most an IPv4 /24 or IPv6 /48; an account holder registers one address (IPv4 /32, IPv6 /64). May overlap other accounts'' registrations: each adds.';


--
-- Name: COLUMN venue_addresses.kiosks; Type: COMMENT; Schema: public; Owner: -
--

COMMENT ON COLUMN public.venue_addresses.kiosks IS 'Kiosks behind the address; the account''s registrations hold at most its active license keys.';


--
-- Name: COLUMN venue_addresses.created_by; Type: COMMENT; Schema: public; Owner: -
--

COMMENT ON COLUMN public.venue_addresses.created_by IS 'Who registered it: "account holder <auth user id>" or "role <database login>" (set by a trigger).';


--
-- Name: COLUMN venue_addresses.updated_by; Type: COMMENT; Schema: public; Owner: -
--

COMMENT ON COLUMN public.venue_addresses.updated_by IS 'Who changed it last, as created_by (set by a trigger).';


--
-- Name: webhook_nonces; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.webhook_nonces (
    nonce text NOT NULL,
    expires_at timestamp with time zone NOT NULL,
    CONSTRAINT webhook_nonce_length CHECK (((char_length(nonce) >= 1) AND (char_length(nonce) <= 128)))
);


--
-- Name: TABLE webhook_nonces; Type: COMMENT; Schema: public; Owner: -
--

COMMENT ON TABLE public.webhook_nonces IS 'Nonces of accepted signed webhooks (onboarding x-nonce; Send Email Hook body digests, prefixed auth-email-hook:), kept for 600 s.';


--
-- Name: account_proclamations account_proclamations_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.account_proclamations
    ADD CONSTRAINT account_proclamations_pkey PRIMARY KEY (account_id, proclamation_id);


--
-- Name: accounts accounts_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.accounts
    ADD CONSTRAINT accounts_pkey PRIMARY KEY (id);


--
-- Name: schedule_block_proclamations block_position_is_unique; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.schedule_block_proclamations
    ADD CONSTRAINT block_position_is_unique PRIMARY KEY (block_id, "position") DEFERRABLE;


--
-- Name: categories categories_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.categories
    ADD CONSTRAINT categories_pkey PRIMARY KEY (id);


--
-- Name: color_palettes color_palettes_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.color_palettes
    ADD CONSTRAINT color_palettes_pkey PRIMARY KEY (canonical_frequency_id);


--
-- Name: email_outbox email_outbox_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.email_outbox
    ADD CONSTRAINT email_outbox_pkey PRIMARY KEY (id);


--
-- Name: frequencies frequencies_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.frequencies
    ADD CONSTRAINT frequencies_pkey PRIMARY KEY (id);


--
-- Name: frequencies frequency_hz_is_unique; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.frequencies
    ADD CONSTRAINT frequency_hz_is_unique UNIQUE (hz);


--
-- Name: groups groups_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.groups
    ADD CONSTRAINT groups_pkey PRIMARY KEY (id);


--
-- Name: kiosk_outages kiosk_outages_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.kiosk_outages
    ADD CONSTRAINT kiosk_outages_pkey PRIMARY KEY (id);


--
-- Name: kiosk_sightings kiosk_sightings_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.kiosk_sightings
    ADD CONSTRAINT kiosk_sightings_pkey PRIMARY KEY (license_key);


--
-- Name: kiosk_watch kiosk_watch_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.kiosk_watch
    ADD CONSTRAINT kiosk_watch_pkey PRIMARY KEY (id);


--
-- Name: license_keys license_keys_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.license_keys
    ADD CONSTRAINT license_keys_pkey PRIMARY KEY (key);


--
-- Name: onboarding_idempotency_keys onboarding_idempotency_keys_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.onboarding_idempotency_keys
    ADD CONSTRAINT onboarding_idempotency_keys_pkey PRIMARY KEY (source, id);


--
-- Name: schedules one_schedule_per_account; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.schedules
    ADD CONSTRAINT one_schedule_per_account UNIQUE (account_id);


--
-- Name: schedules one_schedule_per_license_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.schedules
    ADD CONSTRAINT one_schedule_per_license_key UNIQUE (license_key);


--
-- Name: proclamations proclamations_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.proclamations
    ADD CONSTRAINT proclamations_pkey PRIMARY KEY (id);


--
-- Name: schedule_blocks schedule_blocks_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.schedule_blocks
    ADD CONSTRAINT schedule_blocks_pkey PRIMARY KEY (id);


--
-- Name: schedule_payloads schedule_payloads_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.schedule_payloads
    ADD CONSTRAINT schedule_payloads_pkey PRIMARY KEY (schedule_id);


--
-- Name: schedules schedules_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.schedules
    ADD CONSTRAINT schedules_pkey PRIMARY KEY (id);


--
-- Name: seat_suspicions seat_suspicions_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.seat_suspicions
    ADD CONSTRAINT seat_suspicions_pkey PRIMARY KEY (license_key);


--
-- Name: seat_watch seat_watch_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.seat_watch
    ADD CONSTRAINT seat_watch_pkey PRIMARY KEY (id);


--
-- Name: venue_address_changes venue_address_changes_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.venue_address_changes
    ADD CONSTRAINT venue_address_changes_pkey PRIMARY KEY (id);


--
-- Name: venue_addresses venue_addresses_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.venue_addresses
    ADD CONSTRAINT venue_addresses_pkey PRIMARY KEY (id);


--
-- Name: webhook_nonces webhook_nonces_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.webhook_nonces
    ADD CONSTRAINT webhook_nonces_pkey PRIMARY KEY (nonce);


--
-- Name: account_auth_user_is_unique; Type: INDEX; Schema: public; Owner: -
--

CREATE UNIQUE INDEX account_auth_user_is_unique ON public.accounts USING btree (auth_user_id);


--
-- Name: account_email_is_unique; Type: INDEX; Schema: public; Owner: -
--

CREATE UNIQUE INDEX account_email_is_unique ON public.accounts USING btree (lower(email));


--
-- Name: account_proclamations_proclamation_id_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX account_proclamations_proclamation_id_idx ON public.account_proclamations USING btree (proclamation_id);


--
-- Name: accounts_auth_link_due_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX accounts_auth_link_due_idx ON public.accounts USING btree (auth_link_due_at NULLS FIRST) WHERE (auth_user_id IS NULL);


--
-- Name: email_outbox_due_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX email_outbox_due_idx ON public.email_outbox USING btree (next_attempt_at) WHERE (status = 'pending'::text);


--
-- Name: kiosk_outage_is_one_open_per_key; Type: INDEX; Schema: public; Owner: -
--

CREATE UNIQUE INDEX kiosk_outage_is_one_open_per_key ON public.kiosk_outages USING btree (license_key) WHERE (back_at IS NULL);


--
-- Name: kiosk_outages_key_dark_since_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX kiosk_outages_key_dark_since_idx ON public.kiosk_outages USING btree (license_key, dark_since);


--
-- Name: kiosk_outages_unannounced_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX kiosk_outages_unannounced_idx ON public.kiosk_outages USING btree (account_id) WHERE ((alert_email_id IS NULL) OR ((back_at IS NOT NULL) AND (recovery_email_id IS NULL) AND (NOT recovery_silent)));


--
-- Name: license_keys_account_id_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX license_keys_account_id_idx ON public.license_keys USING btree (account_id);


--
-- Name: license_keys_belongs_to_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX license_keys_belongs_to_idx ON public.license_keys USING btree (belongs_to);


--
-- Name: license_keys_unlinked_by_email_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX license_keys_unlinked_by_email_idx ON public.license_keys USING btree (lower(email)) WHERE (account_id IS NULL);


--
-- Name: onboarding_idempotency_keys_expires_at_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX onboarding_idempotency_keys_expires_at_idx ON public.onboarding_idempotency_keys USING btree (expires_at);


--
-- Name: proclamations_frequency_id_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX proclamations_frequency_id_idx ON public.proclamations USING btree (frequency_id);


--
-- Name: schedule_block_proclamations_proclamation_id_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX schedule_block_proclamations_proclamation_id_idx ON public.schedule_block_proclamations USING btree (proclamation_id);


--
-- Name: schedule_blocks_schedule_id_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX schedule_blocks_schedule_id_idx ON public.schedule_blocks USING btree (schedule_id, start_time);


--
-- Name: seat_suspicions_last_flagged_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX seat_suspicions_last_flagged_idx ON public.seat_suspicions USING btree (last_flagged_at);


--
-- Name: system_name_is_unique_per_account; Type: INDEX; Schema: public; Owner: -
--

CREATE UNIQUE INDEX system_name_is_unique_per_account ON public.license_keys USING btree (COALESCE((belongs_to)::text, lower(email)), lower(system_name)) WHERE (system_name IS NOT NULL);


--
-- Name: INDEX system_name_is_unique_per_account; Type: COMMENT; Schema: public; Owner: -
--

COMMENT ON INDEX public.system_name_is_unique_per_account IS 'A system name is used at most once per account (belongs_to; a key of no account, per stored e-mail), regardless of case.';


--
-- Name: system_names_in_form_per_account; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX system_names_in_form_per_account ON public.license_keys USING btree (COALESCE((belongs_to)::text, lower(email)), lower(cadence.system_name_form(system_name))) WHERE (system_name IS NOT NULL);


--
-- Name: INDEX system_names_in_form_per_account; Type: COMMENT; Schema: public; Owner: -
--

COMMENT ON INDEX public.system_names_in_form_per_account IS 'Named keys by account (belongs_to; a key of no account, per stored e-mail) and name in cadence.system_name_form, lower-cased: the candidates cadence.set_system_names checks a name against.';


--
-- Name: venue_address_changes_account_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX venue_address_changes_account_idx ON public.venue_address_changes USING btree (account_id, changed_at);


--
-- Name: venue_addresses_account_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX venue_addresses_account_idx ON public.venue_addresses USING btree (account_id);


--
-- Name: webhook_nonces_expires_at_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX webhook_nonces_expires_at_idx ON public.webhook_nonces USING btree (expires_at);


--
-- Name: schedule_blocks block_weekday_matches_schedule_type; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER block_weekday_matches_schedule_type BEFORE INSERT OR UPDATE OF schedule_id, weekday ON public.schedule_blocks FOR EACH ROW EXECUTE FUNCTION cadence.check_block_weekday();


--
-- Name: license_keys key_account_is_found; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER key_account_is_found BEFORE INSERT OR UPDATE OF account_id, email, belongs_to ON public.license_keys FOR EACH ROW EXECUTE FUNCTION cadence.find_key_account();

ALTER TABLE public.license_keys ENABLE ALWAYS TRIGGER key_account_is_found;


--
-- Name: accounts key_accounts_follow_the_account; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER key_accounts_follow_the_account AFTER INSERT OR DELETE ON public.accounts FOR EACH ROW EXECUTE FUNCTION cadence.refresh_key_accounts();

ALTER TABLE public.accounts ENABLE ALWAYS TRIGGER key_accounts_follow_the_account;


--
-- Name: accounts key_accounts_follow_the_account_email; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER key_accounts_follow_the_account_email AFTER UPDATE OF email ON public.accounts FOR EACH ROW WHEN ((lower(old.email) IS DISTINCT FROM lower(new.email))) EXECUTE FUNCTION cadence.refresh_key_accounts();

ALTER TABLE public.accounts ENABLE ALWAYS TRIGGER key_accounts_follow_the_account_email;


--
-- Name: license_keys key_writes_await_account_changes; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER key_writes_await_account_changes BEFORE INSERT OR UPDATE OF account_id, email, belongs_to ON public.license_keys FOR EACH STATEMENT EXECUTE FUNCTION cadence.await_account_changes();

ALTER TABLE public.license_keys ENABLE ALWAYS TRIGGER key_writes_await_account_changes;


--
-- Name: schedule_block_proclamations payloads_refresh_delete; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER payloads_refresh_delete AFTER DELETE ON public.schedule_block_proclamations REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION cadence.refresh_after_block_proclamations_change();


--
-- Name: schedule_blocks payloads_refresh_delete; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER payloads_refresh_delete AFTER DELETE ON public.schedule_blocks REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION cadence.refresh_after_blocks_change();


--
-- Name: schedule_block_proclamations payloads_refresh_insert; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER payloads_refresh_insert AFTER INSERT ON public.schedule_block_proclamations REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION cadence.refresh_after_block_proclamations_change();


--
-- Name: schedule_blocks payloads_refresh_insert; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER payloads_refresh_insert AFTER INSERT ON public.schedule_blocks REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION cadence.refresh_after_blocks_change();


--
-- Name: schedules payloads_refresh_insert; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER payloads_refresh_insert AFTER INSERT ON public.schedules REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION cadence.refresh_after_schedules_change();


--
-- Name: schedule_block_proclamations payloads_refresh_truncate; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER payloads_refresh_truncate AFTER TRUNCATE ON public.schedule_block_proclamations FOR EACH STATEMENT EXECUTE FUNCTION cadence.refresh_all_schedule_payloads();


--
-- Name: schedule_blocks payloads_refresh_truncate; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER payloads_refresh_truncate AFTER TRUNCATE ON public.schedule_blocks FOR EACH STATEMENT EXECUTE FUNCTION cadence.refresh_all_schedule_payloads();


--
-- Name: schedule_block_proclamations payloads_refresh_update; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER payloads_refresh_update AFTER UPDATE ON public.schedule_block_proclamations REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION cadence.refresh_after_block_proclamations_change();


--
-- Name: schedule_blocks payloads_refresh_update; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER payloads_refresh_update AFTER UPDATE ON public.schedule_blocks REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION cadence.refresh_after_blocks_change();


--
-- Name: schedules payloads_refresh_update; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER payloads_refresh_update AFTER UPDATE ON public.schedules REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION cadence.refresh_after_schedules_change();


--
-- Name: schedules schedule_type_change_fits_blocks; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER schedule_type_change_fits_blocks BEFORE UPDATE OF type ON public.schedules FOR EACH ROW WHEN ((old.type IS DISTINCT FROM new.type)) EXECUTE FUNCTION cadence.check_schedule_type_change();


--
-- Name: license_keys sightings_forget; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER sightings_forget AFTER DELETE ON public.license_keys REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION cadence.forget_deleted_key_sightings();


--
-- Name: license_keys system_name_is_normalised; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER system_name_is_normalised BEFORE INSERT OR UPDATE OF system_name ON public.license_keys FOR EACH ROW EXECUTE FUNCTION cadence.check_system_name_form();


--
-- Name: accounts time_zone_is_known; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER time_zone_is_known BEFORE INSERT OR UPDATE OF time_zone ON public.accounts FOR EACH ROW WHEN ((new.time_zone IS NOT NULL)) EXECUTE FUNCTION cadence.check_time_zone();


--
-- Name: license_keys time_zone_is_known; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER time_zone_is_known BEFORE INSERT OR UPDATE OF time_zone ON public.license_keys FOR EACH ROW WHEN ((new.time_zone IS NOT NULL)) EXECUTE FUNCTION cadence.check_time_zone();


--
-- Name: venue_addresses venue_address_changes; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER venue_address_changes AFTER INSERT OR DELETE OR UPDATE ON public.venue_addresses FOR EACH ROW EXECUTE FUNCTION cadence.record_venue_address_change();


--
-- Name: venue_addresses venue_address_is_the_callers; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER venue_address_is_the_callers BEFORE INSERT OR UPDATE ON public.venue_addresses FOR EACH ROW EXECUTE FUNCTION cadence.check_venue_address_account();


--
-- Name: venue_addresses venue_address_rules; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER venue_address_rules BEFORE INSERT OR UPDATE ON public.venue_addresses FOR EACH ROW EXECUTE FUNCTION cadence.check_venue_address();


--
-- Name: account_proclamations assignment_account_exists; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.account_proclamations
    ADD CONSTRAINT assignment_account_exists FOREIGN KEY (account_id) REFERENCES public.accounts(id) ON DELETE CASCADE;


--
-- Name: account_proclamations assignment_proclamation_exists; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.account_proclamations
    ADD CONSTRAINT assignment_proclamation_exists FOREIGN KEY (proclamation_id) REFERENCES public.proclamations(id) ON DELETE CASCADE;


--
-- Name: schedule_block_proclamations block_proclamation_block_exists; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.schedule_block_proclamations
    ADD CONSTRAINT block_proclamation_block_exists FOREIGN KEY (block_id) REFERENCES public.schedule_blocks(id) ON DELETE CASCADE;


--
-- Name: schedule_block_proclamations block_proclamation_exists; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.schedule_block_proclamations
    ADD CONSTRAINT block_proclamation_exists FOREIGN KEY (proclamation_id) REFERENCES public.proclamations(id) ON DELETE RESTRICT;


--
-- Name: schedule_blocks block_schedule_exists; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.schedule_blocks
    ADD CONSTRAINT block_schedule_exists FOREIGN KEY (schedule_id) REFERENCES public.schedules(id) ON DELETE CASCADE;


--
-- Name: kiosk_outages kiosk_outage_account_exists; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.kiosk_outages
    ADD CONSTRAINT kiosk_outage_account_exists FOREIGN KEY (account_id) REFERENCES public.accounts(id) ON DELETE CASCADE;


--
-- Name: kiosk_outages kiosk_outage_key_exists; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.kiosk_outages
    ADD CONSTRAINT kiosk_outage_key_exists FOREIGN KEY (license_key) REFERENCES public.license_keys(key) ON UPDATE CASCADE ON DELETE CASCADE;


--
-- Name: license_keys license_key_account_exists; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.license_keys
    ADD CONSTRAINT license_key_account_exists FOREIGN KEY (account_id) REFERENCES public.accounts(id) ON DELETE RESTRICT;


--
-- Name: proclamations proclamation_category_exists; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.proclamations
    ADD CONSTRAINT proclamation_category_exists FOREIGN KEY (category_id) REFERENCES public.categories(id);


--
-- Name: proclamations proclamation_frequency_exists; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.proclamations
    ADD CONSTRAINT proclamation_frequency_exists FOREIGN KEY (frequency_id) REFERENCES public.frequencies(id);


--
-- Name: proclamations proclamation_group_exists; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.proclamations
    ADD CONSTRAINT proclamation_group_exists FOREIGN KEY (group_id) REFERENCES public.groups(id);


--
-- Name: schedules schedule_account_exists; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.schedules
    ADD CONSTRAINT schedule_account_exists FOREIGN KEY (account_id) REFERENCES public.accounts(id) ON DELETE CASCADE;


--
-- Name: schedules schedule_license_key_exists; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.schedules
    ADD CONSTRAINT schedule_license_key_exists FOREIGN KEY (license_key) REFERENCES public.license_keys(key) ON UPDATE CASCADE ON DELETE CASCADE;


--
-- Name: schedule_payloads schedule_payload_schedule_exists; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.schedule_payloads
    ADD CONSTRAINT schedule_payload_schedule_exists FOREIGN KEY (schedule_id) REFERENCES public.schedules(id) ON UPDATE CASCADE ON DELETE CASCADE;


--
-- Name: seat_suspicions seat_suspicion_key_exists; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.seat_suspicions
    ADD CONSTRAINT seat_suspicion_key_exists FOREIGN KEY (license_key) REFERENCES public.license_keys(key) ON UPDATE CASCADE ON DELETE CASCADE;


--
-- Name: venue_addresses venue_address_belongs_to_an_account; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.venue_addresses
    ADD CONSTRAINT venue_address_belongs_to_an_account FOREIGN KEY (account_id) REFERENCES public.accounts(id) ON DELETE CASCADE;


--
-- Name: schedule_blocks Account holders can add blocks to their own schedules; Type: POLICY; Schema: public; Owner: -
--

CREATE POLICY "Account holders can add blocks to their own schedules" ON public.schedule_blocks FOR INSERT TO authenticated WITH CHECK ((schedule_id = ANY (( SELECT cadence.holder_schedule_ids() AS holder_schedule_ids)::uuid[])));


--
-- Name: schedule_block_proclamations Account holders can add entitled proclamations to their blocks; Type: POLICY; Schema: public; Owner: -
--

CREATE POLICY "Account holders can add entitled proclamations to their blocks" ON public.schedule_block_proclamations FOR INSERT TO authenticated WITH CHECK (((block_id = ANY (( SELECT cadence.holder_block_ids() AS holder_block_ids)::uuid[])) AND (proclamation_id = ANY (( SELECT cadence.holder_proclamation_ids() AS holder_proclamation_ids)::uuid[]))));


--
-- Name: license_keys Account holders can change the alert settings of their keys; Type: POLICY; Schema: public; Owner: -
--

CREATE POLICY "Account holders can change the alert settings of their keys" ON public.license_keys FOR UPDATE TO authenticated USING ((key = ANY (( SELECT cadence.holder_license_keys() AS holder_license_keys)::text[]))) WITH CHECK ((key = ANY (( SELECT cadence.holder_license_keys() AS holder_license_keys)::text[])));


--
-- Name: schedule_blocks Account holders can change the blocks of their own schedules; Type: POLICY; Schema: public; Owner: -
--

CREATE POLICY "Account holders can change the blocks of their own schedules" ON public.schedule_blocks FOR UPDATE TO authenticated USING ((schedule_id = ANY (( SELECT cadence.holder_schedule_ids() AS holder_schedule_ids)::uuid[]))) WITH CHECK ((schedule_id = ANY (( SELECT cadence.holder_schedule_ids() AS holder_schedule_ids)::uuid[])));


--
-- Name: accounts Account holders can change their own account's alert settings; Type: POLICY; Schema: public; Owner: -
--

CREATE POLICY "Account holders can change their own account's alert settings" ON public.accounts FOR UPDATE TO authenticated USING ((auth_user_id = ( SELECT auth.uid() AS uid))) WITH CHECK ((auth_user_id = ( SELECT auth.uid() AS uid)));


--
-- Name: schedules Account holders can change their own schedules; Type: POLICY; Schema: public; Owner: -
--

CREATE POLICY "Account holders can change their own schedules" ON public.schedules FOR UPDATE TO authenticated USING (((account_id = ( SELECT cadence.holder_account_id() AS holder_account_id)) OR cadence.holder_owns_key(license_key))) WITH CHECK (((account_id = ( SELECT cadence.holder_account_id() AS holder_account_id)) OR cadence.holder_owns_key(license_key)));


--
-- Name: venue_addresses Account holders can change their own venue addresses; Type: POLICY; Schema: public; Owner: -
--

CREATE POLICY "Account holders can change their own venue addresses" ON public.venue_addresses FOR UPDATE TO authenticated USING ((account_id = ( SELECT cadence.holder_account_id() AS holder_account_id))) WITH CHECK ((account_id = ( SELECT cadence.holder_account_id() AS holder_account_id)));


--
-- Name: schedule_block_proclamations Account holders can change what their blocks play, if entitled; Type: POLICY; Schema: public; Owner: -
--

CREATE POLICY "Account holders can change what their blocks play, if entitled" ON public.schedule_block_proclamations FOR UPDATE TO authenticated USING ((block_id = ANY (( SELECT cadence.holder_block_ids() AS holder_block_ids)::uuid[]))) WITH CHECK (((block_id = ANY (( SELECT cadence.holder_block_ids() AS holder_block_ids)::uuid[])) AND (proclamation_id = ANY (( SELECT cadence.holder_proclamation_ids() AS holder_proclamation_ids)::uuid[]))));


--
-- Name: schedules Account holders can create schedules for their account and keys; Type: POLICY; Schema: public; Owner: -
--

CREATE POLICY "Account holders can create schedules for their account and keys" ON public.schedules FOR INSERT TO authenticated WITH CHECK (((account_id = ( SELECT cadence.holder_account_id() AS holder_account_id)) OR cadence.holder_owns_key(license_key)));


--
-- Name: schedule_blocks Account holders can delete the blocks of their own schedules; Type: POLICY; Schema: public; Owner: -
--

CREATE POLICY "Account holders can delete the blocks of their own schedules" ON public.schedule_blocks FOR DELETE TO authenticated USING ((schedule_id = ANY (( SELECT cadence.holder_schedule_ids() AS holder_schedule_ids)::uuid[])));


--
-- Name: schedules Account holders can delete their own schedules; Type: POLICY; Schema: public; Owner: -
--

CREATE POLICY "Account holders can delete their own schedules" ON public.schedules FOR DELETE TO authenticated USING (((account_id = ( SELECT cadence.holder_account_id() AS holder_account_id)) OR cadence.holder_owns_key(license_key)));


--
-- Name: venue_addresses Account holders can delete their own venue addresses; Type: POLICY; Schema: public; Owner: -
--

CREATE POLICY "Account holders can delete their own venue addresses" ON public.venue_addresses FOR DELETE TO authenticated USING ((account_id = ( SELECT cadence.holder_account_id() AS holder_account_id)));


--
-- Name: categories Account holders can read categories; Type: POLICY; Schema: public; Owner: -
--

CREATE POLICY "Account holders can read categories" ON public.categories FOR SELECT TO authenticated USING ((( SELECT cadence.holder_account_id() AS holder_account_id) IS NOT NULL));


--
-- Name: groups Account holders can read groups; Type: POLICY; Schema: public; Owner: -
--

CREATE POLICY "Account holders can read groups" ON public.groups FOR SELECT TO authenticated USING ((( SELECT cadence.holder_account_id() AS holder_account_id) IS NOT NULL));


--
-- Name: color_palettes Account holders can read stored colour palettes; Type: POLICY; Schema: public; Owner: -
--

CREATE POLICY "Account holders can read stored colour palettes" ON public.color_palettes FOR SELECT TO authenticated USING ((( SELECT cadence.holder_account_id() AS holder_account_id) IS NOT NULL));


--
-- Name: frequencies Account holders can read stored frequencies; Type: POLICY; Schema: public; Owner: -
--

CREATE POLICY "Account holders can read stored frequencies" ON public.frequencies FOR SELECT TO authenticated USING ((( SELECT cadence.holder_account_id() AS holder_account_id) IS NOT NULL));


--
-- Name: schedule_blocks Account holders can read the blocks of their own schedules; Type: POLICY; Schema: public; Owner: -
--

CREATE POLICY "Account holders can read the blocks of their own schedules" ON public.schedule_blocks FOR SELECT TO authenticated USING ((schedule_id = ANY (( SELECT cadence.holder_schedule_ids() AS holder_schedule_ids)::uuid[])));


--
-- Name: kiosk_outages Account holders can read the outages of their own keys; Type: POLICY; Schema: public; Owner: -
--

CREATE POLICY "Account holders can read the outages of their own keys" ON public.kiosk_outages FOR SELECT TO authenticated USING ((license_key = ANY (( SELECT cadence.holder_license_keys() AS holder_license_keys)::text[])));


--
-- Name: proclamations Account holders can read the proclamations they are entitled to; Type: POLICY; Schema: public; Owner: -
--

CREATE POLICY "Account holders can read the proclamations they are entitled to" ON public.proclamations FOR SELECT TO authenticated USING ((id = ANY (( SELECT cadence.holder_proclamation_ids() AS holder_proclamation_ids)::uuid[])));


--
-- Name: seat_suspicions Account holders can read the seat flags of their own keys; Type: POLICY; Schema: public; Owner: -
--

CREATE POLICY "Account holders can read the seat flags of their own keys" ON public.seat_suspicions FOR SELECT TO authenticated USING ((license_key = ANY (( SELECT cadence.holder_license_keys() AS holder_license_keys)::text[])));


--
-- Name: kiosk_sightings Account holders can read the sightings of their own keys; Type: POLICY; Schema: public; Owner: -
--

CREATE POLICY "Account holders can read the sightings of their own keys" ON public.kiosk_sightings FOR SELECT TO authenticated USING ((license_key = ANY (( SELECT cadence.holder_license_keys() AS holder_license_keys)::text[])));


--
-- Name: accounts Account holders can read their own account; Type: POLICY; Schema: public; Owner: -
--

CREATE POLICY "Account holders can read their own account" ON public.accounts FOR SELECT TO authenticated USING ((auth_user_id = ( SELECT auth.uid() AS uid)));


--
-- Name: license_keys Account holders can read their own license keys; Type: POLICY; Schema: public; Owner: -
--

CREATE POLICY "Account holders can read their own license keys" ON public.license_keys FOR SELECT TO authenticated USING ((key = ANY (( SELECT cadence.holder_license_keys() AS holder_license_keys)::text[])));


--
-- Name: schedules Account holders can read their own schedules; Type: POLICY; Schema: public; Owner: -
--

CREATE POLICY "Account holders can read their own schedules" ON public.schedules FOR SELECT TO authenticated USING (((account_id = ( SELECT cadence.holder_account_id() AS holder_account_id)) OR cadence.holder_owns_key(license_key)));


--
-- Name: venue_addresses Account holders can read their own venue addresses; Type: POLICY; Schema: public; Owner: -
--

CREATE POLICY "Account holders can read their own venue addresses" ON public.venue_addresses FOR SELECT TO authenticated USING ((account_id = ( SELECT cadence.holder_account_id() AS holder_account_id)));


--
-- Name: schedule_block_proclamations Account holders can read what their blocks play; Type: POLICY; Schema: public; Owner: -
--

CREATE POLICY "Account holders can read what their blocks play" ON public.schedule_block_proclamations FOR SELECT TO authenticated USING ((block_id = ANY (( SELECT cadence.holder_block_ids() AS holder_block_ids)::uuid[])));


--
-- Name: venue_addresses Account holders can register venue addresses for their account; Type: POLICY; Schema: public; Owner: -
--

CREATE POLICY "Account holders can register venue addresses for their account" ON public.venue_addresses FOR INSERT TO authenticated WITH CHECK ((account_id = ( SELECT cadence.holder_account_id() AS holder_account_id)));


--
-- Name: schedule_block_proclamations Account holders can remove proclamations from their blocks; Type: POLICY; Schema: public; Owner: -
--

CREATE POLICY "Account holders can remove proclamations from their blocks" ON public.schedule_block_proclamations FOR DELETE TO authenticated USING ((block_id = ANY (( SELECT cadence.holder_block_ids() AS holder_block_ids)::uuid[])));


--
-- Name: account_proclamations; Type: ROW SECURITY; Schema: public; Owner: -
--

ALTER TABLE public.account_proclamations ENABLE ROW LEVEL SECURITY;

--
-- Name: accounts; Type: ROW SECURITY; Schema: public; Owner: -
--

ALTER TABLE public.accounts ENABLE ROW LEVEL SECURITY;

--
-- Name: categories; Type: ROW SECURITY; Schema: public; Owner: -
--

ALTER TABLE public.categories ENABLE ROW LEVEL SECURITY;

--
-- Name: color_palettes; Type: ROW SECURITY; Schema: public; Owner: -
--

ALTER TABLE public.color_palettes ENABLE ROW LEVEL SECURITY;

--
-- Name: email_outbox; Type: ROW SECURITY; Schema: public; Owner: -
--

ALTER TABLE public.email_outbox ENABLE ROW LEVEL SECURITY;

--
-- Name: frequencies; Type: ROW SECURITY; Schema: public; Owner: -
--

ALTER TABLE public.frequencies ENABLE ROW LEVEL SECURITY;

--
-- Name: groups; Type: ROW SECURITY; Schema: public; Owner: -
--

ALTER TABLE public.groups ENABLE ROW LEVEL SECURITY;

--
-- Name: kiosk_outages; Type: ROW SECURITY; Schema: public; Owner: -
--

ALTER TABLE public.kiosk_outages ENABLE ROW LEVEL SECURITY;

--
-- Name: kiosk_sightings; Type: ROW SECURITY; Schema: public; Owner: -
--

ALTER TABLE public.kiosk_sightings ENABLE ROW LEVEL SECURITY;

--
-- Name: kiosk_watch; Type: ROW SECURITY; Schema: public; Owner: -
--

ALTER TABLE public.kiosk_watch ENABLE ROW LEVEL SECURITY;

--
-- Name: license_keys; Type: ROW SECURITY; Schema: public; Owner: -
--

ALTER TABLE public.license_keys ENABLE ROW LEVEL SECURITY;

--
-- Name: onboarding_idempotency_keys; Type: ROW SECURITY; Schema: public; Owner: -
--

ALTER TABLE public.onboarding_idempotency_keys ENABLE ROW LEVEL SECURITY;

--
-- Name: proclamations; Type: ROW SECURITY; Schema: public; Owner: -
--

ALTER TABLE public.proclamations ENABLE ROW LEVEL SECURITY;

--
-- Name: schedule_block_proclamations; Type: ROW SECURITY; Schema: public; Owner: -
--

ALTER TABLE public.schedule_block_proclamations ENABLE ROW LEVEL SECURITY;

--
-- Name: schedule_blocks; Type: ROW SECURITY; Schema: public; Owner: -
--

ALTER TABLE public.schedule_blocks ENABLE ROW LEVEL SECURITY;

--
-- Name: schedule_payloads; Type: ROW SECURITY; Schema: public; Owner: -
--

ALTER TABLE public.schedule_payloads ENABLE ROW LEVEL SECURITY;

--
-- Name: schedules; Type: ROW SECURITY; Schema: public; Owner: -
--

ALTER TABLE public.schedules ENABLE ROW LEVEL SECURITY;

--
-- Name: seat_suspicions; Type: ROW SECURITY; Schema: public; Owner: -
--

ALTER TABLE public.seat_suspicions ENABLE ROW LEVEL SECURITY;

--
-- Name: seat_watch; Type: ROW SECURITY; Schema: public; Owner: -
--

ALTER TABLE public.seat_watch ENABLE ROW LEVEL SECURITY;

--
-- Name: venue_address_changes; Type: ROW SECURITY; Schema: public; Owner: -
--

ALTER TABLE public.venue_address_changes ENABLE ROW LEVEL SECURITY;

--
-- Name: venue_addresses; Type: ROW SECURITY; Schema: public; Owner: -
--

ALTER TABLE public.venue_addresses ENABLE ROW LEVEL SECURITY;

--
-- Name: webhook_nonces; Type: ROW SECURITY; Schema: public; Owner: -
--

ALTER TABLE public.webhook_nonces ENABLE ROW LEVEL SECURITY;

--
-- Name: SCHEMA cadence; Type: ACL; Schema: -; Owner: -
--

GRANT USAGE ON SCHEMA cadence TO service_role;


--
-- Name: SCHEMA public; Type: ACL; Schema: -; Owner: -
--

GRANT USAGE ON SCHEMA public TO anon;
GRANT USAGE ON SCHEMA public TO authenticated;
GRANT USAGE ON SCHEMA public TO service_role;


--
-- Name: FUNCTION await_account_changes(); Type: ACL; Schema: cadence; Owner: -
--

REVOKE ALL ON FUNCTION cadence.await_account_changes() FROM PUBLIC;


--
-- Name: FUNCTION canonical_frequencies(); Type: ACL; Schema: cadence; Owner: -
--

REVOKE ALL ON FUNCTION cadence.canonical_frequencies() FROM PUBLIC;
GRANT ALL ON FUNCTION cadence.canonical_frequencies() TO service_role;


--
-- Name: FUNCTION canonical_json(p_value jsonb); Type: ACL; Schema: cadence; Owner: -
--

REVOKE ALL ON FUNCTION cadence.canonical_json(p_value jsonb) FROM PUBLIC;
GRANT ALL ON FUNCTION cadence.canonical_json(p_value jsonb) TO service_role;


--
-- Name: FUNCTION categories_json(); Type: ACL; Schema: cadence; Owner: -
--

REVOKE ALL ON FUNCTION cadence.categories_json() FROM PUBLIC;
GRANT ALL ON FUNCTION cadence.categories_json() TO service_role;


--
-- Name: FUNCTION change_author(); Type: ACL; Schema: cadence; Owner: -
--

REVOKE ALL ON FUNCTION cadence.change_author() FROM PUBLIC;


--
-- Name: FUNCTION check_block_weekday(); Type: ACL; Schema: cadence; Owner: -
--

REVOKE ALL ON FUNCTION cadence.check_block_weekday() FROM PUBLIC;


--
-- Name: FUNCTION check_schedule_type_change(); Type: ACL; Schema: cadence; Owner: -
--

REVOKE ALL ON FUNCTION cadence.check_schedule_type_change() FROM PUBLIC;


--
-- Name: FUNCTION check_system_name_form(); Type: ACL; Schema: cadence; Owner: -
--

REVOKE ALL ON FUNCTION cadence.check_system_name_form() FROM PUBLIC;


--
-- Name: FUNCTION check_time_zone(); Type: ACL; Schema: cadence; Owner: -
--

REVOKE ALL ON FUNCTION cadence.check_time_zone() FROM PUBLIC;


--
-- Name: FUNCTION check_venue_address(); Type: ACL; Schema: cadence; Owner: -
--

REVOKE ALL ON FUNCTION cadence.check_venue_address() FROM PUBLIC;


--
-- Name: FUNCTION check_venue_address_account(); Type: ACL; Schema: cadence; Owner: -
--

REVOKE ALL ON FUNCTION cadence.check_venue_address_account() FROM PUBLIC;


--
-- Name: TABLE email_outbox; Type: ACL; Schema: public; Owner: -
--

GRANT ALL ON TABLE public.email_outbox TO service_role;


--
-- Name: FUNCTION claim_emails(p_now timestamp with time zone, p_lease_seconds integer, p_limit integer, p_id uuid); Type: ACL; Schema: cadence; Owner: -
--

REVOKE ALL ON FUNCTION cadence.claim_emails(p_now timestamp with time zone, p_lease_seconds integer, p_limit integer, p_id uuid) FROM PUBLIC;
GRANT ALL ON FUNCTION cadence.claim_emails(p_now timestamp with time zone, p_lease_seconds integer, p_limit integer, p_id uuid) TO service_role;


--
-- Name: FUNCTION claim_onboarding_key(p_source text, p_id text, p_body_sha256 bytea, p_now timestamp with time zone, p_lease_seconds integer); Type: ACL; Schema: cadence; Owner: -
--

REVOKE ALL ON FUNCTION cadence.claim_onboarding_key(p_source text, p_id text, p_body_sha256 bytea, p_now timestamp with time zone, p_lease_seconds integer) FROM PUBLIC;
GRANT ALL ON FUNCTION cadence.claim_onboarding_key(p_source text, p_id text, p_body_sha256 bytea, p_now timestamp with time zone, p_lease_seconds integer) TO service_role;


--
-- Name: FUNCTION claim_unlinked_accounts(p_now timestamp with time zone, p_lease_seconds integer, p_limit integer, p_id uuid); Type: ACL; Schema: cadence; Owner: -
--

REVOKE ALL ON FUNCTION cadence.claim_unlinked_accounts(p_now timestamp with time zone, p_lease_seconds integer, p_limit integer, p_id uuid) FROM PUBLIC;
GRANT ALL ON FUNCTION cadence.claim_unlinked_accounts(p_now timestamp with time zone, p_lease_seconds integer, p_limit integer, p_id uuid) TO service_role;


--
-- Name: FUNCTION color_palettes_json(); Type: ACL; Schema: cadence; Owner: -
--

REVOKE ALL ON FUNCTION cadence.color_palettes_json() FROM PUBLIC;
GRANT ALL ON FUNCTION cadence.color_palettes_json() TO service_role;


--
-- Name: FUNCTION enqueue_email(p_recipient text, p_subject text, p_text text, p_html text, p_now timestamp with time zone); Type: ACL; Schema: cadence; Owner: -
--

REVOKE ALL ON FUNCTION cadence.enqueue_email(p_recipient text, p_subject text, p_text text, p_html text, p_now timestamp with time zone) FROM PUBLIC;
GRANT ALL ON FUNCTION cadence.enqueue_email(p_recipient text, p_subject text, p_text text, p_html text, p_now timestamp with time zone) TO service_role;


--
-- Name: FUNCTION enqueue_hook_emails(p_event text, p_emails jsonb, p_now timestamp with time zone); Type: ACL; Schema: cadence; Owner: -
--

REVOKE ALL ON FUNCTION cadence.enqueue_hook_emails(p_event text, p_emails jsonb, p_now timestamp with time zone) FROM PUBLIC;
GRANT ALL ON FUNCTION cadence.enqueue_hook_emails(p_event text, p_emails jsonb, p_now timestamp with time zone) TO service_role;


--
-- Name: FUNCTION enqueue_request_email(p_recipient text, p_subject text, p_text text, p_html text, p_now timestamp with time zone); Type: ACL; Schema: cadence; Owner: -
--

REVOKE ALL ON FUNCTION cadence.enqueue_request_email(p_recipient text, p_subject text, p_text text, p_html text, p_now timestamp with time zone) FROM PUBLIC;
GRANT ALL ON FUNCTION cadence.enqueue_request_email(p_recipient text, p_subject text, p_text text, p_html text, p_now timestamp with time zone) TO service_role;


--
-- Name: FUNCTION entitlements(p_keys text[], p_emails text[]); Type: ACL; Schema: cadence; Owner: -
--

REVOKE ALL ON FUNCTION cadence.entitlements(p_keys text[], p_emails text[]) FROM PUBLIC;
GRANT ALL ON FUNCTION cadence.entitlements(p_keys text[], p_emails text[]) TO service_role;


--
-- Name: FUNCTION find_key_account(); Type: ACL; Schema: cadence; Owner: -
--

REVOKE ALL ON FUNCTION cadence.find_key_account() FROM PUBLIC;


--
-- Name: FUNCTION forget_deleted_key_sightings(); Type: ACL; Schema: cadence; Owner: -
--

REVOKE ALL ON FUNCTION cadence.forget_deleted_key_sightings() FROM PUBLIC;


--
-- Name: FUNCTION frequencies_json(); Type: ACL; Schema: cadence; Owner: -
--

REVOKE ALL ON FUNCTION cadence.frequencies_json() FROM PUBLIC;
GRANT ALL ON FUNCTION cadence.frequencies_json() TO service_role;


--
-- Name: FUNCTION groups_json(); Type: ACL; Schema: cadence; Owner: -
--

REVOKE ALL ON FUNCTION cadence.groups_json() FROM PUBLIC;
GRANT ALL ON FUNCTION cadence.groups_json() TO service_role;


--
-- Name: FUNCTION holder_account_id(); Type: ACL; Schema: cadence; Owner: -
--

REVOKE ALL ON FUNCTION cadence.holder_account_id() FROM PUBLIC;
GRANT ALL ON FUNCTION cadence.holder_account_id() TO authenticated;


--
-- Name: FUNCTION holder_block_ids(); Type: ACL; Schema: cadence; Owner: -
--

REVOKE ALL ON FUNCTION cadence.holder_block_ids() FROM PUBLIC;
GRANT ALL ON FUNCTION cadence.holder_block_ids() TO authenticated;


--
-- Name: FUNCTION holder_license_keys(); Type: ACL; Schema: cadence; Owner: -
--

REVOKE ALL ON FUNCTION cadence.holder_license_keys() FROM PUBLIC;
GRANT ALL ON FUNCTION cadence.holder_license_keys() TO authenticated;


--
-- Name: FUNCTION holder_owns_key(p_key text); Type: ACL; Schema: cadence; Owner: -
--

REVOKE ALL ON FUNCTION cadence.holder_owns_key(p_key text) FROM PUBLIC;
GRANT ALL ON FUNCTION cadence.holder_owns_key(p_key text) TO authenticated;


--
-- Name: FUNCTION holder_proclamation_ids(); Type: ACL; Schema: cadence; Owner: -
--

REVOKE ALL ON FUNCTION cadence.holder_proclamation_ids() FROM PUBLIC;
GRANT ALL ON FUNCTION cadence.holder_proclamation_ids() TO authenticated;


--
-- Name: FUNCTION holder_schedule_ids(); Type: ACL; Schema: cadence; Owner: -
--

REVOKE ALL ON FUNCTION cadence.holder_schedule_ids() FROM PUBLIC;
GRANT ALL ON FUNCTION cadence.holder_schedule_ids() TO authenticated;


--
-- Name: FUNCTION iana_time_zones(); Type: ACL; Schema: cadence; Owner: -
--

REVOKE ALL ON FUNCTION cadence.iana_time_zones() FROM PUBLIC;
GRANT ALL ON FUNCTION cadence.iana_time_zones() TO authenticated;
GRANT ALL ON FUNCTION cadence.iana_time_zones() TO service_role;


--
-- Name: FUNCTION kiosk_alert_pass(p_now timestamp with time zone); Type: ACL; Schema: cadence; Owner: -
--

REVOKE ALL ON FUNCTION cadence.kiosk_alert_pass(p_now timestamp with time zone) FROM PUBLIC;
GRANT ALL ON FUNCTION cadence.kiosk_alert_pass(p_now timestamp with time zone) TO service_role;


--
-- Name: FUNCTION legacy_schedules_if_changed(p_keys text[], p_emails text[], p_fingerprints text[]); Type: ACL; Schema: cadence; Owner: -
--

REVOKE ALL ON FUNCTION cadence.legacy_schedules_if_changed(p_keys text[], p_emails text[], p_fingerprints text[]) FROM PUBLIC;
GRANT ALL ON FUNCTION cadence.legacy_schedules_if_changed(p_keys text[], p_emails text[], p_fingerprints text[]) TO service_role;


--
-- Name: FUNCTION legacy_schedules_unless_held(p_keys text[], p_emails text[], p_versions text[]); Type: ACL; Schema: cadence; Owner: -
--

REVOKE ALL ON FUNCTION cadence.legacy_schedules_unless_held(p_keys text[], p_emails text[], p_versions text[]) FROM PUBLIC;
GRANT ALL ON FUNCTION cadence.legacy_schedules_unless_held(p_keys text[], p_emails text[], p_versions text[]) TO service_role;


--
-- Name: FUNCTION license_key_offline_after(p_key text); Type: ACL; Schema: cadence; Owner: -
--

REVOKE ALL ON FUNCTION cadence.license_key_offline_after(p_key text) FROM PUBLIC;
GRANT ALL ON FUNCTION cadence.license_key_offline_after(p_key text) TO authenticated;
GRANT ALL ON FUNCTION cadence.license_key_offline_after(p_key text) TO service_role;


--
-- Name: FUNCTION license_key_owner(p_key text); Type: ACL; Schema: cadence; Owner: -
--

REVOKE ALL ON FUNCTION cadence.license_key_owner(p_key text) FROM PUBLIC;
GRANT ALL ON FUNCTION cadence.license_key_owner(p_key text) TO authenticated;
GRANT ALL ON FUNCTION cadence.license_key_owner(p_key text) TO service_role;


--
-- Name: FUNCTION license_key_playing(p_key text, p_at timestamp with time zone); Type: ACL; Schema: cadence; Owner: -
--

REVOKE ALL ON FUNCTION cadence.license_key_playing(p_key text, p_at timestamp with time zone) FROM PUBLIC;
GRANT ALL ON FUNCTION cadence.license_key_playing(p_key text, p_at timestamp with time zone) TO authenticated;
GRANT ALL ON FUNCTION cadence.license_key_playing(p_key text, p_at timestamp with time zone) TO service_role;


--
-- Name: FUNCTION license_key_schedule_version(p_key text); Type: ACL; Schema: cadence; Owner: -
--

REVOKE ALL ON FUNCTION cadence.license_key_schedule_version(p_key text) FROM PUBLIC;
GRANT ALL ON FUNCTION cadence.license_key_schedule_version(p_key text) TO authenticated;
GRANT ALL ON FUNCTION cadence.license_key_schedule_version(p_key text) TO service_role;


--
-- Name: FUNCTION license_key_time_zone(p_key text); Type: ACL; Schema: cadence; Owner: -
--

REVOKE ALL ON FUNCTION cadence.license_key_time_zone(p_key text) FROM PUBLIC;
GRANT ALL ON FUNCTION cadence.license_key_time_zone(p_key text) TO authenticated;
GRANT ALL ON FUNCTION cadence.license_key_time_zone(p_key text) TO service_role;


--
-- Name: FUNCTION license_pairing(p_key text, p_email text); Type: ACL; Schema: cadence; Owner: -
--

REVOKE ALL ON FUNCTION cadence.license_pairing(p_key text, p_email text) FROM PUBLIC;
GRANT ALL ON FUNCTION cadence.license_pairing(p_key text, p_email text) TO service_role;


--
-- Name: FUNCTION license_pairings(p_keys text[], p_emails text[]); Type: ACL; Schema: cadence; Owner: -
--

REVOKE ALL ON FUNCTION cadence.license_pairings(p_keys text[], p_emails text[]) FROM PUBLIC;
GRANT ALL ON FUNCTION cadence.license_pairings(p_keys text[], p_emails text[]) TO service_role;


--
-- Name: FUNCTION license_schedules_if_changed(p_keys text[], p_fingerprints text[]); Type: ACL; Schema: cadence; Owner: -
--

REVOKE ALL ON FUNCTION cadence.license_schedules_if_changed(p_keys text[], p_fingerprints text[]) FROM PUBLIC;
GRANT ALL ON FUNCTION cadence.license_schedules_if_changed(p_keys text[], p_fingerprints text[]) TO service_role;


--
-- Name: FUNCTION license_schedules_unless_held(p_keys text[], p_versions text[]); Type: ACL; Schema: cadence; Owner: -
--

REVOKE ALL ON FUNCTION cadence.license_schedules_unless_held(p_keys text[], p_versions text[]) FROM PUBLIC;
GRANT ALL ON FUNCTION cadence.license_schedules_unless_held(p_keys text[], p_versions text[]) TO service_role;


--
-- Name: FUNCTION link_auth_user(p_account_id uuid, p_auth_user_id uuid); Type: ACL; Schema: cadence; Owner: -
--

REVOKE ALL ON FUNCTION cadence.link_auth_user(p_account_id uuid, p_auth_user_id uuid) FROM PUBLIC;
GRANT ALL ON FUNCTION cadence.link_auth_user(p_account_id uuid, p_auth_user_id uuid) TO service_role;


--
-- Name: FUNCTION mark_auth_link_failed(p_account_id uuid, p_error text, p_retry_at timestamp with time zone); Type: ACL; Schema: cadence; Owner: -
--

REVOKE ALL ON FUNCTION cadence.mark_auth_link_failed(p_account_id uuid, p_error text, p_retry_at timestamp with time zone) FROM PUBLIC;
GRANT ALL ON FUNCTION cadence.mark_auth_link_failed(p_account_id uuid, p_error text, p_retry_at timestamp with time zone) TO service_role;


--
-- Name: FUNCTION mark_email_failed(p_id uuid, p_error text, p_retry_at timestamp with time zone); Type: ACL; Schema: cadence; Owner: -
--

REVOKE ALL ON FUNCTION cadence.mark_email_failed(p_id uuid, p_error text, p_retry_at timestamp with time zone) FROM PUBLIC;
GRANT ALL ON FUNCTION cadence.mark_email_failed(p_id uuid, p_error text, p_retry_at timestamp with time zone) TO service_role;


--
-- Name: FUNCTION mark_email_sent(p_id uuid, p_now timestamp with time zone); Type: ACL; Schema: cadence; Owner: -
--

REVOKE ALL ON FUNCTION cadence.mark_email_sent(p_id uuid, p_now timestamp with time zone) FROM PUBLIC;
GRANT ALL ON FUNCTION cadence.mark_email_sent(p_id uuid, p_now timestamp with time zone) TO service_role;


--
-- Name: FUNCTION onboard(p_email text, p_name text, p_key text, p_subject text, p_text text, p_html text, p_now timestamp with time zone); Type: ACL; Schema: cadence; Owner: -
--

REVOKE ALL ON FUNCTION cadence.onboard(p_email text, p_name text, p_key text, p_subject text, p_text text, p_html text, p_now timestamp with time zone) FROM PUBLIC;
GRANT ALL ON FUNCTION cadence.onboard(p_email text, p_name text, p_key text, p_subject text, p_text text, p_html text, p_now timestamp with time zone) TO service_role;


--
-- Name: FUNCTION onboard_once(p_source text, p_id text, p_claim_token uuid, p_email text, p_name text, p_key text, p_subject text, p_text text, p_html text, p_now timestamp with time zone, p_answer_template text); Type: ACL; Schema: cadence; Owner: -
--

REVOKE ALL ON FUNCTION cadence.onboard_once(p_source text, p_id text, p_claim_token uuid, p_email text, p_name text, p_key text, p_subject text, p_text text, p_html text, p_now timestamp with time zone, p_answer_template text) FROM PUBLIC;
GRANT ALL ON FUNCTION cadence.onboard_once(p_source text, p_id text, p_claim_token uuid, p_email text, p_name text, p_key text, p_subject text, p_text text, p_html text, p_now timestamp with time zone, p_answer_template text) TO service_role;


--
-- Name: FUNCTION palettes(); Type: ACL; Schema: cadence; Owner: -
--

REVOKE ALL ON FUNCTION cadence.palettes() FROM PUBLIC;
GRANT ALL ON FUNCTION cadence.palettes() TO service_role;


--
-- Name: FUNCTION playing_at(p_keys text[], p_at timestamp with time zone); Type: ACL; Schema: cadence; Owner: -
--

REVOKE ALL ON FUNCTION cadence.playing_at(p_keys text[], p_at timestamp with time zone) FROM PUBLIC;
GRANT ALL ON FUNCTION cadence.playing_at(p_keys text[], p_at timestamp with time zone) TO service_role;


--
-- Name: FUNCTION proclamations_json(); Type: ACL; Schema: cadence; Owner: -
--

REVOKE ALL ON FUNCTION cadence.proclamations_json() FROM PUBLIC;
GRANT ALL ON FUNCTION cadence.proclamations_json() TO service_role;


--
-- Name: FUNCTION purge_onboarding_keys(p_now timestamp with time zone, p_limit integer); Type: ACL; Schema: cadence; Owner: -
--

REVOKE ALL ON FUNCTION cadence.purge_onboarding_keys(p_now timestamp with time zone, p_limit integer) FROM PUBLIC;
GRANT ALL ON FUNCTION cadence.purge_onboarding_keys(p_now timestamp with time zone, p_limit integer) TO service_role;


--
-- Name: FUNCTION queue_kiosk_alert_email(p_dark uuid[], p_back uuid[], p_recipient text, p_subject text, p_text text, p_html text, p_now timestamp with time zone); Type: ACL; Schema: cadence; Owner: -
--

REVOKE ALL ON FUNCTION cadence.queue_kiosk_alert_email(p_dark uuid[], p_back uuid[], p_recipient text, p_subject text, p_text text, p_html text, p_now timestamp with time zone) FROM PUBLIC;
GRANT ALL ON FUNCTION cadence.queue_kiosk_alert_email(p_dark uuid[], p_back uuid[], p_recipient text, p_subject text, p_text text, p_html text, p_now timestamp with time zone) TO service_role;


--
-- Name: FUNCTION queue_seat_digest(p_since timestamp with time zone, p_subject text, p_text text, p_html text, p_now timestamp with time zone); Type: ACL; Schema: cadence; Owner: -
--

REVOKE ALL ON FUNCTION cadence.queue_seat_digest(p_since timestamp with time zone, p_subject text, p_text text, p_html text, p_now timestamp with time zone) FROM PUBLIC;
GRANT ALL ON FUNCTION cadence.queue_seat_digest(p_since timestamp with time zone, p_subject text, p_text text, p_html text, p_now timestamp with time zone) TO service_role;


--
-- Name: FUNCTION record_kiosk_polls(p_keys text[], p_seen_at timestamp with time zone[], p_ips inet[], p_versions text[], p_first_names text[], p_last_names text[], p_name_changes integer[], p_poll_gap interval, p_burst_from integer[], p_burst_count integer[], p_burst_firsts timestamp with time zone[], p_burst_lasts timestamp with time zone[], p_burst_starts boolean[]); Type: ACL; Schema: cadence; Owner: -
--

REVOKE ALL ON FUNCTION cadence.record_kiosk_polls(p_keys text[], p_seen_at timestamp with time zone[], p_ips inet[], p_versions text[], p_first_names text[], p_last_names text[], p_name_changes integer[], p_poll_gap interval, p_burst_from integer[], p_burst_count integer[], p_burst_firsts timestamp with time zone[], p_burst_lasts timestamp with time zone[], p_burst_starts boolean[]) FROM PUBLIC;
GRANT ALL ON FUNCTION cadence.record_kiosk_polls(p_keys text[], p_seen_at timestamp with time zone[], p_ips inet[], p_versions text[], p_first_names text[], p_last_names text[], p_name_changes integer[], p_poll_gap interval, p_burst_from integer[], p_burst_count integer[], p_burst_firsts timestamp with time zone[], p_burst_lasts timestamp with time zone[], p_burst_starts boolean[]) TO service_role;


--
-- Name: FUNCTION record_kiosk_sightings(p_keys text[], p_seen_at timestamp with time zone[], p_ips inet[], p_versions text[], p_calls integer[], p_first_names text[], p_last_names text[], p_name_changes integer[], p_net_keys text[], p_networks cidr[], p_net_first timestamp with time zone[], p_net_last timestamp with time zone[], p_net_calls integer[], p_net_returns integer[]); Type: ACL; Schema: cadence; Owner: -
--

REVOKE ALL ON FUNCTION cadence.record_kiosk_sightings(p_keys text[], p_seen_at timestamp with time zone[], p_ips inet[], p_versions text[], p_calls integer[], p_first_names text[], p_last_names text[], p_name_changes integer[], p_net_keys text[], p_networks cidr[], p_net_first timestamp with time zone[], p_net_last timestamp with time zone[], p_net_calls integer[], p_net_returns integer[]) FROM PUBLIC;
GRANT ALL ON FUNCTION cadence.record_kiosk_sightings(p_keys text[], p_seen_at timestamp with time zone[], p_ips inet[], p_versions text[], p_calls integer[], p_first_names text[], p_last_names text[], p_name_changes integer[], p_net_keys text[], p_networks cidr[], p_net_first timestamp with time zone[], p_net_last timestamp with time zone[], p_net_calls integer[], p_net_returns integer[]) TO service_role;


--
-- Name: FUNCTION record_venue_address_change(); Type: ACL; Schema: cadence; Owner: -
--

REVOKE ALL ON FUNCTION cadence.record_venue_address_change() FROM PUBLIC;


--
-- Name: FUNCTION record_webhook_nonce(p_nonce text, p_now timestamp with time zone); Type: ACL; Schema: cadence; Owner: -
--

REVOKE ALL ON FUNCTION cadence.record_webhook_nonce(p_nonce text, p_now timestamp with time zone) FROM PUBLIC;
GRANT ALL ON FUNCTION cadence.record_webhook_nonce(p_nonce text, p_now timestamp with time zone) TO service_role;


--
-- Name: FUNCTION refresh_after_block_proclamations_change(); Type: ACL; Schema: cadence; Owner: -
--

REVOKE ALL ON FUNCTION cadence.refresh_after_block_proclamations_change() FROM PUBLIC;


--
-- Name: FUNCTION refresh_after_blocks_change(); Type: ACL; Schema: cadence; Owner: -
--

REVOKE ALL ON FUNCTION cadence.refresh_after_blocks_change() FROM PUBLIC;


--
-- Name: FUNCTION refresh_after_schedules_change(); Type: ACL; Schema: cadence; Owner: -
--

REVOKE ALL ON FUNCTION cadence.refresh_after_schedules_change() FROM PUBLIC;


--
-- Name: FUNCTION refresh_all_schedule_payloads(); Type: ACL; Schema: cadence; Owner: -
--

REVOKE ALL ON FUNCTION cadence.refresh_all_schedule_payloads() FROM PUBLIC;


--
-- Name: FUNCTION refresh_key_accounts(); Type: ACL; Schema: cadence; Owner: -
--

REVOKE ALL ON FUNCTION cadence.refresh_key_accounts() FROM PUBLIC;


--
-- Name: FUNCTION refresh_schedule_payloads(p_schedule_ids uuid[]); Type: ACL; Schema: cadence; Owner: -
--

REVOKE ALL ON FUNCTION cadence.refresh_schedule_payloads(p_schedule_ids uuid[]) FROM PUBLIC;
GRANT ALL ON FUNCTION cadence.refresh_schedule_payloads(p_schedule_ids uuid[]) TO service_role;


--
-- Name: FUNCTION release_onboarding_key(p_source text, p_id text, p_claim_token uuid); Type: ACL; Schema: cadence; Owner: -
--

REVOKE ALL ON FUNCTION cadence.release_onboarding_key(p_source text, p_id text, p_claim_token uuid) FROM PUBLIC;
GRANT ALL ON FUNCTION cadence.release_onboarding_key(p_source text, p_id text, p_claim_token uuid) TO service_role;


--
-- Name: FUNCTION schedule_content(p_schedule_id uuid); Type: ACL; Schema: cadence; Owner: -
--

REVOKE ALL ON FUNCTION cadence.schedule_content(p_schedule_id uuid) FROM PUBLIC;
GRANT ALL ON FUNCTION cadence.schedule_content(p_schedule_id uuid) TO service_role;


--
-- Name: FUNCTION schedule_payload(p_key text); Type: ACL; Schema: cadence; Owner: -
--

REVOKE ALL ON FUNCTION cadence.schedule_payload(p_key text) FROM PUBLIC;
GRANT ALL ON FUNCTION cadence.schedule_payload(p_key text) TO service_role;


--
-- Name: FUNCTION schedule_version(p_payload json); Type: ACL; Schema: cadence; Owner: -
--

REVOKE ALL ON FUNCTION cadence.schedule_version(p_payload json) FROM PUBLIC;
GRANT ALL ON FUNCTION cadence.schedule_version(p_payload json) TO service_role;


--
-- Name: FUNCTION seat_check_pass(p_now timestamp with time zone); Type: ACL; Schema: cadence; Owner: -
--

REVOKE ALL ON FUNCTION cadence.seat_check_pass(p_now timestamp with time zone) FROM PUBLIC;
GRANT ALL ON FUNCTION cadence.seat_check_pass(p_now timestamp with time zone) TO service_role;


--
-- Name: FUNCTION seat_digest(p_now timestamp with time zone); Type: ACL; Schema: cadence; Owner: -
--

REVOKE ALL ON FUNCTION cadence.seat_digest(p_now timestamp with time zone) FROM PUBLIC;
GRANT ALL ON FUNCTION cadence.seat_digest(p_now timestamp with time zone) TO service_role;


--
-- Name: FUNCTION served_schedules(p_keys text[]); Type: ACL; Schema: cadence; Owner: -
--

REVOKE ALL ON FUNCTION cadence.served_schedules(p_keys text[]) FROM PUBLIC;
GRANT ALL ON FUNCTION cadence.served_schedules(p_keys text[]) TO service_role;


--
-- Name: FUNCTION set_system_name(p_key text, p_name text); Type: ACL; Schema: cadence; Owner: -
--

REVOKE ALL ON FUNCTION cadence.set_system_name(p_key text, p_name text) FROM PUBLIC;
GRANT ALL ON FUNCTION cadence.set_system_name(p_key text, p_name text) TO service_role;


--
-- Name: FUNCTION set_system_names(p_keys text[], p_names text[]); Type: ACL; Schema: cadence; Owner: -
--

REVOKE ALL ON FUNCTION cadence.set_system_names(p_keys text[], p_names text[]) FROM PUBLIC;
GRANT ALL ON FUNCTION cadence.set_system_names(p_keys text[], p_names text[]) TO service_role;


--
-- Name: FUNCTION settle_polls(p_polls public.kiosk_polls, p_firsts timestamp with time zone[], p_lasts timestamp with time zone[], p_starts boolean[], p_gap interval, p_at timestamp with time zone); Type: ACL; Schema: cadence; Owner: -
--

REVOKE ALL ON FUNCTION cadence.settle_polls(p_polls public.kiosk_polls, p_firsts timestamp with time zone[], p_lasts timestamp with time zone[], p_starts boolean[], p_gap interval, p_at timestamp with time zone) FROM PUBLIC;
GRANT ALL ON FUNCTION cadence.settle_polls(p_polls public.kiosk_polls, p_firsts timestamp with time zone[], p_lasts timestamp with time zone[], p_starts boolean[], p_gap interval, p_at timestamp with time zone) TO service_role;


--
-- Name: FUNCTION system_name_form(p_name text); Type: ACL; Schema: cadence; Owner: -
--

REVOKE ALL ON FUNCTION cadence.system_name_form(p_name text) FROM PUBLIC;
GRANT ALL ON FUNCTION cadence.system_name_form(p_name text) TO service_role;


--
-- Name: FUNCTION system_name_shows(p_name text); Type: ACL; Schema: cadence; Owner: -
--

REVOKE ALL ON FUNCTION cadence.system_name_shows(p_name text) FROM PUBLIC;
GRANT ALL ON FUNCTION cadence.system_name_shows(p_name text) TO service_role;


--
-- Name: FUNCTION unannounced_kiosk_alerts(); Type: ACL; Schema: cadence; Owner: -
--

REVOKE ALL ON FUNCTION cadence.unannounced_kiosk_alerts() FROM PUBLIC;
GRANT ALL ON FUNCTION cadence.unannounced_kiosk_alerts() TO service_role;


--
-- Name: FUNCTION unscheduled_payload(); Type: ACL; Schema: cadence; Owner: -
--

REVOKE ALL ON FUNCTION cadence.unscheduled_payload() FROM PUBLIC;
GRANT ALL ON FUNCTION cadence.unscheduled_payload() TO service_role;


--
-- Name: FUNCTION validate_and_name_licenses(p_keys text[], p_emails text[], p_names text[]); Type: ACL; Schema: cadence; Owner: -
--

REVOKE ALL ON FUNCTION cadence.validate_and_name_licenses(p_keys text[], p_emails text[], p_names text[]) FROM PUBLIC;
GRANT ALL ON FUNCTION cadence.validate_and_name_licenses(p_keys text[], p_emails text[], p_names text[]) TO service_role;


--
-- Name: FUNCTION validate_license(p_key text, p_email text, p_system_name text); Type: ACL; Schema: cadence; Owner: -
--

REVOKE ALL ON FUNCTION cadence.validate_license(p_key text, p_email text, p_system_name text) FROM PUBLIC;
GRANT ALL ON FUNCTION cadence.validate_license(p_key text, p_email text, p_system_name text) TO service_role;


--
-- Name: FUNCTION validate_licenses(p_keys text[], p_emails text[]); Type: ACL; Schema: cadence; Owner: -
--

REVOKE ALL ON FUNCTION cadence.validate_licenses(p_keys text[], p_emails text[]) FROM PUBLIC;
GRANT ALL ON FUNCTION cadence.validate_licenses(p_keys text[], p_emails text[]) TO service_role;


--
-- Name: FUNCTION venue_allowances(p_most integer); Type: ACL; Schema: cadence; Owner: -
--

REVOKE ALL ON FUNCTION cadence.venue_allowances(p_most integer) FROM PUBLIC;
GRANT ALL ON FUNCTION cadence.venue_allowances(p_most integer) TO service_role;


--
-- Name: TABLE account_proclamations; Type: ACL; Schema: public; Owner: -
--

GRANT ALL ON TABLE public.account_proclamations TO service_role;


--
-- Name: TABLE accounts; Type: ACL; Schema: public; Owner: -
--

GRANT ALL ON TABLE public.accounts TO service_role;


--
-- Name: COLUMN accounts.id; Type: ACL; Schema: public; Owner: -
--

GRANT SELECT(id) ON TABLE public.accounts TO authenticated;


--
-- Name: COLUMN accounts.email; Type: ACL; Schema: public; Owner: -
--

GRANT SELECT(email) ON TABLE public.accounts TO authenticated;


--
-- Name: COLUMN accounts.display_name; Type: ACL; Schema: public; Owner: -
--

GRANT SELECT(display_name) ON TABLE public.accounts TO authenticated;


--
-- Name: COLUMN accounts.time_zone; Type: ACL; Schema: public; Owner: -
--

GRANT SELECT(time_zone),UPDATE(time_zone) ON TABLE public.accounts TO authenticated;


--
-- Name: COLUMN accounts.offline_alert_after; Type: ACL; Schema: public; Owner: -
--

GRANT SELECT(offline_alert_after),UPDATE(offline_alert_after) ON TABLE public.accounts TO authenticated;


--
-- Name: TABLE categories; Type: ACL; Schema: public; Owner: -
--

GRANT ALL ON TABLE public.categories TO service_role;
GRANT SELECT ON TABLE public.categories TO authenticated;


--
-- Name: SEQUENCE categories_id_seq; Type: ACL; Schema: public; Owner: -
--

GRANT ALL ON SEQUENCE public.categories_id_seq TO service_role;


--
-- Name: TABLE color_palettes; Type: ACL; Schema: public; Owner: -
--

GRANT ALL ON TABLE public.color_palettes TO service_role;
GRANT SELECT ON TABLE public.color_palettes TO authenticated;


--
-- Name: TABLE frequencies; Type: ACL; Schema: public; Owner: -
--

GRANT ALL ON TABLE public.frequencies TO service_role;
GRANT SELECT ON TABLE public.frequencies TO authenticated;


--
-- Name: SEQUENCE frequencies_id_seq; Type: ACL; Schema: public; Owner: -
--

GRANT ALL ON SEQUENCE public.frequencies_id_seq TO service_role;


--
-- Name: TABLE groups; Type: ACL; Schema: public; Owner: -
--

GRANT ALL ON TABLE public.groups TO service_role;
GRANT SELECT ON TABLE public.groups TO authenticated;


--
-- Name: SEQUENCE groups_id_seq; Type: ACL; Schema: public; Owner: -
--

GRANT ALL ON SEQUENCE public.groups_id_seq TO service_role;


--
-- Name: TABLE kiosk_outages; Type: ACL; Schema: public; Owner: -
--

GRANT ALL ON TABLE public.kiosk_outages TO service_role;


--
-- Name: COLUMN kiosk_outages.id; Type: ACL; Schema: public; Owner: -
--

GRANT SELECT(id) ON TABLE public.kiosk_outages TO authenticated;


--
-- Name: COLUMN kiosk_outages.license_key; Type: ACL; Schema: public; Owner: -
--

GRANT SELECT(license_key) ON TABLE public.kiosk_outages TO authenticated;


--
-- Name: COLUMN kiosk_outages.dark_since; Type: ACL; Schema: public; Owner: -
--

GRANT SELECT(dark_since) ON TABLE public.kiosk_outages TO authenticated;


--
-- Name: COLUMN kiosk_outages.last_seen_at; Type: ACL; Schema: public; Owner: -
--

GRANT SELECT(last_seen_at) ON TABLE public.kiosk_outages TO authenticated;


--
-- Name: COLUMN kiosk_outages.alerted_at; Type: ACL; Schema: public; Owner: -
--

GRANT SELECT(alerted_at) ON TABLE public.kiosk_outages TO authenticated;


--
-- Name: COLUMN kiosk_outages.back_at; Type: ACL; Schema: public; Owner: -
--

GRANT SELECT(back_at) ON TABLE public.kiosk_outages TO authenticated;


--
-- Name: COLUMN kiosk_outages.recovered_at; Type: ACL; Schema: public; Owner: -
--

GRANT SELECT(recovered_at) ON TABLE public.kiosk_outages TO authenticated;


--
-- Name: TABLE kiosk_sightings; Type: ACL; Schema: public; Owner: -
--

GRANT ALL ON TABLE public.kiosk_sightings TO service_role;


--
-- Name: COLUMN kiosk_sightings.license_key; Type: ACL; Schema: public; Owner: -
--

GRANT SELECT(license_key) ON TABLE public.kiosk_sightings TO authenticated;


--
-- Name: COLUMN kiosk_sightings.last_seen_at; Type: ACL; Schema: public; Owner: -
--

GRANT SELECT(last_seen_at) ON TABLE public.kiosk_sightings TO authenticated;


--
-- Name: COLUMN kiosk_sightings.last_seen_ip; Type: ACL; Schema: public; Owner: -
--

GRANT SELECT(last_seen_ip) ON TABLE public.kiosk_sightings TO authenticated;


--
-- Name: COLUMN kiosk_sightings.schedule_version_held; Type: ACL; Schema: public; Owner: -
--

GRANT SELECT(schedule_version_held) ON TABLE public.kiosk_sightings TO authenticated;


--
-- Name: COLUMN kiosk_sightings.system_name_written; Type: ACL; Schema: public; Owner: -
--

GRANT SELECT(system_name_written) ON TABLE public.kiosk_sightings TO authenticated;


--
-- Name: COLUMN kiosk_sightings.system_name_changes; Type: ACL; Schema: public; Owner: -
--

GRANT SELECT(system_name_changes) ON TABLE public.kiosk_sightings TO authenticated;


--
-- Name: COLUMN kiosk_sightings.system_name_changes_since; Type: ACL; Schema: public; Owner: -
--

GRANT SELECT(system_name_changes_since) ON TABLE public.kiosk_sightings TO authenticated;


--
-- Name: COLUMN kiosk_sightings.polls; Type: ACL; Schema: public; Owner: -
--

GRANT SELECT(polls) ON TABLE public.kiosk_sightings TO authenticated;


--
-- Name: TABLE license_keys; Type: ACL; Schema: public; Owner: -
--

GRANT ALL ON TABLE public.license_keys TO service_role;


--
-- Name: COLUMN license_keys.key; Type: ACL; Schema: public; Owner: -
--

GRANT SELECT(key) ON TABLE public.license_keys TO authenticated;


--
-- Name: COLUMN license_keys.active; Type: ACL; Schema: public; Owner: -
--

GRANT SELECT(active) ON TABLE public.license_keys TO authenticated;


--
-- Name: COLUMN license_keys.last_validated_at; Type: ACL; Schema: public; Owner: -
--

GRANT SELECT(last_validated_at) ON TABLE public.license_keys TO authenticated;


--
-- Name: COLUMN license_keys.system_name; Type: ACL; Schema: public; Owner: -
--

GRANT SELECT(system_name) ON TABLE public.license_keys TO authenticated;


--
-- Name: COLUMN license_keys.time_zone; Type: ACL; Schema: public; Owner: -
--

GRANT SELECT(time_zone),UPDATE(time_zone) ON TABLE public.license_keys TO authenticated;


--
-- Name: COLUMN license_keys.alerts_muted; Type: ACL; Schema: public; Owner: -
--

GRANT SELECT(alerts_muted),UPDATE(alerts_muted) ON TABLE public.license_keys TO authenticated;


--
-- Name: TABLE seat_suspicions; Type: ACL; Schema: public; Owner: -
--

GRANT ALL ON TABLE public.seat_suspicions TO service_role;


--
-- Name: COLUMN seat_suspicions.license_key; Type: ACL; Schema: public; Owner: -
--

GRANT SELECT(license_key) ON TABLE public.seat_suspicions TO authenticated;


--
-- Name: COLUMN seat_suspicions.rules; Type: ACL; Schema: public; Owner: -
--

GRANT SELECT(rules) ON TABLE public.seat_suspicions TO authenticated;


--
-- Name: COLUMN seat_suspicions.first_flagged_at; Type: ACL; Schema: public; Owner: -
--

GRANT SELECT(first_flagged_at) ON TABLE public.seat_suspicions TO authenticated;


--
-- Name: COLUMN seat_suspicions.last_flagged_at; Type: ACL; Schema: public; Owner: -
--

GRANT SELECT(last_flagged_at) ON TABLE public.seat_suspicions TO authenticated;


--
-- Name: TABLE kiosk_status; Type: ACL; Schema: public; Owner: -
--

GRANT ALL ON TABLE public.kiosk_status TO service_role;
GRANT SELECT ON TABLE public.kiosk_status TO authenticated;


--
-- Name: TABLE kiosk_uptime; Type: ACL; Schema: public; Owner: -
--

GRANT ALL ON TABLE public.kiosk_uptime TO service_role;
GRANT SELECT ON TABLE public.kiosk_uptime TO authenticated;


--
-- Name: TABLE kiosk_watch; Type: ACL; Schema: public; Owner: -
--

GRANT ALL ON TABLE public.kiosk_watch TO service_role;


--
-- Name: TABLE onboarding_idempotency_keys; Type: ACL; Schema: public; Owner: -
--

GRANT ALL ON TABLE public.onboarding_idempotency_keys TO service_role;


--
-- Name: TABLE proclamations; Type: ACL; Schema: public; Owner: -
--

GRANT ALL ON TABLE public.proclamations TO service_role;
GRANT SELECT ON TABLE public.proclamations TO authenticated;


--
-- Name: TABLE schedule_block_proclamations; Type: ACL; Schema: public; Owner: -
--

GRANT ALL ON TABLE public.schedule_block_proclamations TO service_role;
GRANT DELETE ON TABLE public.schedule_block_proclamations TO authenticated;


--
-- Name: COLUMN schedule_block_proclamations.block_id; Type: ACL; Schema: public; Owner: -
--

GRANT SELECT(block_id),INSERT(block_id) ON TABLE public.schedule_block_proclamations TO authenticated;


--
-- Name: COLUMN schedule_block_proclamations."position"; Type: ACL; Schema: public; Owner: -
--

GRANT SELECT("position"),INSERT("position"),UPDATE("position") ON TABLE public.schedule_block_proclamations TO authenticated;


--
-- Name: COLUMN schedule_block_proclamations.proclamation_id; Type: ACL; Schema: public; Owner: -
--

GRANT SELECT(proclamation_id),INSERT(proclamation_id),UPDATE(proclamation_id) ON TABLE public.schedule_block_proclamations TO authenticated;


--
-- Name: TABLE schedule_blocks; Type: ACL; Schema: public; Owner: -
--

GRANT ALL ON TABLE public.schedule_blocks TO service_role;
GRANT DELETE ON TABLE public.schedule_blocks TO authenticated;


--
-- Name: COLUMN schedule_blocks.id; Type: ACL; Schema: public; Owner: -
--

GRANT SELECT(id) ON TABLE public.schedule_blocks TO authenticated;


--
-- Name: COLUMN schedule_blocks.schedule_id; Type: ACL; Schema: public; Owner: -
--

GRANT SELECT(schedule_id),INSERT(schedule_id) ON TABLE public.schedule_blocks TO authenticated;


--
-- Name: COLUMN schedule_blocks.weekday; Type: ACL; Schema: public; Owner: -
--

GRANT SELECT(weekday),INSERT(weekday),UPDATE(weekday) ON TABLE public.schedule_blocks TO authenticated;


--
-- Name: COLUMN schedule_blocks.start_time; Type: ACL; Schema: public; Owner: -
--

GRANT SELECT(start_time),INSERT(start_time),UPDATE(start_time) ON TABLE public.schedule_blocks TO authenticated;


--
-- Name: COLUMN schedule_blocks.end_time; Type: ACL; Schema: public; Owner: -
--

GRANT SELECT(end_time),INSERT(end_time),UPDATE(end_time) ON TABLE public.schedule_blocks TO authenticated;


--
-- Name: COLUMN schedule_blocks.dynamic_audio; Type: ACL; Schema: public; Owner: -
--

GRANT SELECT(dynamic_audio),INSERT(dynamic_audio),UPDATE(dynamic_audio) ON TABLE public.schedule_blocks TO authenticated;


--
-- Name: TABLE schedule_payloads; Type: ACL; Schema: public; Owner: -
--

GRANT ALL ON TABLE public.schedule_payloads TO service_role;


--
-- Name: TABLE schedules; Type: ACL; Schema: public; Owner: -
--

GRANT ALL ON TABLE public.schedules TO service_role;
GRANT DELETE ON TABLE public.schedules TO authenticated;


--
-- Name: COLUMN schedules.id; Type: ACL; Schema: public; Owner: -
--

GRANT SELECT(id) ON TABLE public.schedules TO authenticated;


--
-- Name: COLUMN schedules.license_key; Type: ACL; Schema: public; Owner: -
--

GRANT SELECT(license_key),INSERT(license_key) ON TABLE public.schedules TO authenticated;


--
-- Name: COLUMN schedules.account_id; Type: ACL; Schema: public; Owner: -
--

GRANT SELECT(account_id),INSERT(account_id) ON TABLE public.schedules TO authenticated;


--
-- Name: COLUMN schedules.type; Type: ACL; Schema: public; Owner: -
--

GRANT SELECT(type),INSERT(type),UPDATE(type) ON TABLE public.schedules TO authenticated;


--
-- Name: COLUMN schedules.created_at; Type: ACL; Schema: public; Owner: -
--

GRANT SELECT(created_at) ON TABLE public.schedules TO authenticated;


--
-- Name: TABLE seat_watch; Type: ACL; Schema: public; Owner: -
--

GRANT ALL ON TABLE public.seat_watch TO service_role;


--
-- Name: TABLE suspected_copies; Type: ACL; Schema: public; Owner: -
--

GRANT ALL ON TABLE public.suspected_copies TO service_role;


--
-- Name: TABLE venue_addresses; Type: ACL; Schema: public; Owner: -
--

GRANT DELETE ON TABLE public.venue_addresses TO authenticated;


--
-- Name: COLUMN venue_addresses.id; Type: ACL; Schema: public; Owner: -
--

GRANT SELECT(id) ON TABLE public.venue_addresses TO authenticated;


--
-- Name: COLUMN venue_addresses.account_id; Type: ACL; Schema: public; Owner: -
--

GRANT SELECT(account_id),INSERT(account_id) ON TABLE public.venue_addresses TO authenticated;


--
-- Name: COLUMN venue_addresses.network; Type: ACL; Schema: public; Owner: -
--

GRANT SELECT(network),INSERT(network),UPDATE(network) ON TABLE public.venue_addresses TO authenticated;


--
-- Name: COLUMN venue_addresses.kiosks; Type: ACL; Schema: public; Owner: -
--

GRANT SELECT(kiosks),INSERT(kiosks),UPDATE(kiosks) ON TABLE public.venue_addresses TO authenticated;


--
-- Name: COLUMN venue_addresses.created_at; Type: ACL; Schema: public; Owner: -
--

GRANT SELECT(created_at) ON TABLE public.venue_addresses TO authenticated;


--
-- Name: COLUMN venue_addresses.created_by; Type: ACL; Schema: public; Owner: -
--

GRANT SELECT(created_by) ON TABLE public.venue_addresses TO authenticated;


--
-- Name: COLUMN venue_addresses.updated_at; Type: ACL; Schema: public; Owner: -
--

GRANT SELECT(updated_at) ON TABLE public.venue_addresses TO authenticated;


--
-- Name: COLUMN venue_addresses.updated_by; Type: ACL; Schema: public; Owner: -
--

GRANT SELECT(updated_by) ON TABLE public.venue_addresses TO authenticated;


--
-- Name: TABLE webhook_nonces; Type: ACL; Schema: public; Owner: -
--

GRANT ALL ON TABLE public.webhook_nonces TO service_role;


--
-- Name: DEFAULT PRIVILEGES FOR SEQUENCES; Type: DEFAULT ACL; Schema: public; Owner: -
--

ALTER DEFAULT PRIVILEGES FOR ROLE postgres IN SCHEMA public GRANT ALL ON SEQUENCES  TO service_role;


--
-- Name: DEFAULT PRIVILEGES FOR FUNCTIONS; Type: DEFAULT ACL; Schema: public; Owner: -
--

ALTER DEFAULT PRIVILEGES FOR ROLE postgres IN SCHEMA public GRANT ALL ON FUNCTIONS  TO service_role;


--
-- Name: DEFAULT PRIVILEGES FOR TABLES; Type: DEFAULT ACL; Schema: public; Owner: -
--

ALTER DEFAULT PRIVILEGES FOR ROLE postgres IN SCHEMA public GRANT ALL ON TABLES  TO service_role;


--
-- PostgreSQL database dump complete
--


