-- Reinstate a suspended license key: it validates again. The same function as the signed call
-- POST /api/v2/automations/reinstate/key.
--
-- Replace the key marked "replace" (as written, it reinstates DEMO-0000-0000-0003).
-- The result: outcome done (changed false when it was already active), or unknown_license when no
-- key matched.

select r.outcome, r.changed
  from cadence.reinstate_license_key('DEMO-0000-0000-0003') as r;  -- replace: the license key
