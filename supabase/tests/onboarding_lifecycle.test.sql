-- The license lifecycle: suspend, reinstate, move a key, change an account's e-mail, queue a key's
-- license e-mail again; each one function with its own refusals, and an idempotency id's answer
-- stored with the change. Denied paths first. pgTAP; run with pg_prove or `supabase test db`
-- (test/README.md).
begin;
set local client_min_messages = warning;
create extension if not exists pgtap with schema extensions;
set local search_path = extensions, public;
select plan(55);

-- The API roles that may execute a function: its grants are part of its design.
create function pg_temp.executors(p_function regproc) returns text[] language sql as $$
  select array(select r from unnest(array['anon', 'authenticated', 'service_role']) as r
                where pg_catalog.has_function_privilege(r, p_function, 'execute') order by r)
$$;

insert into public.accounts (id, email, display_name) values
  ('f1000000-0000-4000-8000-000000000001', 'life@example.com', 'Life'),
  ('f1000000-0000-4000-8000-000000000002', 'target@example.com', 'Target');
insert into public.license_keys (key, account_id, email, system_name) values
  ('LIFE-0000-0000-0001', 'f1000000-0000-4000-8000-000000000001', 'life@example.com', 'Lobby'),
  ('LIFE-0000-0000-0002', 'f1000000-0000-4000-8000-000000000002', 'target@example.com', 'lobby');
-- A key of the first account by its stored e-mail alone (no owner link).
insert into public.license_keys (key, account_id, email) values ('LIFE-0000-0000-0003', null, 'LIFE@example.com');

-- cadence.suspend_license_key
select has_function('cadence', 'suspend_license_key', array['text'], 'suspend_license_key exists');
select is(pg_temp.executors('cadence.suspend_license_key'), '{service_role}', 'suspend_license_key: only service_role may execute it');
select results_eq($$select outcome, changed from cadence.suspend_license_key('NONE-0000-0000-0000')$$, $$values ('unknown_license', false)$$,
  'suspend_license_key: an unknown key is unknown_license');
select results_eq($$select outcome, changed from cadence.suspend_license_key('LIFE-0000-0000-0001')$$, $$values ('done', true)$$,
  'suspend_license_key: an active key is suspended');
select is((select active from public.license_keys where key = 'LIFE-0000-0000-0001'), false, 'suspend_license_key: the key is not active');
select results_eq($$select outcome, changed from cadence.suspend_license_key('LIFE-0000-0000-0001')$$, $$values ('done', false)$$,
  'suspend_license_key: a suspended key again is done, changing nothing');
select results_eq($$select outcome from cadence.validate_license('LIFE-0000-0000-0001', 'life@example.com', null)$$, $$values ('key_inactive')$$,
  'suspend_license_key: validation then refuses the key as not active');

-- cadence.reinstate_license_key
select has_function('cadence', 'reinstate_license_key', array['text'], 'reinstate_license_key exists');
select is(pg_temp.executors('cadence.reinstate_license_key'), '{service_role}', 'reinstate_license_key: only service_role may execute it');
select results_eq($$select outcome, changed from cadence.reinstate_license_key('NONE-0000-0000-0000')$$, $$values ('unknown_license', false)$$,
  'reinstate_license_key: an unknown key is unknown_license');
select results_eq($$select outcome, changed from cadence.reinstate_license_key('LIFE-0000-0000-0001')$$, $$values ('done', true)$$,
  'reinstate_license_key: a suspended key is active again');
select results_eq($$select outcome, changed from cadence.reinstate_license_key('LIFE-0000-0000-0001')$$, $$values ('done', false)$$,
  'reinstate_license_key: an active key again is done, changing nothing');

-- cadence.move_license_key
select has_function('cadence', 'move_license_key', array['text', 'text'], 'move_license_key exists');
select is(pg_temp.executors('cadence.move_license_key'), '{service_role}', 'move_license_key: only service_role may execute it');
select results_eq($$select outcome from cadence.move_license_key('NONE-0000-0000-0000', 'target@example.com')$$, $$values ('unknown_license')$$,
  'move_license_key: an unknown key is unknown_license, whatever the account');
select results_eq($$select outcome from cadence.move_license_key('LIFE-0000-0000-0001', 'nobody@example.com')$$, $$values ('unknown_account')$$,
  'move_license_key: an account that does not exist is unknown_account, and none is created');
select is((select count(*)::int from public.accounts where email = 'nobody@example.com'), 0, 'move_license_key: no account was created');
select results_eq($$select outcome from cadence.move_license_key('LIFE-0000-0000-0001', 'Target@Example.com')$$, $$values ('name_taken')$$,
  'move_license_key: a system name the target account uses (any case) is name_taken');
select is((select belongs_to from public.license_keys where key = 'LIFE-0000-0000-0001'), 'f1000000-0000-4000-8000-000000000001'::uuid,
  'move_license_key: after name_taken the key stayed where it was');
