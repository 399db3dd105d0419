-- An account's e-mail holds no control character (a BEL, U+0007) and no format character (U+202E
-- and the other bidi controls, zero-width characters): no mailbox needs one, and they make one
-- address display as another. The API refuses such an address like any malformed one
-- (functions/app/email.ts); this holds the rule for every other writer. The format characters are
-- those of cadence.system_name_form (Unicode Cf).
alter table public.accounts
  add constraint account_email_has_no_invisible_characters check (
    email !~ '[[:cntrl:]\u0080-\u009f\u00ad\u0600-\u0605\u061c\u06dd\u070f\u0890-\u0891\u08e2\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u206f\ufeff\ufff9-\ufffb\U000110bd\U000110cd\U00013430-\U0001343f\U0001bca0-\U0001bca3\U0001d173-\U0001d17a\U000e0001\U000e0020-\U000e007f]'
  ) not valid;

-- Existing accounts are checked, not changed: with none breaking the rule it is validated; any that
-- do are reported, and the rule then holds for new and changed rows until staff fix them and run
-- `alter table public.accounts validate constraint account_email_has_no_invisible_characters`.
do $$
declare
  v_count bigint;
begin
  select pg_catalog.count(*) into v_count
    from public.accounts as a
   where not (a.email !~ '[[:cntrl:]\u0080-\u009f\u00ad\u0600-\u0605\u061c\u06dd\u070f\u0890-\u0891\u08e2\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u206f\ufeff\ufff9-\ufffb\U000110bd\U000110cd\U00013430-\U0001343f\U0001bca0-\U0001bca3\U0001d173-\U0001d17a\U000e0001\U000e0020-\U000e007f]');
  if v_count = 0 then
    alter table public.accounts validate constraint account_email_has_no_invisible_characters;
  else
    raise notice '% account e-mail(s) hold control or format characters; left as they are: find them with select id from public.accounts where not (email !~ ''[[:cntrl:]]'')', v_count;
  end if;
end
$$;
