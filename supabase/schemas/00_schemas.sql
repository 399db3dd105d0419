-- The schemas. Tables live in `public`, where Supabase's Data API reaches them under the grants and
-- policies of 15_account_holders.sql and 16_grants.sql; functions live in `cadence`, which the Data
-- API does not expose, so nobody calls them through /rpc.
--
-- Files here are applied in lexical order, each after those it depends on; the current state of the
-- database, proven equal to supabase/migrations by test/database/schema-drift.test.ts.

-- Tables in `public` are edited by staff only: the API roles get nothing by default. Set before any
-- table exists, so that no table is ever created granted to anon or authenticated (Supabase grants
-- them everything on new objects in `public`); what they may do is granted in 16_grants.sql.
alter default privileges in schema public revoke all on tables from anon, authenticated;
alter default privileges in schema public revoke all on sequences from anon, authenticated;
alter default privileges in schema public revoke execute on functions from public, anon, authenticated;

CREATE SCHEMA cadence;

COMMENT ON SCHEMA cadence IS 'Cadence internals: functions the API calls. Not exposed through PostgREST.';
