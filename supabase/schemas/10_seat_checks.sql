-- Seat checks: a license key used by more than one kiosk, seen passively. Cadence sells one key per
-- kiosk, and kiosks send no device fingerprint; the evidence is in the calls they already make, and
-- rides on the sightings write (11_kiosk_status.sql), so a kiosk request writes nothing more. A pass
-- in the scheduled run flags the keys whose polls are uneven or whose system name flips; staff read
-- them in public.suspected_copies, and a daily digest is queued through the outbox.

CREATE TABLE public.seat_watch (
    id boolean DEFAULT true NOT NULL,
    digest_to text,
    name_changes_to_flag integer DEFAULT 3 NOT NULL,
    last_digest_at timestamp with time zone,
    uneven_polls_to_flag integer DEFAULT 6 NOT NULL,
    uneven_polls_share real DEFAULT 0.05 NOT NULL,
    two_clocks_polls_to_flag integer DEFAULT 20 NOT NULL,
    two_clocks_ratio real DEFAULT 0.25 NOT NULL,
    CONSTRAINT name_changes_to_flag_is_at_least_2 CHECK ((name_changes_to_flag >= 2)),
    CONSTRAINT seat_digest_to_is_an_email CHECK ((digest_to ~ '^[^@[:space:]]+@[^@[:space:]]+$'::text)),
    CONSTRAINT seat_watch_is_one_row CHECK (id),
    CONSTRAINT two_clocks_polls_to_flag_is_at_least_10 CHECK ((two_clocks_polls_to_flag >= 10)),
    CONSTRAINT two_clocks_ratio_is_below_one CHECK (((two_clocks_ratio > (0)::double precision) AND (two_clocks_ratio < (1)::double precision))),
    CONSTRAINT uneven_polls_share_is_a_share CHECK (((uneven_polls_share > (0)::double precision) AND (uneven_polls_share <= (1)::double precision))),
    CONSTRAINT uneven_polls_to_flag_is_at_least_2 CHECK ((uneven_polls_to_flag >= 2))
);

COMMENT ON TABLE public.seat_watch IS 'One row: the seat checks'' settings (staff may change them) and when the last digest was queued (the pass writes it).';

COMMENT ON COLUMN public.seat_watch.digest_to IS 'Where the daily digest of suspected copies goes; empty (the default): no digest.';

COMMENT ON COLUMN public.seat_watch.name_changes_to_flag IS 'Changes of the written system name within a day that flag system_name_flips.';

COMMENT ON COLUMN public.seat_watch.uneven_polls_to_flag IS 'Uneven polls (cadence.settle_polls) in the current and previous hour that flag uneven_polls, with uneven_polls_share: one device makes none but where several of its polls fail in a row; a second device makes many.';

COMMENT ON COLUMN public.seat_watch.uneven_polls_share IS 'The least share of the key''s polls in the current and previous hour that must be uneven to flag uneven_polls: one device losing a third of its polls makes 0.14 % in a day, half of them 0.8 %, 60 % of them 2.2 % (and 5 % in some two hours).';

COMMENT ON COLUMN public.seat_watch.two_clocks_polls_to_flag IS 'Alternating polls (the last five from two networks in turn: cadence.settle_polls) in the current and previous hour that flag two_clocks, with two_clocks_ratio: fewer judge the ratio too roughly (one kiosk''s fell to 0.22 over 10).';

COMMENT ON COLUMN public.seat_watch.two_clocks_ratio IS 'The most the alternating polls'' drift may be of their swing to flag two_clocks: one kiosk''s is 2 on average (1 on a steady timer), 0.32 at the least in 1,000 simulated days of two WAN links round-robin across polls; two devices'' falls to a few hundredths.';

ALTER TABLE ONLY public.seat_watch
    ADD CONSTRAINT seat_watch_pkey PRIMARY KEY (id);

ALTER TABLE public.seat_watch ENABLE ROW LEVEL SECURITY;

