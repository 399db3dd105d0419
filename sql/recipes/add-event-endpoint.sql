-- Add an endpoint that receives Cadence's events (every change to an account or a license key, and
-- the kiosks' offline, online, first-validation and copy-suspected facts), signed with Standard
-- Webhooks. Give the returned secret to the receiver; it verifies every request with it
-- (functions/EVENTS.md). Events recorded from now on are owed to it; earlier ones are not (replay
-- them with replay-event.sql).
--
-- Replace the values marked "replace". event_types null takes every type; batch_size is how many
-- events one request carries at most (1 to 1000). The result: the endpoint's id and its secret.

insert into public.event_endpoints (url, notify_email, description, event_types, batch_size)
values ('https://hooks.example.com/cadence',  -- replace: the receiver's URL (https)
        'ops@example.com',                    -- replace: who is e-mailed if it fails for three days and is disabled
        'CRM sync',                           -- replace: a note for staff
        null,                                 -- replace: e.g. array['license_key.suspended', 'kiosk.offline'], or null for all
        100)                                  -- replace: events per request, at most
returning id, secret;
