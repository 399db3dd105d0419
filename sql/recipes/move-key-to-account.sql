-- Move a license key to another account: from now on the key belongs to that account, its kiosk
-- validates with that account's e-mail (the old one is refused), and it is served that account's
-- proclamations and schedule. A schedule of the key's own moves with it and still wins. The same
-- function as the signed call POST /api/v2/automations/move/key: the account must exist (create it
-- by onboarding), and nothing moves when a kiosk of that account already has this kiosk's name
-- (compared regardless of case).
--
-- Replace the values marked "replace" (as written, it moves DEMO-0000-0000-0001 to other@example.com).
-- The result: outcome done with the account's e-mail (changed false when the key was already
-- there), or why nothing moved: unknown_license, unknown_account, or name_taken (rename one of the
-- two kiosks first).

select m.outcome, m.changed, a.email as account_email
  from cadence.move_license_key('DEMO-0000-0000-0001',   -- replace: the license key
                                'other@example.com')     -- replace: the e-mail of the account it moves to
       as m
  left join public.accounts as a on a.id = m.account_id;