-- What the pass found: one row per key ever suspected, kept as its history.
CREATE TABLE public.seat_suspicions (
    license_key text NOT NULL,
    rules text[] NOT NULL,
    first_flagged_at timestamp with time zone NOT NULL,
    last_flagged_at timestamp with time zone NOT NULL,
    flags integer DEFAULT 1 NOT NULL,
    -- The rules of 20261126000600 and 20261126000700 stay known: the rows they flagged are history.
    CONSTRAINT seat_suspicion_rules_are_known CHECK (((rules <@ ARRAY['interleaved_networks'::text, 'interleaved_families'::text, 'poll_rate'::text, 'system_name_flips'::text, 'two_clocks'::text, 'uneven_polls'::text]) AND (cardinality(rules) > 0)))
);

COMMENT ON TABLE public.seat_suspicions IS 'Written by the seat-check pass, do not edit: each license key suspected of being used by more than one kiosk, the rules that found it, when first and last (a key flagged within a day is suspected now), and in how many passes.';

ALTER TABLE ONLY public.seat_suspicions
    ADD CONSTRAINT seat_suspicions_pkey PRIMARY KEY (license_key);

ALTER TABLE public.seat_suspicions ENABLE ROW LEVEL SECURITY;

ALTER TABLE ONLY public.seat_suspicions
    ADD CONSTRAINT seat_suspicion_key_exists FOREIGN KEY (license_key) REFERENCES public.license_keys(key) ON UPDATE CASCADE ON DELETE CASCADE;

CREATE INDEX seat_suspicions_last_flagged_idx ON public.seat_suspicions USING btree (last_flagged_at);

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

COMMENT ON FUNCTION cadence.queue_seat_digest(p_since timestamp with time zone, p_subject text, p_text text, p_html text, p_now timestamp with time zone) IS 'Queues the digest to seat_watch.digest_to and records it, unless another worker did since p_since (the previous digest''s time); returns the e-mail''s id, or null.';

