-- System names: the one form a name is stored and compared in, that it shows something, and that
-- it is unique per account. pgTAP; run with pg_prove or `supabase test db` (test/README.md).
begin;
set local client_min_messages = warning;
create extension if not exists pgtap with schema extensions;
set local search_path = extensions, public;
select plan(48);

-- The API roles that may execute a function: its grants are part of its design.
create function pg_temp.executors(p_function regproc) returns text[] language sql as $$
  select array(select r from unnest(array['anon', 'authenticated', 'service_role']) as r
                where pg_catalog.has_function_privilege(r, p_function, 'execute') order by r)
$$;

-- One account with a linked key, an unlinked key of its e-mail and a third key; another account,
-- and a named key of an e-mail no account has yet.
insert into public.accounts (id, email, display_name) values
  ('e2000000-0000-4000-8000-000000000001', 'names-a@example.com', 'Names A'),
  ('e2000000-0000-4000-8000-000000000002', 'names-b@example.com', 'Names B');
insert into public.license_keys (key, account_id, email, system_name) values
  ('NAME-0000-0000-0001', 'e2000000-0000-4000-8000-000000000001', 'names-a@example.com', 'Lobby'),
  ('NAME-0000-0000-0002', null, 'Names-A@example.com', null),
  ('NAME-0000-0000-0003', 'e2000000-0000-4000-8000-000000000001', 'names-a@example.com', null),
  ('NAME-0000-0000-0004', 'e2000000-0000-4000-8000-000000000002', 'names-b@example.com', null),
  ('NAME-0000-0000-0005', null, 'names-c@example.com', 'hall');

-- cadence.system_name_form
select has_function('cadence', 'system_name_form', array['text'], 'system_name_form exists');
select is(cadence.system_name_form(U&'\200B Lobby\3164 '), 'Lobby',
  'system_name_form: removes what renders as nothing (a zero-width space, a Hangul filler), then trims');
select is(cadence.system_name_form(U&'Cafe\0301'), U&'Caf\00E9', 'system_name_form: composes to NFC');
select is(cadence.system_name_form(U&'\2800\+01D159\FE0F'), '', 'system_name_form: a name of blank symbols and selectors only is empty');
select is(cadence.system_name_form(null), null, 'system_name_form: no name stays no name');
select is(pg_temp.executors('cadence.system_name_form'), '{service_role}', 'system_name_form: only service_role may execute it');

-- cadence.system_name_keys
select has_function('cadence', 'system_name_keys', array['text'], 'system_name_keys exists');
select is(
  array(select k.small_key from unnest(array[U&'L\043Ebby', U&'L\03BFbby', U&'\FF2C\FF4F\FF42\FF42\FF59',
                                             U&'\+01D40B\+01D428bby', U&'\24C1obby', 'LOBBY', U&'\200BLobby']) as n,
                cadence.system_name_keys(n) as k),
  array_fill('lobby'::text, array[7]),
  'system_name_keys: a Cyrillic or Greek o, fullwidth, mathematical bold, a circled L, capitals, a blank: all Lobby in small letters');
select is((cadence.system_name_keys(U&'Lobby \3000 Bar')).small_key, 'lobby bar', 'system_name_keys: runs of spaces of any kind are one space');
select is((cadence.system_name_keys(U&'Stra\00DFe')).small_key, 'strasse', 'system_name_keys: case folded fully, so sharp s is ss');
select isnt((cadence.system_name_keys('Barn')).small_key, (cadence.system_name_keys('Bam')).small_key, 'system_name_keys: rn and m stay apart');
select isnt((cadence.system_name_keys('Kiosk 1')).small_key, (cadence.system_name_keys('Kiosk l')).small_key, 'system_name_keys: 1 and l stay apart');
select isnt((cadence.system_name_keys('Room 0')).small_key, (cadence.system_name_keys('Room O')).small_key, 'system_name_keys: 0 and O stay apart');
select is_empty($$select c from (select pg_catalog.chr(i) || ' x  Y ' || pg_catalog.chr(i) as c from generate_series(32, 126) as i) as s
                  where cadence.system_name_keys(c) is distinct from cadence.system_name_keys(c || U&'\200B')$$,
  'system_name_keys: printable ASCII (its short path) gives what the full path gives (the same name with a zero-width space)');
