-- Listening schedules, edited by staff in the dashboard and by account holders through the Data
-- API. Constraints and triggers keep every edit valid and name what went wrong: a schedule has one
-- owner and one type, a block's times are wall-clock minutes, a block has a weekday exactly when its
-- schedule is weekly, and a block's proclamations are ordered and always exist.
--
-- Kiosks poll far more often than anyone edits, so the payload a kiosk reads is stored once per
-- schedule (schedule_payloads), refreshed by the triggers on every table it reads, with its version
-- (the ETag) computed once, when it is stored. A poll finds the row from the key at read time (its
-- own schedule, else its account's): what an edit costs depends on what changed, never on how many
-- kiosks read it. What plays now: each key's block at an instant, in its own zone (cadence.playing_at).

CREATE TABLE public.schedules (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    license_key text,
    account_id uuid,
    type text NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT schedule_has_exactly_one_owner CHECK ((num_nonnulls(license_key, account_id) = 1)),
    CONSTRAINT schedule_type_is_daily_or_weekly CHECK ((type = ANY (ARRAY['daily'::text, 'weekly'::text])))
);

COMMENT ON TABLE public.schedules IS 'A daily or weekly listening schedule of one license key or one account. A key''s own schedule wins over its account''s.';

COMMENT ON COLUMN public.schedules.license_key IS 'Set this or account_id, not both.';

COMMENT ON COLUMN public.schedules.type IS 'daily or weekly. Blocks of a weekly schedule have a weekday; blocks of a daily one have none.';

ALTER TABLE ONLY public.schedules
    ADD CONSTRAINT one_schedule_per_account UNIQUE (account_id);

ALTER TABLE ONLY public.schedules
    ADD CONSTRAINT one_schedule_per_license_key UNIQUE (license_key);

ALTER TABLE ONLY public.schedules
    ADD CONSTRAINT schedules_pkey PRIMARY KEY (id);

ALTER TABLE public.schedules ENABLE ROW LEVEL SECURITY;

ALTER TABLE ONLY public.schedules
    ADD CONSTRAINT schedule_account_exists FOREIGN KEY (account_id) REFERENCES public.accounts(id) ON DELETE CASCADE;

ALTER TABLE ONLY public.schedules
    ADD CONSTRAINT schedule_license_key_exists FOREIGN KEY (license_key) REFERENCES public.license_keys(key) ON UPDATE CASCADE ON DELETE CASCADE;

CREATE TABLE public.schedule_blocks (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    schedule_id uuid NOT NULL,
    weekday text,
    -- `time` accepts 00:00 to 24:00, so an out-of-range time never gets in.
    start_time time without time zone NOT NULL,
    end_time time without time zone NOT NULL,
    dynamic_audio boolean DEFAULT false NOT NULL,
    CONSTRAINT block_start_is_before_midnight CHECK ((start_time < '24:00:00'::time without time zone)),
    CONSTRAINT block_times_are_whole_minutes CHECK (((EXTRACT(second FROM start_time) = (0)::numeric) AND (EXTRACT(second FROM end_time) = (0)::numeric))),
    CONSTRAINT block_weekday_is_monday_to_sunday CHECK ((weekday = ANY (ARRAY['monday'::text, 'tuesday'::text, 'wednesday'::text, 'thursday'::text, 'friday'::text, 'saturday'::text, 'sunday'::text])))
);

COMMENT ON TABLE public.schedule_blocks IS 'A time block of a schedule. An end at or before the start crosses midnight (22:00-06:00); 00:00-24:00 is the whole day.';

COMMENT ON COLUMN public.schedule_blocks.weekday IS 'monday .. sunday for a weekly schedule; empty for a daily one.';

COMMENT ON COLUMN public.schedule_blocks.end_time IS '00:00 to 24:00; an end equal to the start is a full 24 hours.';

COMMENT ON COLUMN public.schedule_blocks.dynamic_audio IS 'The kiosk turns dynamic audio on while the block is active.';

ALTER TABLE ONLY public.schedule_blocks
    ADD CONSTRAINT schedule_blocks_pkey PRIMARY KEY (id);

ALTER TABLE public.schedule_blocks ENABLE ROW LEVEL SECURITY;

ALTER TABLE ONLY public.schedule_blocks
    ADD CONSTRAINT block_schedule_exists FOREIGN KEY (schedule_id) REFERENCES public.schedules(id) ON DELETE CASCADE;

CREATE INDEX schedule_blocks_schedule_id_idx ON public.schedule_blocks USING btree (schedule_id, start_time);

CREATE TABLE public.schedule_block_proclamations (
    block_id uuid NOT NULL,
    "position" integer NOT NULL,
    -- Restrict: a proclamation still scheduled cannot be deleted, so no block points to a missing one.
    proclamation_id uuid NOT NULL,
    CONSTRAINT block_position_is_positive CHECK (("position" >= 1))
);

COMMENT ON TABLE public.schedule_block_proclamations IS 'The proclamations a block plays, in position order (1, 2, ...). The same proclamation may appear more than once.';

-- Checked at the end of each statement, so one update can swap or renumber positions.
ALTER TABLE ONLY public.schedule_block_proclamations
    ADD CONSTRAINT block_position_is_unique PRIMARY KEY (block_id, "position") DEFERRABLE;

ALTER TABLE public.schedule_block_proclamations ENABLE ROW LEVEL SECURITY;

ALTER TABLE ONLY public.schedule_block_proclamations
    ADD CONSTRAINT block_proclamation_block_exists FOREIGN KEY (block_id) REFERENCES public.schedule_blocks(id) ON DELETE CASCADE;

ALTER TABLE ONLY public.schedule_block_proclamations
    ADD CONSTRAINT block_proclamation_exists FOREIGN KEY (proclamation_id) REFERENCES public.proclamations(id) ON DELETE RESTRICT;

CREATE INDEX schedule_block_proclamations_proclamation_id_idx ON public.schedule_block_proclamations USING btree (proclamation_id);

CREATE FUNCTION cadence.canonical_json(p_value jsonb) RETURNS text
    LANGUAGE plpgsql IMMUTABLE
    SET search_path TO ''
    AS $$
begin
  -- A jsonb scalar prints as JSON.stringify prints it for what payloads hold (strings, integers,
  -- booleans, null). Keys compare byte-wise, as JavaScript sorts the payload's ASCII keys. Scalars
  -- print in their container's query, not by a call each: a block's ten fields were ten calls, and
  -- a schedule of 1,441 blocks took 450 ms to version (42 ms to assemble).
  case pg_catalog.jsonb_typeof(p_value)
    when 'object' then
      return '{' || coalesce((
        select pg_catalog.string_agg(pg_catalog.to_json(e.key)::text || ':' ||
                 case when pg_catalog.jsonb_typeof(e.value) in ('object', 'array') then cadence.canonical_json(e.value) else e.value::text end,
                 ',' order by e.key collate "C")
        from pg_catalog.jsonb_each(p_value) as e), '') || '}';
    when 'array' then
      return '[' || coalesce((
        select pg_catalog.string_agg(
                 case when pg_catalog.jsonb_typeof(a.value) in ('object', 'array') then cadence.canonical_json(a.value) else a.value::text end,
                 ',' order by a.n)
        from pg_catalog.jsonb_array_elements(p_value) with ordinality as a(value, n)), '') || ']';
    else
      return p_value::text;
  end case;
end
$$;

COMMENT ON FUNCTION cadence.canonical_json(p_value jsonb) IS 'JSON with every object''s keys sorted and no whitespace: one spelling for equal content, the text cadence.schedule_version hashes.';

CREATE FUNCTION cadence.schedule_version(p_payload json) RETURNS text
    LANGUAGE sql IMMUTABLE
    SET search_path TO ''
    AS $$
  select pg_catalog.encode(pg_catalog.sha256(pg_catalog.convert_to(cadence.canonical_json(pg_catalog.jsonb_build_object(
           'type', p_payload::jsonb -> 'type',
           'daily', p_payload::jsonb -> 'daily',
           'weekly', p_payload::jsonb -> 'weekly')), 'UTF8')), 'hex')
$$;

COMMENT ON FUNCTION cadence.schedule_version(p_payload json) IS 'The schedule version of a payload: hex SHA-256 of the canonical JSON of type, daily and weekly. Computed here, once, when a payload is stored (public.schedule_payloads.version); the API serves it as the ETag as it is.';

CREATE TABLE public.schedule_payloads (
    schedule_id uuid NOT NULL,
    payload json NOT NULL,
    version text GENERATED ALWAYS AS (cadence.schedule_version(payload)) STORED
);

COMMENT ON TABLE public.schedule_payloads IS 'Derived, do not edit: each schedule''s payload as kiosks read it (cadence.schedule_content) and its version, kept current by triggers. To rebuild: select cadence.refresh_schedule_payloads(array(select id from public.schedules));';

COMMENT ON COLUMN public.schedule_payloads.version IS 'The schedule version the API serves to every key that reads this schedule (its ETag, unquoted).';

ALTER TABLE ONLY public.schedule_payloads
    ADD CONSTRAINT schedule_payloads_pkey PRIMARY KEY (schedule_id);

ALTER TABLE public.schedule_payloads ENABLE ROW LEVEL SECURITY;

ALTER TABLE ONLY public.schedule_payloads
    ADD CONSTRAINT schedule_payload_schedule_exists FOREIGN KEY (schedule_id) REFERENCES public.schedules(id) ON UPDATE CASCADE ON DELETE CASCADE;

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

COMMENT ON FUNCTION cadence.change_author() IS 'Who makes the current change: "account holder <auth user id>" for a signed-in holder, else "role <database login>". For audit columns.';

-- Checks a block's weekday against its schedule's type.
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

COMMENT ON FUNCTION cadence.check_block_weekday() IS 'Trigger: a block has a weekday exactly when its schedule is weekly.';

-- Refuses a type change that would leave blocks with a wrong weekday.
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

COMMENT ON FUNCTION cadence.check_schedule_type_change() IS 'Trigger: a schedule''s type changes only when every block already fits the new type.';

CREATE FUNCTION cadence.unscheduled_payload() RETURNS json
    LANGUAGE sql IMMUTABLE
    SET search_path TO ''
    AS $$
  select '{"type":null,"daily":[],"weekly":{},"blocks":[]}'::json
$$;

COMMENT ON FUNCTION cadence.unscheduled_payload() IS 'The payload of a key with no schedule to read (type null). Immutable, so a query plan holds it, and its version, as constants.';

-- The schedule a key reads, found by one index probe a table instead of a test a candidate: every
-- schedule poll runs it, and a batch of 20 keys took 2.1x this body's time when each key's account
-- was found by an OR of two index scans, then confirmed by the pairing rule. The key's account is
-- its stored answer (license_keys.belongs_to), and its schedule is probed only for a key with no
-- schedule of its own (the `case` gives the index a null, which matches nothing without a descent).
-- Each distinct key of the batch is resolved once, then joined back to its positions.
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

COMMENT ON FUNCTION cadence.served_schedules(p_keys text[]) IS 'For each known key (position n, 1-based): the schedule it reads (its own, else its account''s, license_keys.belongs_to, else none) with that schedule''s stored version and payload; the unscheduled payload for none. No row for an unknown key.';

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

COMMENT ON FUNCTION cadence.legacy_schedules_unless_held(p_keys text[], p_emails text[], p_versions text[]) IS 'For each key and e-mail (position n), the pairing outcome and, when paired, the version of the schedule the key reads, with the payload only when it differs from the version the caller holds at the same position.';

CREATE FUNCTION cadence.legacy_schedules_if_changed(p_keys text[], p_emails text[], p_fingerprints text[]) RETURNS TABLE(n bigint, outcome text, fingerprint text, payload json)
    LANGUAGE plpgsql STABLE
    SET search_path TO ''
    SET plan_cache_mode TO 'force_generic_plan'
    AS $$
begin
  return query select s.n, s.outcome, s.version, s.payload from cadence.legacy_schedules_unless_held(p_keys, p_emails, p_fingerprints) as s;
end
$$;

COMMENT ON FUNCTION cadence.legacy_schedules_if_changed(p_keys text[], p_emails text[], p_fingerprints text[]) IS 'Former name of cadence.legacy_schedules_unless_held, for API instances deployed before it (their `fingerprint` is the version); dropped once none runs.';

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

COMMENT ON FUNCTION cadence.playing_at(p_keys text[], p_at timestamp with time zone) IS 'For each known key (position n) at instant p_at: its time zone and local time, and the block of the schedule it reads that plays then (null when none): id, weekday, start and end, the local date and instant it started, its proclamations in order. The wall-clock rule and its daylight-saving cases are in the migration that made it.';

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

COMMENT ON FUNCTION cadence.license_key_playing(p_key text, p_at timestamp with time zone) IS 'The block a license key''s kiosk should play at p_at (cadence.playing_at) as {blockId, weekday, startTime, endTime, startedOn, proclamationIds}, or null. For public.kiosk_status.';

CREATE FUNCTION cadence.license_key_schedule_version(p_key text) RETURNS text
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO ''
    AS $$
  select s.version from cadence.served_schedules(array[p_key]) as s
$$;

COMMENT ON FUNCTION cadence.license_key_schedule_version(p_key text) IS 'The schedule version the API serves for a license key now (its ETag, unquoted). For public.kiosk_status.';

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

COMMENT ON FUNCTION cadence.license_schedules_unless_held(p_keys text[], p_versions text[]) IS 'For each known key (position n), the version of the schedule it reads, with the payload only when it differs from the version the caller holds at the same position; no row for an unknown key.';

-- The polls under their former name, for API instances deployed before the version had one name
-- (20261126000400_schedule_version_one_name.sql): the same answers, from the new functions.
CREATE FUNCTION cadence.license_schedules_if_changed(p_keys text[], p_fingerprints text[]) RETURNS TABLE(n bigint, fingerprint text, payload json)
    LANGUAGE plpgsql STABLE
    SET search_path TO ''
    SET plan_cache_mode TO 'force_generic_plan'
    AS $$
begin
  return query select s.n, s.version, s.payload from cadence.license_schedules_unless_held(p_keys, p_fingerprints) as s;
end
$$;

COMMENT ON FUNCTION cadence.license_schedules_if_changed(p_keys text[], p_fingerprints text[]) IS 'Former name of cadence.license_schedules_unless_held, for API instances deployed before it (their `fingerprint` is the version); dropped once none runs.';

-- Written for the plan cache: plpgsql keeps the statement's plan across calls in a backend (a
-- `language sql` body is planned again on every call before Postgres 18).
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