update public.license_keys set system_name = U&'\0412ar' where key = 'LIFE-0000-0000-0001';
update public.license_keys set system_name = 'Bar' where key = 'LIFE-0000-0000-0002';
select results_eq($$select outcome from cadence.move_license_key('LIFE-0000-0000-0001', 'target@example.com')$$, $$values ('name_taken')$$,
  'move_license_key: a name that looks like one the target account uses in capitals only (Cyrillic В, Latin B) is name_taken too');
update public.license_keys set system_name = 'Lobby 2' where key = 'LIFE-0000-0000-0001';
select results_eq($$select outcome, changed, account_id from cadence.move_license_key('LIFE-0000-0000-0001', ' Target@Example.com ')$$,
  $$values ('done', true, 'f1000000-0000-4000-8000-000000000002'::uuid)$$, 'move_license_key: moves the key to the account of the e-mail');
select results_eq($$select account_id, email, belongs_to from public.license_keys where key = 'LIFE-0000-0000-0001'$$,
  $$values ('f1000000-0000-4000-8000-000000000002'::uuid, 'target@example.com', 'f1000000-0000-4000-8000-000000000002'::uuid)$$,
  'move_license_key: the owner link and the stored e-mail both name the new account');
select results_eq($$select outcome, changed from cadence.move_license_key('LIFE-0000-0000-0001', 'target@example.com')$$, $$values ('done', false)$$,
  'move_license_key: a key already in that account is done, changing nothing');

-- cadence.change_account_email
select has_function('cadence', 'change_account_email', array['text', 'text'], 'change_account_email exists');
select is(pg_temp.executors('cadence.change_account_email'), '{service_role}', 'change_account_email: only service_role may execute it');
select results_eq($$select outcome from cadence.change_account_email('nobody@example.com', 'new@example.com')$$, $$values ('unknown_account')$$,
  'change_account_email: an unknown account is unknown_account');
select results_eq($$select outcome from cadence.change_account_email('life@example.com', 'TARGET@example.com')$$, $$values ('email_taken')$$,
  'change_account_email: an e-mail another account has (any case) is email_taken');
select results_eq($$select outcome from cadence.change_account_email('life@example.com', 'not an e-mail')$$, $$values ('new_email_invalid')$$,
  'change_account_email: an e-mail the accounts table refuses is new_email_invalid');
select results_eq($$select outcome, changed from cadence.change_account_email('LIFE@example.com', 'life@example.com')$$, $$values ('done', false)$$,
  'change_account_email: the same e-mail is done, changing nothing');
select results_eq($$select outcome, changed, account_id from cadence.change_account_email('life@example.com', ' Life.New@Example.com ')$$,
  $$values ('done', true, 'f1000000-0000-4000-8000-000000000001'::uuid)$$, 'change_account_email: changes the e-mail');
select is((select email from public.accounts where id = 'f1000000-0000-4000-8000-000000000001'), 'life.new@example.com',
  'change_account_email: stored trimmed and lower-cased');
select results_eq($$select account_id, belongs_to from public.license_keys where key = 'LIFE-0000-0000-0003'$$,
  $$values ('f1000000-0000-4000-8000-000000000001'::uuid, 'f1000000-0000-4000-8000-000000000001'::uuid)$$,
  'change_account_email: a key that belonged to the account by its old e-mail alone is linked to it, and still belongs to it');
insert into public.license_keys (key, account_id, email, system_name) values ('LIFE-0000-0000-0004', null, 'orphan@example.com', 'LOBBY 2');
select results_eq($$select outcome from cadence.change_account_email('target@example.com', 'orphan@example.com')$$, $$values ('name_taken')$$,
  'change_account_email: keys of the new e-mail without an account that would join with a name it uses is name_taken');
select is((select email from public.accounts where id = 'f1000000-0000-4000-8000-000000000002'), 'target@example.com',
  'change_account_email: after name_taken the e-mail is unchanged');
update public.license_keys set system_name = U&'\0412AR' where key = 'LIFE-0000-0000-0004';
select results_eq($$select outcome from cadence.change_account_email('target@example.com', 'orphan@example.com')$$, $$values ('name_taken')$$,
  'change_account_email: keys that would join with a name that looks like one it uses in capitals only is name_taken too');

-- cadence.license_email_recipient
select has_function('cadence', 'license_email_recipient', array['text'], 'license_email_recipient exists');
select is(pg_temp.executors('cadence.license_email_recipient'), '{service_role}', 'license_email_recipient: only service_role may execute it');
select results_eq($$select email, display_name from cadence.license_email_recipient('LIFE-0000-0000-0003')$$, $$values ('life.new@example.com', 'Life')$$,
  'license_email_recipient: the account''s e-mail now and its name');
select results_eq($$select email, display_name from cadence.license_email_recipient('LIFE-0000-0000-0004')$$, $$values ('orphan@example.com', null::text)$$,
  'license_email_recipient: a key of no account: its stored e-mail');