select is((cadence.system_name_keys(U&'\0412ar')).capitals_key, (cadence.system_name_keys('Bar')).capitals_key,
  'system_name_keys: a Cyrillic capital V is Latin B in capitals');
select isnt((cadence.system_name_keys(U&'\0412ar')).small_key, (cadence.system_name_keys('Bar')).small_key,
  'system_name_keys: in small letters they differ (a small Cyrillic ve is a small capital B)');
select isnt((cadence.system_name_keys('Kiosk 1')).capitals_key, (cadence.system_name_keys('Kiosk l')).capitals_key, 'system_name_keys: 1 and L stay apart in capitals');
select is(pg_temp.executors('cadence.system_name_keys'), '{service_role}', 'system_name_keys: only service_role may execute it');

-- cadence.system_name_shows
select has_function('cadence', 'system_name_shows', array['text'], 'system_name_shows exists');
select ok(cadence.system_name_shows('Lobby 2'), 'system_name_shows: letters, digits and a space show');
select ok(not cadence.system_name_shows(U&'\0301 '), 'system_name_shows: marks and spaces alone show nothing');
select ok(not cadence.system_name_shows(U&'Lobby\0007'), 'system_name_shows: a control character anywhere is refused');
select ok(not cadence.system_name_shows(U&'Lobby\E000'), 'system_name_shows: a private-use character is refused');
select ok(not cadence.system_name_shows(U&'\FFFC'), 'system_name_shows: U+FFFC OBJECT REPLACEMENT CHARACTER, alone or in a name, is refused');
select is(pg_temp.executors('cadence.system_name_shows'), '{service_role}', 'system_name_shows: only service_role may execute it');

-- cadence.check_system_name_form (trigger system_name_is_normalised on public.license_keys)
select has_function('cadence', 'check_system_name_form', 'check_system_name_form exists');
select throws_ok($$update public.license_keys set system_name = U&'Lobby\200B' where key = 'NAME-0000-0000-0003'$$,
  '23514', 'a system name must be stored in its normal form (no character that renders as nothing) and show something: at least one letter, digit, punctuation or symbol, and no control, private-use, unassigned, noncharacter, line or paragraph separator code point',
  'check_system_name_form: a name not in its form is refused from any writer, naming the rule');
select throws_ok($$insert into public.license_keys (key, email, system_name) values ('NAME-0000-0000-0009', 'names-a@example.com', U&'\0301')$$,
  '23514', null, 'check_system_name_form: a new key''s name that shows nothing is refused');
-- A name stored before the rule: the trigger is off while it is written, as it was then.
alter table public.license_keys disable trigger system_name_is_normalised;
update public.license_keys set system_name = U&'Old\200B' where key = 'NAME-0000-0000-0004';
alter table public.license_keys enable always trigger system_name_is_normalised;
select lives_ok($$update public.license_keys set active = false where key = 'NAME-0000-0000-0004'$$,
  'check_system_name_form: an edit that leaves a stored name as it was passes');
update public.license_keys set system_name = U&'L\043Ebby Bar' where key = 'NAME-0000-0000-0003';
select results_eq($$select system_name_key, system_name_capitals_key from public.license_keys where key = 'NAME-0000-0000-0003'$$,
  $$values ('lobby bar', 'LOBBY BAR')$$, 'check_system_name_form: stores the name''s keys beside it, for the unique indexes');
update public.license_keys set system_name_key = 'other', system_name_capitals_key = 'OTHER' where key = 'NAME-0000-0000-0003';
select results_eq($$select system_name_key, system_name_capitals_key from public.license_keys where key = 'NAME-0000-0000-0003'$$,
  $$values ('lobby bar', 'LOBBY BAR')$$, 'check_system_name_form: a writer cannot set the keys: they stay the name''s');
set local session_replication_role = replica;
update public.license_keys set system_name = 'Porch' where key = 'NAME-0000-0000-0003';
set local session_replication_role = origin;
select results_eq($$select system_name_key, system_name_capitals_key from public.license_keys where key = 'NAME-0000-0000-0003'$$,
  $$values ('porch', 'PORCH')$$, 'check_system_name_form: fires in bulk loads too (session_replication_role = replica), so no load stores a name without its keys');
