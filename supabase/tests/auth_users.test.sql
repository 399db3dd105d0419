-- Supabase Auth users: linking an account to its Auth user, and retrying the accounts not yet
-- linked. pgTAP; run with pg_prove or `supabase test db` (test/README.md).
begin;
set local client_min_messages = warning;
create extension if not exists pgtap with schema extensions;
set local search_path = extensions, public;
select plan(15);

-- The API roles that may execute a function: its grants are part of its design.
create function pg_temp.executors(p_function regproc) returns text[] language sql as $$
  select array(select r from unnest(array['anon', 'authenticated', 'service_role']) as r
                where pg_catalog.has_function_privilege(r, p_function, 'execute') order by r)
$$;

-- Every other account is linked, so the claims below see only these: one never tried, one due
-- again after a failure, one not yet due, one linked.
update public.accounts set auth_user_id = gen_random_uuid();
insert into public.accounts (id, email, display_name, auth_user_id, auth_link_due_at, auth_link_error) values
  ('e8000000-0000-4000-8000-000000000001', 'new@example.com', 'New', null, null, null),
  ('e8000000-0000-4000-8000-000000000002', 'failed@example.com', 'Failed', null, '2026-03-02 11:00+00', 'auth unreachable'),
  ('e8000000-0000-4000-8000-000000000003', 'later@example.com', 'Later', null, '2026-03-02 13:00+00', 'auth unreachable'),
  ('e8000000-0000-4000-8000-000000000004', 'linked@example.com', 'Linked', 'e8100000-0000-4000-8000-000000000004', null, null);

-- cadence.claim_unlinked_accounts
select has_function('cadence', 'claim_unlinked_accounts', array['timestamp with time zone', 'integer', 'integer', 'uuid'], 'claim_unlinked_accounts exists');
select results_eq($$select id, attempts from cadence.claim_unlinked_accounts('2026-03-02 12:00+00', 60, 1)$$,
  $$values ('e8000000-0000-4000-8000-000000000001'::uuid, 1)$$,
  'claim_unlinked_accounts: claims at most p_limit, an account never tried first, counting the attempt');
select results_eq($$select id from cadence.claim_unlinked_accounts('2026-03-02 12:00+00', 60, 10)$$,
  $$values ('e8000000-0000-4000-8000-000000000002'::uuid)$$,
  'claim_unlinked_accounts: an account under another worker''s lease, not yet due, or linked is not claimed');
select is((select auth_link_due_at from public.accounts where id = 'e8000000-0000-4000-8000-000000000002'), '2026-03-02 12:01+00',
  'claim_unlinked_accounts: a claim holds the account for one lease');
select is_empty($$select from cadence.claim_unlinked_accounts('2026-03-02 14:00+00', 60, 10, 'e8000000-0000-4000-8000-000000000004')$$,
  'claim_unlinked_accounts: with p_id, only that account, and not when it is linked');
select is(pg_temp.executors('cadence.claim_unlinked_accounts'), '{service_role}', 'claim_unlinked_accounts: only service_role may execute it');

-- cadence.link_auth_user
select has_function('cadence', 'link_auth_user', array['uuid', 'uuid'], 'link_auth_user exists');
select ok(cadence.link_auth_user('e8000000-0000-4000-8000-000000000002', 'e8100000-0000-4000-8000-000000000002'), 'link_auth_user: links an unlinked account');
select results_eq($$select auth_user_id, auth_link_error, auth_link_due_at from public.accounts where id = 'e8000000-0000-4000-8000-000000000002'$$,
  $$values ('e8100000-0000-4000-8000-000000000002'::uuid, null::text, null::timestamptz)$$,
  'link_auth_user: a linked account keeps no error and is due for nothing');
select ok(cadence.link_auth_user('e8000000-0000-4000-8000-000000000002', 'e8100000-0000-4000-8000-000000000002'),
  'link_auth_user: linking again to the same user is true');
select ok(not cadence.link_auth_user('e8000000-0000-4000-8000-000000000004', 'e8100000-0000-4000-8000-000000000099'),
  'link_auth_user: an account linked to another user is not relinked');
select is(pg_temp.executors('cadence.link_auth_user'), '{service_role}', 'link_auth_user: only service_role may execute it');

-- cadence.mark_auth_link_failed
select has_function('cadence', 'mark_auth_link_failed', array['uuid', 'text', 'timestamp with time zone'], 'mark_auth_link_failed exists');
select cadence.mark_auth_link_failed('e8000000-0000-4000-8000-000000000001', repeat('x', 2000), '2026-03-02 12:10+00');
select cadence.mark_auth_link_failed('e8000000-0000-4000-8000-000000000004', 'late', '2026-03-02 12:10+00');
select results_eq(
  $$select id, char_length(auth_link_error), auth_link_due_at from public.accounts where id in ('e8000000-0000-4000-8000-000000000001', 'e8000000-0000-4000-8000-000000000004') order by id$$,
  $$values ('e8000000-0000-4000-8000-000000000001'::uuid, 1000, '2026-03-02 12:10+00'::timestamptz), ('e8000000-0000-4000-8000-000000000004', null, null)$$,
  'mark_auth_link_failed: an unlinked account keeps the error''s first 1000 characters and is due at the retry; a linked one is left alone');
select is(pg_temp.executors('cadence.mark_auth_link_failed'), '{service_role}', 'mark_auth_link_failed: only service_role may execute it');

select * from finish();
rollback;
