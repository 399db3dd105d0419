-- Every privilege, in one place a reviewer can read: revoked by default (00_schemas.sql), each grant
-- explicit. service_role (the API's Supabase role) executes the functions it calls; authenticated
-- (an account holder through the Data API) reads and writes the columns named here, on the rows
-- the policies of 15_account_holders.sql allow; anon gets nothing. Grouped by the file that declares
-- each object.

-- 00_schemas.sql

GRANT USAGE ON SCHEMA cadence TO service_role;

-- 01_accounts_and_keys.sql

REVOKE ALL ON FUNCTION cadence.find_key_account() FROM PUBLIC;

REVOKE ALL ON FUNCTION cadence.await_account_changes() FROM PUBLIC;

REVOKE ALL ON FUNCTION cadence.refresh_key_accounts() FROM PUBLIC;

-- Account holders: read and change their account's zone and alert threshold, and their keys' zone
-- and mute switch. Nothing else of either table becomes writable to them.
GRANT ALL ON TABLE public.accounts TO service_role;

GRANT SELECT(id) ON TABLE public.accounts TO authenticated;

GRANT SELECT(email) ON TABLE public.accounts TO authenticated;

GRANT SELECT(display_name) ON TABLE public.accounts TO authenticated;

GRANT SELECT(time_zone),UPDATE(time_zone) ON TABLE public.accounts TO authenticated;

GRANT SELECT(offline_alert_after),UPDATE(offline_alert_after) ON TABLE public.accounts TO authenticated;

-- Their license keys, by the pairing rule: key, activity, the kiosk's system name, last validation.
-- Only the kiosk writes a system name; staff own activity, owner links and stored e-mails.
GRANT ALL ON TABLE public.license_keys TO service_role;

GRANT SELECT(key) ON TABLE public.license_keys TO authenticated;

GRANT SELECT(active) ON TABLE public.license_keys TO authenticated;

GRANT SELECT(last_validated_at) ON TABLE public.license_keys TO authenticated;

GRANT SELECT(system_name) ON TABLE public.license_keys TO authenticated;

GRANT SELECT(time_zone),UPDATE(time_zone) ON TABLE public.license_keys TO authenticated;

GRANT SELECT(alerts_muted),UPDATE(alerts_muted) ON TABLE public.license_keys TO authenticated;

REVOKE ALL ON FUNCTION cadence.license_key_owner(p_key text) FROM PUBLIC;
GRANT ALL ON FUNCTION cadence.license_key_owner(p_key text) TO authenticated;
GRANT ALL ON FUNCTION cadence.license_key_owner(p_key text) TO service_role;

-- 02_catalogue.sql

REVOKE ALL ON FUNCTION cadence.canonical_frequencies() FROM PUBLIC;
GRANT ALL ON FUNCTION cadence.canonical_frequencies() TO service_role;

REVOKE ALL ON FUNCTION cadence.categories_json() FROM PUBLIC;
GRANT ALL ON FUNCTION cadence.categories_json() TO service_role;

REVOKE ALL ON FUNCTION cadence.color_palettes_json() FROM PUBLIC;
GRANT ALL ON FUNCTION cadence.color_palettes_json() TO service_role;

REVOKE ALL ON FUNCTION cadence.entitlements(p_keys text[], p_emails text[]) FROM PUBLIC;
GRANT ALL ON FUNCTION cadence.entitlements(p_keys text[], p_emails text[]) TO service_role;

REVOKE ALL ON FUNCTION cadence.frequencies_json() FROM PUBLIC;
GRANT ALL ON FUNCTION cadence.frequencies_json() TO service_role;

REVOKE ALL ON FUNCTION cadence.groups_json() FROM PUBLIC;
GRANT ALL ON FUNCTION cadence.groups_json() TO service_role;

REVOKE ALL ON FUNCTION cadence.palettes() FROM PUBLIC;
GRANT ALL ON FUNCTION cadence.palettes() TO service_role;

REVOKE ALL ON FUNCTION cadence.proclamations_json() FROM PUBLIC;
GRANT ALL ON FUNCTION cadence.proclamations_json() TO service_role;

GRANT ALL ON TABLE public.account_proclamations TO service_role;

-- The catalogue, for account holders only (an Auth user linked to no account reads nothing).
GRANT ALL ON TABLE public.categories TO service_role;
GRANT SELECT ON TABLE public.categories TO authenticated;

GRANT ALL ON SEQUENCE public.categories_id_seq TO service_role;

GRANT ALL ON TABLE public.color_palettes TO service_role;
GRANT SELECT ON TABLE public.color_palettes TO authenticated;

GRANT ALL ON TABLE public.frequencies TO service_role;
GRANT SELECT ON TABLE public.frequencies TO authenticated;

GRANT ALL ON SEQUENCE public.frequencies_id_seq TO service_role;

GRANT ALL ON TABLE public.groups TO service_role;
GRANT SELECT ON TABLE public.groups TO authenticated;

GRANT ALL ON SEQUENCE public.groups_id_seq TO service_role;

-- Proclamations: only those the account is entitled to and that are served. Entitlements
-- themselves (account_proclamations) stay staff-only.
GRANT ALL ON TABLE public.proclamations TO service_role;
GRANT SELECT ON TABLE public.proclamations TO authenticated;

-- 03_pairing.sql

REVOKE ALL ON FUNCTION cadence.license_pairing(p_key text, p_email text) FROM PUBLIC;
GRANT ALL ON FUNCTION cadence.license_pairing(p_key text, p_email text) TO service_role;

REVOKE ALL ON FUNCTION cadence.license_pairings(p_keys text[], p_emails text[]) FROM PUBLIC;
GRANT ALL ON FUNCTION cadence.license_pairings(p_keys text[], p_emails text[]) TO service_role;

REVOKE ALL ON FUNCTION cadence.validate_and_name_licenses(p_keys text[], p_emails text[], p_names text[]) FROM PUBLIC;
GRANT ALL ON FUNCTION cadence.validate_and_name_licenses(p_keys text[], p_emails text[], p_names text[]) TO service_role;

REVOKE ALL ON FUNCTION cadence.validate_license(p_key text, p_email text, p_system_name text) FROM PUBLIC;
GRANT ALL ON FUNCTION cadence.validate_license(p_key text, p_email text, p_system_name text) TO service_role;

REVOKE ALL ON FUNCTION cadence.validate_licenses(p_keys text[], p_emails text[]) FROM PUBLIC;
GRANT ALL ON FUNCTION cadence.validate_licenses(p_keys text[], p_emails text[]) TO service_role;

-- 04_system_name_look_alikes.sql

REVOKE ALL ON FUNCTION cadence.system_name_capital_look_alikes(p_capitals text) FROM PUBLIC;
GRANT ALL ON FUNCTION cadence.system_name_capital_look_alikes(p_capitals text) TO service_role;

REVOKE ALL ON FUNCTION cadence.system_name_look_alikes(p_small text) FROM PUBLIC;
GRANT ALL ON FUNCTION cadence.system_name_look_alikes(p_small text) TO service_role;

-- 04_system_names.sql

REVOKE ALL ON FUNCTION cadence.check_system_name_form() FROM PUBLIC;

REVOKE ALL ON FUNCTION cadence.set_system_name(p_key text, p_name text) FROM PUBLIC;
GRANT ALL ON FUNCTION cadence.set_system_name(p_key text, p_name text) TO service_role;

REVOKE ALL ON FUNCTION cadence.set_system_names(p_keys text[], p_names text[]) FROM PUBLIC;
GRANT ALL ON FUNCTION cadence.set_system_names(p_keys text[], p_names text[]) TO service_role;

REVOKE ALL ON FUNCTION cadence.system_name_form(p_name text) FROM PUBLIC;
GRANT ALL ON FUNCTION cadence.system_name_form(p_name text) TO service_role;

REVOKE ALL ON FUNCTION cadence.system_name_keys(p_name text, OUT small_key text, OUT capitals_key text) FROM PUBLIC;
GRANT ALL ON FUNCTION cadence.system_name_keys(p_name text, OUT small_key text, OUT capitals_key text) TO service_role;

REVOKE ALL ON FUNCTION cadence.system_name_shows(p_name text) FROM PUBLIC;
GRANT ALL ON FUNCTION cadence.system_name_shows(p_name text) TO service_role;

-- 05_time_zones.sql

REVOKE ALL ON FUNCTION cadence.check_time_zone() FROM PUBLIC;

REVOKE ALL ON FUNCTION cadence.iana_time_zones() FROM PUBLIC;
GRANT ALL ON FUNCTION cadence.iana_time_zones() TO authenticated;
GRANT ALL ON FUNCTION cadence.iana_time_zones() TO service_role;

REVOKE ALL ON FUNCTION cadence.license_key_time_zone(p_key text) FROM PUBLIC;
GRANT ALL ON FUNCTION cadence.license_key_time_zone(p_key text) TO authenticated;
GRANT ALL ON FUNCTION cadence.license_key_time_zone(p_key text) TO service_role;

-- 06_schedules.sql

REVOKE ALL ON FUNCTION cadence.canonical_json(p_value jsonb) FROM PUBLIC;
GRANT ALL ON FUNCTION cadence.canonical_json(p_value jsonb) TO service_role;

REVOKE ALL ON FUNCTION cadence.change_author() FROM PUBLIC;

REVOKE ALL ON FUNCTION cadence.check_block_weekday() FROM PUBLIC;

REVOKE ALL ON FUNCTION cadence.check_schedule_type_change() FROM PUBLIC;

REVOKE ALL ON FUNCTION cadence.legacy_schedules_if_changed(p_keys text[], p_emails text[], p_fingerprints text[]) FROM PUBLIC;
GRANT ALL ON FUNCTION cadence.legacy_schedules_if_changed(p_keys text[], p_emails text[], p_fingerprints text[]) TO service_role;

REVOKE ALL ON FUNCTION cadence.legacy_schedules_unless_held(p_keys text[], p_emails text[], p_versions text[]) FROM PUBLIC;
GRANT ALL ON FUNCTION cadence.legacy_schedules_unless_held(p_keys text[], p_emails text[], p_versions text[]) TO service_role;

REVOKE ALL ON FUNCTION cadence.license_key_playing(p_key text, p_at timestamp with time zone) FROM PUBLIC;
GRANT ALL ON FUNCTION cadence.license_key_playing(p_key text, p_at timestamp with time zone) TO authenticated;
GRANT ALL ON FUNCTION cadence.license_key_playing(p_key text, p_at timestamp with time zone) TO service_role;

REVOKE ALL ON FUNCTION cadence.license_key_schedule_version(p_key text) FROM PUBLIC;
GRANT ALL ON FUNCTION cadence.license_key_schedule_version(p_key text) TO authenticated;
GRANT ALL ON FUNCTION cadence.license_key_schedule_version(p_key text) TO service_role;

REVOKE ALL ON FUNCTION cadence.license_schedules_if_changed(p_keys text[], p_fingerprints text[]) FROM PUBLIC;
GRANT ALL ON FUNCTION cadence.license_schedules_if_changed(p_keys text[], p_fingerprints text[]) TO service_role;

REVOKE ALL ON FUNCTION cadence.license_schedules_unless_held(p_keys text[], p_versions text[]) FROM PUBLIC;
GRANT ALL ON FUNCTION cadence.license_schedules_unless_held(p_keys text[], p_versions text[]) TO service_role;

REVOKE ALL ON FUNCTION cadence.playing_at(p_keys text[], p_at timestamp with time zone) FROM PUBLIC;
GRANT ALL ON FUNCTION cadence.playing_at(p_keys text[], p_at timestamp with time zone) TO service_role;

REVOKE ALL ON FUNCTION cadence.refresh_after_block_proclamations_change() FROM PUBLIC;

REVOKE ALL ON FUNCTION cadence.refresh_after_blocks_change() FROM PUBLIC;

REVOKE ALL ON FUNCTION cadence.refresh_after_schedules_change() FROM PUBLIC;

REVOKE ALL ON FUNCTION cadence.refresh_all_schedule_payloads() FROM PUBLIC;

REVOKE ALL ON FUNCTION cadence.refresh_schedule_payloads(p_schedule_ids uuid[]) FROM PUBLIC;
GRANT ALL ON FUNCTION cadence.refresh_schedule_payloads(p_schedule_ids uuid[]) TO service_role;

REVOKE ALL ON FUNCTION cadence.schedule_content(p_schedule_id uuid) FROM PUBLIC;
GRANT ALL ON FUNCTION cadence.schedule_content(p_schedule_id uuid) TO service_role;

REVOKE ALL ON FUNCTION cadence.schedule_payload(p_key text) FROM PUBLIC;
GRANT ALL ON FUNCTION cadence.schedule_payload(p_key text) TO service_role;

REVOKE ALL ON FUNCTION cadence.schedule_version(p_payload json) FROM PUBLIC;
GRANT ALL ON FUNCTION cadence.schedule_version(p_payload json) TO service_role;

REVOKE ALL ON FUNCTION cadence.served_schedules(p_keys text[]) FROM PUBLIC;
GRANT ALL ON FUNCTION cadence.served_schedules(p_keys text[]) TO service_role;

REVOKE ALL ON FUNCTION cadence.unscheduled_payload() FROM PUBLIC;
GRANT ALL ON FUNCTION cadence.unscheduled_payload() TO service_role;

-- What their blocks play: only proclamations the account is entitled to.
GRANT ALL ON TABLE public.schedule_block_proclamations TO service_role;
GRANT DELETE ON TABLE public.schedule_block_proclamations TO authenticated;

GRANT SELECT(block_id),INSERT(block_id) ON TABLE public.schedule_block_proclamations TO authenticated;

GRANT SELECT("position"),INSERT("position"),UPDATE("position") ON TABLE public.schedule_block_proclamations TO authenticated;

GRANT SELECT(proclamation_id),INSERT(proclamation_id),UPDATE(proclamation_id) ON TABLE public.schedule_block_proclamations TO authenticated;

-- Blocks of their own schedules; a block stays in the schedule it was created in.
GRANT ALL ON TABLE public.schedule_blocks TO service_role;
GRANT DELETE ON TABLE public.schedule_blocks TO authenticated;

GRANT SELECT(id) ON TABLE public.schedule_blocks TO authenticated;

GRANT SELECT(schedule_id),INSERT(schedule_id) ON TABLE public.schedule_blocks TO authenticated;

GRANT SELECT(weekday),INSERT(weekday),UPDATE(weekday) ON TABLE public.schedule_blocks TO authenticated;

GRANT SELECT(start_time),INSERT(start_time),UPDATE(start_time) ON TABLE public.schedule_blocks TO authenticated;

GRANT SELECT(end_time),INSERT(end_time),UPDATE(end_time) ON TABLE public.schedule_blocks TO authenticated;

GRANT SELECT(dynamic_audio),INSERT(dynamic_audio),UPDATE(dynamic_audio) ON TABLE public.schedule_blocks TO authenticated;

GRANT ALL ON TABLE public.schedule_payloads TO service_role;

-- Schedules: the owner (a key or the account) is chosen at creation; afterwards only the type
-- changes (the type-change trigger still refuses one that would misfit a block).
GRANT ALL ON TABLE public.schedules TO service_role;
GRANT DELETE ON TABLE public.schedules TO authenticated;

GRANT SELECT(id) ON TABLE public.schedules TO authenticated;

GRANT SELECT(license_key),INSERT(license_key) ON TABLE public.schedules TO authenticated;

GRANT SELECT(account_id),INSERT(account_id) ON TABLE public.schedules TO authenticated;

GRANT SELECT(type),INSERT(type),UPDATE(type) ON TABLE public.schedules TO authenticated;

GRANT SELECT(created_at) ON TABLE public.schedules TO authenticated;

-- 07_email_outbox.sql

GRANT ALL ON TABLE public.email_outbox TO service_role;

REVOKE ALL ON FUNCTION cadence.claim_emails(p_now timestamp with time zone, p_lease_seconds integer, p_limit integer, p_id uuid) FROM PUBLIC;
GRANT ALL ON FUNCTION cadence.claim_emails(p_now timestamp with time zone, p_lease_seconds integer, p_limit integer, p_id uuid) TO service_role;

REVOKE ALL ON FUNCTION cadence.enqueue_email(p_recipient text, p_subject text, p_text text, p_html text, p_now timestamp with time zone) FROM PUBLIC;
GRANT ALL ON FUNCTION cadence.enqueue_email(p_recipient text, p_subject text, p_text text, p_html text, p_now timestamp with time zone) TO service_role;

REVOKE ALL ON FUNCTION cadence.enqueue_hook_emails(p_event text, p_emails jsonb, p_now timestamp with time zone) FROM PUBLIC;
GRANT ALL ON FUNCTION cadence.enqueue_hook_emails(p_event text, p_emails jsonb, p_now timestamp with time zone) TO service_role;

REVOKE ALL ON FUNCTION cadence.enqueue_request_email(p_recipient text, p_subject text, p_text text, p_html text, p_now timestamp with time zone) FROM PUBLIC;
GRANT ALL ON FUNCTION cadence.enqueue_request_email(p_recipient text, p_subject text, p_text text, p_html text, p_now timestamp with time zone) TO service_role;

REVOKE ALL ON FUNCTION cadence.mark_email_failed(p_id uuid, p_error text, p_retry_at timestamp with time zone) FROM PUBLIC;
GRANT ALL ON FUNCTION cadence.mark_email_failed(p_id uuid, p_error text, p_retry_at timestamp with time zone) TO service_role;

REVOKE ALL ON FUNCTION cadence.mark_email_sent(p_id uuid, p_now timestamp with time zone) FROM PUBLIC;
GRANT ALL ON FUNCTION cadence.mark_email_sent(p_id uuid, p_now timestamp with time zone) TO service_role;

-- 08_kiosk_sightings.sql

-- Account holders read their own rows whole (a select * keeps working): times and counts of their
-- own kiosk's calls, no address.
GRANT ALL ON TABLE public.kiosk_sightings TO service_role;

GRANT SELECT(license_key) ON TABLE public.kiosk_sightings TO authenticated;

GRANT SELECT(last_seen_at) ON TABLE public.kiosk_sightings TO authenticated;

GRANT SELECT(last_seen_ip) ON TABLE public.kiosk_sightings TO authenticated;

GRANT SELECT(schedule_version_held) ON TABLE public.kiosk_sightings TO authenticated;

GRANT SELECT(system_name_written) ON TABLE public.kiosk_sightings TO authenticated;

GRANT SELECT(system_name_changes) ON TABLE public.kiosk_sightings TO authenticated;

GRANT SELECT(system_name_changes_since) ON TABLE public.kiosk_sightings TO authenticated;

GRANT SELECT(polls) ON TABLE public.kiosk_sightings TO authenticated;

-- 09_kiosk_alerts.sql

REVOKE ALL ON FUNCTION cadence.kiosk_alert_pass(p_now timestamp with time zone) FROM PUBLIC;
GRANT ALL ON FUNCTION cadence.kiosk_alert_pass(p_now timestamp with time zone) TO service_role;

REVOKE ALL ON FUNCTION cadence.license_key_offline_after(p_key text) FROM PUBLIC;
GRANT ALL ON FUNCTION cadence.license_key_offline_after(p_key text) TO authenticated;
GRANT ALL ON FUNCTION cadence.license_key_offline_after(p_key text) TO service_role;

REVOKE ALL ON FUNCTION cadence.queue_kiosk_alert_email(p_dark uuid[], p_back uuid[], p_recipient text, p_subject text, p_text text, p_html text, p_now timestamp with time zone) FROM PUBLIC;
GRANT ALL ON FUNCTION cadence.queue_kiosk_alert_email(p_dark uuid[], p_back uuid[], p_recipient text, p_subject text, p_text text, p_html text, p_now timestamp with time zone) TO service_role;

REVOKE ALL ON FUNCTION cadence.unannounced_kiosk_alerts() FROM PUBLIC;
GRANT ALL ON FUNCTION cadence.unannounced_kiosk_alerts() TO service_role;

-- Account holders: the outages of their own keys (not which e-mails announced them), and the uptime.
GRANT ALL ON TABLE public.kiosk_outages TO service_role;

GRANT SELECT(id) ON TABLE public.kiosk_outages TO authenticated;

GRANT SELECT(license_key) ON TABLE public.kiosk_outages TO authenticated;

GRANT SELECT(dark_since) ON TABLE public.kiosk_outages TO authenticated;

GRANT SELECT(last_seen_at) ON TABLE public.kiosk_outages TO authenticated;

GRANT SELECT(alerted_at) ON TABLE public.kiosk_outages TO authenticated;

GRANT SELECT(back_at) ON TABLE public.kiosk_outages TO authenticated;

GRANT SELECT(recovered_at) ON TABLE public.kiosk_outages TO authenticated;

GRANT ALL ON TABLE public.kiosk_uptime TO service_role;
GRANT SELECT ON TABLE public.kiosk_uptime TO authenticated;

GRANT ALL ON TABLE public.kiosk_watch TO service_role;

-- 10_seat_checks.sql

REVOKE ALL ON FUNCTION cadence.queue_seat_digest(p_since timestamp with time zone, p_subject text, p_text text, p_html text, p_now timestamp with time zone) FROM PUBLIC;
GRANT ALL ON FUNCTION cadence.queue_seat_digest(p_since timestamp with time zone, p_subject text, p_text text, p_html text, p_now timestamp with time zone) TO service_role;

REVOKE ALL ON FUNCTION cadence.seat_check_pass(p_now timestamp with time zone) FROM PUBLIC;
GRANT ALL ON FUNCTION cadence.seat_check_pass(p_now timestamp with time zone) TO service_role;

REVOKE ALL ON FUNCTION cadence.seat_digest(p_now timestamp with time zone) FROM PUBLIC;
GRANT ALL ON FUNCTION cadence.seat_digest(p_now timestamp with time zone) TO service_role;

REVOKE ALL ON FUNCTION cadence.settle_polls(p_polls public.kiosk_polls, p_firsts timestamp with time zone[], p_lasts timestamp with time zone[], p_starts boolean[], p_gap interval, p_at timestamp with time zone, p_networks integer[]) FROM PUBLIC;
GRANT ALL ON FUNCTION cadence.settle_polls(p_polls public.kiosk_polls, p_firsts timestamp with time zone[], p_lasts timestamp with time zone[], p_starts boolean[], p_gap interval, p_at timestamp with time zone, p_networks integer[]) TO service_role;

-- Account holders: their own keys' flags and the counts on their sightings (granted with the rest of
-- the row, so a holder's select * keeps working), not the networks (which name whoever copied).
GRANT ALL ON TABLE public.seat_suspicions TO service_role;

GRANT SELECT(license_key) ON TABLE public.seat_suspicions TO authenticated;

GRANT SELECT(rules) ON TABLE public.seat_suspicions TO authenticated;

GRANT SELECT(first_flagged_at) ON TABLE public.seat_suspicions TO authenticated;

GRANT SELECT(last_flagged_at) ON TABLE public.seat_suspicions TO authenticated;

GRANT ALL ON TABLE public.seat_watch TO service_role;

GRANT ALL ON TABLE public.suspected_copies TO service_role;

-- 11_kiosk_status.sql

REVOKE ALL ON FUNCTION cadence.forget_deleted_key_sightings() FROM PUBLIC;

REVOKE ALL ON FUNCTION cadence.record_kiosk_polls(p_keys text[], p_seen_at timestamp with time zone[], p_ips inet[], p_versions text[], p_first_names text[], p_last_names text[], p_name_changes integer[], p_poll_gap interval, p_burst_from integer[], p_burst_count integer[], p_burst_firsts timestamp with time zone[], p_burst_lasts timestamp with time zone[], p_burst_starts boolean[], p_burst_networks integer[]) FROM PUBLIC;
GRANT ALL ON FUNCTION cadence.record_kiosk_polls(p_keys text[], p_seen_at timestamp with time zone[], p_ips inet[], p_versions text[], p_first_names text[], p_last_names text[], p_name_changes integer[], p_poll_gap interval, p_burst_from integer[], p_burst_count integer[], p_burst_firsts timestamp with time zone[], p_burst_lasts timestamp with time zone[], p_burst_starts boolean[], p_burst_networks integer[]) TO service_role;

REVOKE ALL ON FUNCTION cadence.record_kiosk_sightings(p_keys text[], p_seen_at timestamp with time zone[], p_ips inet[], p_versions text[], p_calls integer[], p_first_names text[], p_last_names text[], p_name_changes integer[], p_net_keys text[], p_networks cidr[], p_net_first timestamp with time zone[], p_net_last timestamp with time zone[], p_net_calls integer[], p_net_returns integer[]) FROM PUBLIC;
GRANT ALL ON FUNCTION cadence.record_kiosk_sightings(p_keys text[], p_seen_at timestamp with time zone[], p_ips inet[], p_versions text[], p_calls integer[], p_first_names text[], p_last_names text[], p_name_changes integer[], p_net_keys text[], p_networks cidr[], p_net_first timestamp with time zone[], p_net_last timestamp with time zone[], p_net_calls integer[], p_net_returns integer[]) TO service_role;

-- Account holders: the view, and the sightings of their own keys.
GRANT ALL ON TABLE public.kiosk_status TO service_role;
GRANT SELECT ON TABLE public.kiosk_status TO authenticated;

-- 12_venues.sql

-- Not even service_role reads or writes the registrations directly: the API reads them through
-- cadence.venue_allowances, and staff edit them as the owner.
REVOKE ALL ON TABLE public.venue_addresses, public.venue_address_changes FROM service_role;
REVOKE ALL ON SEQUENCE public.venue_address_changes_id_seq FROM service_role;

REVOKE ALL ON FUNCTION cadence.check_venue_address() FROM PUBLIC;

REVOKE ALL ON FUNCTION cadence.check_venue_address_account() FROM PUBLIC;

REVOKE ALL ON FUNCTION cadence.record_venue_address_change() FROM PUBLIC;

REVOKE ALL ON FUNCTION cadence.venue_allowances(p_most integer) FROM PUBLIC;
GRANT ALL ON FUNCTION cadence.venue_allowances(p_most integer) TO service_role;

-- Account holders: their own account's registrations. The account and the audit columns are not
-- theirs to write; the trigger sets the audit columns, and account_id is checked by the policies.
GRANT DELETE ON TABLE public.venue_addresses TO authenticated;

GRANT SELECT(id) ON TABLE public.venue_addresses TO authenticated;

GRANT SELECT(account_id),INSERT(account_id) ON TABLE public.venue_addresses TO authenticated;

GRANT SELECT(network),INSERT(network),UPDATE(network) ON TABLE public.venue_addresses TO authenticated;

GRANT SELECT(kiosks),INSERT(kiosks),UPDATE(kiosks) ON TABLE public.venue_addresses TO authenticated;

GRANT SELECT(created_at) ON TABLE public.venue_addresses TO authenticated;

GRANT SELECT(created_by) ON TABLE public.venue_addresses TO authenticated;

GRANT SELECT(updated_at) ON TABLE public.venue_addresses TO authenticated;

GRANT SELECT(updated_by) ON TABLE public.venue_addresses TO authenticated;

-- 13_onboarding.sql

REVOKE ALL ON FUNCTION cadence.claim_onboarding_key(p_source text, p_id text, p_body_sha256 bytea, p_now timestamp with time zone, p_lease_seconds integer) FROM PUBLIC;
GRANT ALL ON FUNCTION cadence.claim_onboarding_key(p_source text, p_id text, p_body_sha256 bytea, p_now timestamp with time zone, p_lease_seconds integer) TO service_role;

REVOKE ALL ON FUNCTION cadence.onboard(p_email text, p_name text, p_key text, p_subject text, p_text text, p_html text, p_now timestamp with time zone) FROM PUBLIC;
GRANT ALL ON FUNCTION cadence.onboard(p_email text, p_name text, p_key text, p_subject text, p_text text, p_html text, p_now timestamp with time zone) TO service_role;

REVOKE ALL ON FUNCTION cadence.onboard_once(p_source text, p_id text, p_claim_token uuid, p_email text, p_name text, p_key text, p_subject text, p_text text, p_html text, p_now timestamp with time zone, p_answer_template text) FROM PUBLIC;
GRANT ALL ON FUNCTION cadence.onboard_once(p_source text, p_id text, p_claim_token uuid, p_email text, p_name text, p_key text, p_subject text, p_text text, p_html text, p_now timestamp with time zone, p_answer_template text) TO service_role;

REVOKE ALL ON FUNCTION cadence.purge_onboarding_keys(p_now timestamp with time zone, p_limit integer) FROM PUBLIC;
GRANT ALL ON FUNCTION cadence.purge_onboarding_keys(p_now timestamp with time zone, p_limit integer) TO service_role;

REVOKE ALL ON FUNCTION cadence.record_webhook_nonce(p_nonce text, p_now timestamp with time zone) FROM PUBLIC;
GRANT ALL ON FUNCTION cadence.record_webhook_nonce(p_nonce text, p_now timestamp with time zone) TO service_role;

REVOKE ALL ON FUNCTION cadence.release_onboarding_key(p_source text, p_id text, p_claim_token uuid) FROM PUBLIC;
GRANT ALL ON FUNCTION cadence.release_onboarding_key(p_source text, p_id text, p_claim_token uuid) TO service_role;

GRANT ALL ON TABLE public.onboarding_idempotency_keys TO service_role;

GRANT ALL ON TABLE public.webhook_nonces TO service_role;

-- 13_onboarding_lifecycle.sql: the API (and staff, as postgres) only; never an account holder.

REVOKE ALL ON FUNCTION cadence.change_account_email(p_email text, p_new_email text) FROM PUBLIC;
GRANT ALL ON FUNCTION cadence.change_account_email(p_email text, p_new_email text) TO service_role;

REVOKE ALL ON FUNCTION cadence.license_email_recipient(p_key text) FROM PUBLIC;
GRANT ALL ON FUNCTION cadence.license_email_recipient(p_key text) TO service_role;

REVOKE ALL ON FUNCTION cadence.lifecycle_change(p_call text, p_args jsonb, p_now timestamp with time zone) FROM PUBLIC;
GRANT ALL ON FUNCTION cadence.lifecycle_change(p_call text, p_args jsonb, p_now timestamp with time zone) TO service_role;

REVOKE ALL ON FUNCTION cadence.lifecycle_change_once(p_source text, p_id text, p_claim_token uuid, p_call text, p_args jsonb, p_now timestamp with time zone, p_answers jsonb) FROM PUBLIC;
GRANT ALL ON FUNCTION cadence.lifecycle_change_once(p_source text, p_id text, p_claim_token uuid, p_call text, p_args jsonb, p_now timestamp with time zone, p_answers jsonb) TO service_role;

REVOKE ALL ON FUNCTION cadence.move_license_key(p_key text, p_email text) FROM PUBLIC;
GRANT ALL ON FUNCTION cadence.move_license_key(p_key text, p_email text) TO service_role;

REVOKE ALL ON FUNCTION cadence.queue_license_email(p_key text, p_recipient text, p_subject text, p_text text, p_html text, p_now timestamp with time zone) FROM PUBLIC;
GRANT ALL ON FUNCTION cadence.queue_license_email(p_key text, p_recipient text, p_subject text, p_text text, p_html text, p_now timestamp with time zone) TO service_role;

REVOKE ALL ON FUNCTION cadence.reinstate_license_key(p_key text) FROM PUBLIC;
GRANT ALL ON FUNCTION cadence.reinstate_license_key(p_key text) TO service_role;

REVOKE ALL ON FUNCTION cadence.suspend_license_key(p_key text) FROM PUBLIC;
GRANT ALL ON FUNCTION cadence.suspend_license_key(p_key text) TO service_role;

-- 14_auth_users.sql

REVOKE ALL ON FUNCTION cadence.claim_accounts_due_for_auth(p_now timestamp with time zone, p_lease_seconds integer, p_limit integer, p_id uuid) FROM PUBLIC;
GRANT ALL ON FUNCTION cadence.claim_accounts_due_for_auth(p_now timestamp with time zone, p_lease_seconds integer, p_limit integer, p_id uuid) TO service_role;

REVOKE ALL ON FUNCTION cadence.link_auth_user(p_account_id uuid, p_auth_user_id uuid, p_email text) FROM PUBLIC;
GRANT ALL ON FUNCTION cadence.link_auth_user(p_account_id uuid, p_auth_user_id uuid, p_email text) TO service_role;

REVOKE ALL ON FUNCTION cadence.mark_auth_link_failed(p_account_id uuid, p_error text, p_retry_at timestamp with time zone) FROM PUBLIC;
GRANT ALL ON FUNCTION cadence.mark_auth_link_failed(p_account_id uuid, p_error text, p_retry_at timestamp with time zone) TO service_role;

-- 14_events.sql: written by triggers only. Account holders read their own account's events (the
-- policy in 15_account_holders.sql), never the account a key left (previous_account_id).

