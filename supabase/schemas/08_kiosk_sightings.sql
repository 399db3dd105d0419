-- When a kiosk last called with its license key, from where, and which schedule version it holds,
-- with the seat-check evidence (its polls). A table of its own, so a sighting touches nothing a kiosk
-- waits on: no payload trigger fires, and no lock on license_keys is taken. That is also why
-- license_key has no foreign key: its check takes FOR KEY SHARE on the key's row, which a
-- validation's FOR UPDATE would make it wait for. The writes are in 11_kiosk_status.sql; the table
-- stands here, before the seat checks and the offline alerts that read it.

-- One key's polls: what the seat checks keep of its calls between writes. The counts come first:
-- fixed-width fields before the arrays sit at a fixed offset, so the pass's scan of every key reads
-- them without walking the arrays (20261207000200_seat_checks_two_clocks.sql made the type again to
-- keep it so).
CREATE TYPE public.kiosk_polls AS (
	polls_this_hour integer,
	polls_last_hour integer,
	uneven_this_hour integer,
	uneven_last_hour integer,
	alternating_this_hour integer,
	alternating_last_hour integer,
	swing_this_hour real,
	swing_last_hour real,
	drift_this_hour real,
	drift_last_hour real,
	hour_started_at timestamp with time zone,
	settled_until timestamp with time zone,
	last_network integer,
	network_before integer,
	alternated integer,
	recent timestamp with time zone[],
	firsts timestamp with time zone[],
	lasts timestamp with time zone[],
	starts boolean[],
	networks integer[]
);

COMMENT ON TYPE public.kiosk_polls IS 'A key''s polls (seat checks: uneven_polls, two_clocks): polls, uneven polls and alternating polls settled this hour (since hour_started_at) and the hour before, with the sums of the alternating polls'' swing and drift (cadence.settle_polls); settled_until, the last call of the last settled burst; last_network and network_before, the last two polls'' network tags (null: several, or unknown), and alternated, how many polls in a row came from the other network than the poll before and the same as the one before it; recent, when its last six settled polls began, oldest first; firsts, lasts, starts and networks, its bursts of calls not yet settled (first and last call, whether it holds a kiosk start, its network tag), as written.';

CREATE TABLE public.kiosk_sightings (
    license_key text NOT NULL,
    last_seen_at timestamp with time zone NOT NULL,
    -- Null when the call's client IP was unknown (http/client-ip.ts).
    last_seen_ip inet,
    -- The version last sent to the kiosk in a 200, or named by its If-None-Match in a 304; null until
    -- it reads a schedule.
    schedule_version_held text,
    system_name_written text,
    system_name_changes integer DEFAULT 0 NOT NULL,
    system_name_changes_since timestamp with time zone,
    polls public.kiosk_polls,
    CONSTRAINT schedule_version_held_is_a_version CHECK ((schedule_version_held ~ '^[0-9a-f]{64}$'::text))
);

COMMENT ON TABLE public.kiosk_sightings IS 'Written by the API, do not edit: the last call a kiosk made with each license key. Read public.kiosk_status.';

COMMENT ON COLUMN public.kiosk_sightings.system_name_written IS 'The system name the kiosk last wrote (PUT system-name).';

COMMENT ON COLUMN public.kiosk_sightings.system_name_changes IS 'Changes of the written name since system_name_changes_since, a day at most (seat checks: system_name_flips).';

COMMENT ON COLUMN public.kiosk_sightings.polls IS 'The key''s polls (public.kiosk_polls): its last settled polls, its bursts still unsettled, the last two polls'' network tags, and its polls, uneven polls and alternating polls this hour and the last (seat checks: uneven_polls, two_clocks).';

ALTER TABLE ONLY public.kiosk_sightings
    ADD CONSTRAINT kiosk_sightings_pkey PRIMARY KEY (license_key);

ALTER TABLE public.kiosk_sightings ENABLE ROW LEVEL SECURITY;