COMMENT ON FUNCTION cadence.schedule_content(p_schedule_id uuid) IS 'A schedule''s payload as {type, daily, weekly, blocks}, assembled from its blocks; the unscheduled payload for null; null for an unknown schedule.';

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
  -- An edit that changes nothing a kiosk sees (a block's id order, say) writes nothing. An update,
  -- not an upsert: an upsert computes the stored version (cadence.schedule_version) for the row it
  -- proposes, and again for the row it updates, or for nothing when the payload is unchanged.
  update public.schedule_payloads as p
     set payload = n.payload
    from (select s.id, cadence.schedule_content(s.id) as payload
            from public.schedules as s
           where s.id in (select u.id from unnest(p_schedule_ids) as u(id))) as n
   where p.schedule_id = n.id and p.payload::text is distinct from n.payload::text;
  -- A schedule with no payload yet (new): the upsert settles a race with another first refresh.
  insert into public.schedule_payloads (schedule_id, payload)
  select s.id, cadence.schedule_content(s.id)
    from public.schedules as s
   where s.id in (select u.id from unnest(p_schedule_ids) as u(id))
     and not exists (select from public.schedule_payloads as p where p.schedule_id = s.id)
      on conflict (schedule_id) do update set payload = excluded.payload
   where public.schedule_payloads.payload::text is distinct from excluded.payload::text;
end
$$;

COMMENT ON FUNCTION cadence.refresh_schedule_payloads(p_schedule_ids uuid[]) IS 'Stores the current payload (cadence.schedule_content) of each given schedule. Triggers call it; staff may, to rebuild.';

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

COMMENT ON FUNCTION cadence.refresh_after_block_proclamations_change() IS 'Trigger: refreshes the payload of the schedule of each block whose proclamations changed.';

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

COMMENT ON FUNCTION cadence.refresh_after_blocks_change() IS 'Trigger: refreshes the payload of the schedule of each changed block, before and after the change.';

-- Statement triggers with transition tables: a bulk edit refreshes each affected schedule once. They
-- run with their owner's rights, because account holders edit their schedules through the Data API
-- and may not write the derived table.
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

COMMENT ON FUNCTION cadence.refresh_after_schedules_change() IS 'Trigger: stores the payload of each created or changed schedule.';

CREATE FUNCTION cadence.refresh_all_schedule_payloads() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
begin
  perform cadence.refresh_schedule_payloads(array(select s.id from public.schedules as s));
  return null;
end
$$;

COMMENT ON FUNCTION cadence.refresh_all_schedule_payloads() IS 'Trigger (after truncate): refreshes every schedule''s payload.';

CREATE FUNCTION cadence.schedule_payload(p_key text) RETURNS json
    LANGUAGE plpgsql STABLE
    SET search_path TO ''
    AS $$
begin
  return (select cadence.schedule_content(s.schedule_id) from cadence.served_schedules(array[p_key]) as s);
end
$$;

COMMENT ON FUNCTION cadence.schedule_payload(p_key text) IS 'The schedule a license key reads, assembled now from the tables (what public.schedule_payloads must hold): its own schedule, else its account''s, else type null. Null for an unknown key.';

CREATE TRIGGER block_weekday_matches_schedule_type BEFORE INSERT OR UPDATE OF schedule_id, weekday ON public.schedule_blocks FOR EACH ROW EXECUTE FUNCTION cadence.check_block_weekday();

CREATE TRIGGER payloads_refresh_delete AFTER DELETE ON public.schedule_block_proclamations REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION cadence.refresh_after_block_proclamations_change();

CREATE TRIGGER payloads_refresh_delete AFTER DELETE ON public.schedule_blocks REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION cadence.refresh_after_blocks_change();

CREATE TRIGGER payloads_refresh_insert AFTER INSERT ON public.schedule_block_proclamations REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION cadence.refresh_after_block_proclamations_change();

CREATE TRIGGER payloads_refresh_insert AFTER INSERT ON public.schedule_blocks REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION cadence.refresh_after_blocks_change();

CREATE TRIGGER payloads_refresh_insert AFTER INSERT ON public.schedules REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION cadence.refresh_after_schedules_change();

CREATE TRIGGER payloads_refresh_truncate AFTER TRUNCATE ON public.schedule_block_proclamations FOR EACH STATEMENT EXECUTE FUNCTION cadence.refresh_all_schedule_payloads();

CREATE TRIGGER payloads_refresh_truncate AFTER TRUNCATE ON public.schedule_blocks FOR EACH STATEMENT EXECUTE FUNCTION cadence.refresh_all_schedule_payloads();

CREATE TRIGGER payloads_refresh_update AFTER UPDATE ON public.schedule_block_proclamations REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION cadence.refresh_after_block_proclamations_change();

CREATE TRIGGER payloads_refresh_update AFTER UPDATE ON public.schedule_blocks REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION cadence.refresh_after_blocks_change();

CREATE TRIGGER payloads_refresh_update AFTER UPDATE ON public.schedules REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION cadence.refresh_after_schedules_change();

CREATE TRIGGER schedule_type_change_fits_blocks BEFORE UPDATE OF type ON public.schedules FOR EACH ROW WHEN ((old.type IS DISTINCT FROM new.type)) EXECUTE FUNCTION cadence.check_schedule_type_change();
