-- The per-key payload copies and what kept them, unused since schedule_payloads. Dropped apart from
-- that migration: a poll that began before it committed ran the former read function, which reads
-- this table, and dropping it there failed those polls ("relation does not exist") instead of
-- letting them finish (test/schedule/schedule-payloads-migration.test.ts). Once that migration has committed,
-- every poll runs the new function, so nothing waits on this table any more.

drop table public.license_schedule_payloads;
drop function cadence.lock_schedule_payloads();
drop function cadence.refresh_license_schedules(text[]);
drop function cadence.refresh_schedules(uuid[]);
drop function cadence.refresh_schedule_owners(text[], uuid[]);
drop function cadence.refresh_after_license_key_change();
drop function cadence.refresh_after_account_change();
drop function cadence.refresh_all_license_schedules();
