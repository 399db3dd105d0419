-- The catalogue: the nine canonical frequencies, palettes, the JSON the catalogue routes serve,
-- and an account's entitlements. pgTAP; run with pg_prove or `supabase test db` (test/README.md).
begin;
set local client_min_messages = warning;
create extension if not exists pgtap with schema extensions;
set local search_path = extensions, public;
select plan(28);

-- The API roles that may execute a function: its grants are part of its design.
create function pg_temp.executors(p_function regproc) returns text[] language sql as $$
  select array(select r from unnest(array['anon', 'authenticated', 'service_role']) as r
                where pg_catalog.has_function_privilege(r, p_function, 'execute') order by r)
$$;

-- A stored palette for canonical frequency 2 (285 Hz).
insert into public.color_palettes (canonical_frequency_id, colors)
  values (2, array['#000001', '#000002', '#000003', '#000004', '#000005', '#000006', '#000007']);

-- cadence.canonical_frequencies
select has_function('cadence', 'canonical_frequencies', 'canonical_frequencies exists');
select results_eq($$select id::integer, hz from cadence.canonical_frequencies() order by id$$,
  $$values (1, 174), (2, 285), (3, 396), (4, 417), (5, 528), (6, 639), (7, 741), (8, 852), (9, 963)$$,
  'canonical_frequencies: ids 1 to 9 are 174, 285, 396, 417, 528, 639, 741, 852 and 963 Hz');
select is_empty($$select from cadence.canonical_frequencies() where cardinality(palette) <> 7$$, 'canonical_frequencies: each has a built-in palette of seven colours');
select is(pg_temp.executors('cadence.canonical_frequencies'), '{service_role}', 'canonical_frequencies: only service_role may execute it');

-- cadence.frequencies_json
select has_function('cadence', 'frequencies_json', 'frequencies_json exists');
select is(cadence.frequencies_json()::jsonb -> 0, '{"id": 1, "name": "Foundation", "value": 174}'::jsonb, 'frequencies_json: each frequency as {id, name, value}');
select is(json_array_length(cadence.frequencies_json()), 9, 'frequencies_json: the nine canonical frequencies, whatever frequencies are stored');
select is(pg_temp.executors('cadence.frequencies_json'), '{service_role}', 'frequencies_json: only service_role may execute it');

-- cadence.palettes
select has_function('cadence', 'palettes', 'palettes exists');
select is((select colors[1] from cadence.palettes() where canonical_frequency_id = 2), '#000001', 'palettes: a stored palette wins');
select is((select colors from cadence.palettes() where canonical_frequency_id = 1), (select palette from cadence.canonical_frequencies() where id = 1),
  'palettes: else the built-in one');
select is(pg_temp.executors('cadence.palettes'), '{service_role}', 'palettes: only service_role may execute it');

-- cadence.color_palettes_json
select has_function('cadence', 'color_palettes_json', 'color_palettes_json exists');
select results_eq($$select (p ->> 'solfeggioFrequencyId')::integer, p -> 'colors' ->> 0 from json_array_elements(cadence.color_palettes_json()) as p limit 2$$,
  $$values (1, '#FEE2E2'), (2, '#000001')$$, 'color_palettes_json: one {solfeggioFrequencyId, colors} per canonical id, in order, stored palettes winning');
select is(pg_temp.executors('cadence.color_palettes_json'), '{service_role}', 'color_palettes_json: only service_role may execute it');

-- cadence.categories_json and cadence.groups_json
insert into public.categories (id, name, sort_order) values (901, 'First', -1);
insert into public.groups (id, name, sort_order) values (901, 'First', -1);
select has_function('cadence', 'categories_json', 'categories_json exists');
select is(cadence.categories_json()::jsonb -> 0, '{"id": 901, "name": "First", "sortOrder": -1}'::jsonb,
  'categories_json: each category as {id, name, sortOrder}, by sortOrder');
select is(pg_temp.executors('cadence.categories_json'), '{service_role}', 'categories_json: only service_role may execute it');
select has_function('cadence', 'groups_json', 'groups_json exists');
select results_eq($$select (g ->> 'id')::integer from json_array_elements(cadence.groups_json()) as g$$,
  $$values (901), (3), (1), (2)$$, 'groups_json: each group by sortOrder, not by id (the seed''s sort orders are not in id order)');
select is(pg_temp.executors('cadence.groups_json'), '{service_role}', 'groups_json: only service_role may execute it');

-- cadence.proclamations_json: the seed's 936 Hz "Legacy Tone" has no canonical frequency.
select has_function('cadence', 'proclamations_json', 'proclamations_json exists');
select is_empty($$select from json_array_elements(cadence.proclamations_json()) as p where p ->> 'id' = 'b0000000-0000-4000-8000-000000000005'$$,
  'proclamations_json: a proclamation whose frequency has no canonical id is never served');
select is((select (p ->> 'solfeggioFrequencyId')::integer from json_array_elements(cadence.proclamations_json()) as p
            where p ->> 'id' = 'b0000000-0000-4000-8000-000000000001'), 5,
  'proclamations_json: a proclamation names the canonical id of its frequency (528 Hz is 5)');
select is(pg_temp.executors('cadence.proclamations_json'), '{service_role}', 'proclamations_json: only service_role may execute it');

-- cadence.entitlements
insert into public.accounts (id, email, display_name) values ('eb000000-0000-4000-8000-000000000001', 'entitled@example.com', 'Entitled');
insert into public.license_keys (key, account_id, email) values ('ENTL-0000-0000-0001', 'eb000000-0000-4000-8000-000000000001', 'entitled@example.com');
insert into public.account_proclamations (account_id, proclamation_id) values ('eb000000-0000-4000-8000-000000000001', 'b0000000-0000-4000-8000-000000000003');
select has_function('cadence', 'entitlements', array['text[]', 'text[]'], 'entitlements exists');
select results_eq(
  $$select n, outcome, ids from cadence.entitlements(array['ENTL-0000-0000-0001', 'ENTL-0000-0000-0001'], array['entitled@example.com', 'other@example.com']) order by n$$,
  $$values (1::bigint, 'paired', array['b0000000-0000-4000-8000-000000000003'::uuid]), (2, 'not_owner', null)$$,
  'entitlements: a paired key reads its account''s proclamations; any other pairing outcome reads none');
select is(pg_temp.executors('cadence.entitlements'), '{service_role}', 'entitlements: only service_role may execute it');

select * from finish();
rollback;
