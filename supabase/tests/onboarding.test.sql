-- Onboarding: an account, its key and its e-mail in one transaction; an idempotency id carried
-- out once and its first answer replayed; a webhook nonce spent once. pgTAP; run with pg_prove or
-- `supabase test db` (test/README.md).
begin;
set local client_min_messages = warning;
create extension if not exists pgtap with schema extensions;
set local search_path = extensions, public;
select plan(35);

-- The API roles that may execute a function: its grants are part of its design.
create function pg_temp.executors(p_function regproc) returns text[] language sql as $$
  select array(select r from unnest(array['anon', 'authenticated', 'service_role']) as r
                where pg_catalog.has_function_privilege(r, p_function, 'execute') order by r)
$$;

-- What each call answered, by name.
create temporary table answered (name text primary key, outcome text, account_id uuid, key_issued boolean, token uuid) on commit drop;

-- cadence.onboard
select has_function('cadence', 'onboard', array['text', 'text', 'text', 'text', 'text', 'text', 'timestamp with time zone'], 'onboard exists');
insert into answered (name, account_id, key_issued)
  select 'first', account_id, key_issued from cadence.onboard(' Ada@Example.com ', ' Ada ', 'ONBD-0000-0000-0001', 'Your key', 'text', '<p>html</p>', '2026-03-02 12:00+00');
select results_eq(
  $$select a.email, a.display_name, k.account_id = a.id, k.email from public.accounts as a join public.license_keys as k on k.key = 'ONBD-0000-0000-0001'
     where a.id = (select account_id from answered where name = 'first')$$,
  $$values ('ada@example.com', 'Ada', true, 'ada@example.com')$$,
  'onboard: creates the account under the e-mail trimmed and lower-cased, and issues the key to it');
select results_eq($$select recipient, next_attempt_at from public.email_outbox where recipient = 'ada@example.com'$$,
  $$values ('ada@example.com', '2026-03-02 12:01+00'::timestamptz)$$,
  'onboard: queues the key''s e-mail in the same transaction, as the request''s own');
select is((select account_id from cadence.onboard('ADA@example.com', 'Ada', 'ONBD-0000-0000-0002', 'Your key', 'text', '<p>html</p>', '2026-03-02 12:00+00')),
  (select account_id from answered where name = 'first'), 'onboard: an e-mail already onboarded, in any case, gets a new key in its account');
select results_eq($$select key_issued, outbox_id from cadence.onboard('grace@example.com', 'Grace', 'ONBD-0000-0000-0001', 'Your key', 'text', '<p>html</p>', '2026-03-02 12:00+00')$$,
  $$values (false, null::uuid)$$, 'onboard: a key that exists already is not issued and no e-mail is queued');
select is(pg_temp.executors('cadence.onboard'), '{service_role}', 'onboard: only service_role may execute it');

-- cadence.claim_onboarding_key
select has_function('cadence', 'claim_onboarding_key', array['text', 'text', 'bytea', 'timestamp with time zone', 'integer'], 'claim_onboarding_key exists');
insert into answered (name, outcome, token)
  select 'claim', outcome, claim_token from cadence.claim_onboarding_key('idempotency-key', 'id-1', sha256('first body'), '2026-03-02 12:00+00', 30);
select results_eq($$select outcome, token is not null from answered where name = 'claim'$$, $$values ('claimed', true)$$,
  'claim_onboarding_key: a new id is claimed, with a token to complete it');
select results_eq($$select outcome, claim_token, retry_after_seconds from cadence.claim_onboarding_key('idempotency-key', 'id-1', sha256('first body'), '2026-03-02 12:00:10.5+00', 30)$$,
  $$values ('busy', null::uuid, 20)$$, 'claim_onboarding_key: an id claimed by a running request is busy until its lease ends, in whole seconds');
select is((select outcome from cadence.claim_onboarding_key('idempotency-key', 'id-1', sha256('second body'), '2026-03-02 12:00:10+00', 30)), 'mismatch',
  'claim_onboarding_key: the same id with another body is a mismatch');
select is((select outcome from cadence.claim_onboarding_key('webhook-id', 'id-1', sha256('second body'), '2026-03-02 12:00:10+00', 30)), 'claimed',
  'claim_onboarding_key: ids of different sources are different ids');
select is(pg_temp.executors('cadence.claim_onboarding_key'), '{service_role}', 'claim_onboarding_key: only service_role may execute it');

-- cadence.onboard_once
select has_function('cadence', 'onboard_once',
  array['text', 'text', 'uuid', 'text', 'text', 'text', 'text', 'text', 'text', 'timestamp with time zone', 'text'], 'onboard_once exists');
select results_eq($$select outcome, account_id, key_issued from cadence.onboard_once('idempotency-key', 'id-1', '00000000-0000-4000-8000-000000000000',
                      'lin@example.com', 'Lin', 'ONBD-0000-0000-0003', 'Your key', 'text', '<p>html</p>', '2026-03-02 12:00:01+00', '{"user_id":"{user_id}"}')$$,
  $$values ('lost', null::uuid, false)$$, 'onboard_once: a token that no longer holds the id is lost, and onboards nobody');
select is((select outcome from cadence.onboard_once('idempotency-key', 'id-1', (select token from answered where name = 'claim'),
             'lin@example.com', 'Lin', 'ONBD-0000-0000-0001', 'Your key', 'text', '<p>html</p>', '2026-03-02 12:00:01+00', '{"user_id":"{user_id}"}')),
  'key_taken', 'onboard_once: a key that exists already is key_taken, and the claim stays');
