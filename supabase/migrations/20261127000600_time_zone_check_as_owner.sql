-- An account holder sets a time zone through the Data API (policies on accounts and license_keys),
-- and the trigger that checks it looked its zone list up by name as the holder, who has no USAGE
-- on the schema cadence: "permission denied for schema cadence", except on a connection where the
-- trigger had already run as a role with USAGE (PL/pgSQL keeps the plan it made then). The check
-- runs as its owner, as every other trigger that holders fire and that calls cadence does.
alter function cadence.check_time_zone() security definer;
