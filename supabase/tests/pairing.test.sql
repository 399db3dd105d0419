-- Pairing and license validation: which account a key is paired with for an e-mail, and what
-- validating it records. pgTAP; run with pg_prove or `supabase test db` (test/README.md).
begin;
set local client_min_messages = warning;
create extension if not exists pgtap with schema extensions;
set local search_path = extensions, public;
select plan(29);

-- The API roles that may execute a function: its grants are part of its design.
create function pg_temp.executors(p_function regproc) returns text[] language sql as $$
  select array(select r from unnest(array['anon', 'authenticated', 'service_role']) as r
                where pg_catalog.has_function_privilege(r, p_function, 'execute') order by r)
$$;

-- Two accounts; keys linked to one, unlinked with its e-mail, inactive, and linked elsewhere
-- while storing its e-mail. A third account, whose e-mail changes, with an unlinked key.
insert into public.accounts (id, email, display_name) values
  ('e1000000-0000-4000-8000-000000000001', 'pair-a@example.com', 'Pair A'),
  ('e1000000-0000-4000-8000-000000000002', 'pair-b@example.com', 'Pair B'),
  ('e1000000-0000-4000-8000-000000000003', 'pair-c@example.com', 'Pair C');
insert into public.license_keys (key, account_id, email, active) values
  ('PAIR-0000-0000-0001', 'e1000000-0000-4000-8000-000000000001', 'pair-a@example.com', true),
  ('PAIR-0000-0000-0002', null, 'PAIR-A@Example.com', true),
  ('PAIR-0000-0000-0003', 'e1000000-0000-4000-8000-000000000001', 'pair-a@example.com', false),
  ('PAIR-0000-0000-0004', 'e1000000-0000-4000-8000-000000000002', 'pair-a@example.com', true),
  ('PAIR-0000-0000-0005', null, 'pair-c@example.com', true);

-- cadence.license_pairing
select has_function('cadence', 'license_pairing', array['text', 'text'], 'license_pairing exists');
select results_eq($$select outcome, key_active, account_id from cadence.license_pairing('PAIR-0000-0000-0001', 'pair-a@example.com')$$,
  $$values ('paired', true, 'e1000000-0000-4000-8000-000000000001'::uuid)$$,
  'license_pairing: a key linked to the account of the e-mail is paired with it');
select is((select outcome from cadence.license_pairing('PAIR-0000-0000-0002', ' Pair-A@example.com ')), 'paired',
  'license_pairing: a key with no owner link is paired by its stored e-mail, regardless of case and surrounding blanks');
select is((select outcome from cadence.license_pairing('PAIR-0000-0000-0004', 'pair-a@example.com')), 'not_owner',
  'license_pairing: an owner link wins over the stored e-mail');
select is((select outcome from cadence.license_pairing('PAIR-0000-0000-0001', 'pair-b@example.com')), 'not_owner',
  'license_pairing: a key of another account is not_owner');
select is((select outcome from cadence.license_pairing('PAIR-9999-9999-9999', 'pair-a@example.com')), 'key_not_found',
  'license_pairing: an unknown key is key_not_found');
select results_eq($$select outcome, account_id from cadence.license_pairing('PAIR-0000-0000-0001', 'nobody@example.com')$$,
  $$values ('user_not_found', null::uuid)$$,
  'license_pairing: an e-mail of no account is user_not_found, naming no account');
select is((select key_active from cadence.license_pairing('PAIR-0000-0000-0003', 'pair-a@example.com')), false,
  'license_pairing: reports an inactive key as inactive');
select is(pg_temp.executors('cadence.license_pairing'), '{service_role}', 'license_pairing: only service_role may execute it');

-- cadence.license_pairings
select has_function('cadence', 'license_pairings', array['text[]', 'text[]'], 'license_pairings exists');
select results_eq(
  $$select n, outcome from cadence.license_pairings(array['PAIR-0000-0000-0001', 'PAIR-9999-9999-9999', 'PAIR-0000-0000-0001'],
                                                   array['pair-a@example.com', 'pair-a@example.com', 'pair-b@example.com']) order by n$$,
  $$values (1::bigint, 'paired'), (2, 'key_not_found'), (3, 'not_owner')$$,
  'license_pairings: one row per position, each key paired with the e-mail at its position, a repeated key judged each time');