insert into answered (name, outcome, account_id)
  select 'once', outcome, account_id from cadence.onboard_once('idempotency-key', 'id-1', (select token from answered where name = 'claim'),
    'lin@example.com', 'Lin', 'ONBD-0000-0000-0003', 'Your key', 'text', '<p>html</p>', '2026-03-02 12:00:02+00', '{"success":true,"user_id":"{user_id}"}');
select results_eq($$select response_status, response_body, claim_token from public.onboarding_idempotency_keys where source = 'idempotency-key' and id = 'id-1'$$,
  $$select 200::smallint, '{"success":true,"user_id":"' || (select account_id from answered where name = 'once') || '"}', null::uuid$$,
  'onboard_once: onboards and stores the answer, the account id in place of "{user_id}", in the same transaction');
select results_eq($$select outcome, response_status, response_body from cadence.claim_onboarding_key('idempotency-key', 'id-1', sha256('first body'), '2026-03-02 12:00:03+00', 30)$$,
  $$select 'replay', 200::smallint, '{"success":true,"user_id":"' || (select account_id from answered where name = 'once') || '"}'$$,
  'claim_onboarding_key: a completed id replays its first answer');
select has_function('cadence', 'release_onboarding_key', array['text', 'text', 'uuid'], 'release_onboarding_key exists');
select cadence.release_onboarding_key('idempotency-key', 'id-1', (select token from answered where name = 'claim'));
select isnt_empty($$select from public.onboarding_idempotency_keys where source = 'idempotency-key' and id = 'id-1' and response_status = 200$$,
  'release_onboarding_key: a completed id is never released, not even with the token that completed it');
select is(pg_temp.executors('cadence.onboard_once'), '{service_role}', 'onboard_once: only service_role may execute it');

-- A claim whose request died: its lease runs out.
insert into answered (name, outcome, token)
  select 'dead', outcome, claim_token from cadence.claim_onboarding_key('idempotency-key', 'id-2', sha256('first body'), '2026-03-02 12:00+00', 30);
insert into answered (name, outcome, token)
  select 'retry', outcome, claim_token from cadence.claim_onboarding_key('idempotency-key', 'id-2', sha256('first body'), '2026-03-02 12:00:31+00', 30);
select results_eq($$select outcome, token <> (select token from answered where name = 'dead') from answered where name = 'retry'$$, $$values ('claimed', true)$$,
  'claim_onboarding_key: an id whose lease ran out is claimed anew, with a new token');
select is((select outcome from cadence.onboard_once('idempotency-key', 'id-2', (select token from answered where name = 'dead'),
             'mo@example.com', 'Mo', 'ONBD-0000-0000-0004', 'Your key', 'text', '<p>html</p>', '2026-03-02 12:00:32+00', '{}')),
  'lost', 'onboard_once: the request whose lease was taken over cannot complete');
select is((select outcome from cadence.claim_onboarding_key('idempotency-key', 'id-1', sha256('second body'), '2026-03-03 12:00:03+00', 30)), 'claimed',
  'claim_onboarding_key: past its 24 hours an id is new again, whatever its body');

-- cadence.release_onboarding_key, on a live claim
select cadence.release_onboarding_key('idempotency-key', 'id-2', (select token from answered where name = 'dead'));
select isnt_empty($$select from public.onboarding_idempotency_keys where source = 'idempotency-key' and id = 'id-2'$$,
  'release_onboarding_key: a token that no longer holds the id releases nothing');
select cadence.release_onboarding_key('idempotency-key', 'id-2', (select token from answered where name = 'retry'));
select is_empty($$select from public.onboarding_idempotency_keys where source = 'idempotency-key' and id = 'id-2'$$,
  'release_onboarding_key: the holder of a claim gives it up, so a retry runs at once');
select is(pg_temp.executors('cadence.release_onboarding_key'), '{service_role}', 'release_onboarding_key: only service_role may execute it');

-- cadence.purge_onboarding_keys
select has_function('cadence', 'purge_onboarding_keys', array['timestamp with time zone', 'integer'], 'purge_onboarding_keys exists');
select is(cadence.purge_onboarding_keys('2026-03-03 12:00:20+00', 100), 1, 'purge_onboarding_keys: deletes the ids past their 24 hours, and says how many');
select is((select count(*)::integer from public.onboarding_idempotency_keys where id in ('id-1', 'id-2')), 1,
  'purge_onboarding_keys: an id within its 24 hours stays');
select is(pg_temp.executors('cadence.purge_onboarding_keys'), '{service_role}', 'purge_onboarding_keys: only service_role may execute it');

-- cadence.record_webhook_nonce
select has_function('cadence', 'record_webhook_nonce', array['text', 'timestamp with time zone'], 'record_webhook_nonce exists');
select ok(cadence.record_webhook_nonce('nonce-1', '2026-03-02 12:00+00'), 'record_webhook_nonce: a new nonce is accepted');
select ok(not cadence.record_webhook_nonce('nonce-1', '2026-03-02 12:09:59+00'), 'record_webhook_nonce: the same nonce within 600 s is a replay');
select ok(cadence.record_webhook_nonce('nonce-1', '2026-03-02 12:10:01+00'), 'record_webhook_nonce: once no request could carry it any more, a nonce is forgotten');
select is(pg_temp.executors('cadence.record_webhook_nonce'), '{service_role}', 'record_webhook_nonce: only service_role may execute it');

select * from finish();
rollback;
