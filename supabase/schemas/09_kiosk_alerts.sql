-- Offline alerts. A pass, run before each outbox delivery (every minute), finds the kiosks that went
-- dark and those seen again, records each as an outage, and queues one e-mail per account listing
-- them all. A kiosk goes dark when its key is active, unmuted, owned and seen before, it should be
-- playing now, and it has been unseen for its account's offline_alert_after, counted from the latest
-- of its last sighting, the start of its block and the start of Cadence's watch: never during
-- Cadence's own outage.

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

COMMENT ON TABLE public.kiosk_watch IS 'One row: the offline-alert pass''s settings (blind_after, gap_after) and state. Staff may change the settings; the pass writes the rest.';

COMMENT ON COLUMN public.kiosk_watch.blind_after IS 'No kiosk at all seen for this long: Cadence itself is down or unreachable, and no kiosk is reported dark.';

COMMENT ON COLUMN public.kiosk_watch.gap_after IS 'The previous pass older than this: Cadence was not watching meanwhile, and every kiosk gets a full threshold again.';

COMMENT ON COLUMN public.kiosk_watch.watching_since IS 'Since when the pass has watched without a gap or a blind spell: no kiosk counts as unseen from before.';

COMMENT ON COLUMN public.kiosk_watch.blind_since IS 'When the current blind spell began; empty while kiosks are seen.';

ALTER TABLE ONLY public.kiosk_watch
    ADD CONSTRAINT kiosk_watch_pkey PRIMARY KEY (id);

ALTER TABLE public.kiosk_watch ENABLE ROW LEVEL SECURITY;

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

COMMENT ON TABLE public.kiosk_outages IS 'Written by the offline-alert pass, do not edit: each time a kiosk that should be playing went dark (the alert) and when it was seen again (the recovery).';

COMMENT ON COLUMN public.kiosk_outages.dark_since IS 'From when it counts as unseen: the latest of its last sighting, its block''s start and the start of Cadence''s watch.';

COMMENT ON COLUMN public.kiosk_outages.last_seen_at IS 'The last sighting before it went dark.';

COMMENT ON COLUMN public.kiosk_outages.alerted_at IS 'The pass that found it dark.';

COMMENT ON COLUMN public.kiosk_outages.block_id IS 'The block it should have been playing then.';

COMMENT ON COLUMN public.kiosk_outages.alert_email_id IS 'The e-mail (public.email_outbox) that announced it; empty until queued.';

COMMENT ON COLUMN public.kiosk_outages.back_at IS 'The sighting that ended it; empty while it lasts.';

COMMENT ON COLUMN public.kiosk_outages.recovered_at IS 'The pass that found it back.';

COMMENT ON COLUMN public.kiosk_outages.recovery_email_id IS 'The e-mail that announced the recovery; empty until queued, or when silent.';

COMMENT ON COLUMN public.kiosk_outages.recovery_silent IS 'Ended without an e-mail: the key was muted or inactive when the kiosk came back.';

ALTER TABLE ONLY public.kiosk_outages
    ADD CONSTRAINT kiosk_outages_pkey PRIMARY KEY (id);

ALTER TABLE public.kiosk_outages ENABLE ROW LEVEL SECURITY;

ALTER TABLE ONLY public.kiosk_outages
    ADD CONSTRAINT kiosk_outage_account_exists FOREIGN KEY (account_id) REFERENCES public.accounts(id) ON DELETE CASCADE;

ALTER TABLE ONLY public.kiosk_outages
    ADD CONSTRAINT kiosk_outage_key_exists FOREIGN KEY (license_key) REFERENCES public.license_keys(key) ON UPDATE CASCADE ON DELETE CASCADE;

CREATE UNIQUE INDEX kiosk_outage_is_one_open_per_key ON public.kiosk_outages USING btree (license_key) WHERE (back_at IS NULL);

CREATE INDEX kiosk_outages_key_dark_since_idx ON public.kiosk_outages USING btree (license_key, dark_since);

CREATE INDEX kiosk_outages_unannounced_idx ON public.kiosk_outages USING btree (account_id) WHERE ((alert_email_id IS NULL) OR ((back_at IS NOT NULL) AND (recovery_email_id IS NULL) AND (NOT recovery_silent)));

-- A kiosk goes dark when all of these hold at the pass's instant:
-- - its key is active, not muted by its holder, belongs to an account, and has been seen before
--   (a key no kiosk has used yet is not a dark kiosk);
-- - it should be playing now (cadence.playing_at: a block of the schedule it reads, in its zone);
-- - it has been unseen for its account's offline_alert_after, counted from the latest of: its last
--   sighting, the start of the block it should be playing (a screen switched off overnight gets the
--   whole threshold to call in after its block starts), and the start of Cadence's watch (below).
-- It comes back at the first pass that finds a sighting newer than the one it was last seen by.
--
-- Cadence's own outages. A kiosk's silence is evidence only while Cadence was there to hear it, so
-- the pass keeps `watching_since`, the start of its unbroken watch, and restarts it (to the pass's
-- instant: every kiosk gets a full threshold again) when
-- - the pass finds a gap in its own runs: the previous pass is older than `gap_after` (5 minutes),
--   as after the scheduler, the function or `npm start` was down; or
-- - Cadence is blind: no kiosk at all was seen for `blind_after` (2 minutes), as when the API was
--   down or unreachable while passes ran. A blind pass alerts nobody and records nothing.
-- Both are settings in public.kiosk_watch. Keep every account's offline_alert_after longer than
-- blind_after plus a poll interval (15 minutes against 2 + 1 by default): a kiosk last seen just
-- before the API went down is then found blind before it would be found dark. Cadence cannot tell a
-- fleet of one kiosk going dark from its own outage: for it, the pass stays silent.
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

COMMENT ON FUNCTION cadence.kiosk_alert_pass(p_now timestamp with time zone) IS 'The offline-alert pass at p_now: restarts the watch after a gap in passes or a blind spell (no kiosk seen), then records the kiosks seen again and those gone dark (the rules are in the migration that made it). Their e-mails are queued by cadence.queue_kiosk_alert_email.';

-- One answer to "is this kiosk offline" (issue 39): kiosk_status.state uses the threshold the
-- offline alerts use, the account's offline_alert_after (15 minutes for a key of no account, the
-- column's default), so the row never says `online` while the offline e-mail goes out.
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

COMMENT ON FUNCTION cadence.license_key_offline_after(p_key text) IS 'How long a license key''s kiosk may stay unseen before it counts as offline: its account''s offline_alert_after, else 15 minutes. For public.kiosk_status.';

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

COMMENT ON FUNCTION cadence.queue_kiosk_alert_email(p_dark uuid[], p_back uuid[], p_recipient text, p_subject text, p_text text, p_html text, p_now timestamp with time zone) IS 'Queues one e-mail announcing the given outages (p_dark) and recoveries (p_back) and records it on them, in one transaction; queues nothing and returns null when any was announced meanwhile.';

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

COMMENT ON FUNCTION cadence.unannounced_kiosk_alerts() IS 'Per account, the outages (kind dark) and recoveries (kind back) no e-mail has announced yet, with what the e-mail says of each.';

-- Each kiosk's uptime over the last 30 days: the share of that time outside its recorded outages
-- (an open outage counts until now). An account holder reads their own keys' rows.
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

COMMENT ON VIEW public.kiosk_uptime IS 'Per license key, over the last 30 days: the outages recorded by the offline alerts, the time they lasted (an open one until now), and the uptime as a percentage of the 30 days.';