REVOKE ALL ON FUNCTION cadence.key_event_data(p_key public.license_keys) FROM PUBLIC;

REVOKE ALL ON FUNCTION cadence.account_event_data(p_account public.accounts) FROM PUBLIC;

REVOKE ALL ON FUNCTION cadence.key_event_types(p_old public.license_keys, p_new public.license_keys) FROM PUBLIC;

REVOKE ALL ON FUNCTION cadence.record_key_changes() FROM PUBLIC;

REVOKE ALL ON FUNCTION cadence.record_updated_keys() FROM PUBLIC;

REVOKE ALL ON FUNCTION cadence.number_new_key() FROM PUBLIC;

REVOKE ALL ON FUNCTION cadence.record_new_keys() FROM PUBLIC;

REVOKE ALL ON FUNCTION cadence.record_deleted_keys() FROM PUBLIC;

REVOKE ALL ON FUNCTION cadence.record_account_changes() FROM PUBLIC;

REVOKE ALL ON FUNCTION cadence.record_new_accounts() FROM PUBLIC;

REVOKE ALL ON FUNCTION cadence.record_deleted_accounts() FROM PUBLIC;

REVOKE ALL ON FUNCTION cadence.record_key_facts(p_type text, p_keys text[], p_data jsonb[]) FROM PUBLIC;

