-- Nonces of signed onboarding requests already accepted. The unique key is what makes a replay
-- fail even when two instances, or two simultaneous requests, see the same nonce at once.

create table public.webhook_nonces (
  nonce text primary key
    constraint webhook_nonce_length check (char_length(nonce) between 1 and 128),
  expires_at timestamptz not null
);
comment on table public.webhook_nonces is
  'Nonces of accepted onboarding webhooks, kept until the whole two-sided timestamp window (600 s) has passed.';
create index webhook_nonces_expires_at_idx on public.webhook_nonces (expires_at);

alter table public.webhook_nonces enable row level security;
revoke all on public.webhook_nonces from anon, authenticated;

create function cadence.record_webhook_nonce(p_nonce text, p_now timestamptz)
returns boolean
language plpgsql
volatile
set search_path = ''
as $$
begin
  -- A request is accepted only while its timestamp is within 300 s of the clock either way, so a
  -- nonce seen at p_now can come back until p_now + 600 s; only then is forgetting it safe.
  -- Purging skips rows another caller is purging: no waits, no deadlocks.
  delete from public.webhook_nonces
  where nonce in (select n.nonce from public.webhook_nonces as n
                  where n.expires_at < p_now
                  limit 100
                  for update skip locked);

  insert into public.webhook_nonces (nonce, expires_at)
  values (p_nonce, p_now + interval '600 seconds')
  on conflict (nonce) do nothing;
  return found;
end
$$;
comment on function cadence.record_webhook_nonce(text, timestamptz) is
  'Records a webhook nonce; true when it was new, false for a replay. Purges expired nonces on the way.';

revoke execute on function cadence.record_webhook_nonce(text, timestamptz) from public;
grant execute on function cadence.record_webhook_nonce(text, timestamptz) to service_role;
