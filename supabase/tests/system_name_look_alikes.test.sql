-- System names' look-alike letters of another script (generated from Unicode's confusables.txt):
-- what cadence.system_name_keys reads a name through. pgTAP; run
-- with pg_prove or `supabase test db` (test/README.md).
begin;
set local client_min_messages = warning;
create extension if not exists pgtap with schema extensions;
set local search_path = extensions, public;
select plan(12);

-- The API roles that may execute a function: its grants are part of its design.
create function pg_temp.executors(p_function regproc) returns text[] language sql as $$
  select array(select r from unnest(array['anon', 'authenticated', 'service_role']) as r
                where pg_catalog.has_function_privilege(r, p_function, 'execute') order by r)
$$;

-- cadence.system_name_look_alikes (small letters)
select has_function('cadence', 'system_name_look_alikes', array['text'], 'system_name_look_alikes exists');
select is(cadence.system_name_look_alikes(U&'l\043Ebby l\03BFbby'), 'lobby lobby',
  'system_name_look_alikes: a Cyrillic or Greek o in a Latin name is o');
select is(cadence.system_name_look_alikes(U&'\0440\043E\0440'), U&'\0440\043E\0440',
  'system_name_look_alikes: a name all in Cyrillic stays as it is');
select is(cadence.system_name_look_alikes('barn bam kiosk 1 kiosk l room 0 room o'), 'barn bam kiosk 1 kiosk l room 0 room o',
  'system_name_look_alikes: look-alikes within one script and common characters are never replaced');
select is(cadence.system_name_look_alikes(U&'room \0431'), 'room 6',
  'system_name_look_alikes: a Cyrillic letter that looks like a digit is that digit in a Latin name');
select is(pg_temp.executors('cadence.system_name_look_alikes'), '{service_role}', 'system_name_look_alikes: only service_role may execute it');

-- cadence.system_name_capital_look_alikes (capitals)
select has_function('cadence', 'system_name_capital_look_alikes', array['text'], 'system_name_capital_look_alikes exists');
select is(cadence.system_name_capital_look_alikes(U&'\0412AR \041DALL'), 'BAR HALL',
  'system_name_capital_look_alikes: Cyrillic capitals that look like Latin ones are those in a Latin name');
select is(cadence.system_name_capital_look_alikes(U&'LOBB\0406'), 'LOBBI',
  'system_name_capital_look_alikes: a Cyrillic I is Latin I, the look-alike in capitals, not the prototype l');
select is(cadence.system_name_capital_look_alikes('BARN BAM 1 L 0 O'), 'BARN BAM 1 L 0 O',
  'system_name_capital_look_alikes: look-alikes within one script and common characters are never replaced');
select is(cadence.system_name_capital_look_alikes(U&'\0412\0410\0420'), U&'\0412\0410\0420',
  'system_name_capital_look_alikes: a name all in Cyrillic stays as it is');
select is(pg_temp.executors('cadence.system_name_capital_look_alikes'), '{service_role}', 'system_name_capital_look_alikes: only service_role may execute it');

select * from finish();
rollback;
