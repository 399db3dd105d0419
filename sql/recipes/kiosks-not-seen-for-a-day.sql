-- Kiosks not seen for a day: the license keys whose kiosk has called before but not in the last
-- 24 hours, longest silent first, with the owner's e-mail, the kiosk's name, whether the key is
-- active, and when and from where the kiosk last called. Keys never seen (state never_seen in
-- public.kiosk_status) are left out: no kiosk has used them yet.
--
-- Replace the span marked "replace" to look at another one ('2 hours', '7 days').

select s.license_key, s.account_email, s.system_name, s.active, s.last_seen_at, s.last_seen_ip
  from public.kiosk_status as s
 where s.last_seen_at < now() - interval '1 day'  -- replace: how long unseen
 order by s.last_seen_at, s.license_key;
