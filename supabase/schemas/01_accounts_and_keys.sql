-- Accounts (owners of license keys) and their license keys. A key belongs to the account of its
-- owner link (account_id), else to the account whose e-mail equals its stored e-mail,
-- case-insensitively, else to none: the pairing rule. Its answer is stored on the key
-- (license_keys.belongs_to) and kept by the triggers below, and every check of a key against an
-- account reads it. Columns other concerns own (system names, time zones, Auth links, alerts) are
-- declared here, in the table, and guarded in their own files.

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
    auth_email text,
    -- The number of the account's last event (14_events.sql): account.created is 1.
    events_sequence bigint DEFAULT 1 NOT NULL,
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

COMMENT ON COLUMN public.accounts.auth_email IS 'The e-mail Cadence last gave the account''s Auth user; null until linked. While it differs from email (an e-mail changed by a signed call, staff or a recipe), the account is due for Auth again: the Auth user''s e-mail follows the account''s, and the old address signs in no more.';

COMMENT ON COLUMN public.accounts.time_zone IS 'The IANA time zone (pg_timezone_names) of the account''s kiosks, unless a key has its own; UTC by default.';

COMMENT ON COLUMN public.accounts.events_sequence IS 'The sequence number of the account''s last own event (public.events); kept by triggers, do not edit.';

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
    -- Stored, not one function every rule calls: an index can only use an immutable expression, and
    -- which account has an e-mail is data, so only a column lets the system-name indexes group keys by
    -- the rule itself (04_system_names.sql). A plain column set by a trigger, not a generated one:
    -- adding a stored generated column rewrites the table, and a poll whose snapshot predates the
    -- rewrite reads no key at all (test/schedule/schedule-payloads-migration.test.ts).
    belongs_to uuid,
    -- A name stored before "one name per look" (issue 59) that looks like another of its account:
    -- kept as it was, and out of the way of the unique indexes that now judge every new name (04_system_names.sql).
    system_name_kept boolean DEFAULT false NOT NULL,
    -- The name's keys (cadence.system_name_keys), stored by the trigger system_name_is_normalised
    -- whenever the name is written, so the unique indexes of 04_system_names.sql compare columns.
    system_name_key text,
    system_name_capitals_key text,
    -- The number of the key's last event (14_events.sql), kept on the row every change already locks.
    events_sequence bigint DEFAULT 0 NOT NULL,
    CONSTRAINT license_key_email_is_not_blank CHECK ((btrim(email) <> ''::text)),
    CONSTRAINT license_key_format CHECK ((key ~ '^[A-Z0-9]{4}-[A-Z0-9]{4}-[A-Z0-9]{4}-[A-Z0-9]{4}$'::text)),
    CONSTRAINT system_name_is_trimmed CHECK ((system_name = btrim(system_name))),
    CONSTRAINT system_name_length CHECK (((char_length(system_name) >= 1) AND (char_length(system_name) <= 40)))
);

COMMENT ON TABLE public.license_keys IS 'License keys. account_id is the owner link; a key without one belongs to the account whose e-mail equals its stored e-mail. belongs_to holds the answer.';

COMMENT ON COLUMN public.license_keys.system_name IS 'Set by the kiosk only; unique per account as it looks: regardless of case, compatibility forms, repeated spaces and look-alike letters of another script (its keys: system_name_key, system_name_capitals_key).';

COMMENT ON COLUMN public.license_keys.time_zone IS 'The kiosk''s IANA time zone (pg_timezone_names); empty: its account''s.';

COMMENT ON COLUMN public.license_keys.alerts_muted IS 'When true, the account holder gets no e-mail when this kiosk goes dark or comes back.';

COMMENT ON COLUMN public.license_keys.events_sequence IS 'The sequence number of the key''s last event (public.events); kept by triggers, do not edit.';

COMMENT ON COLUMN public.license_keys.belongs_to IS 'The account this key belongs to: its owner link (account_id), else the account whose e-mail equals its stored e-mail (case-insensitively), else null. Kept by the database (cadence.find_key_account); every rule that needs a key''s account reads it.';

COMMENT ON COLUMN public.license_keys.system_name_kept IS 'True for a name stored before look-alikes were one name (20261207005900_system_names_one_per_look.sql) that looks like another of its account: kept as it was, out of the unique indexes'' way. Set by that migration only; false again once the name changes.';

COMMENT ON COLUMN public.license_keys.system_name_key IS 'The system name''s key in small letters (cadence.system_name_keys), null without a name: what system_name_is_unique_per_account compares. Stored by the trigger system_name_is_normalised from the name, whatever a writer puts here.';

COMMENT ON COLUMN public.license_keys.system_name_capitals_key IS 'The system name''s key in capitals (cadence.system_name_keys), null without a name: what system_name_capitals_are_unique_per_account compares. Stored by the trigger system_name_is_normalised from the name, whatever a writer puts here.';

