-- Import license keys into an account: paste the keys, one per line, between the two $keys$ marks.
-- Each becomes a key of the account (owner link and stored e-mail), active, reading the account's
-- schedule and proclamations from its kiosk's next call. One statement, whatever the number: 100,000
-- keys import in about a second (npm run bench -- --edits), since an issued key changes no stored
-- schedule.
--
-- Replace the values marked "replace" (as written, it imports two keys into demo@example.com).
-- The result shows how many keys were imported, and how many were skipped because they exist
-- already (in any account: move those with move-key-to-account.sql). A malformed key stops the
-- import at license_key_format and imports nothing; an unknown e-mail imports nothing (0 and 0).

with pasted as (
  select distinct pg_catalog.upper(pg_catalog.btrim(line)) as key
    from pg_catalog.regexp_split_to_table($keys$
IMPT-0000-0000-0001
IMPT-0000-0000-0002
$keys$, '\r?\n') as line                                -- replace: the keys, one per line
   where pg_catalog.btrim(line) <> ''
), account as (
  select a.id, a.email from public.accounts as a
   where pg_catalog.lower(a.email) = pg_catalog.lower('demo@example.com')   -- replace: the account's e-mail
), imported as (
  insert into public.license_keys (key, account_id, email)
  select p.key, a.id, a.email from pasted as p cross join account as a
      on conflict (key) do nothing
  returning key
)
select (select count(*) from imported) as imported,
       (select count(*) from pasted) * (select count(*) from account) - (select count(*) from imported) as skipped;
