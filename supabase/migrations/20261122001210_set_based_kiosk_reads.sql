-- The kiosk reads the API batches (functions/app/batch-while-busy.ts) as one call a batch: each
-- function takes the batch's arrays and answers one row per position n (1-based; no row for an
-- unknown key where the per-request function answered none). They replace the per-request
-- functions, which the API called once per request inside each statement and which, pinned, could
-- no longer be inlined (pinned_pairing).

create function cadence.license_schedules_if_changed(p_keys text[], p_fingerprints text[])
returns table (n bigint, fingerprint text, payload json)
language plpgsql
stable
set search_path = ''
set plan_cache_mode = force_generic_plan
as $$
begin
  return query
    select r.n, s.fingerprint, case when s.fingerprint is distinct from r.held then s.payload end
      from unnest(p_keys, p_fingerprints) with ordinality as r(key, held, n)
      -- `= any (...)` restricts the table to the batch through its index, whichever join the
      -- planner picks for a batch it cannot size.
      join public.license_schedule_payloads as s on s.license_key = r.key and s.license_key = any (p_keys);
end
$$;
comment on function cadence.license_schedules_if_changed(text[], text[]) is
  'For each key (position n), the stored payload''s fingerprint, with the payload only when it differs from the fingerprint at the same position; no row for an unknown key.';

-- The legacy read pairs key and e-mail first; a paired poll then gets the payload only if changed.
create function cadence.legacy_schedules_if_changed(p_keys text[], p_emails text[], p_fingerprints text[])
returns table (n bigint, outcome text, fingerprint text, payload json)
language plpgsql
stable
set search_path = ''
set plan_cache_mode = force_generic_plan
as $$
begin
  return query
    select p.n, p.outcome, s.fingerprint, case when s.fingerprint is distinct from p_fingerprints[p.n] then s.payload end
      from cadence.license_pairings(p_keys, p_emails) as p
      left join public.license_schedule_payloads as s
        on p.outcome = 'paired' and s.license_key = p_keys[p.n] and s.license_key = any (p_keys);
end
$$;
comment on function cadence.legacy_schedules_if_changed(text[], text[], text[]) is
  'For each key and e-mail (position n), the pairing outcome and, when paired, the stored payload''s fingerprint, with the payload only when it differs from the fingerprint at the same position.';

-- The entitlement for each key and e-mail: the pairing outcome and, when paired, the ids of the
-- account's proclamations. The API cuts the subset from its cached catalogue.
create function cadence.entitlements(p_keys text[], p_emails text[])
returns table (n bigint, outcome text, ids uuid[])
language plpgsql
stable
set search_path = ''
set plan_cache_mode = force_generic_plan
as $$
begin
  return query
    select p.n, p.outcome,
           case when p.outcome = 'paired' then
             array(select ap.proclamation_id from public.account_proclamations as ap where ap.account_id = p.account_id)
           end
      from cadence.license_pairings(p_keys, p_emails) as p;
end
$$;
comment on function cadence.entitlements(text[], text[]) is
  'For each key and e-mail (position n), the pairing outcome and, when paired, the ids of the account''s proclamations.';

drop function cadence.license_schedule_if_changed(text, text);
drop function cadence.legacy_schedule_if_changed(text, text, text);
drop function cadence.entitled_proclamation_ids(text, text);

revoke execute on function cadence.license_schedules_if_changed(text[], text[]) from public;
revoke execute on function cadence.legacy_schedules_if_changed(text[], text[], text[]) from public;
revoke execute on function cadence.entitlements(text[], text[]) from public;
grant execute on function cadence.license_schedules_if_changed(text[], text[]) to service_role;
grant execute on function cadence.legacy_schedules_if_changed(text[], text[], text[]) to service_role;
grant execute on function cadence.entitlements(text[], text[]) to service_role;
