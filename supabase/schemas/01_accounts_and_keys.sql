-- Accounts (owners of license keys) and their license keys. A key belongs to an account by its
-- owner link (account_id), else by its stored e-mail: the pairing rule, cadence.key_belongs_to,
-- which every check of a key against an account uses. Columns other concerns own (system names,
-- time zones, Auth links, alerts) are declared here, in the table, and guarded in their own files.

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
    -- At least a minute: kiosks poll every minute, and their sightings are written up to ~35 s
    -- after the call (functions/app/kiosk/sightings.ts), so a shorter span alerts on healthy kiosks.
    CONSTRAINT offline_alert_after_is_between_a_minute_and_a_week CHECK (((offline_alert_after >= '00:01:00'::interval) AND (offline_alert_after <= '7 days'::interval)))
);

COMMENT ON TABLE public.accounts IS 'Owners of license keys. E-mail is unique regardless of case.';

COMMENT ON COLUMN public.accounts.auth_user_id IS 'The Supabase Auth user (auth.users.id) of this account; null until linked. Cadence creates it with the account id.';

COMMENT ON COLUMN public.accounts.auth_link_attempts IS 'How often linking an Auth user was tried.';

COMMENT ON COLUMN public.accounts.auth_link_error IS 'Why the last try to link an Auth user failed, e.g. the e-mail already belongs to an Auth user Cadence did not create.';

COMMENT ON COLUMN public.accounts.auth_link_due_at IS 'When linking may next be tried: null means at once (never tried); a claim moves it one lease ahead, a failure one backoff ahead.';

COMMENT ON COLUMN public.accounts.time_zone IS 'The IANA time zone (pg_timezone_names) of the account''s kiosks, unless a key has its own; UTC by default.';

COMMENT ON COLUMN public.accounts.offline_alert_after IS 'How long a kiosk that should be playing may stay unseen before the account holder is e-mailed (1 minute to 7 days; 15 minutes by default).';

ALTER TABLE ONLY public.accounts
    ADD CONSTRAINT accounts_pkey PRIMARY KEY (id);

ALTER TABLE public.accounts ENABLE ROW LEVEL SECURITY;

CREATE UNIQUE INDEX account_email_is_unique ON public.accounts USING btree (lower(email));

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
    CONSTRAINT license_key_email_is_not_blank CHECK ((btrim(email) <> ''::text)),
    CONSTRAINT license_key_format CHECK ((key ~ '^[A-Z0-9]{4}-[A-Z0-9]{4}-[A-Z0-9]{4}-[A-Z0-9]{4}$'::text)),
    CONSTRAINT system_name_is_trimmed CHECK ((system_name = btrim(system_name))),
    CONSTRAINT system_name_length CHECK (((char_length(system_name) >= 1) AND (char_length(system_name) <= 40)))
);

COMMENT ON TABLE public.license_keys IS 'License keys. account_id is the owner link; a key without one belongs to the account whose e-mail equals its stored e-mail.';

COMMENT ON COLUMN public.license_keys.system_name IS 'Set by the kiosk only; unique per account regardless of case.';

COMMENT ON COLUMN public.license_keys.time_zone IS 'The kiosk''s IANA time zone (pg_timezone_names); empty: its account''s.';

COMMENT ON COLUMN public.license_keys.alerts_muted IS 'When true, the account holder gets no e-mail when this kiosk goes dark or comes back.';

ALTER TABLE ONLY public.license_keys
    ADD CONSTRAINT license_keys_pkey PRIMARY KEY (key);

ALTER TABLE public.license_keys ENABLE ROW LEVEL SECURITY;

ALTER TABLE ONLY public.license_keys
    ADD CONSTRAINT license_key_account_exists FOREIGN KEY (account_id) REFERENCES public.accounts(id) ON DELETE RESTRICT;

CREATE INDEX license_keys_account_id_idx ON public.license_keys USING btree (account_id);

-- A pinned key_belongs_to is opaque to the planner, so callers that look up an account's keys find
-- the candidates through indexes first (owner link, or stored e-mail) and let it decide. This index
-- serves the e-mail side of that lookup; the partial one it replaces only served the inlined rule.
CREATE INDEX license_keys_lower_email_idx ON public.license_keys USING btree (lower(email));

-- The account a key belongs to (cadence.key_belongs_to): its owner link, else the account of its
-- stored e-mail, found by two index lookups. Joined on that rule written as one OR, batches of 256
-- names among 2,000 accounts outran a 1 s deadline in test/hardening/write-burst.test.ts (measured
-- here), and did not with this.
CREATE FUNCTION cadence.key_account_id(p_account_id uuid, p_email text) RETURNS uuid
    LANGUAGE sql STABLE
    SET search_path TO ''
    AS $$
  select coalesce(p_account_id, (select a.id from public.accounts as a where pg_catalog.lower(a.email) = pg_catalog.lower(p_email)))
$$;

COMMENT ON FUNCTION cadence.key_account_id(p_account_id uuid, p_email text) IS 'The id of the account a key belongs to: its owner link, else the account of its stored e-mail (case-insensitively), else null.';

CREATE FUNCTION cadence.key_belongs_to(p_key public.license_keys, p_account public.accounts) RETURNS boolean
    LANGUAGE plpgsql IMMUTABLE
    SET search_path TO ''
    AS $$
begin
  -- PL/pgSQL evaluates this as a simple expression, with no plan to make on each call.
  return p_key.account_id = p_account.id
      or (p_key.account_id is null and pg_catalog.lower(p_key.email) = pg_catalog.lower(p_account.email));
end
$$;

COMMENT ON FUNCTION cadence.key_belongs_to(p_key public.license_keys, p_account public.accounts) IS 'A key belongs to an account when its owner link is that account, or it has no owner link and its stored e-mail equals the account e-mail (case-insensitive).';

-- The owner's id only: the view reads the account itself under the accounts policy, so a holder
-- gets an e-mail for their own keys only.
CREATE FUNCTION cadence.license_key_owner(p_key text) RETURNS uuid
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO ''
    AS $$
  select a.id
  from public.license_keys as k
  join public.accounts as a on (a.id = k.account_id or pg_catalog.lower(a.email) = pg_catalog.lower(k.email)) and cadence.key_belongs_to(k, a)
  where k.key = p_key
$$;

COMMENT ON FUNCTION cadence.license_key_owner(p_key text) IS 'The id of the account a license key belongs to (cadence.key_belongs_to), or null. For public.kiosk_status.';