REVOKE ALL ON FUNCTION cadence.record_outage_events() FROM PUBLIC;

REVOKE ALL ON FUNCTION cadence.record_suspicion_events() FROM PUBLIC;

GRANT ALL ON TABLE public.events TO service_role;

GRANT ALL ON SEQUENCE public.events_position_seq TO service_role;

GRANT SELECT(id) ON TABLE public.events TO authenticated;

GRANT SELECT("position") ON TABLE public.events TO authenticated;

GRANT SELECT(type) ON TABLE public.events TO authenticated;

GRANT SELECT(license_key) ON TABLE public.events TO authenticated;

GRANT SELECT(account_id) ON TABLE public.events TO authenticated;

GRANT SELECT(sequence) ON TABLE public.events TO authenticated;

GRANT SELECT(occurred_at) ON TABLE public.events TO authenticated;

GRANT SELECT(data) ON TABLE public.events TO authenticated;

-- 14_events_delivery.sql: the API delivers (service_role); staff configure endpoints, rotate secrets,
-- enable and replay as the owner. Account holders hold nothing here: no endpoint, secret or delivery.

REVOKE ALL ON FUNCTION cadence.endpoint_owes_events(p_endpoint uuid) FROM PUBLIC;
GRANT ALL ON FUNCTION cadence.endpoint_owes_events(p_endpoint uuid) TO service_role;

