-- Venue addresses: many kiosks behind one public address (a gym chain's 20 kiosks behind one
-- router) share the spec's per-address rate limit of 10 requests a minute, which holds 5 kiosks
-- polling every 60 s. A registered address (an IP, or a CIDR range) gets its kiosk count times the
-- spec's allowance on each kiosk route (functions/app/rate-limit/venues.ts); every address nobody
-- registered keeps the spec's limits exactly.
--
-- Staff register venues in the dashboard (as `postgres`, past row-level security); account holders
-- register their own through the Data API (as `authenticated`, under the policies below). The rules,
-- each refused with a message that says why:
-- - an address is at most an IPv4 /24 or an IPv6 /48 wide (a /0 would lift the limit for everyone);
-- - no two registrations overlap, whoever holds them (an exclusion constraint, so two concurrent
--   inserts cannot both pass; the trigger names the range in the way first);
-- - an account's registrations hold at most as many kiosks as the account has active license keys;
-- - an account holder registers only an address one of the account's kiosks has been seen from
--   (public.kiosk_sightings.last_seen_ip); staff may register a venue before its kiosks arrive.
-- Every change is dated and attributed: on the row (created/updated at and by) and, deletions
-- included, in public.venue_address_changes.

create table public.venue_addresses (
  id uuid primary key default pg_catalog.gen_random_uuid(),
  account_id uuid not null
    constraint venue_address_belongs_to_an_account references public.accounts (id) on delete cascade,
  network cidr not null,
  kiosks integer not null
    constraint venue_address_holds_at_least_one_kiosk check (kiosks >= 1),
  created_at timestamptz not null default pg_catalog.now(),
  created_by text not null,
  updated_at timestamptz not null default pg_catalog.now(),
  updated_by text not null,
  -- Wider ranges hold other people: an ISP's customers, a cloud's tenants.
  constraint venue_address_is_at_most_an_ipv4_24_or_ipv6_48 check (
    case pg_catalog.family(network) when 4 then pg_catalog.masklen(network) >= 24 else pg_catalog.masklen(network) >= 48 end),
  constraint venue_addresses_do_not_overlap exclude using gist (network inet_ops with &&)
);
create index venue_addresses_account_idx on public.venue_addresses (account_id);
comment on table public.venue_addresses is
  'Venue addresses: an IP or CIDR range and the kiosks behind it; the kiosk routes allow it kiosks x the spec''s per-address rate limit. Staff edit in the dashboard; holders through the Data API. Rules in cadence.check_venue_address.';
comment on column public.venue_addresses.network is 'An IP (203.0.113.7/32) or range (203.0.113.0/28), at most an IPv4 /24 or IPv6 /48, overlapping no other registration.';
comment on column public.venue_addresses.kiosks is 'Kiosks behind the address; the account''s registrations hold at most its active license keys.';
comment on column public.venue_addresses.created_by is 'Who registered it: "account holder <auth user id>" or "role <database login>" (set by a trigger).';
comment on column public.venue_addresses.updated_by is 'Who changed it last, as created_by (set by a trigger).';

create table public.venue_address_changes (
  id bigint generated always as identity primary key,
  venue_address_id uuid not null,
  account_id uuid not null,
  change text not null constraint venue_address_change_is_a_verb check (change in ('insert', 'update', 'delete')),
  -- The row after the change; for a deletion, the row deleted.
  network cidr not null,
  kiosks integer not null,
  changed_at timestamptz not null default pg_catalog.now(),
  changed_by text not null
);
create index venue_address_changes_account_idx on public.venue_address_changes (account_id, changed_at);
comment on table public.venue_address_changes is
  'Written by a trigger, do not edit: every insert, update and delete of public.venue_addresses, when and by whom.';