update public.license_keys set system_name = null where key = 'NAME-0000-0000-0003';
select results_eq($$select system_name_key, system_name_capitals_key from public.license_keys where key = 'NAME-0000-0000-0003'$$,
  $$values (null::text, null::text)$$, 'check_system_name_form: no name, no keys');
select is(pg_temp.executors('cadence.check_system_name_form'), '{}', 'check_system_name_form: a trigger function no API role may execute');

-- cadence.set_system_names
select has_function('cadence', 'set_system_names', array['text[]', 'text[]'], 'set_system_names exists');
select results_eq(
  $$select n, outcome from cadence.set_system_names(
      array['NAME-0000-0000-0003', 'NAME-0000-0000-0002', 'NAME-0000-0000-0001', 'NAME-9999-9999-9999', 'NAME-0000-0000-0004'],
      array['LOBBY', 'Hall', 'Lobby', 'Den', 'Hall']) order by n$$,
  $$values (1::bigint, 'taken'), (2, 'ok'), (3, 'unchanged'), (4, 'unknown_license'), (5, 'ok')$$,
  'set_system_names: one answer per position: taken (another key of the account has it, regardless of case), ok, unchanged, unknown_license; another account''s name is free');
select is((select system_name from public.license_keys where key = 'NAME-0000-0000-0002'), 'Hall',
  'set_system_names: ok stores the name, on a key paired by its stored e-mail too');
select is((select system_name from public.license_keys where key = 'NAME-0000-0000-0003'), null,
  'set_system_names: taken stores nothing');
select results_eq(
  $$select n, outcome from cadence.set_system_names(array['NAME-0000-0000-0003', 'NAME-0000-0000-0001'], array['Stage', 'stage']) order by n$$,
  $$values (1::bigint, 'ok'), (2, 'taken')$$,
  'set_system_names: two keys of one account asking for one name in a batch: the first asker wins');
select results_eq(
  $$select n, outcome from cadence.set_system_names(array['NAME-0000-0000-0003', 'NAME-0000-0000-0003'], array['Den', 'Porch']) order by n$$,
  $$values (1::bigint, 'ok'), (2, 'ok')$$,
  'set_system_names: a key named twice in a batch is named twice, in order');
select is_empty($$select from pg_catalog.pg_locks as l
                    where l.pid = pg_catalog.pg_backend_pid() and l.locktype = 'advisory'
                      and l.objid <> (pg_catalog.hashtextextended('cadence.key_accounts', 0) & 4294967295)::oid$$,
  'set_system_names: takes no advisory lock of its own for names: the unique index decides');
select is(pg_temp.executors('cadence.set_system_names'), '{service_role}', 'set_system_names: only service_role may execute it');

-- cadence.set_system_name
select has_function('cadence', 'set_system_name', array['text', 'text'], 'set_system_name exists');
select is(cadence.set_system_name('NAME-0000-0000-0003', 'hall'), 'taken',
  'set_system_name: a name an unlinked key of the account holds is taken for a linked key');
select is(cadence.set_system_name('NAME-9999-9999-9999', 'Den'), 'unknown_license', 'set_system_name: an unknown key is unknown_license');
select is(pg_temp.executors('cadence.set_system_name'), '{service_role}', 'set_system_name: only service_role may execute it');

-- system_name_is_unique_per_account (unique index on public.license_keys)
select throws_ok($$update public.license_keys set system_name = 'HALL' where key = 'NAME-0000-0000-0003'$$,
  '23505', 'duplicate key value violates unique constraint "system_name_is_unique_per_account"',
  'system_name_is_unique_per_account: a linked key cannot take, from any writer, a name an unlinked key of its account holds');
select throws_ok($$update public.accounts set email = 'names-c@example.com' where id = 'e2000000-0000-4000-8000-000000000002'$$,
  '23505', 'duplicate key value violates unique constraint "system_name_is_unique_per_account"',
  'system_name_is_unique_per_account: an account''s e-mail cannot change to one its unlinked keys carry when one has a name a linked key has');

select * from finish();
rollback;
