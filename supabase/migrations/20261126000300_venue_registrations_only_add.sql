-- A venue registration only adds (issue 39). Before, every address inside a registered network was
-- counted in the registration's one bucket instead of its own: an account holder whose kiosk was
-- seen once registered the surrounding IPv6 /48 for 1 kiosk, and every other customer in it then
-- shared 10 requests a minute with the registrant; the real venue there could not register, as
-- registrations of different accounts could not overlap.
--
-- Now (functions/app/venues/venue-limit.ts): an address keeps its own bucket at the contract's limit,
-- and a registered range adds a bucket its addresses share, drawn on only past their own. So:
-- - registrations of different accounts may overlap, each adding its own (accounts behind one
--   shared address each register their kiosks; cadence.venue_allowances adds them up per network).
--   One account's registrations still never overlap: it changes the kiosks of the one it has;
-- - an account holder registers one address only (an IPv4 /32 or an IPv6 /64, the bucket the API
--   counts an IPv6 client in) that one of the account's kiosks called from in the last 24 hours;
--   ranges are for staff.
-- Registrations already stored are kept as they are; those an account holder made that this
-- migration would refuse now are reported (WARNING) for staff to review.

alter table public.venue_addresses drop constraint venue_addresses_do_not_overlap;
comment on table public.venue_addresses is
  'Venue addresses: an IP or CIDR range and the kiosks behind it; the kiosk routes add kiosks x the contract''s per-address rate limit to what its addresses have alone, never less. Staff edit in the dashboard; holders register one recently seen address through the Data API. Rules in cadence.check_venue_address.';
comment on column public.venue_addresses.network is
  'An IP (203.0.113.7/32) or range (203.0.113.0/28), at most an IPv4 /24 or IPv6 /48; an account holder registers one address (IPv4 /32, IPv6 /64). May overlap other accounts'' registrations: each adds.';

create or replace function cadence.check_venue_address()
returns trigger
language plpgsql
volatile
security definer
set search_path = ''
as $$
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

  -- The pairing rule decides which keys are the account's (cadence.key_belongs_to); candidates
  -- through indexes first.
  select pg_catalog.count(*) into v_active
    from public.license_keys as k
   where (k.account_id = v_account.id or pg_catalog.lower(k.email) = pg_catalog.lower(v_account.email))
     and cadence.key_belongs_to(k, v_account) and k.active;
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
       and (k.account_id = v_account.id or pg_catalog.lower(k.email) = pg_catalog.lower(v_account.email))
       and cadence.key_belongs_to(k, v_account)) then
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
comment on function cadence.check_venue_address() is
  'Trigger: refuses a venue address that overlaps another of the same account, holds more kiosks than the account''s active keys, or (for an account holder) is a range or an address no kiosk of the account called from in the last 24 hours; dates and attributes the change.';

create or replace function cadence.venue_allowances(p_most integer)
returns table (network text, kiosks integer)
language sql
stable
set search_path = ''
as $$
  -- One row per network, every account's registrations of it added up; largest allowances first,
  -- so a table past `p_most` networks drops the smallest (those fall back to the contract's limit,
  -- never to less).
  select v.network::text, pg_catalog.sum(v.kiosks)::integer
    from public.venue_addresses as v
   group by v.network
   order by 2 desc, v.network
   limit p_most
$$;
comment on function cadence.venue_allowances(integer) is
  'Every registered venue network (text) and the kiosks of all its registrations, at most p_most, largest first: what each API instance caches for the rate limits.';

do $$
declare
  v_ranges text;
begin
  select pg_catalog.string_agg(pg_catalog.format('%s (%s, account %s)', v.id, v.network, v.account_id), ', ' order by v.created_at)
    into v_ranges
    from public.venue_addresses as v
   where v.created_by like 'account holder %'
     and pg_catalog.masklen(v.network) <> (pg_catalog.family(v.network) - 4) * 16 + 32;
  if v_ranges is not null then
    raise warning 'venue ranges an account holder registered, which only staff may now (kept; each now only adds to the addresses in it): %', v_ranges;
  end if;
end
$$;
