-- Change an account's e-mail: from now on its kiosks validate with the new e-mail and the old one
-- is refused; keys that belonged to it by the old e-mail alone (no owner link) stay its keys. The
-- same function as the signed call POST /api/v2/automations/change/email. Write it this way rather
-- than editing accounts.email in the table editor, which leaves such keys behind.
--
-- Replace the values marked "replace" (as written, it changes legacy@example.com to
-- legacy.new@example.com).
-- The result: outcome done (changed false when it is the same e-mail), or why nothing changed:
-- unknown_account, email_taken (another account has it), name_taken (keys stored under the new
-- e-mail without an account would join it with a kiosk name it uses), new_email_invalid.

select c.outcome, c.changed
  from cadence.change_account_email('legacy@example.com',       -- replace: the account's e-mail now
                                    'legacy.new@example.com')   -- replace: its new e-mail
       as c;
