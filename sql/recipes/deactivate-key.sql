-- Deactivate a license key: license validation refuses it from now on ("license key is not
-- active"). The key, its schedule and its kiosk's history stay; to reactivate it, run this with
-- `active = true`.
--
-- Replace the key marked "replace" (as written, it deactivates DEMO-0000-0000-0001).
-- The result shows the key; no row means no key matched.

update public.license_keys as k
   set active = false
 where k.key = 'DEMO-0000-0000-0001'  -- replace: the license key
returning k.key, k.active;