-- cadence.queue_license_email
select has_function('cadence', 'queue_license_email', array['text', 'text', 'text', 'text', 'text', 'timestamp with time zone'], 'queue_license_email exists');
select is(pg_temp.executors('cadence.queue_license_email'), '{service_role}', 'queue_license_email: only service_role may execute it');
select results_eq($$select outcome from cadence.queue_license_email('NONE-0000-0000-0000', null, null, null, null, '2026-03-02 12:00+00')$$, $$values ('unknown_license')$$,
  'queue_license_email: an unknown key is unknown_license');
select results_eq($$select outcome from cadence.queue_license_email('LIFE-0000-0000-0003', 'life@example.com', 's', 't', 'h', '2026-03-02 12:00+00')$$,
  $$values ('recipient_changed')$$, 'queue_license_email: an e-mail rendered for an old address is recipient_changed, and queues nothing');
select results_eq($$select outcome, outbox_id is not null from cadence.queue_license_email('LIFE-0000-0000-0003', 'life.new@example.com', 's', 't', 'h', '2026-03-02 12:00+00')$$,
  $$values ('done', true)$$, 'queue_license_email: queues the e-mail for the key''s account');
select is((select count(*)::int from public.email_outbox where recipient in ('life@example.com', 'life.new@example.com')), 1,
  'queue_license_email: exactly one e-mail queued');
select cadence.suspend_license_key('LIFE-0000-0000-0003');
select results_eq($$select outcome from cadence.queue_license_email('LIFE-0000-0000-0003', 'life.new@example.com', 's', 't', 'h', '2026-03-02 12:00+00')$$,
  $$values ('license_not_active')$$, 'queue_license_email: a suspended key is license_not_active');

-- cadence.lifecycle_change and cadence.lifecycle_change_once
select has_function('cadence', 'lifecycle_change', array['text', 'jsonb', 'timestamp with time zone'], 'lifecycle_change exists');
select has_function('cadence', 'lifecycle_change_once',
  array['text', 'text', 'uuid', 'text', 'jsonb', 'timestamp with time zone', 'jsonb'], 'lifecycle_change_once exists');
select is(pg_temp.executors('cadence.lifecycle_change_once'), '{service_role}', 'lifecycle_change_once: only service_role may execute it');
select results_eq($$select outcome, response_status from cadence.lifecycle_change_once('idempotency-key', 'life-1', '00000000-0000-4000-8000-000000000000',
                      'reinstate', '{"license_key":"LIFE-0000-0000-0003"}', '2026-03-02 12:00+00', '{"done":{"status":200,"body":"{}"}}')$$,
  $$values ('lost', null::smallint)$$, 'lifecycle_change_once: a token that does not hold the id is lost, and changes nothing');
select is((select active from public.license_keys where key = 'LIFE-0000-0000-0003'), false, 'lifecycle_change_once: lost changed nothing');
create temporary table claimed on commit drop as
  select claim_token from cadence.claim_onboarding_key('webhook-id', 'life-2', sha256('reinstate'), '2026-03-02 12:00+00', 30);
select results_eq($$select outcome, changed, response_status, response_body from cadence.lifecycle_change_once('webhook-id', 'life-2', (select claim_token from claimed),
                      'reinstate', '{"license_key":"LIFE-0000-0000-0003"}', '2026-03-02 12:00+00',
                      '{"done":{"status":200,"body":"{\"changed\":\"{changed}\"}"},"unknown_license":{"status":404,"body":"{}"}}')$$,
  $$values ('done', true, 200::smallint, '{"changed":true}')$$, 'lifecycle_change_once: carries the change out and answers with its outcome''s answer filled in');
select results_eq($$select outcome, response_status, response_body from cadence.claim_onboarding_key('webhook-id', 'life-2', sha256('reinstate'), '2026-03-02 12:00:05+00', 30)$$,
  $$values ('replay', 200::smallint, '{"changed":true}')$$, 'lifecycle_change_once: the answer is stored with the change, replayed to a retry');
truncate claimed;
insert into claimed select claim_token from cadence.claim_onboarding_key('webhook-id', 'life-3', sha256('suspend'), '2026-03-02 12:00+00', 30);
select results_eq($$select outcome, response_status, response_body from cadence.lifecycle_change_once('webhook-id', 'life-3', (select claim_token from claimed),
                      'suspend', '{"license_key":"NONE-0000-0000-0000"}', '2026-03-02 12:00+00',
                      '{"done":{"status":200,"body":"{}"},"unknown_license":{"status":404,"body":"{\"message\":\"unknown_license\"}"}}')$$,
  $$values ('unknown_license', 404::smallint, '{"message":"unknown_license"}')$$, 'lifecycle_change_once: a refusal is final and stored too, so its id cannot be carried out elsewhere');
select throws_ok($$select * from cadence.lifecycle_change('revoke', '{}', now())$$, '22023', 'unknown lifecycle call revoke',
  'lifecycle_change: an unknown call is refused');

select * from finish();
rollback;
