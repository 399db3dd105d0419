-- What an account holder reads through the Data API: their account, their license keys, the
-- catalogue, and the proclamations they are entitled to. Row-level security needs both a grant and a
-- policy: the grants below name the columns a holder may read; the policies name the rows. Nothing
-- here is granted to anon, and nothing a holder reads here can be written by them.

-- Their own account: id, e-mail and display name; never the Auth link columns.
grant select (id, email, display_name) on public.accounts to authenticated;
create policy "Account holders can read their own account"
  on public.accounts for select to authenticated
  using (auth_user_id = (select auth.uid()));

-- Their license keys, by the pairing rule: key, activity, the kiosk's system name, last validation.
-- Only the kiosk writes a system name; staff own activity, owner links and stored e-mails.
grant select (key, active, system_name, last_validated_at) on public.license_keys to authenticated;
create policy "Account holders can read their own license keys"
  on public.license_keys for select to authenticated
  using (key = any ((select cadence.holder_license_keys())::text[]));

-- The catalogue, for account holders only (an Auth user linked to no account reads nothing).
grant select on public.categories, public.groups, public.frequencies, public.color_palettes to authenticated;
create policy "Account holders can read categories"
  on public.categories for select to authenticated
  using ((select cadence.holder_account_id()) is not null);
create policy "Account holders can read groups"
  on public.groups for select to authenticated
  using ((select cadence.holder_account_id()) is not null);
create policy "Account holders can read stored frequencies"
  on public.frequencies for select to authenticated
  using ((select cadence.holder_account_id()) is not null);
create policy "Account holders can read stored colour palettes"
  on public.color_palettes for select to authenticated
  using ((select cadence.holder_account_id()) is not null);

-- Proclamations: only those the account is entitled to and that are served. Entitlements
-- themselves (account_proclamations) stay staff-only.
grant select on public.proclamations to authenticated;
create policy "Account holders can read the proclamations they are entitled to"
  on public.proclamations for select to authenticated
  using (id = any ((select cadence.holder_proclamation_ids())::uuid[]));
