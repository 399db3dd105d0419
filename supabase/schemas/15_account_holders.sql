-- Who an account holder is, for row-level security: a Supabase Auth user whose id is an account's
-- auth_user_id. Every policy lives here, beside the helpers each one calls (policies name the rows;
-- 16_grants.sql names the columns). Each helper answers once per statement: policies call them as
-- `(select cadence.holder_...())`, which Postgres runs once as an init plan. They are SECURITY
-- DEFINER because what they read is not granted to account holders; they take no argument (but
-- holder_owns_key) and answer only about the caller.

CREATE FUNCTION cadence.holder_account_id() RETURNS uuid
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO ''
    AS $$
begin
  return (select a.id from public.accounts as a where a.auth_user_id = (select auth.uid()));
end
$$;

COMMENT ON FUNCTION cadence.holder_account_id() IS 'The account of the signed-in Supabase Auth user (accounts.auth_user_id = auth.uid()), or null. For row-level security policies.';

CREATE FUNCTION cadence.holder_schedule_ids() RETURNS uuid[]
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO ''
    AS $$
begin
  -- Key schedules are few beside keys: find them first, then whether each key is the holder's.
  return array(
    select s.id from public.schedules as s where s.account_id = (select cadence.holder_account_id())
    union all
    select s.id
      from public.schedules as s
      join public.license_keys as k on k.key = s.license_key
     where k.belongs_to = (select cadence.holder_account_id()));
end
$$;

COMMENT ON FUNCTION cadence.holder_schedule_ids() IS 'The schedules of the signed-in account holder''s account and of its keys; empty for anyone else. For row-level security policies.';

CREATE FUNCTION cadence.holder_block_ids() RETURNS uuid[]
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO ''
    AS $$
begin
  return array(select b.id from public.schedule_blocks as b where b.schedule_id = any ((select cadence.holder_schedule_ids())::uuid[]));
end
$$;

COMMENT ON FUNCTION cadence.holder_block_ids() IS 'The blocks of the signed-in account holder''s schedules; empty for anyone else. For row-level security policies.';

CREATE FUNCTION cadence.holder_license_keys() RETURNS text[]
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO ''
    AS $$
begin
  return array(
    select k.key from public.license_keys as k where k.belongs_to = (select cadence.holder_account_id()));
end
$$;

COMMENT ON FUNCTION cadence.holder_license_keys() IS 'The license keys that belong to the signed-in account holder''s account (license_keys.belongs_to); empty for anyone else. For row-level security policies.';

CREATE FUNCTION cadence.holder_owns_key(p_key text) RETURNS boolean
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO ''
    AS $$
begin
  return exists (
    select from public.license_keys as k
     where k.key = p_key and k.belongs_to = (select cadence.holder_account_id()));
end
$$;

COMMENT ON FUNCTION cadence.holder_owns_key(p_key text) IS 'Whether a license key belongs to the signed-in account holder''s account (license_keys.belongs_to); false for anyone else. For row-level security policies.';

CREATE FUNCTION cadence.holder_proclamation_ids() RETURNS uuid[]
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO ''
    AS $$
begin
  -- Entitled and served: a proclamation whose frequency has no canonical id is never served (the
  -- join cadence.proclamations_json makes), so an account holder never reads it or plays it either.
  return array(
    select pr.id
    from public.account_proclamations as ap
    join public.proclamations as pr on pr.id = ap.proclamation_id
    join public.frequencies as f on f.id = pr.frequency_id
    join cadence.canonical_frequencies() as c on c.hz = f.hz
    where ap.account_id = (select cadence.holder_account_id()));
end
$$;

COMMENT ON FUNCTION cadence.holder_proclamation_ids() IS 'The proclamations the signed-in account holder''s account is entitled to and that are served (canonical frequency); empty for anyone else. For row-level security policies.';

CREATE POLICY "Account holders can add blocks to their own schedules" ON public.schedule_blocks FOR INSERT TO authenticated WITH CHECK ((schedule_id = ANY (( SELECT cadence.holder_schedule_ids() AS holder_schedule_ids)::uuid[])));

CREATE POLICY "Account holders can add entitled proclamations to their blocks" ON public.schedule_block_proclamations FOR INSERT TO authenticated WITH CHECK (((block_id = ANY (( SELECT cadence.holder_block_ids() AS holder_block_ids)::uuid[])) AND (proclamation_id = ANY (( SELECT cadence.holder_proclamation_ids() AS holder_proclamation_ids)::uuid[]))));

CREATE POLICY "Account holders can change the alert settings of their keys" ON public.license_keys FOR UPDATE TO authenticated USING ((key = ANY (( SELECT cadence.holder_license_keys() AS holder_license_keys)::text[]))) WITH CHECK ((key = ANY (( SELECT cadence.holder_license_keys() AS holder_license_keys)::text[])));

CREATE POLICY "Account holders can change the blocks of their own schedules" ON public.schedule_blocks FOR UPDATE TO authenticated USING ((schedule_id = ANY (( SELECT cadence.holder_schedule_ids() AS holder_schedule_ids)::uuid[]))) WITH CHECK ((schedule_id = ANY (( SELECT cadence.holder_schedule_ids() AS holder_schedule_ids)::uuid[])));

CREATE POLICY "Account holders can change their own account's alert settings" ON public.accounts FOR UPDATE TO authenticated USING ((auth_user_id = ( SELECT auth.uid() AS uid))) WITH CHECK ((auth_user_id = ( SELECT auth.uid() AS uid)));

CREATE POLICY "Account holders can change their own schedules" ON public.schedules FOR UPDATE TO authenticated USING (((account_id = ( SELECT cadence.holder_account_id() AS holder_account_id)) OR cadence.holder_owns_key(license_key))) WITH CHECK (((account_id = ( SELECT cadence.holder_account_id() AS holder_account_id)) OR cadence.holder_owns_key(license_key)));

