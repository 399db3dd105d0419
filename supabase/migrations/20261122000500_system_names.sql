-- System names are unique per account, compared case-insensitively (spec section 2, "System name"),
-- so two kiosks racing for one name can never both win, and a dashboard edit cannot break the rule.
--
-- An index cannot look up another table, so it groups keys by the account they belong to as far as
-- the row itself tells: the owner link when there is one, otherwise the stored e-mail, lower-cased
-- (a key with no owner link belongs to the account of its stored e-mail, as cadence.key_belongs_to
-- says). The one case a row cannot tell, an unlinked key and a linked key of the same account, is
-- covered by cadence.set_system_name, which checks every key of the account under a per-account lock.
create unique index system_name_is_unique_per_account
  on public.license_keys (coalesce(account_id::text, lower(email)), lower(system_name))
  where system_name is not null;
comment on index public.system_name_is_unique_per_account is
  'A system name is used at most once per account (owner link, else stored e-mail), regardless of case.';
