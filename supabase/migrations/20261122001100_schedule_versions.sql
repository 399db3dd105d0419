-- Each stored payload's schedule version, the value the API sends as the ETag, so that staff (and
-- kiosk_status) can tell which version a key's kiosk should hold without asking the API. The API
-- computes the version in TypeScript (functions/app/schedule/schedule-version.ts); these functions
-- compute the same text: SHA-256, in hex, of the canonical JSON of the payload's type, daily and
-- weekly (object keys sorted, no whitespace). test/kiosk-status.test.ts compares the two.

create function cadence.canonical_json(p_value jsonb)
returns text
language plpgsql
immutable
set search_path = ''
as $$
begin
  -- A jsonb scalar prints as JSON.stringify prints it for what payloads hold (strings, integers,
  -- booleans, null). Keys compare byte-wise, as JavaScript sorts the payload's ASCII keys.
  case pg_catalog.jsonb_typeof(p_value)
    when 'object' then
      return '{' || coalesce((
        select pg_catalog.string_agg(pg_catalog.to_json(e.key)::text || ':' || cadence.canonical_json(e.value), ',' order by e.key collate "C")
        from pg_catalog.jsonb_each(p_value) as e), '') || '}';
    when 'array' then
      return '[' || coalesce((
        select pg_catalog.string_agg(cadence.canonical_json(a.value), ',' order by a.n)
        from pg_catalog.jsonb_array_elements(p_value) with ordinality as a(value, n)), '') || ']';
    else
      return p_value::text;
  end case;
end
$$;
comment on function cadence.canonical_json(jsonb) is
  'JSON with every object''s keys sorted and no whitespace: one spelling for equal content (canonicalJson in schedule-version.ts).';

create function cadence.schedule_version(p_payload json)
returns text
language sql
immutable
set search_path = ''
as $$
  select pg_catalog.encode(pg_catalog.sha256(pg_catalog.convert_to(cadence.canonical_json(pg_catalog.jsonb_build_object(
           'type', p_payload::jsonb -> 'type',
           'daily', p_payload::jsonb -> 'daily',
           'weekly', p_payload::jsonb -> 'weekly')), 'UTF8')), 'hex')
$$;
comment on function cadence.schedule_version(json) is
  'The schedule version of a payload, as the API computes it for the ETag: hex SHA-256 of the canonical JSON of type, daily and weekly.';

-- Computed when a payload is stored (a staff edit), never on a poll.
alter table public.license_schedule_payloads
  add column version text generated always as (cadence.schedule_version(payload)) stored;
comment on column public.license_schedule_payloads.version is
  'The schedule version the API serves for this key (its ETag, unquoted).';

revoke execute on function cadence.canonical_json(jsonb) from public;
revoke execute on function cadence.schedule_version(json) from public;
grant execute on function cadence.canonical_json(jsonb) to service_role;
grant execute on function cadence.schedule_version(json) to service_role;
