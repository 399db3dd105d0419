-- The e-mail outbox: what queues an e-mail, who claims it when, and what a send or a failure
-- records. pgTAP; run with pg_prove or `supabase test db` (test/README.md).
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

-- What each call queued, by name.
create temporary table queued (name text primary key, id uuid) on commit drop;

-- cadence.enqueue_email
select has_function('cadence', 'enqueue_email', array['text', 'text', 'text', 'text', 'timestamp with time zone'], 'enqueue_email exists');
insert into queued select 'sweep', cadence.enqueue_email('sweep@example.com', 'Hello', 'text', '<p>html</p>', '2026-03-02 12:00+00');
select results_eq($$select status, attempts, next_attempt_at from public.email_outbox where id = (select id from queued where name = 'sweep')$$,
  $$values ('pending', 0, '2026-03-02 12:00+00'::timestamptz)$$, 'enqueue_email: a pending e-mail, due for the sweeps at p_now');
select throws_ok($$select cadence.enqueue_email('not an address', 'Hello', 'text', '<p>html</p>', '2026-03-02 12:00+00')$$,
  '23514', null, 'enqueue_email: a recipient that is no e-mail address is refused');
select throws_ok($$select cadence.enqueue_email('blank@example.com', ' ', 'text', '<p>html</p>', '2026-03-02 12:00+00')$$,
  '23514', null, 'enqueue_email: a blank subject is refused');
select is(pg_temp.executors('cadence.enqueue_email'), '{service_role}', 'enqueue_email: only service_role may execute it');

-- cadence.enqueue_request_email
select has_function('cadence', 'enqueue_request_email', array['text', 'text', 'text', 'text', 'timestamp with time zone'], 'enqueue_request_email exists');
insert into queued select 'request', cadence.enqueue_request_email('request@example.com', 'Hello', 'text', '<p>html</p>', '2026-03-02 12:00+00');
select is((select next_attempt_at from public.email_outbox where id = (select id from queued where name = 'request')), '2026-03-02 12:01+00',
  'enqueue_request_email: the sweeps may take a request''s own e-mail only a minute after it was queued');
select is(pg_temp.executors('cadence.enqueue_request_email'), '{service_role}', 'enqueue_request_email: only service_role may execute it');

-- cadence.enqueue_hook_emails
select has_function('cadence', 'enqueue_hook_emails', array['text', 'jsonb', 'timestamp with time zone'], 'enqueue_hook_emails exists');
select throws_ok($$select cadence.enqueue_hook_emails('hook-event-0', '[]', '2026-03-02 12:00+00')$$,
  '22023', 'p_emails must be a non-empty JSON array', 'enqueue_hook_emails: no e-mails is refused');
select throws_ok($$select cadence.enqueue_hook_emails('hook-event-0', '{"to": "a@example.com"}', '2026-03-02 12:00+00')$$,
  '22023', 'p_emails must be a non-empty JSON array', 'enqueue_hook_emails: e-mails not in a JSON array are refused');
insert into queued select 'hook-' || n, id from cadence.enqueue_hook_emails('hook-event-1',
  '[{"to": "old@example.com", "subject": "Old", "text": "t", "html": "h"}, {"to": "new@example.com", "subject": "New", "text": "t", "html": "h"}]',
  '2026-03-02 12:00+00') with ordinality as h(id, n);
select results_eq($$select o.recipient, o.next_attempt_at from queued as q join public.email_outbox as o on o.id = q.id where q.name like 'hook-%' order by q.name$$,
  $$values ('old@example.com', '2026-03-02 12:01+00'::timestamptz), ('new@example.com', '2026-03-02 12:01+00')$$,
  'enqueue_hook_emails: queues the hook call''s e-mails in order, each as a request''s own');
select is_empty($$select cadence.enqueue_hook_emails('hook-event-1', '[{"to": "old@example.com", "subject": "Old", "text": "t", "html": "h"}]', '2026-03-02 12:00:30+00')$$,
  'enqueue_hook_emails: a repeated event queues nothing');
select is(pg_temp.executors('cadence.enqueue_hook_emails'), '{service_role}', 'enqueue_hook_emails: only service_role may execute it');

-- cadence.claim_emails
select has_function('cadence', 'claim_emails', array['timestamp with time zone', 'integer', 'integer', 'uuid'], 'claim_emails exists');
select results_eq($$select recipient, attempts, next_attempt_at from cadence.claim_emails('2026-03-02 12:00:10+00', 30, 10)$$,
  $$values ('sweep@example.com', 1, '2026-03-02 12:00:40+00'::timestamptz)$$,
  'claim_emails: a sweep claims the due e-mails for a lease, counting the attempt; e-mails not yet due are left');
select is_empty($$select from cadence.claim_emails('2026-03-02 12:00:20+00', 30, 10) where recipient = 'sweep@example.com'$$,
  'claim_emails: an e-mail under another sender''s lease is not claimed again');
select is((select recipient from cadence.claim_emails('2026-03-02 12:00:20+00', 30, 10, (select id from queued where name = 'request'))), 'request@example.com',
  'claim_emails: the request that queued an e-mail claims it by id before it is due');
select is_empty($$select from cadence.claim_emails('2026-03-02 12:00:25+00', 30, 10, (select id from queued where name = 'request'))$$,
  'claim_emails: an e-mail claimed once is claimed by id again only when due');
select is((select count(*)::integer from cadence.claim_emails('2026-03-02 12:10+00', 30, 1)), 1, 'claim_emails: claims at most p_limit');
select is(pg_temp.executors('cadence.claim_emails'), '{service_role}', 'claim_emails: only service_role may execute it');

-- cadence.mark_email_sent
select has_function('cadence', 'mark_email_sent', array['uuid', 'timestamp with time zone'], 'mark_email_sent exists');
select cadence.mark_email_sent((select id from queued where name = 'sweep'), '2026-03-02 12:00:12+00');
select results_eq($$select status, sent_at from public.email_outbox where id = (select id from queued where name = 'sweep')$$,
  $$values ('sent', '2026-03-02 12:00:12+00'::timestamptz)$$, 'mark_email_sent: records the e-mail sent, and when');
select cadence.mark_email_sent((select id from queued where name = 'sweep'), '2026-03-02 12:09+00');
select is((select sent_at from public.email_outbox where id = (select id from queued where name = 'sweep')), '2026-03-02 12:00:12+00',
  'mark_email_sent: a second report of the send changes nothing');
select is(pg_temp.executors('cadence.mark_email_sent'), '{service_role}', 'mark_email_sent: only service_role may execute it');

-- cadence.mark_email_failed
select has_function('cadence', 'mark_email_failed', array['uuid', 'text', 'timestamp with time zone'], 'mark_email_failed exists');
select cadence.mark_email_failed((select id from queued where name = 'request'), repeat('x', 2000), '2026-03-02 12:05+00');
select results_eq($$select status, char_length(last_error), next_attempt_at from public.email_outbox where id = (select id from queued where name = 'request')$$,
  $$values ('pending', 1000, '2026-03-02 12:05+00'::timestamptz)$$,
  'mark_email_failed: the e-mail stays pending, due again at the retry time, with the error''s first 1000 characters');
select cadence.mark_email_failed((select id from queued where name = 'sweep'), 'late failure', '2026-03-02 12:05+00');
select is((select last_error from public.email_outbox where id = (select id from queued where name = 'sweep')), null,
  'mark_email_failed: a sent e-mail is not marked failed');
select is(pg_temp.executors('cadence.mark_email_failed'), '{service_role}', 'mark_email_failed: only service_role may execute it');

select * from finish();
rollback;