CREATE FUNCTION cadence.seat_check_pass(p_now timestamp with time zone) RETURNS integer
    LANGUAGE sql
    SET search_path TO ''
    SET jit TO 'off'
    AS $$
  -- Every rule in one scan of the sightings, the few keys over a threshold first; counts of a key
  -- not seen for two hours are stale and flag nothing.
  with found as (
    select s.license_key, r.rule
      from (select s.license_key, s.last_seen_at, s.system_name_changes, s.system_name_changes_since,
                   (s.polls).uneven_this_hour + (s.polls).uneven_last_hour as uneven, (s.polls).polls_this_hour + (s.polls).polls_last_hour as polls,
                   (s.polls).alternating_this_hour + (s.polls).alternating_last_hour as alternating,
                   (s.polls).swing_this_hour + (s.polls).swing_last_hour as swing, (s.polls).drift_this_hour + (s.polls).drift_last_hour as drift,
                   w.uneven_polls_to_flag, w.uneven_polls_share, w.name_changes_to_flag, w.two_clocks_polls_to_flag, w.two_clocks_ratio
              from public.kiosk_sightings as s cross join public.seat_watch as w
             where (s.polls).uneven_this_hour + (s.polls).uneven_last_hour >= w.uneven_polls_to_flag
                or s.system_name_changes >= w.name_changes_to_flag
                or (s.polls).alternating_this_hour + (s.polls).alternating_last_hour >= w.two_clocks_polls_to_flag
            offset 0) as s
     cross join lateral unnest(array[
       case when s.uneven >= s.uneven_polls_to_flag and s.uneven >= s.uneven_polls_share * s.polls
             and s.last_seen_at > p_now - interval '2 hours' then 'uneven_polls' end,
       case when s.system_name_changes >= s.name_changes_to_flag and s.system_name_changes_since > p_now - interval '1 day' then 'system_name_flips' end,
       -- two_clocks also needs the offset to have wandered past the answers' own noise: a swing of
       -- a second squared a poll at least. Two timers that never drift, half a period apart, swing
       -- by their answer times alone (tenths of a second), as one such kiosk on two WAN links
       -- round-robin does; their drift and swing are then alike, and 20 polls judge them roughly.
       case when s.alternating >= s.two_clocks_polls_to_flag and s.drift <= s.two_clocks_ratio * s.swing
             and s.swing >= s.alternating and s.last_seen_at > p_now - interval '2 hours' then 'two_clocks' end
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

COMMENT ON FUNCTION cadence.seat_check_pass(p_now timestamp with time zone) IS 'The seat-check pass at p_now: records (public.seat_suspicions) every key a rule flags now (uneven_polls, system_name_flips, two_clocks); returns how many. The rules are in 20261127000400_seat_checks_uneven_polls.sql, 20261126000600_seat_checks.sql and 20261207000200_seat_checks_two_clocks.sql.';

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

COMMENT ON FUNCTION cadence.seat_digest(p_now timestamp with time zone) IS 'The daily digest due at p_now: its recipient, the previous digest''s time and the keys flagged since; no row when digest_to is empty, a digest went out within a day, or nothing was flagged since.';

CREATE FUNCTION cadence.settle_polls(p_polls public.kiosk_polls, p_firsts timestamp with time zone[], p_lasts timestamp with time zone[], p_starts boolean[], p_gap interval, p_at timestamp with time zone, p_networks integer[] DEFAULT NULL::integer[]) RETURNS public.kiosk_polls
    LANGUAGE plpgsql IMMUTABLE
    SET search_path TO ''
    AS $$
declare
  v_firsts timestamptz[] := coalesce(p_polls.firsts, '{}') || coalesce(p_firsts, '{}');
  v_lasts timestamptz[] := coalesce(p_polls.lasts, '{}') || coalesce(p_lasts, '{}');
  v_starts boolean[] := coalesce(p_polls.starts, '{}') || coalesce(p_starts, '{}');
  -- A write from an instance deployed before the tags carries none: its bursts are of no network.
  v_networks integer[] := case when coalesce(cardinality(p_polls.networks), 0) = coalesce(cardinality(p_polls.firsts), 0)
                                and coalesce(cardinality(p_networks), 0) = coalesce(cardinality(p_firsts), 0)
                               then coalesce(p_polls.networks, '{}') || coalesce(p_networks, '{}') end;
  v_order integer[] := '{}';
  v_first timestamptz[] := '{}';
  v_last timestamptz[] := '{}';
  v_start boolean[] := '{}';
  v_network integer[] := '{}';
  v_polls timestamptz[] := coalesce(p_polls.recent, '{}');
  v_last_network integer := p_polls.last_network;
  v_network_before integer := p_polls.network_before;
  v_alternated integer := coalesce(p_polls.alternated, 0);
  v_settled_until timestamptz := p_polls.settled_until;
  v_settled integer := 0;
  v_uneven integer := 0;
  v_alternating integer := 0;
  v_swing float8 := 0;
  v_drift float8 := 0;
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
  -- Merged bursts keep their network when both had the same one; of two networks, a burst has none.
  foreach v_i in array v_order loop
    if v_n > 0 and v_firsts[v_i] - v_last[v_n] <= p_gap then
      v_last[v_n] := greatest(v_last[v_n], v_lasts[v_i]);
      v_start[v_n] := v_start[v_n] or v_starts[v_i];
      v_network[v_n] := case when v_network[v_n] = v_networks[v_i] then v_network[v_n] end;
    else
      v_n := v_n + 1;
      v_first[v_n] := v_firsts[v_i];
      v_last[v_n] := v_lasts[v_i];
      v_start[v_n] := v_starts[v_i];
      v_network[v_n] := v_networks[v_i];
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
      -- Two clocks (two_clocks): a poll from the other network than the poll before and the same
      -- as the one before that extends the run of such polls; three in a row are the last five
      -- polls from two networks in turn, each keeping its own. Their four gaps give this poll's
      -- swing (how far its gap is from the one before) and drift (how far the last pair's sum is
      -- from the pair's before): one kiosk's drift is twice its swing on average; two devices'
      -- pairs each add up to one device's interval while the split between them wanders, so their
      -- swing grows and their drift stays at the jitter.
      v_alternated := case when v_network[v_k] <> v_last_network and v_network[v_k] = v_network_before then v_alternated + 1 else 0 end;
      v_network_before := v_last_network;
      v_last_network := v_network[v_k];
      if v_alternated >= 3 and v_j >= 5 then
        v_alternating := v_alternating + 1;
        v_swing := v_swing + (v_g4 - v_g3) ^ 2;
        v_drift := v_drift + (v_g4 + v_g3 - v_g2 - v_g1) ^ 2;
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
    case when v_hours > 0 then 0 else p_polls.polls_this_hour end + v_settled,
    case v_hours when 0 then p_polls.polls_last_hour when 1 then p_polls.polls_this_hour else 0 end,
    case when v_hours > 0 then 0 else p_polls.uneven_this_hour end + v_uneven,
    case v_hours when 0 then p_polls.uneven_last_hour when 1 then p_polls.uneven_this_hour else 0 end,
    case when v_hours > 0 then 0 else p_polls.alternating_this_hour end + v_alternating,
    case v_hours when 0 then p_polls.alternating_last_hour when 1 then p_polls.alternating_this_hour else 0 end,
    case when v_hours > 0 then 0 else p_polls.swing_this_hour end + v_swing,
    case v_hours when 0 then p_polls.swing_last_hour when 1 then p_polls.swing_this_hour else 0 end,
    case when v_hours > 0 then 0 else p_polls.drift_this_hour end + v_drift,
    case v_hours when 0 then p_polls.drift_last_hour when 1 then p_polls.drift_this_hour else 0 end,
    case when v_hours > 0 then p_at else p_polls.hour_started_at end,
    v_settled_until, v_last_network, v_network_before, v_alternated,
    v_polls[greatest(1, v_j - 5):], v_first[v_k:v_n], v_last[v_k:v_n], v_start[v_k:v_n], v_network[v_k:v_n]
)::public.kiosk_polls;
end
$$;

COMMENT ON FUNCTION cadence.settle_polls(p_polls public.kiosk_polls, p_firsts timestamp with time zone[], p_lasts timestamp with time zone[], p_starts boolean[], p_gap interval, p_at timestamp with time zone, p_networks integer[]) IS 'A key''s polls after a write at p_at: its unsettled bursts and this write''s (p_firsts, p_lasts, p_starts, p_networks) merged where less than p_gap apart, all but the last two settled into recent polls (the last six kept), each settled poll judged uneven or not (uneven_polls) and, when the last five came from two networks in turn, its gaps'' swing and drift summed (two_clocks), and the hour''s counts rolled.';

-- What staff read: the rules, the polls, uneven and alternating polls, and the last six polls' starts, which show the interleaving.
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
    s.system_name_changes,
    (s.polls).alternating_this_hour AS alternating_polls_this_hour,
    (s.polls).alternating_last_hour AS alternating_polls_last_hour
   FROM ((public.seat_suspicions q
     JOIN public.license_keys k ON ((k.key = q.license_key)))
     LEFT JOIN public.kiosk_sightings s ON ((s.license_key = q.license_key)))
  WHERE (q.last_flagged_at > (now() - '1 day'::interval));

COMMENT ON VIEW public.suspected_copies IS 'Staff: license keys suspected of being used by more than one kiosk in the last day, with the rules that found them and the evidence: polls and uneven polls this hour and the last, when the last six polls began, the latest client IP, system-name changes, and the polls that alternated between two networks this hour and the last. A suspicion refuses nobody.';