create function cadence.change_author()
returns text
language plpgsql
stable
security definer
set search_path = ''
as $$
begin
  -- An account holder through the Data API carries JWT claims; staff in the dashboard, and the API,
  -- are named by their database login (session_user: the definer's rights do not change it).
  return coalesce('account holder ' || (select auth.uid())::text, 'role ' || session_user);
end
$$;
comment on function cadence.change_author() is
  'Who makes the current change: "account holder <auth user id>" for a signed-in holder, else "role <database login>". For audit columns.';

create function cadence.check_venue_address()
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
  v_taken record;
  v_registered bigint;
  v_active bigint;
begin
  -- Serialises an account's registrations, so two concurrent ones cannot both fit under its key
  -- count; NO KEY UPDATE leaves the foreign-key checks of other tables on this row unblocked.
  select * into v_account from public.accounts as a where a.id = new.account_id for no key update;

  select v.network, v.account_id = new.account_id as own into v_taken
    from public.venue_addresses as v
   where v.network && new.network and v.id is distinct from new.id
   limit 1;
  if found then
    raise exception using
      errcode = 'exclusion_violation',
      constraint = 'venue_addresses_do_not_overlap',
      message = pg_catalog.format('venue address %s overlaps %s, %s', new.network, v_taken.network,
        case when v_taken.own then 'already registered to this account: change that registration''s kiosks instead'
             else 'registered to another account' end);
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

  if v_holder and not exists (
    select
      from public.kiosk_sightings as s
      join public.license_keys as k on k.key = s.license_key
     where s.last_seen_ip <<= new.network
       and (k.account_id = v_account.id or pg_catalog.lower(k.email) = pg_catalog.lower(v_account.email))
       and cadence.key_belongs_to(k, v_account)) then
    raise exception using
      errcode = 'check_violation',
      constraint = 'venue_address_was_seen_from_the_account',
      message = pg_catalog.format('venue address %s: no kiosk of this account has called from it; register the address your kiosks call from (public.kiosk_status.last_seen_ip)', new.network);
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
  'Trigger: refuses a venue address that overlaps another, holds more kiosks than the account''s active keys, or (for an account holder) no kiosk of the account was seen from; dates and attributes the change.';

create function cadence.record_venue_address_change()
returns trigger
language plpgsql
volatile
security definer
set search_path = ''
as $$
declare
  v_row public.venue_addresses := case when tg_op = 'DELETE' then old else new end;
begin
  insert into public.venue_address_changes (venue_address_id, account_id, change, network, kiosks, changed_by)
  values (v_row.id, v_row.account_id, pg_catalog.lower(tg_op), v_row.network, v_row.kiosks, cadence.change_author());
  return null;
end
$$;
comment on function cadence.record_venue_address_change() is 'Trigger: records each change of public.venue_addresses in public.venue_address_changes.';

create trigger venue_address_rules before insert or update on public.venue_addresses
  for each row execute function cadence.check_venue_address();
create trigger venue_address_changes after insert or update or delete on public.venue_addresses
  for each row execute function cadence.record_venue_address_change();

create function cadence.venue_allowances(p_most integer)
returns table (network text, kiosks integer)
language sql
stable
set search_path = ''
as $$
  -- The whole table in one read, largest allowances first, so a table past `p_most` rows drops
  -- the smallest (those venues fall back to the spec's limit, never to more).
  select v.network::text, v.kiosks from public.venue_addresses as v order by v.kiosks desc, v.network limit p_most
$$;
comment on function cadence.venue_allowances(integer) is
  'Every registered venue address (text) and its kiosks, at most p_most, largest first: what each API instance caches for the rate limits.';

alter table public.venue_addresses enable row level security;
alter table public.venue_address_changes enable row level security;
revoke all on public.venue_addresses, public.venue_address_changes from anon, authenticated, service_role;
revoke all on sequence public.venue_address_changes_id_seq from anon, authenticated, service_role;

-- Account holders: their own account's registrations. The account and the audit columns are not
-- theirs to write; the trigger sets the audit columns, and account_id is checked by the policies.
grant select (id, account_id, network, kiosks, created_at, created_by, updated_at, updated_by) on public.venue_addresses to authenticated;
grant insert (account_id, network, kiosks) on public.venue_addresses to authenticated;
grant update (network, kiosks) on public.venue_addresses to authenticated;
grant delete on public.venue_addresses to authenticated;
create policy "Account holders can read their own venue addresses"
  on public.venue_addresses for select to authenticated
  using (account_id = (select cadence.holder_account_id()));
create policy "Account holders can register venue addresses for their account"
  on public.venue_addresses for insert to authenticated
  with check (account_id = (select cadence.holder_account_id()));
create policy "Account holders can change their own venue addresses"
  on public.venue_addresses for update to authenticated
  using (account_id = (select cadence.holder_account_id()))
  with check (account_id = (select cadence.holder_account_id()));
create policy "Account holders can delete their own venue addresses"
  on public.venue_addresses for delete to authenticated
  using (account_id = (select cadence.holder_account_id()));

revoke execute on function cadence.change_author() from public;
revoke execute on function cadence.check_venue_address() from public;
revoke execute on function cadence.record_venue_address_change() from public;
revoke execute on function cadence.venue_allowances(integer) from public;
grant execute on function cadence.venue_allowances(integer) to service_role;
