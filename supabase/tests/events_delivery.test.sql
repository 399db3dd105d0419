-- Event delivery: endpoints, their messages and the claims of 14_events_delivery.sql. pgTAP; run with
-- pg_prove or `supabase test db` (test/README.md). Delivery over HTTP to a receiver that verifies
-- every message is in test/events/event-delivery.test.ts.
begin;
set local client_min_messages = warning;
create extension if not exists pgtap with schema extensions;
set local search_path = extensions, public;
select plan(37);

create function pg_temp.executors(p_function regproc) returns text[] language sql as $$
  select array(select r from unnest(array['anon', 'authenticated', 'service_role']) as r
                where pg_catalog.has_function_privilege(r, p_function, 'execute') order by r)
$$;

-- No other endpoint: the claims below see only this one.
delete from public.event_endpoints;

-- cadence.new_webhook_secret
select has_function('cadence', 'new_webhook_secret', 'new_webhook_secret exists');
select matches(cadence.new_webhook_secret(), '^whsec_[A-Za-z0-9+/]{43}=$', 'new_webhook_secret: whsec_ and 32 bytes in base64');
select isnt(cadence.new_webhook_secret(), cadence.new_webhook_secret(), 'new_webhook_secret: a new one each time');

insert into public.event_endpoints (id, url, notify_email, batch_size, next_attempt_at)
values ('ea000000-0000-4000-8000-000000000001', 'https://hooks.example.com/cadence', 'staff@example.com', 2, '2026-03-02 12:00+00');
select throws_ok($$insert into public.event_endpoints (url, notify_email) values ('ftp://x', 'staff@example.com')$$,
  '23514', null, 'event_endpoint_url_is_http: an endpoint is an http(s) URL');
select throws_ok($$insert into public.event_endpoints (url, notify_email, secret) values ('https://x.example', 'staff@example.com', 'secret')$$,
  '23514', null, 'event_endpoint_secret_is_whsec: a secret is whsec_ and base64');

-- cadence.queue_event_deliveries
select has_function('cadence', 'queue_event_deliveries', 'queue_event_deliveries exists');
insert into public.accounts (id, email, display_name) values ('ea100000-0000-4000-8000-000000000001', 'delivery@example.com', 'D');
insert into public.license_keys (key, account_id, email) values ('DLVR-0000-0000-0001', 'ea100000-0000-4000-8000-000000000001', 'delivery@example.com');
update public.license_keys set active = false where key = 'DLVR-0000-0000-0001';
select is((select count(*) from public.event_deliveries where endpoint_id = 'ea000000-0000-4000-8000-000000000001'), 3::bigint,
  'queue_event_deliveries: each event recorded is owed to the enabled endpoint');

-- cadence.endpoint_owes_events, cadence.events_are_due
select has_function('cadence', 'endpoint_owes_events', array['uuid'], 'endpoint_owes_events exists');
select ok(cadence.endpoint_owes_events('ea000000-0000-4000-8000-000000000001'), 'endpoint_owes_events: events recorded and in no message yet');
insert into public.event_endpoints (id, url, notify_email, enabled, disabled_at)
values ('ea000000-0000-4000-8000-000000000002', 'https://hooks.example.com/other', 'staff@example.com', false, now());
select ok(not cadence.endpoint_owes_events('ea000000-0000-4000-8000-000000000002'), 'endpoint_owes_events: not an endpoint nothing was owed to');
select has_function('cadence', 'events_are_due', 'events_are_due exists');
select ok(cadence.events_are_due(), 'events_are_due: an enabled endpoint past its next attempt, with events owed');
update public.event_endpoints set next_attempt_at = now() + interval '1 minute' where id = 'ea000000-0000-4000-8000-000000000001';
select ok(not cadence.events_are_due(), 'events_are_due: not while that endpoint is leased or waits out a backoff');
update public.event_endpoints set next_attempt_at = '2026-03-02 12:00+00' where id = 'ea000000-0000-4000-8000-000000000001';
select is(pg_temp.executors('cadence.events_are_due'), '{service_role}', 'events_are_due: only service_role (and the owner, pg_cron''s) may execute it');
select is(pg_temp.executors('cadence.endpoint_owes_events'), '{service_role}', 'endpoint_owes_events: only service_role (and the owner) may execute it');

-- cadence.event_message
select has_function('cadence', 'event_message', array['events'], 'event_message exists');
select is((select cadence.event_message(e) ->> 'license_key' from public.events as e where e.license_key = 'DLVR-0000-0000-0001' and e.sequence = 2),
  'DLVR-0000-0000-0001', 'event_message: a key event names its key');