REVOKE ALL ON FUNCTION cadence.events_are_due() FROM PUBLIC;
GRANT ALL ON FUNCTION cadence.events_are_due() TO service_role;

REVOKE ALL ON FUNCTION cadence.claim_event_batch(p_now timestamp with time zone, p_lease_seconds integer) FROM PUBLIC;
GRANT ALL ON FUNCTION cadence.claim_event_batch(p_now timestamp with time zone, p_lease_seconds integer) TO service_role;

REVOKE ALL ON FUNCTION cadence.mark_event_batch_delivered(p_batch uuid, p_status integer, p_now timestamp with time zone) FROM PUBLIC;
GRANT ALL ON FUNCTION cadence.mark_event_batch_delivered(p_batch uuid, p_status integer, p_now timestamp with time zone) TO service_role;

REVOKE ALL ON FUNCTION cadence.mark_event_batch_failed(p_batch uuid, p_status integer, p_error text, p_now timestamp with time zone, p_retry_at timestamp with time zone) FROM PUBLIC;
GRANT ALL ON FUNCTION cadence.mark_event_batch_failed(p_batch uuid, p_status integer, p_error text, p_now timestamp with time zone, p_retry_at timestamp with time zone) TO service_role;

REVOKE ALL ON FUNCTION cadence.disable_event_endpoint(p_endpoint uuid, p_reason text, p_now timestamp with time zone, p_subject text, p_text text, p_html text) FROM PUBLIC;
GRANT ALL ON FUNCTION cadence.disable_event_endpoint(p_endpoint uuid, p_reason text, p_now timestamp with time zone, p_subject text, p_text text, p_html text) TO service_role;

