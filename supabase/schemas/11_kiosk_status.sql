-- Every kiosk's health, one row per license key, for staff to filter and sort in the dashboard:
-- who owns the key, when a kiosk last called and from where, whether it holds its current schedule,
-- what it should play now and whether it is offline or suspected of being a copy. The view is
-- SECURITY INVOKER (a definer view in `public` is an error for Supabase's advisors): each reader sees
-- what the tables' grants and policies let them see. The sightings are written here, off the
-- request path, a batch of keys in one statement, the latest call per key winning.

CREATE FUNCTION cadence.forget_deleted_key_sightings() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $$
begin
  delete from public.kiosk_sightings as s where s.license_key in (select o.key from old_rows as o);
  return null;
end
$$;

COMMENT ON FUNCTION cadence.forget_deleted_key_sightings() IS 'Trigger: a deleted license key''s sighting goes with it.';

CREATE FUNCTION cadence.record_kiosk_polls(p_keys text[], p_seen_at timestamp with time zone[], p_ips inet[], p_versions text[], p_first_names text[] DEFAULT '{}'::text[], p_last_names text[] DEFAULT '{}'::text[], p_name_changes integer[] DEFAULT '{}'::integer[], p_poll_gap interval DEFAULT '00:00:05'::interval, p_burst_from integer[] DEFAULT '{}'::integer[], p_burst_count integer[] DEFAULT '{}'::integer[], p_burst_firsts timestamp with time zone[] DEFAULT '{}'::timestamp with time zone[], p_burst_lasts timestamp with time zone[] DEFAULT '{}'::timestamp with time zone[], p_burst_starts boolean[] DEFAULT '{}'::boolean[], p_burst_networks integer[] DEFAULT '{}'::integer[]) RETURNS void
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
         row(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, null, null, null, null, 0, null, p_burst_firsts[u.burst_from : u.burst_from + u.bursts - 1],
             p_burst_lasts[u.burst_from : u.burst_from + u.bursts - 1], p_burst_starts[u.burst_from : u.burst_from + u.bursts - 1],
             p_burst_networks[u.burst_from : u.burst_from + u.bursts - 1])::public.kiosk_polls
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
                 then cadence.settle_polls(s.polls, (excluded.polls).firsts, (excluded.polls).lasts, (excluded.polls).starts, p_poll_gap,
                                           excluded.last_seen_at, (excluded.polls).networks)
                 else row((s.polls).polls_this_hour, (s.polls).polls_last_hour, (s.polls).uneven_this_hour, (s.polls).uneven_last_hour,
                          (s.polls).alternating_this_hour, (s.polls).alternating_last_hour, (s.polls).swing_this_hour, (s.polls).swing_last_hour,
                          (s.polls).drift_this_hour, (s.polls).drift_last_hour, (s.polls).hour_started_at, (s.polls).settled_until,
                          (s.polls).last_network, (s.polls).network_before, (s.polls).alternated, (s.polls).recent,
                          (s.polls).firsts || (excluded.polls).firsts, (s.polls).lasts || (excluded.polls).lasts,
                          (s.polls).starts || (excluded.polls).starts, (s.polls).networks || (excluded.polls).networks)::public.kiosk_polls end
$$;

COMMENT ON FUNCTION cadence.record_kiosk_polls(p_keys text[], p_seen_at timestamp with time zone[], p_ips inet[], p_versions text[], p_first_names text[], p_last_names text[], p_name_changes integer[], p_poll_gap interval, p_burst_from integer[], p_burst_count integer[], p_burst_firsts timestamp with time zone[], p_burst_lasts timestamp with time zone[], p_burst_starts boolean[], p_burst_networks integer[]) IS 'Records sightings of license keys (one per key in the first arrays: the latest wins; a sighting without a version keeps the held one) and the seat-check evidence of the same write: system names per key, and each key''s bursts of calls (first and last call, whether it holds a kiosk start, the tag of its network) formed with p_poll_gap, settled into its polls (public.kiosk_polls) every few writes.';

-- Kept for the API instances deployed before cadence.record_kiosk_polls
-- (20261127000400_seat_checks_uneven_polls.sql; supabase/README.md, "Changing a function the API
-- calls"): their sightings and names are recorded; their calls and networks are evidence no rule
-- reads. A later release drops it.
CREATE FUNCTION cadence.record_kiosk_sightings(p_keys text[], p_seen_at timestamp with time zone[], p_ips inet[], p_versions text[], p_calls integer[] DEFAULT '{}'::integer[], p_first_names text[] DEFAULT '{}'::text[], p_last_names text[] DEFAULT '{}'::text[], p_name_changes integer[] DEFAULT '{}'::integer[], p_net_keys text[] DEFAULT '{}'::text[], p_networks cidr[] DEFAULT '{}'::cidr[], p_net_first timestamp with time zone[] DEFAULT '{}'::timestamp with time zone[], p_net_last timestamp with time zone[] DEFAULT '{}'::timestamp with time zone[], p_net_calls integer[] DEFAULT '{}'::integer[], p_net_returns integer[] DEFAULT '{}'::integer[]) RETURNS void
    LANGUAGE sql
    SET search_path TO ''
    AS $$
  select cadence.record_kiosk_polls(p_keys, p_seen_at, p_ips, p_versions, p_first_names, p_last_names, p_name_changes)
$$;

COMMENT ON FUNCTION cadence.record_kiosk_sightings(p_keys text[], p_seen_at timestamp with time zone[], p_ips inet[], p_versions text[], p_calls integer[], p_first_names text[], p_last_names text[], p_name_changes integer[], p_net_keys text[], p_networks cidr[], p_net_first timestamp with time zone[], p_net_last timestamp with time zone[], p_net_calls integer[], p_net_returns integer[]) IS 'For API instances deployed before 20261127000400: records their sightings and system names through cadence.record_kiosk_polls, without bursts.';

-- kiosk_status: whether the key is suspected of being used by more than one kiosk (the seat checks,
-- 20261126000600_seat_checks.sql). The view as 20261126000310_kiosk_status_offline_rule.sql left it
-- (its state by the account's offline_alert_after), with one column added at the end; an account holder sees it for their own keys (their policy on
-- public.seat_suspicions).
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

COMMENT ON VIEW public.kiosk_status IS 'One row per license key: owner, kiosk name, last validation, last call (time, client IP), schedule version held and current, and state: online (seen in the last 15 minutes), offline, never_seen. Sightings are written every few seconds, at most every 30 s per key.';

COMMENT ON COLUMN public.kiosk_status.account_email IS 'The owner''s e-mail by the pairing rule; null when no account pairs.';

COMMENT ON COLUMN public.kiosk_status.last_seen_at IS 'The last call with the key that the API answered (validation, schedule reads, system name, entitled proclamations); null if never.';

COMMENT ON COLUMN public.kiosk_status.last_seen_ip IS 'The client IP of that call (CLIENT_IP_HEADER decides); null when unknown.';

COMMENT ON COLUMN public.kiosk_status.schedule_version_held IS 'The schedule version the kiosk holds: last sent in a 200, or named by its If-None-Match in a 304.';

COMMENT ON COLUMN public.kiosk_status.schedule_version_current IS 'The version the API serves for the key now.';

COMMENT ON COLUMN public.kiosk_status.schedule_is_current IS 'Whether the kiosk holds the current version; null if it never read a schedule.';

COMMENT ON COLUMN public.kiosk_status.state IS 'online: seen within its account''s offline_alert_after (15 minutes without an account), the threshold of the offline alerts; offline: seen before that; never_seen.';

COMMENT ON COLUMN public.kiosk_status.time_zone IS 'The kiosk''s time zone: its key''s, else its account''s (UTC unless set).';

COMMENT ON COLUMN public.kiosk_status.local_time IS 'The kiosk''s wall-clock time now, in that zone.';

COMMENT ON COLUMN public.kiosk_status.playing_now IS 'The block it should be playing now, from the schedule it reads: {blockId, weekday, startTime, endTime, startedOn, proclamationIds}; empty outside every block.';

COMMENT ON COLUMN public.kiosk_status.dark_since IS 'While the offline alerts count the kiosk as dark: since when (public.kiosk_outages); empty otherwise.';

COMMENT ON COLUMN public.kiosk_status.suspected_copy IS 'Flagged by the seat checks within the last day: the key may be used by more than one kiosk (public.suspected_copies has the evidence). Nobody is refused for it.';

CREATE TRIGGER sightings_forget AFTER DELETE ON public.license_keys REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION cadence.forget_deleted_key_sightings();
