-- Supabase Auth users: linking an account to its Auth user, retrying the accounts not yet linked,
-- and the accounts whose e-mail changed after their Auth user was given one. pgTAP; run with pg_prove or `supabase test db` (test/README.md).
begin;
set local client_min_messages = warning;
create extension if not exists pgtap with schema extensions;
set local search_path = extensions, public;
select plan(17);

-- The API roles that may execute a function: its grants are part of its design.
create function pg_temp.executors(p_function regproc) returns text[] language sql as $$
  select array(select r from unnest(array['anon', 'authenticated', 'service_role']) as r
                where pg_catalog.has_function_privilege(r, p_function, 'execute') order by r)
$$;

-- Every other account is linked and up to date, so the claims below see only these: one never
-- tried, one due again after a failure, one not yet due, one linked, one linked whose e-mail
-- changed since.
update public.accounts set auth_user_id = gen_random_uuid(), auth_email = email;
insert into public.accounts (id, email, display_name, auth_user_id, auth_email, auth_link_due_at, auth_link_error) values
  ('e8000000-0000-4000-8000-000000000001', 'new@example.com', 'New', null, null, null, null),
  ('e8000000-0000-4000-8000-000000000002', 'failed@example.com', 'Failed', null, null, '2026-03-02 11:00+00', 'auth unreachable'),
  ('e8000000-0000-4000-8000-000000000003', 'later@example.com', 'Later', null, null, '2026-03-02 13:00+00', 'auth unreachable'),
  ('e8000000-0000-4000-8000-000000000004', 'linked@example.com', 'Linked', 'e8100000-0000-4000-8000-000000000004', 'linked@example.com', null, null),
  ('e8000000-0000-4000-8000-000000000005', 'renamed@example.com', 'Renamed', 'e8100000-0000-4000-8000-000000000005', 'before@example.com', '2026-03-02 13:30+00', null);

-- cadence.claim_accounts_due_for_auth
select has_function('cadence', 'claim_accounts_due_for_auth', array['timestamp with time zone', 'integer', 'integer', 'uuid'], 'claim_accounts_due_for_auth exists');
select results_eq($$select id, attempts from cadence.claim_accounts_due_for_auth('2026-03-02 12:00+00', 60, 1)$$,
  $$values ('e8000000-0000-4000-8000-000000000001'::uuid, 1)$$,
  'claim_accounts_due_for_auth: claims at most p_limit, an account never tried first, counting the attempt');
select results_eq($$select id from cadence.claim_accounts_due_for_auth('2026-03-02 12:00+00', 60, 10)$$,
  $$values ('e8000000-0000-4000-8000-000000000002'::uuid)$$,
  'claim_accounts_due_for_auth: an account under another worker''s lease, not yet due, or linked and up to date is not claimed');
select is((select auth_link_due_at from public.accounts where id = 'e8000000-0000-4000-8000-000000000002'), '2026-03-02 12:01+00',
  'claim_accounts_due_for_auth: a claim holds the account for one lease');
select is_empty($$select from cadence.claim_accounts_due_for_auth('2026-03-02 14:00+00', 60, 10, 'e8000000-0000-4000-8000-000000000004')$$,
  'claim_accounts_due_for_auth: with p_id, only that account, and not when it is linked and up to date');
select results_eq($$select id, email, auth_user_id from cadence.claim_accounts_due_for_auth('2026-03-02 14:00+00', 60, 10, 'e8000000-0000-4000-8000-000000000005')$$,
  $$values ('e8000000-0000-4000-8000-000000000005'::uuid, 'renamed@example.com', 'e8100000-0000-4000-8000-000000000005'::uuid)$$,
  'claim_accounts_due_for_auth: a linked account whose e-mail changed is due again, with its Auth user and its e-mail now');
select is(pg_temp.executors('cadence.claim_accounts_due_for_auth'), '{service_role}', 'claim_accounts_due_for_auth: only service_role may execute it');

-- cadence.link_auth_user
select has_function('cadence', 'link_auth_user', array['uuid', 'uuid', 'text'], 'link_auth_user exists');
select ok(cadence.link_auth_user('e8000000-0000-4000-8000-000000000002', 'e8100000-0000-4000-8000-000000000002', 'failed@example.com'), 'link_auth_user: links an unlinked account');
select results_eq($$select auth_user_id, auth_email, auth_link_error, auth_link_due_at from public.accounts where id = 'e8000000-0000-4000-8000-000000000002'$$,
  $$values ('e8100000-0000-4000-8000-000000000002'::uuid, 'failed@example.com', null::text, null::timestamptz)$$,
  'link_auth_user: a linked account keeps the e-mail Auth was given, no error, and is due for nothing');
select ok(cadence.link_auth_user('e8000000-0000-4000-8000-000000000002', 'e8100000-0000-4000-8000-000000000002', 'failed@example.com'),
  'link_auth_user: linking again to the same user is true');
select ok(not cadence.link_auth_user('e8000000-0000-4000-8000-000000000004', 'e8100000-0000-4000-8000-000000000099', 'linked@example.com'),
  'link_auth_user: an account linked to another user is not relinked');
update public.accounts set email = 'changed-meanwhile@example.com' where id = 'e8000000-0000-4000-8000-000000000005';
select cadence.link_auth_user('e8000000-0000-4000-8000-000000000005', 'e8100000-0000-4000-8000-000000000005', 'renamed@example.com');
select isnt_empty($$select from cadence.claim_accounts_due_for_auth('2026-03-02 14:00+00', 60, 10, 'e8000000-0000-4000-8000-000000000005')$$,
  'link_auth_user: an account whose e-mail changed again since Auth was given one stays due');
select is(pg_temp.executors('cadence.link_auth_user'), '{service_role}', 'link_auth_user: only service_role may execute it');

-- cadence.mark_auth_link_failed
select has_function('cadence', 'mark_auth_link_failed', array['uuid', 'text', 'timestamp with time zone'], 'mark_auth_link_failed exists');
select cadence.mark_auth_link_failed('e8000000-0000-4000-8000-000000000001', repeat('x', 2000), '2026-03-02 12:10+00');
select cadence.mark_auth_link_failed('e8000000-0000-4000-8000-000000000004', 'late', '2026-03-02 12:10+00');
select results_eq(
  $$select id, char_length(auth_link_error), auth_link_due_at from public.accounts where id in ('e8000000-0000-4000-8000-000000000001', 'e8000000-0000-4000-8000-000000000004') order by id$$,
  $$values ('e8000000-0000-4000-8000-000000000001'::uuid, 1000, '2026-03-02 12:10+00'::timestamptz), ('e8000000-0000-4000-8000-000000000004', null, null)$$,
  'mark_auth_link_failed: an unlinked account keeps the error''s first 1000 characters and is due at the retry; a linked one up to date is left alone');
select is(pg_temp.executors('cadence.mark_auth_link_failed'), '{service_role}', 'mark_auth_link_failed: only service_role may execute it');

select * from finish();
rollback;
