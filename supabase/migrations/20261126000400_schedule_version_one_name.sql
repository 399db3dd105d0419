-- The schedule version has one name. The poll functions called it `fingerprint` (their signature
-- predates the version) where public.schedule_payloads says `version`, and the comments on
-- cadence.canonical_json and cadence.schedule_version still named a TypeScript file that is gone
-- and said the API computes the version: Postgres computes it, once, when a payload is stored.
--
-- A function's result columns cannot be renamed in place, and an API instance deployed before this
-- migration asks for `fingerprint` until it is replaced. So the polls get new functions that say
-- `version`, which the API now calls, and the old ones stay, answering from the new ones, until no
-- instance calls them; a later migration drops them (see supabase/README.md, "Changing a function
-- the API calls").

comment on function cadence.canonical_json(jsonb) is
  'JSON with every object''s keys sorted and no whitespace: one spelling for equal content, the text cadence.schedule_version hashes.';

comment on function cadence.schedule_version(json) is
  'The schedule version of a payload: hex SHA-256 of the canonical JSON of type, daily and weekly. Computed here, once, when a payload is stored (public.schedule_payloads.version); the API serves it as the ETag as it is.';

create function cadence.license_schedules_unless_held(p_keys text[], p_versions text[])
returns table (n bigint, version text, payload json)
language plpgsql
stable
set search_path = ''
set plan_cache_mode = force_generic_plan
as $$
begin
  return query
    select s.n, s.version, case when s.version is distinct from p_versions[s.n] then s.payload end
      from cadence.served_schedules(p_keys) as s;
end
$$;
comment on function cadence.license_schedules_unless_held(text[], text[]) is
  'For each known key (position n), the version of the schedule it reads, with the payload only when it differs from the version the caller holds at the same position; no row for an unknown key.';

create function cadence.legacy_schedules_unless_held(p_keys text[], p_emails text[], p_versions text[])
returns table (n bigint, outcome text, version text, payload json)
language plpgsql
stable
set search_path = ''
set plan_cache_mode = force_generic_plan
as $$
begin
  return query
    select p.n, p.outcome, s.version, case when s.version is distinct from p_versions[p.n] then s.payload end
      from cadence.license_pairings(p_keys, p_emails) as p
      left join cadence.served_schedules(p_keys) as s on p.outcome = 'paired' and s.n = p.n;
end
$$;
comment on function cadence.legacy_schedules_unless_held(text[], text[], text[]) is
  'For each key and e-mail (position n), the pairing outcome and, when paired, the version of the schedule the key reads, with the payload only when it differs from the version the caller holds at the same position.';

-- The former polls, for API instances deployed before this migration: the same answers, from the
-- new functions.
create or replace function cadence.license_schedules_if_changed(p_keys text[], p_fingerprints text[])
returns table (n bigint, fingerprint text, payload json)
language plpgsql
stable
set search_path = ''
set plan_cache_mode = force_generic_plan
as $$
begin
  return query select s.n, s.version, s.payload from cadence.license_schedules_unless_held(p_keys, p_fingerprints) as s;
end
$$;
comment on function cadence.license_schedules_if_changed(text[], text[]) is
  'Former name of cadence.license_schedules_unless_held, for API instances deployed before it (their `fingerprint` is the version); dropped once none runs.';

create or replace function cadence.legacy_schedules_if_changed(p_keys text[], p_emails text[], p_fingerprints text[])
returns table (n bigint, outcome text, fingerprint text, payload json)
language plpgsql
stable
set search_path = ''
set plan_cache_mode = force_generic_plan
as $$
begin
  return query select s.n, s.outcome, s.version, s.payload from cadence.legacy_schedules_unless_held(p_keys, p_emails, p_fingerprints) as s;
end
$$;
comment on function cadence.legacy_schedules_if_changed(text[], text[], text[]) is
  'Former name of cadence.legacy_schedules_unless_held, for API instances deployed before it (their `fingerprint` is the version); dropped once none runs.';

revoke execute on function cadence.license_schedules_unless_held(text[], text[]) from public;
revoke execute on function cadence.legacy_schedules_unless_held(text[], text[], text[]) from public;
grant execute on function cadence.license_schedules_unless_held(text[], text[]) to service_role;
grant execute on function cadence.legacy_schedules_unless_held(text[], text[], text[]) to service_role;
