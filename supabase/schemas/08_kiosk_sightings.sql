-- When a kiosk last called with its license key, from where, and which schedule version it holds,
-- with the seat-check evidence (its polls). A table of its own, so a sighting touches nothing a kiosk
-- waits on: no payload trigger fires, and no lock on license_keys is taken. That is also why
-- license_key has no foreign key: its check takes FOR KEY SHARE on the key's row, which a
-- validation's FOR UPDATE would make it wait for. The writes are in 11_kiosk_status.sql; the table
-- stands here, before the seat checks and the offline alerts that read it.

-- One key's polls: what the seat checks keep of its calls between writes. The counts come first:
-- fixed-width fields before the arrays sit at a fixed offset, so the pass's scan of every key reads
-- them without walking the arrays.
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

COMMENT ON TYPE public.kiosk_polls IS 'A key''s polls (seat checks: uneven_polls): polls and uneven polls settled this hour (since hour_started_at) and the hour before; settled_until, the last call of the last settled burst; recent, when its last six settled polls began, oldest first; firsts, lasts and starts, its bursts of calls not yet settled (first and last call, whether it holds a kiosk start), as written.';

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

COMMENT ON COLUMN public.kiosk_sightings.polls IS 'The key''s polls (public.kiosk_polls): its last settled polls, its bursts still unsettled, and its polls and uneven polls this hour and the last (seat checks: uneven_polls).';

ALTER TABLE ONLY public.kiosk_sightings
    ADD CONSTRAINT kiosk_sightings_pkey PRIMARY KEY (license_key);

ALTER TABLE public.kiosk_sightings ENABLE ROW LEVEL SECURITY;