select ok((select not (cadence.event_message(e) ? 'license_key') from public.events as e where e.account_id = 'ea100000-0000-4000-8000-000000000001' and e.type = 'account.created'),
  'event_message: an account event names no key');

-- cadence.claim_event_batch
select has_function('cadence', 'claim_event_batch', array['timestamp with time zone', 'integer'], 'claim_event_batch exists');
select is_empty($$select from cadence.claim_event_batch('2026-03-02 11:59+00', 60)$$, 'claim_event_batch: nothing before the endpoint is due');
create temporary table first_claim on commit drop as select * from cadence.claim_event_batch('2026-03-02 12:00+00', 60);
select is((select jsonb_array_length(events) from first_claim), 2, 'claim_event_batch: at most batch_size events in a message');
select is((select array(select e ->> 'type' from jsonb_array_elements(events) as e) from first_claim), array['account.created', 'license_key.created'],
  'claim_event_batch: in the order they were recorded');
select is_empty($$select from cadence.claim_event_batch('2026-03-02 12:00:30+00', 60)$$, 'claim_event_batch: the endpoint is held for its lease');
select is((select batch_id from cadence.claim_event_batch('2026-03-02 12:01:01+00', 60)), (select batch_id from first_claim),
  'claim_event_batch: after the lease, the unaccepted message again, under the same id');

-- cadence.mark_event_batch_failed
select has_function('cadence', 'mark_event_batch_failed', array['uuid', 'integer', 'text', 'timestamp with time zone', 'timestamp with time zone'], 'mark_event_batch_failed exists');
select lives_ok($$select cadence.mark_event_batch_failed((select batch_id from first_claim), 503, 'HTTP 503', '2026-03-02 12:01:02+00', '2026-03-02 12:01:10+00')$$, 'mark_event_batch_failed: records the attempt');
select results_eq($$select failures, failing_since, next_attempt_at from public.event_endpoints where id = 'ea000000-0000-4000-8000-000000000001'$$,
  $$values (1, '2026-03-02 12:01:02+00'::timestamptz, '2026-03-02 12:01:10+00'::timestamptz)$$, 'mark_event_batch_failed: the endpoint waits its backoff');

-- cadence.mark_event_batch_delivered
select has_function('cadence', 'mark_event_batch_delivered', array['uuid', 'integer', 'timestamp with time zone'], 'mark_event_batch_delivered exists');
select lives_ok($$select cadence.mark_event_batch_delivered((select batch_id from first_claim), 200, '2026-03-02 12:01:11+00')$$, 'mark_event_batch_delivered: records the answer');
select results_eq($$select failures, failing_since from public.event_endpoints where id = 'ea000000-0000-4000-8000-000000000001'$$,
  $$values (0, null::timestamptz)$$, 'mark_event_batch_delivered: the endpoint''s failures end');
select is((select jsonb_array_length(events) from cadence.claim_event_batch('2026-03-02 12:01:11+00', 60)), 1,
  'mark_event_batch_delivered: the next message follows at once');

-- cadence.rotate_event_endpoint_secret
select has_function('cadence', 'rotate_event_endpoint_secret', array['uuid', 'interval'], 'rotate_event_endpoint_secret exists');
create temporary table before_rotation on commit drop as select secret from public.event_endpoints where id = 'ea000000-0000-4000-8000-000000000001';
create temporary table rotated on commit drop as select cadence.rotate_event_endpoint_secret('ea000000-0000-4000-8000-000000000001') as secret;
select results_eq($$select secret, previous_secret from public.event_endpoints where id = 'ea000000-0000-4000-8000-000000000001'$$,
  $$select r.secret, b.secret from rotated as r, before_rotation as b$$,
  'rotate_event_endpoint_secret: returns the new secret, the old one kept as previous_secret');

-- cadence.disable_event_endpoint, cadence.enable_event_endpoint, cadence.replay_event
select has_function('cadence', 'disable_event_endpoint', array['uuid', 'text', 'timestamp with time zone', 'text', 'text', 'text'], 'disable_event_endpoint exists');
select has_function('cadence', 'enable_event_endpoint', array['uuid'], 'enable_event_endpoint exists');
select has_function('cadence', 'replay_event', array['uuid', 'uuid'], 'replay_event exists');
select is(pg_temp.executors('cadence.claim_event_batch'), '{service_role}', 'claim_event_batch: only service_role may execute it');

select * from finish();
rollback;