ALTER TABLE ONLY public.license_keys
    ADD CONSTRAINT license_keys_pkey PRIMARY KEY (key);

ALTER TABLE public.license_keys ENABLE ROW LEVEL SECURITY;

ALTER TABLE ONLY public.license_keys
    ADD CONSTRAINT license_key_account_exists FOREIGN KEY (account_id) REFERENCES public.accounts(id) ON DELETE RESTRICT;

CREATE INDEX license_keys_account_id_idx ON public.license_keys USING btree (account_id);

-- An account's keys, one equality whichever way a key belongs to it.
CREATE INDEX license_keys_belongs_to_idx ON public.license_keys USING btree (belongs_to);

-- The keys cadence.refresh_key_accounts rewrites when an account's e-mail changes: unlinked ones
-- only, so the work follows the keys that change, never the account's linked keys.
CREATE INDEX license_keys_unlinked_by_email_idx ON public.license_keys USING btree (lower(email)) WHERE (account_id IS NULL);

-- The pairing rule's one spelling. A linked key pays one trigger call and no probe; an unlinked key
-- one probe of the accounts' e-mail index. A write of belongs_to by hand is recomputed, so no writer
-- can make it disagree.
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

COMMENT ON FUNCTION cadence.find_key_account() IS 'Trigger: a key''s belongs_to, the pairing rule''s one spelling: its owner link (account_id), else the account whose e-mail equals its stored e-mail (case-insensitively), else null.';

-- A key written while an account with its e-mail is created would otherwise read the accounts
-- before that commit and store none. So statements writing keys' owner links or e-mails take one
-- shared advisory lock, and an account's insert, delete or e-mail change takes it exclusively
-- before it rewrites its keys (cadence.refresh_key_accounts): each waits for the other to commit,
-- then reads what it wrote (READ COMMITTED, as the API and the dashboard run). One lock for all
-- e-mails: an import of 100,000 unlinked keys takes one lock, not one per e-mail (Postgres' lock
-- table has room for 64 per connection by default); a new account's onboarding waits at most for a
-- staff statement writing keys, or for another new account's onboarding.
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

COMMENT ON FUNCTION cadence.await_account_changes() IS 'Statement trigger on public.license_keys: a statement writing owner links or stored e-mails waits for an account being created, deleted or changing e-mail, and that change waits for it, so each reads what the other wrote.';

-- An account created, deleted, or its e-mail changed (case aside) changes which account the unlinked
-- keys of its old and new e-mail belong to.
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

COMMENT ON FUNCTION cadence.refresh_key_accounts() IS 'Trigger on public.accounts: after an account is created or deleted, or its e-mail changes, the unlinked keys of its old and new e-mail find their account again (through license_keys_unlinked_by_email_idx).';

-- The owner's id only: the view reads the account itself under the accounts policy, so a holder
-- gets an e-mail for their own keys only.
CREATE FUNCTION cadence.license_key_owner(p_key text) RETURNS uuid
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO ''
    AS $$
  select k.belongs_to from public.license_keys as k where k.key = p_key
$$;

COMMENT ON FUNCTION cadence.license_key_owner(p_key text) IS 'The id of the account a license key belongs to (license_keys.belongs_to), or null. For public.kiosk_status, whose readers may not read that column.';

-- The three triggers fire always, with session_replication_role = replica too (bulk loads set it
-- to skip the payload triggers), so no load can store a key without its account.
CREATE TRIGGER key_account_is_found BEFORE INSERT OR UPDATE OF account_id, email, belongs_to ON public.license_keys FOR EACH ROW EXECUTE FUNCTION cadence.find_key_account();

ALTER TABLE public.license_keys ENABLE ALWAYS TRIGGER key_account_is_found;

CREATE TRIGGER key_writes_await_account_changes BEFORE INSERT OR UPDATE OF account_id, email, belongs_to ON public.license_keys FOR EACH STATEMENT EXECUTE FUNCTION cadence.await_account_changes();

ALTER TABLE public.license_keys ENABLE ALWAYS TRIGGER key_writes_await_account_changes;

CREATE TRIGGER key_accounts_follow_the_account AFTER INSERT OR DELETE ON public.accounts FOR EACH ROW EXECUTE FUNCTION cadence.refresh_key_accounts();

ALTER TABLE public.accounts ENABLE ALWAYS TRIGGER key_accounts_follow_the_account;

CREATE TRIGGER key_accounts_follow_the_account_email AFTER UPDATE OF email ON public.accounts FOR EACH ROW WHEN ((lower(old.email) IS DISTINCT FROM lower(new.email))) EXECUTE FUNCTION cadence.refresh_key_accounts();

ALTER TABLE public.accounts ENABLE ALWAYS TRIGGER key_accounts_follow_the_account_email;
