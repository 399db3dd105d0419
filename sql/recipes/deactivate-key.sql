-- Suspend (deactivate) a license key: license validation refuses it from now on ("license key is
-- not active"). The key, its schedule and its kiosk's history stay; reinstate-key.sql makes it work
-- again. The same function as the signed call POST /api/v2/automations/suspend/key, so the rules are
-- the same whoever suspends.
--
-- Replace the key marked "replace" (as written, it suspends DEMO-0000-0000-0001).
-- The result: outcome done (changed false when it was already suspended), or unknown_license when
-- no key matched.

select s.outcome, s.changed
  from cadence.suspend_license_key('DEMO-0000-0000-0001') as s;  -- replace: the license key
