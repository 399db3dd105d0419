-- A kiosk polls far more often than its schedule changes, and most polls end in 304. The API keeps
-- the last payload it served per key; each stored payload carries a short fingerprint of its text,
-- so a poll asks only "has it changed?" and the payload crosses the wire only when it has.

alter table public.license_schedule_payloads
  add column fingerprint text generated always as (pg_catalog.md5(payload::text)) stored;
comment on column public.license_schedule_payloads.fingerprint is
  'md5 of the payload text: a change detector for the API''s cache, not the schedule version.';

-- No `set search_path`, so Postgres can inline it into the caller's query (a SET clause forces a
-- plan per call on the hottest path); it is SECURITY INVOKER and qualifies every name.
create function cadence.license_schedule_if_changed(p_key text, p_fingerprint text)
returns table (fingerprint text, payload json)
language sql
stable
as $$
  select p.fingerprint, case when p.fingerprint is distinct from p_fingerprint then p.payload end
  from public.license_schedule_payloads as p
  where p.license_key = p_key
$$;
comment on function cadence.license_schedule_if_changed(text, text) is
  'The stored payload''s fingerprint, with the payload only when it differs from p_fingerprint; no row for an unknown key.';

revoke execute on function cadence.license_schedule_if_changed(text, text) from public;
grant execute on function cadence.license_schedule_if_changed(text, text) to service_role;

-- The legacy read pairs key and e-mail first; a paired poll then gets the payload only if changed.
create function cadence.legacy_schedule_if_changed(p_key text, p_email text, p_fingerprint text)
returns table (outcome text, fingerprint text, payload json)
language sql
stable
as $$
  select p.outcome, s.fingerprint, case when s.fingerprint is distinct from p_fingerprint then s.payload end
  from cadence.license_pairing(p_key, p_email) as p
  left join public.license_schedule_payloads as s on p.outcome = 'paired' and s.license_key = p_key
$$;
comment on function cadence.legacy_schedule_if_changed(text, text, text) is
  'Pairing outcome of a key and e-mail and, when paired, the stored payload''s fingerprint, with the payload only when it differs from p_fingerprint.';

revoke execute on function cadence.legacy_schedule_if_changed(text, text, text) from public;
grant execute on function cadence.legacy_schedule_if_changed(text, text, text) to service_role;