select is_empty($$select * from cadence.license_pairings('{}', '{}')$$, 'license_pairings: an empty batch answers nothing');
update public.accounts set email = 'pair-d@example.com' where id = 'e1000000-0000-4000-8000-000000000003';
select results_eq(
  $$select n, outcome from cadence.license_pairings(array['PAIR-0000-0000-0005', 'PAIR-0000-0000-0005'], array['pair-d@example.com', 'pair-c@example.com']) order by n$$,
  $$values (1::bigint, 'not_owner'), (2, 'user_not_found')$$,
  'license_pairings: a key with no owner link follows its stored e-mail, not the account that changed away from it');
select is(pg_temp.executors('cadence.license_pairings'), '{service_role}', 'license_pairings: only service_role may execute it');

-- cadence.validate_licenses
select has_function('cadence', 'validate_licenses', array['text[]', 'text[]'], 'validate_licenses exists');
select results_eq(
  $$select n, outcome, owner_email from cadence.validate_licenses(
      array['PAIR-9999-9999-9999', 'PAIR-0000-0000-0003', 'PAIR-0000-0000-0001', 'PAIR-0000-0000-0001', 'PAIR-0000-0000-0002'],
      array['nobody@example.com', 'nobody@example.com', 'nobody@example.com', 'pair-b@example.com', 'pair-a@example.com']) order by n$$,
  $$values (1::bigint, 'key_not_found', null::text), (2, 'key_inactive', null), (3, 'user_not_found', null), (4, 'not_owner', null),
           (5, 'valid', 'pair-a@example.com')$$,
  'validate_licenses: the first failure wins in the spec''s order (key_not_found, key_inactive, user_not_found, not_owner); valid names the account''s e-mail');
select is((select last_validated_at from public.license_keys where key = 'PAIR-0000-0000-0002'), now(),
  'validate_licenses: a valid key records last_validated_at in the validating transaction');
select is((select last_validated_at from public.license_keys where key = 'PAIR-0000-0000-0001'), null,
  'validate_licenses: a key that failed validation records nothing');
select is(pg_temp.executors('cadence.validate_licenses'), '{service_role}', 'validate_licenses: only service_role may execute it');

-- cadence.validate_and_name_licenses
select has_function('cadence', 'validate_and_name_licenses', array['text[]', 'text[]', 'text[]'], 'validate_and_name_licenses exists');
select results_eq(
  $$select n, outcome, system_name_status from cadence.validate_and_name_licenses(
      array['PAIR-0000-0000-0001', 'PAIR-0000-0000-0002', 'PAIR-0000-0000-0004', 'PAIR-0000-0000-0001'],
      array['pair-a@example.com', 'pair-a@example.com', 'pair-a@example.com', 'pair-a@example.com'],
      array['Lobby', 'lobby', 'Hall', null]) order by n$$,
  $$values (1::bigint, 'valid', 'ok'), (2, 'valid', 'conflict'), (3, 'not_owner', null::text), (4, 'valid', 'unchanged')$$,
  'validate_and_name_licenses: a valid key takes its name (ok), a name of another key of the account is conflict, no name is unchanged, an invalid key gets no status');
select is((select system_name from public.license_keys where key = 'PAIR-0000-0000-0004'), null,
  'validate_and_name_licenses: a key that failed validation is not named');
select is((select system_name_status from cadence.validate_and_name_licenses(array['PAIR-0000-0000-0001'], array['pair-a@example.com'], array['Lobby'])), 'ok',
  'validate_and_name_licenses: a name re-sent as stored is ok');
select is(pg_temp.executors('cadence.validate_and_name_licenses'), '{service_role}', 'validate_and_name_licenses: only service_role may execute it');

-- cadence.validate_license
select has_function('cadence', 'validate_license', array['text', 'text', 'text'], 'validate_license exists');
select results_eq($$select outcome, owner_email, system_name_status from cadence.validate_license('PAIR-0000-0000-0002', 'pair-a@example.com')$$,
  $$values ('valid', 'pair-a@example.com', 'unchanged')$$,
  'validate_license: a valid key without a name is valid, with its owner''s e-mail, its name unchanged');
select is((select system_name_status from cadence.validate_license('PAIR-0000-0000-0002', 'pair-a@example.com', 'LOBBY')), 'conflict',
  'validate_license: a name another key of the account holds, in another case, is conflict');
select results_eq($$select outcome, owner_email, system_name_status from cadence.validate_license('PAIR-0000-0000-0003', 'pair-a@example.com', 'Den')$$,
  $$values ('key_inactive', null::text, null::text)$$,
  'validate_license: an inactive key is key_inactive, names no owner and takes no name');
select is(pg_temp.executors('cadence.validate_license'), '{service_role}', 'validate_license: only service_role may execute it');

select * from finish();
rollback;