REVOKE ALL ON FUNCTION cadence.new_webhook_secret() FROM PUBLIC;

REVOKE ALL ON FUNCTION cadence.queue_event_deliveries() FROM PUBLIC;

REVOKE ALL ON FUNCTION cadence.event_message(p_event public.events) FROM PUBLIC;

REVOKE ALL ON FUNCTION cadence.enable_event_endpoint(p_endpoint uuid) FROM PUBLIC;

REVOKE ALL ON FUNCTION cadence.rotate_event_endpoint_secret(p_endpoint uuid, p_overlap interval) FROM PUBLIC;

REVOKE ALL ON FUNCTION cadence.replay_event(p_event uuid, p_endpoint uuid) FROM PUBLIC;

GRANT ALL ON TABLE public.event_endpoints TO service_role;

GRANT ALL ON TABLE public.event_batches TO service_role;

GRANT ALL ON TABLE public.event_deliveries TO service_role;

GRANT ALL ON SEQUENCE public.event_deliveries_id_seq TO service_role;

GRANT ALL ON TABLE public.event_delivery_log TO service_role;

-- 15_account_holders.sql

-- A policy's function calls run as the querying role: account holders execute these, and only these.
REVOKE ALL ON FUNCTION cadence.holder_account_id() FROM PUBLIC;
GRANT ALL ON FUNCTION cadence.holder_account_id() TO authenticated;

REVOKE ALL ON FUNCTION cadence.holder_block_ids() FROM PUBLIC;
GRANT ALL ON FUNCTION cadence.holder_block_ids() TO authenticated;

REVOKE ALL ON FUNCTION cadence.holder_license_keys() FROM PUBLIC;
GRANT ALL ON FUNCTION cadence.holder_license_keys() TO authenticated;

REVOKE ALL ON FUNCTION cadence.holder_owns_key(p_key text) FROM PUBLIC;
GRANT ALL ON FUNCTION cadence.holder_owns_key(p_key text) TO authenticated;

REVOKE ALL ON FUNCTION cadence.holder_proclamation_ids() FROM PUBLIC;
GRANT ALL ON FUNCTION cadence.holder_proclamation_ids() TO authenticated;

REVOKE ALL ON FUNCTION cadence.holder_schedule_ids() FROM PUBLIC;
GRANT ALL ON FUNCTION cadence.holder_schedule_ids() TO authenticated;
