-- Events recorded per row plan their helpers once (issue 61). An e-mail change that moved 50,000
-- keys to an account took 13.4 s with events (1.6 s before them), past Supabase's 8 s statement
-- timeout: 9.9 s of it in the key trigger, because its helpers were SQL functions with a pinned
-- search_path, never inlined, so each row's INSERT parsed and planned them again. As PL/pgSQL they
-- are planned once per session; the trigger took 4.6 s. Same names, arguments and results.

CREATE OR REPLACE FUNCTION cadence.key_event_data(p_key public.license_keys) RETURNS jsonb
    LANGUAGE plpgsql IMMUTABLE
    SET search_path TO ''
    AS $$
begin
  return pg_catalog.jsonb_build_object(
    'license_key', p_key.key, 'account_id', p_key.belongs_to, 'active', p_key.active, 'system_name', p_key.system_name,
    'email', p_key.email, 'time_zone', p_key.time_zone, 'alerts_muted', p_key.alerts_muted);
end
$$;

CREATE OR REPLACE FUNCTION cadence.account_event_data(p_account public.accounts) RETURNS jsonb
    LANGUAGE plpgsql IMMUTABLE
    SET search_path TO ''
    AS $$
begin
  return pg_catalog.jsonb_build_object(
    'account_id', p_account.id, 'email', p_account.email, 'display_name', p_account.display_name,
    'time_zone', p_account.time_zone, 'offline_alert_after_seconds', extract(epoch from p_account.offline_alert_after)::integer);
end
$$;

CREATE OR REPLACE FUNCTION cadence.key_event_types(p_old public.license_keys, p_new public.license_keys) RETURNS text[]
    LANGUAGE plpgsql IMMUTABLE
    SET search_path TO ''
    AS $$
begin
  return pg_catalog.array_remove(array[
    case when p_old.belongs_to is distinct from p_new.belongs_to then 'license_key.moved' end,
    case when p_old.active and not p_new.active then 'license_key.suspended'
         when not p_old.active and p_new.active then 'license_key.reinstated' end,
    case when p_old.system_name is distinct from p_new.system_name then 'license_key.system_name_changed' end,
    case when p_old.key <> p_new.key or p_old.time_zone is distinct from p_new.time_zone or p_old.alerts_muted <> p_new.alerts_muted
           or (p_old.email <> p_new.email and p_old.belongs_to is not distinct from p_new.belongs_to)
         then 'license_key.updated' end,
    case when p_old.last_validated_at is null and p_new.last_validated_at is not null then 'license_key.first_validated' end
  ], null);
end
$$;
