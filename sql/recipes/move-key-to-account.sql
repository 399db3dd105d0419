-- Move a license key to another account: from now on the key belongs to that account, its kiosk
-- validates with that account's e-mail (the old one is refused), and it is served that account's
-- proclamations and schedule. A schedule of the key's own moves with it and still wins.
--
-- Replace the values marked "replace" (as written, it moves DEMO-0000-0000-0001 to other@example.com).
-- The result shows the moved key; no row means the key or the e-mail matched nothing.
-- It stops at system_name_is_unique_per_account when a kiosk of the other account already has this
-- kiosk's name (compared regardless of case): rename one of them first.

update public.license_keys as k
   set account_id = a.id,
       email = a.email
  from public.accounts as a
 where k.key = 'DEMO-0000-0000-0001'                   -- replace: the license key
   and lower(a.email) = lower('other@example.com')     -- replace: the e-mail of the account it moves to
returning k.key, a.email as account_email;