CREATE POLICY "Account holders can change their own venue addresses" ON public.venue_addresses FOR UPDATE TO authenticated USING ((account_id = ( SELECT cadence.holder_account_id() AS holder_account_id))) WITH CHECK ((account_id = ( SELECT cadence.holder_account_id() AS holder_account_id)));

CREATE POLICY "Account holders can change what their blocks play, if entitled" ON public.schedule_block_proclamations FOR UPDATE TO authenticated USING ((block_id = ANY (( SELECT cadence.holder_block_ids() AS holder_block_ids)::uuid[]))) WITH CHECK (((block_id = ANY (( SELECT cadence.holder_block_ids() AS holder_block_ids)::uuid[])) AND (proclamation_id = ANY (( SELECT cadence.holder_proclamation_ids() AS holder_proclamation_ids)::uuid[]))));

CREATE POLICY "Account holders can create schedules for their account and keys" ON public.schedules FOR INSERT TO authenticated WITH CHECK (((account_id = ( SELECT cadence.holder_account_id() AS holder_account_id)) OR cadence.holder_owns_key(license_key)));

CREATE POLICY "Account holders can delete the blocks of their own schedules" ON public.schedule_blocks FOR DELETE TO authenticated USING ((schedule_id = ANY (( SELECT cadence.holder_schedule_ids() AS holder_schedule_ids)::uuid[])));

CREATE POLICY "Account holders can delete their own schedules" ON public.schedules FOR DELETE TO authenticated USING (((account_id = ( SELECT cadence.holder_account_id() AS holder_account_id)) OR cadence.holder_owns_key(license_key)));

CREATE POLICY "Account holders can delete their own venue addresses" ON public.venue_addresses FOR DELETE TO authenticated USING ((account_id = ( SELECT cadence.holder_account_id() AS holder_account_id)));

CREATE POLICY "Account holders can read categories" ON public.categories FOR SELECT TO authenticated USING ((( SELECT cadence.holder_account_id() AS holder_account_id) IS NOT NULL));

CREATE POLICY "Account holders can read groups" ON public.groups FOR SELECT TO authenticated USING ((( SELECT cadence.holder_account_id() AS holder_account_id) IS NOT NULL));

CREATE POLICY "Account holders can read stored colour palettes" ON public.color_palettes FOR SELECT TO authenticated USING ((( SELECT cadence.holder_account_id() AS holder_account_id) IS NOT NULL));

CREATE POLICY "Account holders can read stored frequencies" ON public.frequencies FOR SELECT TO authenticated USING ((( SELECT cadence.holder_account_id() AS holder_account_id) IS NOT NULL));

CREATE POLICY "Account holders can read the blocks of their own schedules" ON public.schedule_blocks FOR SELECT TO authenticated USING ((schedule_id = ANY (( SELECT cadence.holder_schedule_ids() AS holder_schedule_ids)::uuid[])));

CREATE POLICY "Account holders can read the outages of their own keys" ON public.kiosk_outages FOR SELECT TO authenticated USING ((license_key = ANY (( SELECT cadence.holder_license_keys() AS holder_license_keys)::text[])));

CREATE POLICY "Account holders can read the proclamations they are entitled to" ON public.proclamations FOR SELECT TO authenticated USING ((id = ANY (( SELECT cadence.holder_proclamation_ids() AS holder_proclamation_ids)::uuid[])));

CREATE POLICY "Account holders can read the seat flags of their own keys" ON public.seat_suspicions FOR SELECT TO authenticated USING ((license_key = ANY (( SELECT cadence.holder_license_keys() AS holder_license_keys)::text[])));

CREATE POLICY "Account holders can read the sightings of their own keys" ON public.kiosk_sightings FOR SELECT TO authenticated USING ((license_key = ANY (( SELECT cadence.holder_license_keys() AS holder_license_keys)::text[])));

CREATE POLICY "Account holders can read their own account" ON public.accounts FOR SELECT TO authenticated USING ((auth_user_id = ( SELECT auth.uid() AS uid)));

CREATE POLICY "Account holders can read their own account's events" ON public.events FOR SELECT TO authenticated USING ((account_id = ( SELECT cadence.holder_account_id() AS holder_account_id)));

CREATE POLICY "Account holders can read their own license keys" ON public.license_keys FOR SELECT TO authenticated USING ((key = ANY (( SELECT cadence.holder_license_keys() AS holder_license_keys)::text[])));

CREATE POLICY "Account holders can read their own schedules" ON public.schedules FOR SELECT TO authenticated USING (((account_id = ( SELECT cadence.holder_account_id() AS holder_account_id)) OR cadence.holder_owns_key(license_key)));

CREATE POLICY "Account holders can read their own venue addresses" ON public.venue_addresses FOR SELECT TO authenticated USING ((account_id = ( SELECT cadence.holder_account_id() AS holder_account_id)));

CREATE POLICY "Account holders can read what their blocks play" ON public.schedule_block_proclamations FOR SELECT TO authenticated USING ((block_id = ANY (( SELECT cadence.holder_block_ids() AS holder_block_ids)::uuid[])));

CREATE POLICY "Account holders can register venue addresses for their account" ON public.venue_addresses FOR INSERT TO authenticated WITH CHECK ((account_id = ( SELECT cadence.holder_account_id() AS holder_account_id)));

CREATE POLICY "Account holders can remove proclamations from their blocks" ON public.schedule_block_proclamations FOR DELETE TO authenticated USING ((block_id = ANY (( SELECT cadence.holder_block_ids() AS holder_block_ids)::uuid[])));
