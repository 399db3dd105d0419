-- Venue addresses: many kiosks behind one public address share the spec's per-address rate limit. A
-- registered address (an IP, or a CIDR range) adds a bucket of its kiosk count times the spec's
-- allowance; every address nobody registered keeps the spec's limits exactly. Staff register venues
-- in the dashboard, account holders their own through the Data API; the trigger refuses what breaks
-- a rule with a message that says why, and answers a holder only about their own account.

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
    -- Wider ranges hold other people: an ISP's customers, a cloud's tenants.
    CONSTRAINT venue_address_is_at_most_an_ipv4_24_or_ipv6_48 CHECK (
CASE family((network)::inet)
    WHEN 4 THEN (masklen((network)::inet) >= 24)
    ELSE (masklen((network)::inet) >= 48)
END)
);

COMMENT ON TABLE public.venue_addresses IS 'Venue addresses: an IP or CIDR range and the kiosks behind it; the kiosk routes add kiosks x the contract''s per-address rate limit to what its addresses have alone, never less. Staff edit in the dashboard; holders register one recently seen address through the Data API. Rules in cadence.check_venue_address.';

COMMENT ON COLUMN public.venue_addresses.network IS 'An IP (203.0.113.7/32) or range (203.0.113.0/28), at most an IPv4 /24 or IPv6 /48; an account holder registers one address (IPv4 /32, IPv6 /64). May overlap other accounts'' registrations: each adds.';

COMMENT ON COLUMN public.venue_addresses.kiosks IS 'Kiosks behind the address; the account''s registrations hold at most its active license keys.';

COMMENT ON COLUMN public.venue_addresses.created_by IS 'Who registered it: "account holder <auth user id>" or "role <database login>" (set by a trigger).';

COMMENT ON COLUMN public.venue_addresses.updated_by IS 'Who changed it last, as created_by (set by a trigger).';

ALTER TABLE ONLY public.venue_addresses
    ADD CONSTRAINT venue_addresses_pkey PRIMARY KEY (id);

ALTER TABLE public.venue_addresses ENABLE ROW LEVEL SECURITY;

ALTER TABLE ONLY public.venue_addresses
    ADD CONSTRAINT venue_address_belongs_to_an_account FOREIGN KEY (account_id) REFERENCES public.accounts(id) ON DELETE CASCADE;

CREATE INDEX venue_addresses_account_idx ON public.venue_addresses USING btree (account_id);

CREATE TABLE public.venue_address_changes (
    id bigint NOT NULL,
    venue_address_id uuid NOT NULL,
    account_id uuid NOT NULL,
    change text NOT NULL,
    -- The row after the change; for a deletion, the row deleted.
    network cidr NOT NULL,
    kiosks integer NOT NULL,
    changed_at timestamp with time zone DEFAULT now() NOT NULL,
    changed_by text NOT NULL,
    CONSTRAINT venue_address_change_is_a_verb CHECK ((change = ANY (ARRAY['insert'::text, 'update'::text, 'delete'::text])))
);

COMMENT ON TABLE public.venue_address_changes IS 'Written by a trigger, do not edit: every insert, update and delete of public.venue_addresses, when and by whom.';

ALTER TABLE public.venue_address_changes ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME public.venue_address_changes_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

ALTER TABLE ONLY public.venue_address_changes
    ADD CONSTRAINT venue_address_changes_pkey PRIMARY KEY (id);

ALTER TABLE public.venue_address_changes ENABLE ROW LEVEL SECURITY;

CREATE INDEX venue_address_changes_account_idx ON public.venue_address_changes USING btree (account_id, changed_at);

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

COMMENT ON FUNCTION cadence.check_venue_address() IS 'Trigger: refuses a venue address that overlaps another of the same account, holds more kiosks than the account''s active keys, or (for an account holder) is a range or an address no kiosk of the account called from in the last 24 hours; dates and attributes the change.';

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

COMMENT ON FUNCTION cadence.check_venue_address_account() IS 'Trigger, first on public.venue_addresses: refuses an account holder''s row for an account not theirs with row-level security''s own error, before cadence.check_venue_address reads or locks that account, so no error tells a holder what another account holds.';

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

COMMENT ON FUNCTION cadence.record_venue_address_change() IS 'Trigger: records each change of public.venue_addresses in public.venue_address_changes.';

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

COMMENT ON FUNCTION cadence.venue_allowances(p_most integer) IS 'Every registered venue network (text) and the kiosks of all its registrations, at most p_most, largest first: what each API instance caches for the rate limits.';

CREATE TRIGGER venue_address_changes AFTER INSERT OR DELETE OR UPDATE ON public.venue_addresses FOR EACH ROW EXECUTE FUNCTION cadence.record_venue_address_change();

-- Postgres fires a table's triggers for one event in the order of their names:
-- venue_address_is_the_callers sorts before venue_address_rules (cadence.check_venue_address).
CREATE TRIGGER venue_address_is_the_callers BEFORE INSERT OR UPDATE ON public.venue_addresses FOR EACH ROW EXECUTE FUNCTION cadence.check_venue_address_account();

CREATE TRIGGER venue_address_rules BEFORE INSERT OR UPDATE ON public.venue_addresses FOR EACH ROW EXECUTE FUNCTION cadence.check_venue_address();
