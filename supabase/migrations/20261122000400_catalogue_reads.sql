-- What kiosks read of the catalogue, assembled as JSON in one query each.
-- The nine canonical frequencies are static (kiosks depend on ids 1-9), so they live in an
-- immutable function rather than a table staff could edit.

create function cadence.canonical_frequencies()
returns table (id smallint, hz integer, name text, palette text[])
language sql
immutable
set search_path = ''
as $$
  values
    (1::smallint, 174, 'Foundation',     array['#FEE2E2','#FECACA','#FCA5A5','#F87171','#EF4444','#DC2626','#B91C1C']),
    (2::smallint, 285, 'Restoration',    array['#FFEDD5','#FED7AA','#FDBA74','#FB923C','#F97316','#EA580C','#C2410C']),
    (3::smallint, 396, 'Liberation',     array['#FEF3C7','#FDE68A','#FCD34D','#FBBF24','#F59E0B','#D97706','#B45309']),
    (4::smallint, 417, 'Change',         array['#FEF9C3','#FEF08A','#FDE047','#FACC15','#EAB308','#CA8A04','#A16207']),
    (5::smallint, 528, 'Transformation', array['#DCFCE7','#BBF7D0','#86EFAC','#4ADE80','#22C55E','#16A34A','#15803D']),
    (6::smallint, 639, 'Connection',     array['#CCFBF1','#99F6E4','#5EEAD4','#2DD4BF','#14B8A6','#0D9488','#0F766E']),
    (7::smallint, 741, 'Expression',     array['#DBEAFE','#BFDBFE','#93C5FD','#60A5FA','#3B82F6','#2563EB','#1D4ED8']),
    (8::smallint, 852, 'Intuition',      array['#E0E7FF','#C7D2FE','#A5B4FC','#818CF8','#6366F1','#4F46E5','#4338CA']),
    (9::smallint, 963, 'Unity',          array['#EDE9FE','#DDD6FE','#C4B5FD','#A78BFA','#8B5CF6','#7C3AED','#6D28D9'])
$$;
comment on function cadence.canonical_frequencies() is
  'The nine canonical frequencies (ids 1-9), with built-in names and light-to-dark palettes.';

-- A stored palette row wins over the built-in one.
create function cadence.palettes()
returns table (canonical_frequency_id smallint, colors text[])
language sql
stable
set search_path = ''
as $$
  select c.id, coalesce(p.colors, c.palette)
  from cadence.canonical_frequencies() as c
  left join public.color_palettes as p on p.canonical_frequency_id = c.id
$$;
comment on function cadence.palettes() is 'One palette per canonical id: the stored row if any, else the built-in one.';

create function cadence.categories_json()
returns json
language sql
stable
set search_path = ''
as $$
  select coalesce(json_agg(json_build_object('id', c.id, 'name', c.name, 'sortOrder', c.sort_order)
                            order by c.sort_order, c.id), '[]')
  from public.categories as c
$$;

create function cadence.groups_json()
returns json
language sql
stable
set search_path = ''
as $$
  select coalesce(json_agg(json_build_object('id', g.id, 'name', g.name, 'sortOrder', g.sort_order)
                            order by g.sort_order, g.id), '[]')
  from public.groups as g
$$;

create function cadence.frequencies_json()
returns json
language sql
immutable
set search_path = ''
as $$
  select json_agg(json_build_object('id', c.id, 'name', c.name, 'value', c.hz) order by c.id)
  from cadence.canonical_frequencies() as c
$$;

create function cadence.color_palettes_json()
returns json
language sql
stable
set search_path = ''
as $$
  select json_agg(json_build_object('solfeggioFrequencyId', p.canonical_frequency_id, 'colors', to_json(p.colors))
                   order by p.canonical_frequency_id)
  from cadence.palettes() as p
$$;

-- Every served proclamation: those whose frequency has a canonical id, with its palette.
create function cadence.proclamations_json()
returns json
language sql
stable
set search_path = ''
as $$
  -- json_strip_nulls leaves colorPalette out when no palette exists for the canonical id.
  select coalesce(json_agg(
           json_strip_nulls(json_build_object(
             'id', pr.id,
             'name', pr.name,
             'content', pr.content,
             'categoryId', pr.category_id,
             'groupId', pr.group_id,
             'solfeggioFrequencyId', c.id,
             'colorPalette', to_json(pal.colors)
           ))
           order by pr.created_at, pr.id), '[]')
  from public.proclamations as pr
  join public.frequencies as f on f.id = pr.frequency_id
  join cadence.canonical_frequencies() as c on c.hz = f.hz
  left join cadence.palettes() as pal on pal.canonical_frequency_id = c.id
$$;

-- The entitlement for a key and e-mail in one round trip: the pairing outcome and, when paired, the
-- ids of the account's proclamations. The API cuts the subset from its cached catalogue, so no
-- JSON is built per request. No `set search_path`, so Postgres can inline it into the caller's
-- query (a SET clause forces a plan per call); it is SECURITY INVOKER and qualifies every name.
create function cadence.entitled_proclamation_ids(p_key text, p_email text)
returns table (outcome text, ids uuid[])
language sql
stable
as $$
  select p.outcome,
         case when p.outcome = 'paired' then
           array(select ap.proclamation_id from public.account_proclamations as ap where ap.account_id = p.account_id)
         end
  from cadence.license_pairing(p_key, p_email) as p
$$;

revoke execute on all functions in schema cadence from public;
grant execute on all functions in schema cadence to service_role;
